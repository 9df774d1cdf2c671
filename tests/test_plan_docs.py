"""The worked questions of docs/plan.md run as written (in a scratch directory) and write their CSV and PNG."""

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

DOC = Path(__file__).resolve().parent.parent / "docs/plan.md"
COMMANDS = [c.strip() for block in re.findall(r"```bash\n(.*?)```", DOC.read_text(), re.S)
            for c in block.splitlines() if c.strip().startswith("perfmodel")]


def doc_gpus() -> list[dict[str, float]]:
    """Per worked question (in order): system -> the GPUs its table gives in the first demand column (the first
    number of the row's second cell)."""
    out = []
    for section in re.split(r"\n### ", DOC.read_text())[1:4]:
        rows = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) > 2 and ":" in cells[0] and (m := re.match(r"([0-9,]+)", cells[1])):
                rows[cells[0]] = float(m.group(1).replace(",", ""))
        out.append(rows)
    return out


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
    documented = doc_gpus()[COMMANDS.index(cmd)]
    first = df[df["demand_scale"] == df["demand_scale"].min()].set_index("system")["gpus"]
    assert set(documented) == set(first.index), (documented, first.to_dict())
    for system, gpus in documented.items():     # the doc's numbers are this version's output, within 1%
        assert abs(first[system] / gpus - 1) <= 0.01, (system, first[system], gpus)
    if "--mw-limit" in argv:
        assert (df["mw"] <= float(argv[argv.index("--mw-limit") + 1]) + 1e-9).all()
    else:
        assert (df["gpus"] * df["output_tps_per_gpu"] >= df["demand_output_tps"] * (1 - 1e-9)).all() or \
            df["demand_kind"].eq("sessions").all()
