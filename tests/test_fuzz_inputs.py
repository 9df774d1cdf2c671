"""A fast fuzz slice (issue 15): mutated copies of the shipped catalog files and record CSVs, fed to the real CLI.

Each case is a shipped file with one mutation (a bad byte, a truncation, a duplicated line, a number replaced by
NaN / inf / a negative / a huge value / a long string, deep nesting, an empty file), chosen with a fixed seed.
For every case: no traceback (only exit 0 or a one-line error with status 2), no NaN/inf in the output (JSON is
strict), nothing written outside the temporary folder, and the same output on a rerun.

Commands and inputs covered:
  * ``show FILE`` (text and JSON): mutated hardware, model, workload, profile and claim files;
  * ``validate FILE``: mutated record CSVs;
  * ``predict --hardware/--model/--profile FILE``: mutated spec files in place of a catalog id (files that still
    load but are physically odd must give numbers or a one-line error, never NaN);
  * ``predict SCENARIO``: mutated scenario files (text and JSON);
  * ``models import CONFIG.json``: mutated Hugging Face configs (tests/fixtures/hf_configs);
  * ``check CLAIM.yaml --json``: mutated claim files (full corpus only: each case evaluates two frontiers).
Flag values (negative, NaN, zero, unknown formats) are covered by tests/test_bad_input.py.

The bad-input classes issue 25's corpus still found have one test each at the end of this file (always run):
huge integers / 1e308 in a model file or a Hugging Face config (one import never returned), ``validate
--samples 0/-1/1000000`` and ``--seed -1``, an unknown format in a record, a profile with an unknown engine,
``check`` on a tiny or huge claimed value, ``show`` on a hardware file with absurd numbers, outputs into missing
folders, and a RuntimeWarning printed beside an error: each a one-line error naming the file and field, exit 2,
nothing written.

The default slice (80 catalog, 12 record, 12 spec, 4 scenario and 6 config cases) runs in CI in well under a
minute. The full corpus (1,500 catalog cases over the five kinds, 100 record cases, 450 spec cases, 100 scenario
cases, 150 config cases and 60 claim cases: 2,360; several minutes) runs with ``PERFMODEL_FUZZ_FULL=1 python -m
pytest tests/test_fuzz_inputs.py``.
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


# ---------------------------------------------------------------- the other commands that read user input
SPEC_FLAGS = {"hardware": "--hardware", "models": "--model", "profiles": "--profile"}
PREDICT_ARGS = ["--gpus", "8", "--tp", "8", "--batch", "16", "--isl", "1024", "--osl", "128", "--json"]
BASE_IDS = {"--hardware": "h100-sxm", "--model": "llama-3.1-8b", "--profile": "vllm"}


def _spec_cases(n_per_kind: int, seed: int = 16):
    """Mutated hardware, model and profile files, each fed to predict in place of a catalog id."""
    rng = random.Random(seed)
    out = []
    for kind, flag in SPEC_FLAGS.items():
        files = sorted((ROOT / kind).glob("*.yaml"))
        for i in range(n_per_kind):
            f = rng.choice(files)
            op, data = _mutate(f.read_bytes(), rng)
            out.append((f"predict-{kind}-{i}-{f.stem}-{op}", flag, data))
    return out


SPEC_CASES = _spec_cases(150 if FULL else 4)


@pytest.mark.parametrize("name,flag,data", SPEC_CASES, ids=[c[0] for c in SPEC_CASES])
def test_predict_with_a_mutated_spec_file(tmp_path, capsys, monkeypatch, name, flag, data):
    """A spec that loads but is physically odd must still give numbers or a one-line error, never NaN."""
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "spec.yaml"
    f.write_bytes(data)
    ids = {**BASE_IDS, flag: str(f)}
    argv = ["predict", *[x for k, v in ids.items() for x in (k, v)], *PREDICT_ARGS]
    before = sorted(tmp_path.rglob("*"))
    res = _run(argv, capsys)
    _check(*res, as_json=True)
    assert _run(argv, capsys) == res
    assert sorted(tmp_path.rglob("*")) == before


def _file_cases(pattern: str, n: int, seed: int):
    rng = random.Random(seed)
    files = sorted(ROOT.glob(pattern))
    out = []
    for i in range(n):
        f = rng.choice(files)
        op, data = _mutate(f.read_bytes(), rng)
        out.append((f"{f.stem}-{i}-{op}", data))
    return out


SCENARIO_CASES = _file_cases("examples/*.yaml", 100 if FULL else 4, 17)
HF_CASES = _file_cases("tests/fixtures/hf_configs/*.json", 150 if FULL else 6, 18)
CLAIM_CASES = _file_cases("claims/*.yaml", 60, 19) if FULL else []


def _file_case(tmp_path, capsys, monkeypatch, fname: str, data: bytes, argvs, rerun: bool = True):
    """Write ``data`` to ``fname`` in a scratch directory and run each argv (``{f}`` is the file): no
    traceback, strict JSON where asked, no NaN, nothing written; the first run repeated byte for byte."""
    monkeypatch.chdir(tmp_path)
    f = tmp_path / fname
    f.write_bytes(data)
    before = sorted(tmp_path.rglob("*"))
    first = None
    for argv in argvs:
        argv = [str(f) if a == "{f}" else a for a in argv]
        res = _run(argv, capsys)
        _check(*res, as_json="--json" in argv)
        first = first or (argv, res)
    if rerun:
        assert _run(first[0], capsys) == first[1]
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name,data", SCENARIO_CASES, ids=[c[0] for c in SCENARIO_CASES])
def test_predict_a_mutated_scenario(tmp_path, capsys, monkeypatch, name, data):
    _file_case(tmp_path, capsys, monkeypatch, "scenario.yaml", data, [["predict", "{f}"], ["predict", "{f}", "--json"]])


@pytest.mark.parametrize("name,data", HF_CASES, ids=[c[0] for c in HF_CASES])
def test_import_a_mutated_hugging_face_config(tmp_path, capsys, monkeypatch, name, data):
    _file_case(tmp_path, capsys, monkeypatch, "config.json", data, [["models", "import", "{f}", "--id", "fuzzed"]])


@pytest.mark.parametrize("name,data", CLAIM_CASES, ids=[c[0] for c in CLAIM_CASES])
def test_check_a_mutated_claim(tmp_path, capsys, monkeypatch, name, data):
    """Full corpus only (a claim check evaluates two systems' frontiers: seconds per case)."""
    _file_case(tmp_path, capsys, monkeypatch, "claim.yaml", data, [["check", "{f}", "--json"]], rerun=False)


# ---------------------------------------------------------------- the bad-input classes of issue 25
def _edit(src: Path, old: str, new: str, dst: Path) -> Path:
    text = src.read_text()
    assert old in text, old
    dst.write_text(text.replace(old, new, 1))
    return dst


def _one_line_error(code, out, err, *names):
    """Exit 2, one line ``perfmodel: error: ...`` naming each of ``names`` (file, field)."""
    assert code == 2 and err.startswith("perfmodel: error: ") and len(err.strip().splitlines()) == 1, (code, err)
    for n in names:
        assert n in err, (n, err)


@pytest.mark.parametrize("old,new,field", [
    ("hidden_size: 4096", "hidden_size: 100000000000000000000000000000000000000", "hidden_size"),
    ("hidden_size: 4096", "hidden_size: 1e308", "hidden_size"),
    ("{count: 32,", "{count: 100000000000000000000,", "layers.0.count"),
    ("intermediate: 14336", "intermediate: 1e300", "intermediate")])
def test_huge_numbers_in_a_model_file(tmp_path, capsys, monkeypatch, old, new, field):
    monkeypatch.chdir(tmp_path)
    f = _edit(ROOT / "models/llama-3.1-8b.yaml", old, new, tmp_path / "m.yaml")
    for argv in (["show", str(f)], ["predict", "--hardware", "h100-sxm", "--model", str(f), "--batch", "4"]):
        _one_line_error(*_run(argv, capsys), "m.yaml", field)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.yaml"]


@pytest.mark.parametrize("key,value", [("num_hidden_layers", 1e308), ("hidden_size", 10 ** 40),
                                       ("vocab_size", 1e308)])
def test_huge_numbers_in_a_hugging_face_config_return_at_once(tmp_path, capsys, monkeypatch, key, value):
    """num_hidden_layers: 1e308 used to hang the importer's per-layer loop."""
    monkeypatch.chdir(tmp_path)
    cfg = json.loads((ROOT / "tests/fixtures/hf_configs/llama-3.1-8b.json").read_text())
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**cfg, key: value}))
    _one_line_error(*_run(["models", "import", str(f), "--id", "x", "-o", str(tmp_path / "x.yaml")], capsys),
                    "config.json", key, "out of range")
    assert not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize("flag,value", [("--samples", "0"), ("--samples", "-1"), ("--samples", "1000000"),
                                        ("--seed", "-1"), ("--seed", str(2 ** 40))])
def test_validate_refuses_absurd_samples_and_seeds(tmp_path, capsys, monkeypatch, flag, value):
    monkeypatch.chdir(tmp_path)
    _one_line_error(*_run(["validate", str(ROOT / "data/shared/calibration.csv"), flag, value, "--out", "v.csv"],
                          capsys), flag)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("old,new,field", [(",fp8,bf16,", ",fp5,bf16,", "weights"),
                                           (",fp8,bf16,", ",fp8,fp9,", "kv_cache")])
def test_an_unknown_format_in_a_record(tmp_path, capsys, monkeypatch, old, new, field):
    monkeypatch.chdir(tmp_path)
    lines = (ROOT / "data/shared/calibration.csv").read_text().splitlines()
    f = tmp_path / "r.csv"
    f.write_text(lines[0] + "\n" + lines[1].replace(old, new, 1) + "\n")
    _one_line_error(*_run(["validate", str(f), "--samples", "2"], capsys), "r.csv", "line 2", field)


def test_a_profile_with_an_unknown_engine(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = _edit(ROOT / "profiles/vllm.yaml", "engine: vllm", "engine: foo", tmp_path / "p.yaml")
    _one_line_error(*_run(["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--profile", str(f)],
                          capsys), "p.yaml", "engine", "unknown engine")


@pytest.mark.parametrize("value", ["1e-300", "1e300", "0.000001"])
def test_check_a_claim_with_a_tiny_or_huge_value(tmp_path, capsys, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "claims/vllm-58x-at-387.yaml").read_text()
    f = tmp_path / "c.yaml"
    f.write_text(re.sub(r"(?m)^claimed: .*$", f"claimed: {value}", text))
    _one_line_error(*_run(["check", str(f), "--json"], capsys), "c.yaml", "claimed", "out of range")


@pytest.mark.parametrize("field,value", [("hbm_bandwidth_tbps: {value: 3.35", "hbm_bandwidth_tbps: {value: 1e308"),
                                         ("fp8_dense_pflops: {value: 1.98", "fp8_dense_pflops: {value: 1e-300"),
                                         ("scaleup_domain_gpus: {value: 8", "scaleup_domain_gpus: {value: 1e308")])
def test_show_a_hardware_file_with_absurd_numbers(tmp_path, capsys, monkeypatch, field, value):
    """No Infinity printed: the value is refused, naming the field."""
    monkeypatch.chdir(tmp_path)
    f = _edit(ROOT / "hardware/h100-sxm.yaml", field, value, tmp_path / "h.yaml")
    for argv in (["show", str(f)], ["show", str(f), "--json"]):
        _one_line_error(*_run(argv, capsys), "h.yaml", field.split(":")[0])


def test_outputs_into_missing_folders_are_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(["predict", str(ROOT / "examples/llama70b-h100.yaml"), "--csv", "a/b/p.csv"], capsys)
    assert code == 0 and (tmp_path / "a/b/p.csv").stat().st_size > 0, err
    cfg = ROOT / "tests/fixtures/hf_configs/llama-3.1-8b.json"
    code, _, err = _run(["models", "import", str(cfg), "--id", "x", "-o", "c/d/m.yaml"], capsys)
    assert code == 0 and "hidden_size" in (tmp_path / "c/d/m.yaml").read_text(), err


def test_no_runtime_warning_beside_an_error(tmp_path):
    """A floating-point RuntimeWarning raised on the way to an error is not printed next to the one line."""
    import subprocess
    import sys
    code = ("import warnings, sys; from perfmodel.cli import main as m; from perfmodel.errors import SpecError\n"
            "def bad(args):\n    warnings.warn('overflow encountered in multiply', RuntimeWarning)\n"
            "    raise SpecError('boom', field='x')\n"
            "m_ = m.build_parser\n"
            "def bp():\n    p = m_(); p._subparsers._group_actions[0].choices['show'].set_defaults(func=bad)\n"
            "    return p\n"
            "m.build_parser = bp\nsys.exit(m.main(['show', 'h100-sxm']))\n")
    r = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr == "perfmodel: error: x: boom\n", r.stderr


@pytest.mark.parametrize("fixture,key", [("deepseek-v3.json", "qk_rope_head_dim"), ("llama-3.1-8b.json", "hidden_size"),
                                         ("deepseek-v3.json", "n_routed_experts")])
def test_an_integer_beyond_float_range_in_a_hugging_face_config(tmp_path, capsys, monkeypatch, fixture, key):
    """Issue 34's fuzz corpus: a 400-digit integer made math.isfinite raise OverflowError (a traceback)."""
    monkeypatch.chdir(tmp_path)
    cfg = json.loads((ROOT / "tests/fixtures/hf_configs" / fixture).read_text())
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg).replace(f'"{key}": {cfg[key]}', f'"{key}": 1{"0" * 400}', 1))
    assert f'"{key}": 1000' in f.read_text()
    _one_line_error(*_run(["models", "import", str(f), "--id", "x", "-o", str(tmp_path / "x.yaml")], capsys),
                    "config.json", key, "out of range")
    assert not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize("old,new,field", [
    ("lat2_us: 1.296, g2: 1.052, eff2: 0.7125", "lat2_us: 1.296, eff2: 0.7125", "lacks g2"),
    ("t0_us: 2.733}", "}", "lacks t0_us")])
def test_a_kernel_fit_lacking_a_parameter_of_its_law(tmp_path, capsys, monkeypatch, old, new, field):
    """Issue 34's fuzz corpus: a kernel_fits curve without one fitted parameter reached the compiled equations
    (TypeError traceback). The schema requires every parameter of the family's law."""
    monkeypatch.chdir(tmp_path)
    f = _edit(ROOT / "hardware/h200-sxm.yaml", old, new, tmp_path / "h.yaml")
    for argv in (["show", str(f)], ["predict", "--hardware", str(f), "--model", "llama-3.1-8b", "--profile", "sglang",
                                    "--batch", "4"]):
        _one_line_error(*_run(argv, capsys), "h.yaml", "kernel_fits", field)
