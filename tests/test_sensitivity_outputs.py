"""`perfmodel sensitivity --json` is strict JSON and `--plot` draws the tornado chart (issue 25 item 3)."""

from __future__ import annotations

import json

from perfmodel.cli.main import main

ARGS = ["sensitivity", "--hardware", "gb300-nvl72", "--model", "deepseek-v3", "--gpus", "8", "--tp", "8",
        "--batch", "64"]


def test_sensitivity_json_and_plot(tmp_path, capsys):
    png = tmp_path / "sub" / "tornado.png"
    assert main([*ARGS, "--json", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    el = {r["parameter"]: r["elasticity"] for r in out["elasticities"]}
    # batch-64 decode of DeepSeek-V3 is weight-read bound: HBM bandwidth moves throughput about half-for-half
    assert 0.3 < el["hbm_bandwidth_tbps"] < 1.0 and out["point"]["batch"] == 64
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_sensitivity_plot_bars_are_the_largest_elasticities(tmp_path):
    import pandas as pd

    from perfmodel.plots import sensitivity as sp
    df = pd.DataFrame({"parameter": [f"p{i}" for i in range(30)], "kind": ["hardware", "profile"] * 15,
                       "elasticity": [(-1) ** i * i / 10 for i in range(30)]})
    df.attrs.update(metric="total_tps_per_gpu", system="x", at_capacity=False)
    drawn = {}
    real = sp.new_figure

    def spy(*a, **k):
        fig, axes = real(*a, **k)
        drawn["ax"] = axes[0]
        return fig, axes
    sp.new_figure = spy
    try:
        sp.sensitivity_plot(df, tmp_path / "t.png")
    finally:
        sp.new_figure = real
    labels = [t.get_text() for t in drawn["ax"].get_yticklabels()]
    assert len(labels) == sp.MAX_BARS and labels[-1] == "p29" and "p0" not in labels
