"""Outputs that state what they assume (issue 25 item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from perfmodel.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def test_predict_echoes_set_overrides(capsys):
    assert main(["predict", str(ROOT / "examples/llama70b-h100.yaml"), "--set", "hbm_bandwidth_tbps=8"]) == 0
    assert "overrides: hardware.hbm_bandwidth_tbps=8" in capsys.readouterr().out
    assert main(["predict", str(ROOT / "examples/llama70b-h100.yaml"), "--set", "hbm_bandwidth_tbps=8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overrides"]["hardware"] == {"hbm_bandwidth_tbps": 8.0}
    assert main(["predict", str(ROOT / "examples/llama70b-h100.yaml"), "--csv"]) == 0
    df = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert "overrides" in df and df["overrides"].isna().all()


def test_show_variant_lists_other_variants_against_the_base(capsys):
    assert main(["show", "vr200-nvl72@hbm-20tbps"]) == 0
    out = capsys.readouterr().out
    assert "hbm_bandwidth_tbps: 22 -> 20" in out and "20 -> 20" not in out
    assert "@hbm-20tbps@" not in out and "select: vr200-nvl72@fp4-50pf" in out
    assert "selected_variant: hbm-20tbps" in out


def test_show_profile_marks_parameters_at_a_search_range_edge():
    from perfmodel.describe import mark_range_edges
    d = {"calibration": "perfmodel calibrate: fitted step_overhead_ms, eff_gemm on ln(pred/meas)",
         "step_overhead_ms": {"value": 4.9, "low": 4.5, "high": 5.0},
         "eff_gemm": {"value": 0.5, "low": 0.4, "high": 0.6},
         "workspace_gb": {"value": 1.0, "low": 1.0, "high": 1.2}}          # on its edge, but not fitted
    out = mark_range_edges(d)
    assert out["step_overhead_ms"]["at_range_edge"].startswith("upper edge")
    assert "at_range_edge" not in out["eff_gemm"] and "at_range_edge" not in out["workspace_gb"]


def test_compare_summary_names_interactivity_ratios():
    from perfmodel.analyses.compare import INTERACTIVITY_RATIO, peak_summary
    f = pd.DataFrame({"tps_per_user": [10.0, 100.0], "total_tps_per_gpu": [1000.0, 100.0],
                      "output_tps_per_gpu": [500.0, 50.0]})
    s = peak_summary(f, f.assign(tps_per_user=[20.0, 50.0])).set_index("quantity")
    assert s.loc["max tps_per_user (curve end)", "ratio"] == 2.0
    assert s.loc["max tps_per_user (curve end)", "ratio_is"] == INTERACTIVITY_RATIO
    assert "speed-up" not in s.loc["peak total_tps_per_gpu", "ratio_is"]


def test_headline_ttft_flag():
    from perfmodel.cli.analyses_cmd import _ttft_text
    assert "ABOVE 5 s" in _ttft_text(9500.0, None)
    assert "ABOVE" not in _ttft_text(9500.0, 10000.0) and "ABOVE" not in _ttft_text(800.0, None)


def test_cached_prefix_is_named_on_axes_and_notes():
    from perfmodel.analyses.frontier import cached_prefix_note
    from perfmodel.plots.curves import _ylabel
    f = pd.DataFrame({"prefix_hit": [0.9, 0.95]})
    assert "cached prefix" in _ylabel("total_tps_per_gpu", [f])
    assert "cached prefix" not in _ylabel("total_tps_per_gpu", [f.assign(prefix_hit=0.0)])
    assert "cached prefix included" in cached_prefix_note(f) and "90%-95%" in cached_prefix_note(f)
