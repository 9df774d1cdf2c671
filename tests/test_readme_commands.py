"""Every command in the shell blocks of the README and of docs/*.md runs: no traceback, exit status 0, and the checkout is left as it
was (issue 25: a planner's first week).

The commands are read from README.md itself, so a README edit is tested as written. Each runs through the real
CLI entry point in a scratch directory (the files it writes land there); paths into the checkout (examples/,
tests/fixtures/) are made absolute. Every command runs in CI:

* fast commands as written;
* SLICED commands (``slow`` marker, a few seconds each) as written but on a small slice: ``perfmodel report``
  with two claims and one model's figures, ``validate`` on the first rows of each file (same relative paths, in
  the scratch directory), ``calibrate`` and ``crossval`` on a few records with a short fit;
* with PERFMODEL_README_FULL=1 the sliced commands also run in full, as subprocesses (``python -m perfmodel``
  with this checkout first on the path; about 10 minutes).

The set-up command's ``pip install`` and ``python -m pytest`` are not run here (they are the set-up and this
test); ``models import config.json ... > models/my-model.yaml`` reads a shipped Hugging Face config as the user's
config.json and writes the redirect into the scratch directory.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfmodel.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
NOT_RUN = {"pip install": "the set-up command itself", "python -m pytest": "the test command itself"}
SLICED = ("perfmodel report", "perfmodel calibrate", "perfmodel crossval", "perfmodel validate")
FULL = bool(os.environ.get("PERFMODEL_README_FULL"))
USER_CONFIG = ROOT / "tests/fixtures/hf_configs/llama-3.1-8b.json"   # stands in for the user's config.json
SLICE_ROWS = 3
OUTPUT_FLAGS = ("--report", "--out", "--out-dir", "--csv", "--plot", "-o")


def _git_status() -> str | None:
    try:
        r = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


TREE_BEFORE = _git_status()


DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md")
                                    if p.name != "plan.md")]   # plan.md's commands: tests/test_plan_docs.py


def readme_commands() -> list[str]:
    """Shell commands of the ```bash blocks of the README and docs/*.md, continuation lines joined, comments
    dropped, ``a && b`` split into its commands."""
    text = "\n".join(p.read_text() for p in DOCS)
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        cur = ""
        for line in block.splitlines():
            s = line.strip()
            if not cur and not s.startswith(("perfmodel", "python", "pip")):
                continue
            cur = f"{cur} {s}" if cur else s
            if cur.endswith("\\"):
                cur = cur[:-1]
                continue
            out += [c.strip() for c in re.sub(r"\s+#.*$", "", cur).split("&&")]
            cur = ""
    return list(dict.fromkeys(out))     # a command shown in the README and in docs/ runs once


COMMANDS = readme_commands()
RUN = [c for c in COMMANDS if not any(c.startswith(h) for h in NOT_RUN)]
FAST = [c for c in RUN if not c.startswith(SLICED)]
SLOW = [c for c in RUN if c.startswith(SLICED)]


def _argv(cmd: str, tmp: Path) -> tuple[list[str], str | None]:
    """(argv after 'perfmodel', the file a '>' redirect names or None); checkout paths made absolute."""
    words = shlex.split(cmd)
    assert words[0] == "perfmodel", cmd
    redirect = None
    if ">" in words:
        i = words.index(">")
        redirect, words = words[i + 1], words[:i]
    argv = []
    for i, w in enumerate(words[1:]):
        if w == "config.json":
            shutil.copy(USER_CONFIG, tmp / "config.json")
        elif (ROOT / w).exists() and "/" in w and (not argv or argv[-1] not in OUTPUT_FLAGS):
            w = str(ROOT / w)          # an input file of the checkout; outputs stay relative (scratch directory)
        argv.append(w)
    return argv, redirect


def _run_in(tmp: Path, argv: list[str], redirect: str | None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if redirect:
        (tmp / redirect).parent.mkdir(parents=True, exist_ok=True)
        (tmp / redirect).write_text(out.getvalue())
    return code, out.getvalue(), err.getvalue()


def test_the_readme_has_commands_to_check():
    assert len(COMMANDS) >= 15 and any(c == "perfmodel report" for c in RUN)
    assert all(not c.endswith("\\") and "[" not in c for c in RUN), "a command a reader cannot paste"


@pytest.mark.parametrize("cmd", FAST)
def test_fast_readme_command_runs(cmd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv, redirect = _argv(cmd, tmp_path)
    code, out, err = _run_in(tmp_path, argv, redirect)
    assert code == 0, f"{cmd}\n{err}"
    assert "Traceback" not in err
    if redirect:
        assert "\nid: my-model\n" in (tmp_path / redirect).read_text()


def _slice_files(tmp: Path, argv: list[str]) -> list[str]:
    """argv with every record CSV of the checkout replaced by its header and first SLICE_ROWS rows, written at
    the same relative path under ``tmp`` (so reports name the same files)."""
    out = []
    for a in argv:
        p = Path(a)
        if p.suffix == ".csv" and p.is_absolute() and p.is_relative_to(ROOT):
            rel = p.relative_to(ROOT)
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            lines = p.read_text().splitlines()
            (tmp / rel).write_text("\n".join(lines[:SLICE_ROWS + 1]) + "\n")
            a = str(rel)
        out.append(a)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cmd", SLOW)
def test_sliced_readme_command_runs(cmd, tmp_path, monkeypatch):
    """The slow README commands as written, on a small slice (see the module docstring)."""
    from perfmodel import catalog
    from perfmodel.validation import calibrate
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PERFMODEL_JOBS", "1")
    argv, redirect = _argv(cmd, tmp_path)
    argv = _slice_files(tmp_path, argv)
    if cmd.startswith("perfmodel report"):
        from perfmodel.report import build
        ids = catalog.ids
        monkeypatch.setattr(build, "DEFAULT_MODELS", ("deepseek-v4.1-flash",))
        monkeypatch.setattr(catalog, "ids", lambda kind: ["vllm-58x-at-387", "spec-nvlink-1.7x"]
                            if kind == "claims" else ids(kind))
    if cmd.startswith(("perfmodel calibrate", "perfmodel crossval")):
        monkeypatch.setattr(calibrate, "MAX_NFEV", 2)
        lines = (ROOT / "data/shared/inferencex-silicon.csv").read_text().splitlines()
        rows = [ln for ln in lines[1:] if ",vllm," in ln][::200][:4]
        (tmp_path / "slice.csv").write_text("\n".join([lines[0], *rows]) + "\n")
        argv += ["--data", "slice.csv"] + (["--folds", "2"] if cmd.startswith("perfmodel crossval") else [])
    if cmd.startswith("perfmodel validate"):
        argv += ["--samples", "4"]
    code, out, err = _run_in(tmp_path, argv, redirect)
    assert code == 0 and "Traceback" not in err, f"{cmd}\n{err[-2000:]}"
    for flag in ("--report", "--out-dir", "--out"):
        if flag in argv:
            target = tmp_path / argv[argv.index(flag) + 1]
            assert target.exists(), f"{cmd}: nothing written at {target}"
    if cmd.startswith("perfmodel report"):
        assert (tmp_path / "reports/claims.md").exists()


@pytest.mark.skipif(not FULL, reason="the sliced README commands in full: PERFMODEL_README_FULL=1")
@pytest.mark.parametrize("cmd", SLOW)
def test_slow_readme_command_runs_in_full(cmd, tmp_path):
    argv, _ = _argv(cmd, tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "perfmodel", *argv], cwd=tmp_path, capture_output=True, text=True,
                       timeout=1800, env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, f"{cmd}\n{r.stderr[-2000:]}"


def test_zz_the_commands_left_the_checkout_unchanged():
    """Runs last in this file: the README commands above wrote only into their scratch directories."""
    if TREE_BEFORE is None:
        pytest.skip("not a git checkout")
    assert _git_status() == TREE_BEFORE
