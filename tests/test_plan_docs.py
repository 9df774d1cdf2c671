"""The worked questions of docs/plan.md run as written (in a scratch directory) and write their CSV and PNG; every
number of their generated blocks (tables and sentences, cli/plan_doc.py) is this version's output."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from perfmodel.analyses.plan import PLAN_COLUMNS
from perfmodel.cli.main import main
from perfmodel.cli.plan_doc import blocks, render

DOC = Path(__file__).resolve().parent.parent / "docs/plan.md"
COMMANDS = [c.strip() for block in re.findall(r"```bash\n(.*?)```", DOC.read_text(), re.S)
            for c in block.splitlines() if c.strip().startswith("perfmodel")]


def test_the_doc_has_three_worked_questions():
    assert len(COMMANDS) == 3 and all("--csv" in c and "--plot" in c for c in COMMANDS)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_worked_question_runs(cmd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(cmd)[1:]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0 and "Traceback" not in err.getvalue(), err.getvalue()
    csv = tmp_path / argv[argv.index("--csv") + 1]
    png = tmp_path / argv[argv.index("--plot") + 1]
    df = pd.read_csv(csv)
    assert list(df.columns) == PLAN_COLUMNS and (df["status"] == "ok").all() and png.stat().st_size > 1000
    n = COMMANDS.index(cmd) + 1                 # the page's generated block n: exactly this run's rendering
    assert blocks(DOC.read_text())[n] == render(df), "docs/plan.md is stale: python -m perfmodel.cli.plan_doc --write"
    if "--mw-limit" in argv:
        assert (df["mw"] <= float(argv[argv.index("--mw-limit") + 1]) + 1e-9).all()
    else:
        assert (df["gpus"] * df["output_tps_per_gpu"] >= df["demand_output_tps"] * (1 - 1e-9)).all()


def test_the_generated_sentences_read_the_rows_by_hand():
    """The sessions sentence is Little's law on the row (rate x cycle = sessions per unit); the MLPerf sentence's
    percentages are planned / measured - 1."""
    from perfmodel.cli.plan_doc import mlperf_sentence, sessions_sentence
    row = {"system": "x:y", "demand_scale": 1.0, "capacity_requests_per_s": 30.0, "units": 2, "unit_gpus": 4,
           "response_mean_s": 10.0, "ttft_mean_ms": 2000.0, "tpot_mean_ms": 16.0, "pause_mean_s": 5.0,
           "sessions_per_unit": 225.0, "serving_sessions_per_gpu": 40.0}
    text = sessions_sentence(pd.DataFrame([row]))
    assert "serves 15.0 requests/s" in text and "15.0 x 15.0 = 225 sessions" in text and "is 160." in text
    text = mlperf_sentence(pd.DataFrame([{"hardware": "b200", "output_tps_per_gpu": 124.08}]))
    assert "155.1 measured (mp020) against 124.1 planned (-20%)" in text


def test_the_pages_error_figures_are_the_tables():
    """docs/plan.md's figures of the count to sign and the unmeasured-hardware widening are the model-error
    table's and reports/crossval.csv's."""
    import math

    from perfmodel.analyses.model_error import half_widths
    from perfmodel.analyses.plan_error import hardware_spread
    text = " ".join(DOC.read_text().split())
    hs = hardware_spread()
    assert f"{hs['sd']:.3f} over six" in text and hs["hardware"] == 6
    mid = half_widths("rate", "middle", "agentic")
    assert mid["workload"] == "agentic" and f"middle region the model reads {math.exp(mid['bias']):.2f}x" in text
