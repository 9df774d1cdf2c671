"""examples/notebook.py runs end to end, headless, and its DataFrames, CSV and figures hold what it says."""

from __future__ import annotations

import inspect
import runpy
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "notebook.py"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The notebook's namespace after running it as a script, its stdout, and its output directory."""
    out = tmp_path_factory.mktemp("notebook")
    mp = pytest.MonkeyPatch()
    mp.setenv("MPLBACKEND", "Agg")
    mp.setenv("PERFMODEL_NOTEBOOK_OUT", str(out))
    matplotlib.use("Agg")
    import contextlib
    import io
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            ns = runpy.run_path(str(NOTEBOOK), run_name="__main__")
    finally:
        mp.undo()
        import matplotlib.pyplot as plt
        plt.close("all")
    return ns, buf.getvalue(), out


def _finite_positive(values) -> bool:
    v = np.asarray(values, dtype=float)
    return bool(len(v)) and bool(np.isfinite(v).all()) and bool((v > 0).all())


def test_is_a_jupytext_percent_script():
    text = NOTEBOOK.read_text()
    assert "format_name: percent" in text
    assert text.count("# %% [markdown]") >= 7 and text.count("\n# %%\n") >= 6


def test_systems_and_workload(run):
    ns, out, _ = run
    specs = ns["specs"]
    a, b = ns["gb300"].fields(), ns["rubin"].fields()
    assert specs.loc["hbm_bandwidth_tbps", "ratio"] == pytest.approx(b["hbm_bandwidth_tbps"] / a["hbm_bandwidth_tbps"])
    assert _finite_positive(specs["ratio"])
    lengths = ns["lengths"]
    assert set(lengths.index) == {"isl", "osl", "new"} and 0 < lengths["new"] <= lengths["isl"]
    assert "hbm_bandwidth_tbps" in out


def test_frontiers_and_plot(run):
    ns, out, outdir = run
    for f in ns["fronts"]:
        assert {"tps_per_user", "total_tps_per_gpu", "gpus", "tp", "ep", "batch"} <= set(f.columns)
        assert len(f) >= 5 and _finite_positive(f["tps_per_user"]) and _finite_positive(f["total_tps_per_gpu"])
        assert (np.diff(f["tps_per_user"]) >= 0).all() and (np.diff(f["total_tps_per_gpu"]) < 0).all()
    s = ns["summaries"]
    assert list(s["system"]) == ["gb300-nvl72:vllm", "vr200-nvl72:vllm"] and _finite_positive(s["peak_total_tps_per_gpu"])
    side = ns["side_by_side"]
    assert _finite_positive(side["ratio"]) and len(side) == 6
    png = ns["frontier_png"]
    assert png.parent == outdir and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "peak_total_tps_per_gpu" in out


def test_bandwidth_whatif(run):
    ns, _, outdir = run
    bw = ns["bw"]
    assert _finite_positive(bw.curve["ratio"])
    peak = bw.summary.set_index("quantity").loc["peak total_tps_per_gpu", "ratio"]
    assert peak >= 1 - 1e-9                       # more bandwidth cannot lower the peak
    assert bw.names[0].endswith("[hbm_bandwidth x2.4]")
    assert Path(ns["whatif_png"]).read_bytes()[:4] == b"\x89PNG" and Path(ns["whatif_png"]).parent == outdir


def test_attribution_multiplies_to_the_total(run):
    ns, out, _ = run
    split = ns["split"]
    assert np.prod(split.parts["factor"]) == pytest.approx(split.total_ratio, rel=1e-9)
    assert split.total_ratio > 1 and _finite_positive(split.parts["factor"])
    by_kind = ns["by_kind"]
    assert set(by_kind.index) == {"hardware", "software"}
    assert by_kind["software"] > 1                # decode kernels 25% faster
    assert "hardware x" in out and "software x" in out


def test_claim_check(run):
    ns, out, _ = run
    v = ns["verdict"].iloc[0]
    assert v["claim"] == "vllm-58x-at-387" and v["claimed"] == 58
    from perfmodel.claims.verdict import CATEGORIES
    assert v["verdict"] in CATEGORIES
    assert _finite_positive([v["model"], v["claim_over_model"]])
    assert v["interval_low"] >= 0 and v["interval_high"] > 0   # a side may be unbounded (0 or inf) at a curve end
    assert v["interval_low"] <= v["model"] <= v["interval_high"]
    assert "why:" in out


def test_csv_for_the_spreadsheet(run):
    ns, _, outdir = run
    path = ns["csv_path"]
    assert path.parent == outdir
    df = pd.read_csv(path)
    assert len(df) == sum(len(f) for f in ns["fronts"])
    assert {"hardware", "gpus", "batch", "tps_per_user", "total_tps_per_gpu", "tpot_ms", "ttft_ms"} <= set(df.columns)
    assert set(df["hardware"]) == {"gb300-nvl72", "vr200-nvl72"}
    assert _finite_positive(df[["tps_per_user", "total_tps_per_gpu", "tpot_ms", "ttft_ms"]].to_numpy().ravel())


def test_public_functions_used_state_units_and_returns():
    from perfmodel import api
    from perfmodel.analyses import DeploymentSpace, System, attribute, frontier, read_at, summary, whatif
    from perfmodel.analyses.attribution import Attribution
    from perfmodel.analyses.attribution import attribute as attribute_impl
    from perfmodel.analyses.compare import Comparison
    from perfmodel.claims import check
    from perfmodel.plots import comparison_plot
    for obj in (api.workload_lengths, System, System.fields, System.with_changes, DeploymentSpace, frontier,
                summary, read_at, whatif, attribute_impl, Attribution, Comparison, check, comparison_plot):
        doc = inspect.getdoc(obj) or ""
        assert "return" in doc.lower() or obj in (System, DeploymentSpace), obj
        assert any(u in doc for u in ("tokens", "GB", "TB/s", "ms", "dimensionless", "GPUs", "spec unit")), obj
    assert "attribution.attribute" in (inspect.getdoc(attribute) or "")   # the lazy wrapper points to it
