"""Progress bars (perfmodel/progress.py): on stderr only, only on a terminal, never with --quiet or in --json."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from perfmodel import progress
from perfmodel.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "data/measured/vllm-blog-deepseek.csv")      # 5 records, well under a second to validate
MTP = str(ROOT / "data/measured/trtllm-blog01-mtp-depth.csv")   # 6 records of one engine: a quick calibration


class FakeTTY(io.StringIO):
    """A stderr that says it is a terminal and keeps what was written."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def stderr_as(monkeypatch):
    """``stderr_as(terminal)`` replaces sys.stderr by a fake terminal (True) or a pipe (False) and returns it;
    bars are drawn at once and at every step and nothing is forced from the environment. Call it in the test body:
    pytest's capture puts its own sys.stderr back between a fixture's setup and the test."""
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "MIN_INTERVAL_S", 0.0)
    progress.set_quiet(False)

    def use(terminal: bool) -> io.StringIO:
        err = FakeTTY() if terminal else io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        return err
    yield use
    progress.set_quiet(False)


def test_rule_terminal_quiet_and_environment(stderr_as, monkeypatch):
    stderr_as(True)
    assert progress.enabled()
    progress.set_quiet(True)
    assert not progress.enabled()
    monkeypatch.setenv(progress.ENV, "1")          # quiet wins over forcing
    assert not progress.enabled()
    progress.set_quiet(False)
    monkeypatch.setenv(progress.ENV, "0")
    assert not progress.enabled()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv(progress.ENV, "always")
    assert progress.enabled()
    monkeypatch.delenv(progress.ENV)
    assert not progress.enabled()


def test_bar_counts_done_of_total_with_time_left(stderr_as):
    tty = stderr_as(True)
    assert list(progress.bar(range(3), desc="fitting things", unit="thing")) == [0, 1, 2]
    text = tty.getvalue()
    assert "fitting things" in text and "3/3" in text and "thing/s" in text
    assert "<" in text                              # tqdm's [elapsed<remaining]


def test_bar_on_a_real_pseudo_terminal(stderr_as, monkeypatch):
    """A real terminal (a pty, opened 0 x 0 as under `script` or some CI runners): detected, and drawn at 80
    columns rather than hidden."""
    pytest.importorskip("pty")
    import os
    import select
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "w") as term:
            monkeypatch.setattr(sys, "stderr", term)
            assert progress.enabled()
            list(progress.bar(range(3), desc="on a pty", unit="thing"))
            term.flush()
            data = b""
            while select.select([master], [], [], 0.5)[0]:
                data += os.read(master, 65536)
    finally:
        os.close(master)
    text = data.decode(errors="replace")
    assert "on a pty" in text and "3/3" in text


def test_bar_and_note_absent_when_not_a_terminal(stderr_as):
    pipe = stderr_as(False)
    assert list(progress.bar(range(3), desc="fitting things")) == [0, 1, 2]
    progress.note("calibrating ...")
    assert pipe.getvalue() == ""


def test_bar_absent_until_delay(stderr_as, monkeypatch):
    tty = stderr_as(True)
    monkeypatch.setattr(progress, "DELAY_S", 60.0)
    list(progress.bar(range(3), desc="quick"))
    assert tty.getvalue() == ""


def test_validate_bar_on_terminal_not_on_stdout(stderr_as, capsys):
    tty = stderr_as(True)
    assert main(["validate", SMALL, "--samples", "4"]) == 0
    out = capsys.readouterr().out
    assert "validate vllm-blog-deepseek.csv" in tty.getvalue() and "5/5" in tty.getvalue()
    assert "rows predicted" in out and "\r" not in out and "record/s" not in out


@pytest.mark.parametrize("argv", [["--quiet", "validate", SMALL], ["validate", SMALL, "-q"]])
def test_validate_quiet(stderr_as, capsys, argv):
    tty = stderr_as(True)
    assert main([*argv, "--samples", "4"]) == 0
    assert tty.getvalue() == ""
    assert "rows predicted" in capsys.readouterr().out


def test_validate_not_a_terminal(stderr_as, capsys):
    pipe = stderr_as(False)
    assert main(["validate", SMALL, "--samples", "4"]) == 0
    assert pipe.getvalue() == ""
    assert "rows predicted" in capsys.readouterr().out


def test_frontier_json_stays_clean(stderr_as, capsys):
    tty = stderr_as(True)
    argv = ["frontier", "--hardware", "h100-sxm", "--hardware", "h200-sxm", "--model", "llama-3.1-70b",
            "--batch-points", "4", "--spec-tokens", "0", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)      # stdout is exactly one JSON document
    assert len(doc["systems"]) == 2
    assert "frontiers" in tty.getvalue() and "2/2" in tty.getvalue()


def test_calibrate_estimate_goes_to_stderr_under_the_rule(stderr_as, capsys):
    tty = stderr_as(True)
    assert main(["calibrate", "--data", MTP, "--dry-run"]) == 0
    out, err = capsys.readouterr().out, tty.getvalue()
    assert "calibrating on 6 records" in err and "calibrating engine families" in err
    assert "calibrating on" not in out and "fitted in" in out


def test_report_workers_counted_in_parent(monkeypatch):
    """The claims a forked worker checks are counted by the parent (shared counter), and the results are
    those of checking in process."""
    from perfmodel.claims import CurveStore, check
    from perfmodel.report import parallel
    monkeypatch.setenv("PERFMODEL_JOBS", "2")
    ids = ["spec-hbm-bandwidth-2.4x", "spec-nvlink-1.7x", "spec-nvfp4-2.3x"]   # no curves: fast
    store = CurveStore()
    workers = parallel.pool(store)
    if workers is None:
        pytest.skip("no fork on this platform")
    ticks = []
    with workers:
        checks = parallel.ClaimChecks(ids, store, local=lambda c: c.id == ids[0], workers=workers)
        res = checks.results(store, on_done=ticks.append)
    assert sum(ticks) == len(ids)
    assert [r["verdict"] for r in res] == [check(i)["verdict"] for i in ids]
    assert [r["id"] for r in res] == ids
