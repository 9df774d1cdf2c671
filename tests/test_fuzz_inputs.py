"""A fast fuzz slice (issue 15): mutated copies of the shipped catalog files and record CSVs, fed to the real CLI.

Each case is a shipped file with one mutation (a bad byte, a truncation, a duplicated line, a number replaced by
NaN / inf / a negative / a huge value / a long string, deep nesting, an empty file), chosen with a fixed seed.
For every case: no traceback (only exit 0 or a one-line error with status 2), no NaN/inf in the output (JSON is
strict), nothing written outside the temporary folder, and the same output on a rerun.

The default slice (80 catalog cases, 12 record cases) runs in CI in about 10 s. The full corpus (1,500 catalog
cases over the five kinds, 100 record cases; a few minutes) runs with ``PERFMODEL_FUZZ_FULL=1 python -m pytest
tests/test_fuzz_inputs.py``.
"""

import json
import os
import random
import re
from pathlib import Path

import pytest

from perfmodel import catalog
from perfmodel.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
KINDS = ["hardware", "models", "workloads", "profiles", "claims"]
NUMBER = re.compile(rb"(?<![\w.])-?\d+(\.\d+)?(?![\w.])")
BAD_NUMBERS = [b".nan", b".inf", b"-.inf", b"-1", b"0", b"1e400", b"3000000000", b"x" * 300, b"[]", b"{}"]


def _mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    op = rng.choice(["byte", "truncate", "dupline", "number", "number", "number", "nest", "empty", "dropline"])
    if op == "byte":
        i = rng.randrange(len(data))
        return op, data[:i] + bytes([rng.choice([0xff, 0xfe, 0x80, 0x00])]) + data[i:]
    if op == "truncate":
        return op, data[:rng.randrange(len(data))]
    lines = data.split(b"\n")
    if op in ("dupline", "dropline"):
        i = rng.randrange(len(lines))
        lines[i:i + 1] = [lines[i], lines[i]] if op == "dupline" else []
        return op, b"\n".join(lines)
    if op == "number":
        hits = list(NUMBER.finditer(data))
        if hits:
            m = rng.choice(hits)
            return op, data[:m.start()] + rng.choice(BAD_NUMBERS) + data[m.end():]
        return op, data + b"\n"
    if op == "nest":
        return op, data + b"\nnested: " + b"[" * 300 + b"]" * 300 + b"\n"
    return op, b""


def _cases(n_per_kind: int, seed: int = 15):
    rng = random.Random(seed)
    out = []
    for kind in KINDS:
        files = sorted((ROOT / kind).glob("*.yaml"))
        for i in range(n_per_kind):
            f = rng.choice(files)
            op, data = _mutate(f.read_bytes(), rng)
            out.append((f"{kind}-{i}-{f.stem}-{op}", data))
    return out


FULL = bool(os.environ.get("PERFMODEL_FUZZ_FULL"))
CASES = _cases(300 if FULL else 16)


def _run(argv, capsys):
    catalog._load_cached.cache_clear()
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _check(code, out, err, as_json):
    assert code in (0, 1, 2), (code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("perfmodel: error: "), err
        assert len(err) < 1200, err[:300]
    else:
        if as_json:
            json.loads(out, parse_constant=lambda c: (_ for _ in ()).throw(AssertionError(c)))
        else:   # a printed value NaN/inf (the input's own free text may quote anything)
            bad = re.search(r"(^|[\s:=\[,(])[-+]?(nan|inf|infinity)(?=$|[\s,\])])", out, re.I | re.M)
            assert not bad, out[max(0, bad.start() - 200):bad.end() + 50]


@pytest.mark.parametrize("name,data", CASES, ids=[c[0] for c in CASES])
def test_show_mutated_catalog_file(tmp_path, capsys, monkeypatch, name, data):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "in.yaml"
    f.write_bytes(data)
    before = sorted(tmp_path.rglob("*"))
    first = None
    for as_json in (False, True):
        argv = ["show", str(f)] + (["--json"] if as_json else [])
        res = _run(argv, capsys)
        _check(*res, as_json)
        first = first or res
    assert _run(["show", str(f)], capsys) == first          # byte-identical on a rerun
    assert sorted(tmp_path.rglob("*")) == before             # nothing written


def _record_cases(n: int, seed: int = 15):
    rng = random.Random(seed)
    src = (ROOT / "data" / "shared" / "calibration.csv").read_bytes()
    head = b"\n".join(src.split(b"\n")[:4]) + b"\n"           # header + 3 rows: fast to predict
    return [(f"records-{i}-{op}", d) for i in range(n) for op, d in [_mutate(head, rng)]]


RECORD_CASES = _record_cases(100 if FULL else 12)


@pytest.mark.parametrize("name,data", RECORD_CASES, ids=[c[0] for c in RECORD_CASES])
def test_validate_mutated_record_file(tmp_path, capsys, monkeypatch, name, data):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "rec.csv"
    f.write_bytes(data)
    before = sorted(tmp_path.rglob("*"))
    code, out, err = _run(["validate", str(f), "--samples", "2"], capsys)
    assert code in (0, 2), err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("perfmodel: error: "), err
    else:
        assert "nan%" not in out.lower()
    assert sorted(tmp_path.rglob("*")) == before
