"""CLI: the analyses commands format DataFrames; bad input is one line, exit 2."""

import json

import pandas as pd

from perfmodel.cli.main import main

FAST = ["--model", "llama-3.1-70b", "--batch-points", "8", "--spec-tokens", "0"]


def test_frontier_csv_plot(tmp_path, capsys):
    csv, png = tmp_path / "f.csv", tmp_path / "f.png"
    rc = main(["frontier", "--hardware", "h100-sxm", "--hardware", "h200-sxm", *FAST, "--csv", str(csv),
               "--plot", str(png)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "max interactivity" in out and "peak total_tps_per_gpu" in out
    df = pd.read_csv(csv)
    for c in ("tps_per_user", "total_tps_per_gpu", "output_tps_per_gpu", "intvty", "tput_per_gpu",
              "output_tput_per_gpu", "hardware", "gpus", "tp", "batch"):
        assert c in df.columns
    assert set(df["hardware"]) == {"h100-sxm", "h200-sxm"}
    assert png.stat().st_size > 10_000


def test_attribute_json(capsys):
    rc = main(["attribute", "--from", "h100-sxm", "--to", "h200-sxm", *FAST, "--peak", "--json"])
    assert rc == 0
    js = json.loads(capsys.readouterr().out)
    assert "total_ratio" in js and js["parts"]
    prod = 1.0
    for v in js["parts"].values():
        prod *= v
    assert abs(prod / js["total_ratio"] - 1) < 1e-9


def test_bad_input_is_one_line(capsys):
    rc = main(["whatif", "--hardware", "h100-sxm", *FAST, "--scale", "hbm_bandwith=2"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "hbm_bandwith" in err and "Traceback" not in err
    rc = main(["attribute", "--from", "h100-sxm", "--to", "h200-sxm", *FAST])
    assert rc == 2 and "--peak" in capsys.readouterr().err
    rc = main(["frontier", "--hardware", "h100-sxm", *FAST, "--gpus", "two"])
    assert rc == 2 and "--gpus" in capsys.readouterr().err
