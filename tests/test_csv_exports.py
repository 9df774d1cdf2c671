"""CSV exports: fixed column sets, integers as integers, blank where documented blank (issue 25 item 7)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from perfmodel.cli.main import main
from perfmodel.csvout import tidy


def test_tidy_fixes_columns_integers_and_blanks():
    df = pd.DataFrame({"serving": ["aggregated", "disaggregated"], "gpus": [2.0, 8.0], "batch": [288.0, 12.5],
                       "kv_transfer_ms": [0.0, 1.5], "pf_gpus": [np.nan, 4.0]})
    t = tidy(df, ["serving", "gpus", "batch", "kv_transfer_ms", "pf_gpus", "prefix_hit"], disagg_blank=True)
    text = t.to_csv(index=False).splitlines()
    assert text[0] == "serving,gpus,batch,kv_transfer_ms,pf_gpus,prefix_hit"
    assert text[1] == "aggregated,2,288.0,,,"          # batch has a fractional value: left as a float column
    assert text[2] == "disaggregated,8,12.5,1.5,4,"


def test_predict_csv_writes_whole_numbers_as_integers(capsys):
    assert main(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--batch", "4", "--csv"]) == 0
    df = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    assert df["gpus"].iloc[0] == "1" and df["batch"].iloc[0] == "4"


def test_compare_curve_names_systems_and_deployments():
    from perfmodel.analyses.compare import CURVE_CSV_COLUMNS, ratio_curve
    a = pd.DataFrame({"tps_per_user": [10.0, 100.0], "total_tps_per_gpu": [1000.0, 100.0], "gpus": [8, 4],
                      "batch": [256, 4], "serving": "aggregated"})
    a.attrs.update(system="x:vllm", power_w=1000.0)
    b = a.copy()
    b.attrs.update(system="y:vllm", power_w=1000.0)
    c = ratio_curve(a, b, points=5)
    assert set(CURVE_CSV_COLUMNS) - {"ratio_per_usd"} <= set(c.columns)
    assert (c["a_system"] == "x:vllm").all() and (c["b_system"] == "y:vllm").all()
    # the deployment at or just above each interactivity: the first point serves 10 tok/s/user, the second 100
    assert c["a_gpus"].iloc[0] == 8 and c["a_gpus"].iloc[-1] == 4
