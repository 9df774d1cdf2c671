"""Which inputs a generated report came from: one header line with a hash of them (issue 25 item 4).

Every generated Markdown report (reports/claims.md, reports/validation.md, reports/crossval.md) starts with

    <!-- perfmodel-inputs sha256=<16 hex> files=<a,b,..> regenerate=<command> -->

where the hash covers the model-version stamp (``MODEL_VERSION`` below), the serving reference numbers
(``benchmarks/serving_reference.json``: every numeric output of predict, the frontier, validation and the batch path
on a fixed sample of records, re-recorded whenever physics moves a number), the catalog (``hardware/``, ``models/``,
``profiles/``, ``workloads/``, ``claims/`` YAML) and the data files the command read (``files``, relative to the
checkout). The package source itself is not hashed (issue 34 item 7): a docstring, a refactor or a type annotation
does not stale a report; a change that moves a number does, through the reference numbers it re-records, and a
change of report logic that the reference sample does not see (claims verdict rules, report layout) bumps
``MODEL_VERSION``. ``tests/test_reports_current.py`` recomputes it for every committed report and fails, naming the
command, when code, catalog or data changed after the report was written; ``scripts/regenerate_reports.sh`` runs
every command in dependency order. Hashing reads each file once (a few MB, well under a second).

    sha256 = SHA-256 over, in sorted path order, ``path \\0 bytes \\0`` of every input file
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

CATALOG_KINDS = ("hardware", "models", "profiles", "workloads", "claims")
MODEL_VERSION = "2026-12-07.1"   # bump when report logic changes numbers the serving reference sample does not see
REFERENCE_NUMBERS = "benchmarks/serving_reference.json"
DIGITS = 16                      # hex digits kept in the header: 64 bits, plenty to detect a change
HEADER = re.compile(r"^<!-- perfmodel-inputs sha256=(?P<sha>[0-9a-f]+) files=(?P<files>\S*) "
                    r"regenerate=(?P<cmd>.*?) -->$")
REGENERATE_SCRIPT = "scripts/regenerate_reports.sh"
COMMANDS = {   # the command of each committed report (as in REGENERATE_SCRIPT), named when a header is missing
    "reports/claims.md": "perfmodel report",
    "reports/validation.md": "perfmodel validate data/shared/calibration.csv data/shared/curve-end.csv "
                             "data/shared/inferencex-silicon.csv data/shared/agentic.csv data/shared/mlperf.csv "
                             "--report reports/validation.md",
    "reports/crossval.md": "perfmodel crossval --report reports/crossval.md",
}


def root() -> Path:
    """The checkout (or the wheel's shipped catalog): where relative input names are resolved."""
    from .catalog import builtin_root
    return builtin_root()


def _catalog_files(base: Path) -> list[Path]:
    return sorted(p for kind in CATALOG_KINDS for p in (base / kind).glob("*.yaml"))


def relative_name(path: str | os.PathLike) -> str:
    """``path`` relative to the checkout when inside it (posix separators), else as given."""
    p = Path(path).resolve()
    try:
        return p.relative_to(root().resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def digest(files: list[str | os.PathLike]) -> str:
    """SHA-256 (first DIGITS hex digits) of MODEL_VERSION, the reference numbers, the catalog and ``files``."""
    base = root()
    named = {relative_name(p): Path(p) for p in _catalog_files(base)}
    ref = base / REFERENCE_NUMBERS
    if ref.exists():   # a wheel's shipped catalog has no benchmarks/: its reports are not checked
        named[REFERENCE_NUMBERS] = ref
    for f in files:
        name = relative_name(f)
        named[name] = Path(f) if Path(f).is_absolute() or Path(f).exists() else base / name
    h = hashlib.sha256(b"model-version\0" + MODEL_VERSION.encode() + b"\0")
    for name in sorted(named):
        h.update(name.encode() + b"\0" + named[name].read_bytes() + b"\0")
    return h.hexdigest()[:DIGITS]


def header(command: str, files: list[str | os.PathLike]) -> str:
    """The first line of a generated report: the inputs' hash, the data files read and the command."""
    names = sorted({relative_name(f) for f in files})
    return f"<!-- perfmodel-inputs sha256={digest(files)} files={','.join(names)} regenerate={command} -->"


def parse(text: str) -> dict | None:
    """{'sha', 'files', 'command'} from a report's first line (None when it has no header)."""
    m = HEADER.match(text.split("\n", 1)[0])
    if not m:
        return None
    return {"sha": m["sha"], "files": [f for f in m["files"].split(",") if f], "command": m["cmd"]}


def stale_reason(path: str | os.PathLike) -> str | None:
    """Why the report at ``path`` does not match the current inputs (None: it does)."""
    p = Path(path)
    info = parse(p.read_text())
    cmd = COMMANDS.get(relative_name(p))
    fix = (f"regenerate it with `{cmd}` " if cmd else "regenerate it ") + f"({REGENERATE_SCRIPT} runs every report)"
    if info is None:
        return f"{relative_name(p)} has no perfmodel-inputs header line; {fix}"
    missing = [f for f in info["files"] if not (root() / f).exists() and not Path(f).exists()]
    if missing:
        return f"{relative_name(p)} was generated from {', '.join(missing)}, which no longer exist; {fix}"
    now = digest(info["files"])
    if now != info["sha"]:
        return (f"{relative_name(p)} is older than its inputs (sha256 {info['sha']} in its header, {now} now: "
                f"the model version, the reference numbers, the catalog or {', '.join(info['files']) or 'no data file'} changed); "
                f"regenerate it with `{info['command']}` ({REGENERATE_SCRIPT} runs every report in order)")
    return None
