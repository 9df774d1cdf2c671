"""Issue 57 item 5: `whatif` flags a multiple that sits on a jump (the change moved the deployment to another layout,
or the value is read across a change of layout on one curve) and takes --metric and --at-tps-per-user. Hand-worked
on two frontiers built here, then once through the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import math

import pandas as pd
import pytest

from perfmodel.analyses.compare import compare_frontiers
from perfmodel.analyses.whatif import jumps, multiple_at


def _front(name: str, ys: list[float], tps: list[int]) -> pd.DataFrame:
    """A frontier of three points at 10, 20 and 40 tok/s/user with output tokens/s per GPU ys and TP per point."""
    f = pd.DataFrame({"tps_per_user": [10.0, 20.0, 40.0], "output_tps_per_gpu": ys, "total_tps_per_gpu": ys,
                      "serving": "aggregated", "weights": "fp8", "gpus": tps, "tp": tps, "dp": 1, "ep": 1, "pp": 1,
                      "spec_tokens": 0, "kv_host_tier": False, "batch": [64, 32, 8]})
    f.attrs.update(system=name, power_w=1000.0, price_usd_per_gpu_hour=2.0)
    return f


# B (baseline): TP2, TP2, TP4; A (changed): TP2, TP4, TP4 -- the change moves the 20 tok/s/user point to TP4.
B = _front("base", [1000.0, 800.0, 400.0], [2, 2, 4])
A = _front("new", [1500.0, 1200.0, 500.0], [2, 4, 4])


def test_jump_flags_by_hand():
    got = list(jumps(A, B, [5.0, 10.0, 15.0, 20.0, 30.0, 40.0]))
    assert got[0] == "" and got[1] == ""                       # at or below the first point: TP2 on both, smooth
    assert got[2] == "deployment, A segment edge"              # 15: A's next point is TP4 (B's TP2); A reads TP2-TP4
    assert got[3] == "deployment, A segment edge"              # 20: A's point is TP4, B's TP2
    assert got[4] == "B segment edge"                          # 30: both TP4 above; B interpolates TP2 -> TP4
    assert got[5] == "B segment edge"


def test_multiple_at_reads_both_curves_by_hand():
    cmp = compare_frontiers(A, B, 8, "output_tps_per_gpu")
    smooth = multiple_at(cmp, 10.0, "output_tps_per_gpu")
    assert (smooth["a"], smooth["b"], smooth["ratio"]) == (1500.0, 1000.0, 1.5) and smooth["jump"] == ""
    assert "smooth" in smooth["text"] and smooth["a_deployment"] == smooth["b_deployment"]
    at30 = multiple_at(cmp, 30.0, "output_tps_per_gpu")
    # log-log interpolation between 20 and 40 tok/s/user: y(30) = y20 (y40 / y20)^(ln 1.5 / ln 2)
    k = math.log(1.5) / math.log(2.0)
    a30, b30 = 1200.0 * (500.0 / 1200.0) ** k, 800.0 * (400.0 / 800.0) ** k
    assert at30["a"] == pytest.approx(a30) and at30["b"] == pytest.approx(b30)
    assert at30["ratio"] == pytest.approx(a30 / b30) and at30["jump"] == "B segment edge"
    assert "JUMP (B segment edge)" in at30["text"]
    at20 = multiple_at(cmp, 20.0, "output_tps_per_gpu")
    assert at20["ratio"] == pytest.approx(1.5) and "deployment" in at20["jump"]
    assert "TP4" in at20["a_deployment"] and "TP2" in at20["b_deployment"]
    beyond = multiple_at(cmp, 50.0, "output_tps_per_gpu")
    assert math.isnan(beyond["ratio"]) and "ends at 40 tok/s/user" in beyond["text"]


def test_whatif_cli_metric_and_at(tmp_path):
    from perfmodel.cli.main import main
    csv = tmp_path / "w.csv"
    argv = ["whatif", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--profile", "speed-of-light",
            "--spec-tokens", "0", "--batch-points", "6", "--max-gpus", "2", "--scale", "hbm_bandwidth=2",
            "--metric", "output_tps_per_gpu", "--at-tps-per-user", "100", "--csv", str(csv)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    text = out.getvalue()
    assert "at 100 tok/s/user: output_tps_per_gpu A " in text and "ratio A/B of output_tps_per_gpu" in text
    df = pd.read_csv(csv)
    assert {"a_output_tps_per_gpu", "b_output_tps_per_gpu", "jump"} <= set(df.columns)
    assert "a_total_tps_per_gpu" not in df.columns
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv[:-2], "--json"]) == 0
    got = json.loads(out.getvalue())
    assert got["metric"] == "output_tps_per_gpu" and got["at"]["tps_per_user"] == 100
    assert got["at"]["ratio"] == pytest.approx(got["at"]["a"] / got["at"]["b"])
