"""Every command in the README's shell blocks runs: no traceback, exit status 0 (issue: a newcomer's first day).

The commands are read from README.md itself, so a README edit is tested as written. Each runs through the real
CLI entry point in a scratch directory (the files it writes land there); paths into the checkout (examples/,
data/) are made absolute. The fast slice runs here; SLOW commands (the report, calibration, cross-validation,
agentic frontiers, the whole-file validation) run with PERFMODEL_README_FULL=1, as subprocesses of the installed
console script. SKIPPED commands need a file the user brings, or are the set-up and test commands themselves.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from perfmodel.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {"pip": "the set-up command itself", "python -m pytest": "the test command itself",
           "perfmodel models import config.json": "needs the user's Hugging Face config.json"}
SLOW = ("perfmodel report", "perfmodel calibrate", "perfmodel crossval", "perfmodel validate", "--workload agentx")
FULL = bool(os.environ.get("PERFMODEL_README_FULL"))


def readme_commands() -> list[str]:
    """Shell commands of the README's ```bash blocks, continuation lines joined, comments dropped."""
    text = (ROOT / "README.md").read_text()
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
            out.append(re.sub(r"\s+#.*$", "", cur).strip())
            cur = ""
    return out


COMMANDS = readme_commands()


def _skip_reason(cmd: str) -> str | None:
    return next((why for head, why in SKIPPED.items() if cmd.startswith(head)), None)


def _argv(cmd: str) -> list[str]:
    words = shlex.split(cmd)
    assert words[0] == "perfmodel", cmd
    return [str(ROOT / w) if (ROOT / w).exists() and "/" in w else w for w in words[1:]]


def test_the_readme_has_commands_to_check():
    assert len(COMMANDS) >= 15
    pasted = [c for c in COMMANDS if not _skip_reason(c)]
    assert all(not c.endswith("\\") and "[" not in c for c in pasted), "a command a reader cannot paste"


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if not _skip_reason(c) and not any(s in c for s in SLOW)])
def test_fast_readme_command_runs(cmd, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(_argv(cmd))
    captured = capsys.readouterr()
    assert code == 0, f"{cmd}\n{captured.err}"
    assert "Traceback" not in captured.err


@pytest.mark.skipif(not FULL, reason="slow README commands: PERFMODEL_README_FULL=1")
@pytest.mark.parametrize("cmd", [c for c in COMMANDS if not _skip_reason(c) and any(s in c for s in SLOW)])
def test_slow_readme_command_runs(cmd, tmp_path):
    exe = Path(sys.executable).with_name("perfmodel")
    argv = [str(exe)] + _argv(cmd)
    if cmd.startswith("perfmodel calibrate"):
        argv += ["--out-dir", str(tmp_path / "profiles")]     # never rewrite the checkout's profiles in a test
    if "--report" in argv:
        argv[argv.index("--report") + 1] = str(tmp_path / "report.md")
    r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0 and "Traceback" not in r.stderr, f"{cmd}\n{r.stderr[-2000:]}"
