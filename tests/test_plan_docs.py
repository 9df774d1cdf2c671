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


@pytest.mark.parametrize("name", ["coverage", "mlperf", "slo-error", "slo-agreement"])
def test_the_pages_prose_figures_are_this_versions_output(name):
    """Each figure of the page's prose (between its plan-figure markers) is its function's output now: the coverage
    of the band (validation/plan_coverage), the MLPerf accuracy (reports/validation.csv, reports/crossval.csv), the
    example error line, the SLO agreement of step 3."""
    from perfmodel.cli.plan_doc import FIGURES, figures
    got = figures(DOC.read_text())
    assert set(got) == set(FIGURES)
    assert got[name] == FIGURES[name](), "docs/plan.md is stale: python -m perfmodel.cli.plan_doc --write"


def test_the_pages_other_figures_are_the_catalogs_and_the_commands():
    """The numbers the prose quotes from the catalog, the measured-power file and the packing rule, and the worked
    questions' inputs as the commands give them."""
    import math

    import yaml

    from perfmodel import catalog
    from perfmodel.analyses.evaluation import workload_info
    from perfmodel.analyses.plan_racks import domains_for
    text = " ".join(DOC.read_text().split())
    assert domains_for(73, 64, 72)[0] == 73 and math.ceil(73 * 64 / 72) == 65
    assert "(73 units of 64 GPUs are 73 racks, not 65)" in text
    power = {d["hardware"]: d["value"] for d in yaml.safe_load((DOC.parent.parent / "data/measured-power/power.yaml")
                                                               .read_text())}
    assert f"GB300 ~{power['gb300-nvl72']:g} W and H200 ~{power['h200-sxm']:g} W from AA-AgentPerf" in text
    assert catalog.hardware("gb300-nvl72").specs.allin_power_w.low == power["gb300-nvl72"]
    assert f"the measured draw one source implies ({power['gb300-nvl72']:g} W)" in text
    assert f"input mean {workload_info('mlperf-llama3.1-405b').lengths['isl']:,.1f} tokens" in text
    q1, q2, q3 = COMMANDS
    assert all(f" {a} " in q1 + " " for a in ("--rate 50", "--demand-scale 1,2,5,10", "--ttft-ms 1000",
                                             "--ttft-percentile 99", "--min-tps-per-user 20", "--headroom 0.2"))
    assert "50 requests/s today growing to 2x, 5x and 10x; P99 TTFT <= 1 s, at least 20 tokens/s per user, 20% " \
           "headroom" in text
    assert all(f" {a} " in q2 + " " for a in ("--sessions 2000", "--demand-scale 1,5,25", "--min-tps-per-user 60"))
    assert "2,000 live sessions growing 5x and 25x, each decoding at >= 60 tokens/s" in text
    assert all(f" {a} " in q3 + " " for a in ("--mw-limit 10", "--ttft-ms 6000", "--tpot-ms 175", "--spec-tokens 0"))
    assert "(P99 TTFT <= 6 s, P99 TPOT <= 175 ms;" in text and "in a 10 MW hall" in text
