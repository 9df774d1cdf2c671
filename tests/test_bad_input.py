"""Bad input gets one clear line naming the file and the field, exit status 2, no traceback."""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfmodel import catalog
from perfmodel.cli.main import main
from perfmodel.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent
H100 = yaml.safe_load((ROOT / "hardware" / "h100-sxm.yaml").read_text())


def _run(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


def _write(tmp_path, data, name="hw.yaml"):
    f = tmp_path / name
    f.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(f)


def test_malformed_yaml(tmp_path, capsys):
    f = _write(tmp_path, "id: x\nspecs: {hbm: [1, 2\n")
    code, err = _run(["show", f] if False else ["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys)
    assert code == 2 and "malformed YAML" in err and f in err and len(err.splitlines()) == 1


def test_missing_field(tmp_path, capsys):
    d = copy.deepcopy(H100)
    del d["specs"]["hbm_bandwidth_tbps"]
    f = _write(tmp_path, d)
    code, err = _run(["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys)
    assert code == 2 and "specs.hbm_bandwidth_tbps" in err and "Field required" in err and f in err


def test_wrong_type(tmp_path, capsys):
    d = copy.deepcopy(H100)
    d["specs"]["hbm_bandwidth_tbps"]["value"] = "fast"
    f = _write(tmp_path, d)
    code, err = _run(["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys)
    assert code == 2 and "hbm_bandwidth_tbps" in err and f in err


@pytest.mark.parametrize("value,words", [(-3.35, "positive"), (0, "positive"), (3350, "sane range")])
def test_negative_zero_and_unit_mistake(tmp_path, capsys, value, words):
    d = copy.deepcopy(H100)
    d["specs"]["hbm_bandwidth_tbps"]["value"] = value
    f = _write(tmp_path, d)
    code, err = _run(["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys)
    assert code == 2 and words in err and "hbm_bandwidth_tbps" in err and len(err.splitlines()) == 1


def test_unknown_id_suggests_closest(capsys):
    code, err = _run(["predict", "--hardware", "h100-sxn", "--model", "llama-3.1-8b"], capsys)
    assert code == 2 and "unknown hardware id 'h100-sxn'" in err and "h100-sxm" in err
    code, err = _run(["show", "deepseek-v33"], capsys)
    assert code == 2 and "deepseek-v3" in err


def test_bad_override_and_deployment(capsys):
    code, err = _run(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--set", "hbm_bandwith_tbps=3"],
                     capsys)
    assert code == 2 and "hbm_bandwidth_tbps" in err
    code, err = _run(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--gpus", "8", "--tp", "3"],
                     capsys)
    assert code == 2 and "deployment" in err and "tp" in err


def test_cli_subprocess_has_no_traceback(tmp_path):
    d = copy.deepcopy(H100)
    d["specs"]["hbm_bandwidth_tbps"]["value"] = -1
    f = _write(tmp_path, d)
    r = subprocess.run([sys.executable, "-m", "perfmodel", "predict", "--hardware", f, "--model", "llama-3.1-8b"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_user_catalog_dir_and_env(tmp_path, capsys, monkeypatch):
    d = copy.deepcopy(H100)
    d["id"] = "my-gpu"
    (tmp_path / "hardware").mkdir()
    _write(tmp_path / "hardware", d, "my-gpu.yaml")
    code = main(["--catalog", str(tmp_path), "show", "my-gpu", "--json"])
    assert code == 0 and '"my-gpu"' in capsys.readouterr().out
    catalog._user_dirs.clear()
    monkeypatch.setenv("PERFMODEL_CATALOG", str(tmp_path))
    catalog._index.cache_clear()
    assert "my-gpu" in catalog.ids("hardware")


# -------------------------------------------------------------- random mutations
def _mutations():
    leaf = st.one_of(st.none(), st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=5), st.booleans(), st.lists(st.integers(), max_size=2))
    return leaf


def _paths(d, prefix=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))


PATHS = list(_paths(H100))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=_mutations(), delete=st.booleans())
def test_random_mutations_fail_only_cleanly(tmp_path, path, value, delete):
    d = copy.deepcopy(H100)
    node = d
    for k in path[:-1]:
        node = node[k]
    if delete:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    f = tmp_path / "mut.yaml"
    f.write_text(yaml.safe_dump(d))
    catalog._load_cached.cache_clear()
    try:
        hw = catalog.hardware(str(f))
    except SpecError as exc:
        line = exc.line()
        assert "\n" not in line and str(f) in line
        return
    # it loaded: every value must still be a sane positive number
    for name in type(hw.specs).model_fields:
        sv = getattr(hw.specs, name)
        assert sv is None or (sv.value > 0 and sv.value == sv.value)


def test_layouts_the_model_cannot_be_split_into(capsys):
    code, err = _run(["predict", "--hardware", "gb200-nvl72", "--model", "deepseek-v3", "--gpus", "20", "--tp", "1",
                      "--ep", "4", "--dp-attention"], capsys)
    assert code == 2 and "deployment.ep" in err and "expert width 2048" in err
    code, err = _run(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--gpus", "3", "--tp", "3"],
                     capsys)
    assert code == 2 and "deployment.tp" in err and "64 heads" in err


def test_predict_a_deployment_that_does_not_fit_is_a_one_line_error(capsys):
    from perfmodel.cli.main import main
    code = main(["predict", "--hardware", "b200", "--model", "deepseek-r1", "--gpus", "1", "--batch", "64",
                 "--weights", "nvfp4"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "deployment.gpus" in err and "does not fit in memory" in err
    code = main(["predict", "--hardware", "b200", "--model", "deepseek-r1", "--gpus", "1", "--batch", "64",
                 "--weights", "nvfp4", "--allow-overflow"])
    assert code == 1 and "fit_reason" in capsys.readouterr().out


# -------------------------------------------------------------- issue 15: every input path guarded
def _one_line(code, err, *words, status=2):
    assert code == status, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


def test_invalid_utf8_yaml_json_csv_name_the_file(tmp_path, capsys):
    y = tmp_path / "hw.yaml"
    y.write_bytes(b"id: h100\xff\n")
    _one_line(*_run(["show", str(y)], capsys), str(y), "not valid UTF-8")
    j = tmp_path / "config.json"
    j.write_bytes(b'{"a": 1}\xff')
    _one_line(*_run(["models", "import", str(j)], capsys), str(j), "not valid UTF-8")
    c = tmp_path / "rec.csv"
    c.write_bytes(b"id,kind,hardware,model,metric,value\nr1,point,h100\xff,x,tpot_ms,1\n")
    _one_line(*_run(["validate", str(c)], capsys), str(c), "not valid UTF-8", "line 2")


def test_invalid_utf8_file_in_catalog_does_not_break_other_ids(tmp_path, capsys):
    (tmp_path / "hardware").mkdir()
    bad = tmp_path / "hardware" / "broken.yaml"
    bad.write_bytes(b"id: broken\xff\n")
    try:
        code = main(["--catalog", str(tmp_path), "show", "h100-sxm", "--json"])
        assert code == 0 and '"h100-sxm"' in capsys.readouterr().out
        _one_line(*_run(["--catalog", str(tmp_path), "show", "broken"], capsys), str(bad), "not valid UTF-8")
    finally:
        catalog._user_dirs.clear()
        catalog._index.cache_clear()


def test_deeply_nested_yaml_and_json(tmp_path, capsys):
    y = tmp_path / "deep.yaml"
    y.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    _one_line(*_run(["show", str(y)], capsys), str(y), "nested deeper")
    j = tmp_path / "deep.json"
    j.write_text('{"a": ' * 3000 + "1" + "}" * 3000)
    _one_line(*_run(["models", "import", str(j)], capsys), str(j), "nested deeper")


def test_duplicate_keys_yaml_and_json(tmp_path, capsys):
    d = copy.deepcopy(H100)
    text = yaml.safe_dump(d) + f"id: {d['id']}-again\n"
    f = _write(tmp_path, text)
    _one_line(*_run(["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys), f, "duplicate key 'id'")
    j = tmp_path / "config.json"
    j.write_text('{"hidden_size": 4096, "hidden_size": 8192}')
    _one_line(*_run(["models", "import", str(j)], capsys), str(j), "duplicate key 'hidden_size'")


def test_json_nan_and_infinity_constants_rejected(tmp_path, capsys):
    j = tmp_path / "config.json"
    j.write_text('{"hidden_size": NaN}')
    _one_line(*_run(["models", "import", str(j)], capsys), str(j), "NaN")


def test_record_csv_header_only_and_empty(tmp_path, capsys):
    f = tmp_path / "rec.csv"
    f.write_text("id,kind,hardware,model,metric,value\n")
    _one_line(*_run(["validate", str(f)], capsys), str(f), "no records")
    f.write_text("")
    _one_line(*_run(["validate", str(f)], capsys), str(f), "empty file")


@pytest.mark.parametrize("bad_id", ["../../../escape", "/tmp/perfmodel-escape-x", "nul\0byte", "x" * 300])
def test_compile_cache_name_never_from_model_id(tmp_path, monkeypatch, bad_id):
    from perfmodel.engine import compiled as C
    cache = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("PERFMODEL_CACHE", str(cache))
    m = catalog.model("llama-3.1-8b").model_copy(update={"id": bad_id})
    C._cache.clear()
    before = set(tmp_path.rglob("*")) | set(Path("/tmp").glob("perfmodel-escape*"))
    cm = C.compiled(m)
    assert "step_s" in cm.decode.names
    after = set(tmp_path.rglob("*")) | set(Path("/tmp").glob("perfmodel-escape*"))
    new = {p for p in after - before if p.is_file()}
    assert new and all(p.parent == cache and p.name.startswith("model-") for p in new), new
    C._cache.clear()


@pytest.mark.parametrize("opt,value", [("--weights", "fp3"), ("--kv-cache", "bf17")])
def test_frontier_unknown_formats_list_choices(capsys, opt, value):
    code, err = _run(["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", opt, value], capsys)
    _one_line(code, err, repr(value), "choose one of", "fp8")


def test_long_bad_values_are_cut(tmp_path, capsys):
    d = copy.deepcopy(H100)
    d["specs"]["hbm_bandwidth_tbps"]["value"] = "x" * 5000
    f = _write(tmp_path, d)
    code, err = _run(["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys)
    _one_line(code, err, "hbm_bandwidth_tbps")
    assert len(err) < 600


# -------------------------------------------------------------- output paths
def test_models_import_output_creates_missing_directory(tmp_path, capsys):
    out = tmp_path / "nodir" / "m.yaml"
    code = main(["models", "import", str(ROOT / "tests" / "fixtures" / "hf_configs" / "deepseek-v3.json"),
                 "-o", str(out)])
    assert code == 0 and out.is_file() and "attention" in out.read_text()
    capsys.readouterr()   # the import's report lines (revision not recorded, fields not read)
    _one_line(*_run(["models", "import", str(ROOT / "tests" / "fixtures" / "hf_configs" / "deepseek-v3.json"),
                     "-o", str(tmp_path)], capsys), "--output", "is a directory")


@pytest.mark.parametrize("opts,words", [
    (["--csv", "."], ["--csv", "is a directory"]),
    (["--plot", "p.txt"], ["--plot", ".png", "p.txt"]),
    (["--csv", "afile/x.csv"], ["--csv", "is a file, not a directory"]),
])
def test_frontier_bad_output_paths_fail_before_work(tmp_path, capsys, monkeypatch, opts, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    code, err = _run(["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", *opts], capsys)
    _one_line(code, err, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_frontier_csv_into_missing_directory(tmp_path, capsys):
    out = tmp_path / "nodir" / "f.csv"
    code = main(["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--gpus", "1", "--spec-tokens",
                 "0", "--batch-points", "4", "--rows", "1", "--csv", str(out)])
    assert code == 0 and out.is_file()
    capsys.readouterr()


def _records_csv(tmp_path):
    f = tmp_path / "rec.csv"
    f.write_text((ROOT / "data" / "shared" / "calibration.csv").read_text().splitlines()[0] + "\n"
                 + "\n".join((ROOT / "data" / "shared" / "calibration.csv").read_text().splitlines()[1:3]) + "\n")
    return f


@pytest.mark.parametrize("opts,words", [
    (["--out", "."], ["--out", "is a directory"]),
    (["--plot", "p.txt"], ["--plot", ".png"]),
    (["--report", "r.txt"], ["--report", ".md"]),
])
def test_validate_bad_output_paths(tmp_path, capsys, monkeypatch, opts, words):
    f = _records_csv(tmp_path)
    monkeypatch.chdir(tmp_path)
    _one_line(*_run(["validate", str(f), "--samples", "2", *opts], capsys), *words)


def test_validate_out_into_missing_directory(tmp_path, capsys):
    f = _records_csv(tmp_path)
    out = tmp_path / "nodir" / "x.csv"
    assert main(["validate", str(f), "--samples", "2", "--out", str(out)]) == 0 and out.is_file()
    capsys.readouterr()


def test_report_and_calibrate_dirs_that_are_files(tmp_path, capsys):
    a = tmp_path / "afile"
    a.write_text("")
    _one_line(*_run(["report", "--out", str(a)], capsys), "--out", "is a file")
    _one_line(*_run(["calibrate", "--out-dir", str(a / "x"), "--dry-run"], capsys), "--out-dir", "is a file")


# -------------------------------------------------------------- no NaN/inf leaves the tool
def _strict(text):
    import json

    def bad(c):
        raise AssertionError(f"non-strict JSON constant {c}")
    return json.loads(text, parse_constant=bad)


def test_predict_json_without_price_is_strict_json(tmp_path, capsys):
    d = copy.deepcopy(H100)
    sections = [s for s in d.values() if isinstance(s, dict) and "price_usd_per_gpu_hour" in s]
    assert sections
    for sect in sections:
        del sect["price_usd_per_gpu_hour"]
    f = _write(tmp_path, d)
    assert main(["predict", "--hardware", f, "--model", "llama-3.1-8b", "--json"]) == 0
    rec = _strict(capsys.readouterr().out)
    assert rec["total_tokens_per_usd"] is None
    main(["predict", "--hardware", f, "--model", "llama-3.1-8b"])
    import re
    out = capsys.readouterr().out
    assert not re.search(r"\b(nan|inf)\b", out, re.I), out


def test_frontier_json_is_strict_for_aggregated_peaks(capsys):
    assert main(["frontier", "--model", "deepseek-v3", "--hardware", "gb200-nvl72", "--json",
                 "--profile", "dynamo-trtllm", "--batch-points", "4"]) == 0
    d = _strict(capsys.readouterr().out)
    pts = d["systems"][0]["points"]
    assert any(p["prefill_gpus"] is None for p in pts)


@pytest.mark.parametrize("kind", ["hardware", "workloads"])
def test_list_prints_no_nan(capsys, kind):
    assert main(["list", kind]) == 0
    out = capsys.readouterr().out
    assert "NaN" not in out and "nan" not in out.split()
    assert main(["list", kind, "--json"]) == 0
    _strict(capsys.readouterr().out)


def test_validate_with_no_predictable_row_fails(tmp_path, capsys):
    f = tmp_path / "rec.csv"
    f.write_text("id,kind,hardware,model,metric,value,isl,osl,engine\n"
                 "r1,point,nonexistent-gpu,llama-3.1-8b,tpot_ms,10,1000,100,vllm\n")
    code = main(["validate", str(f), "--samples", "2"])
    cap = capsys.readouterr()
    assert code == 2 and "no row of 1 could be predicted" in cap.err and len(cap.err.strip().splitlines()) == 1
    assert "nan" not in cap.out.lower().split() and "unsupported" in cap.out


# -------------------------------------------------------------- silent acceptance
PREDICT = ["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b"]


def test_zero_lengths_are_rejected_not_defaulted(capsys):
    _one_line(*_run([*PREDICT, "--isl", "0", "--osl", "0"], capsys), "workload.isl", "greater than 0")


@pytest.mark.parametrize("cmd", [PREDICT, ["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b"]])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_lengths_rejected(capsys, cmd, value):
    with pytest.raises(SystemExit) as exc:
        main([*cmd, f"--isl={value}", "--osl", "10"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1 and "--isl" in err and "finite" in err


def test_argparse_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main([*PREDICT, "--gpus", "x"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1 and "--gpus" in err


@pytest.mark.parametrize("cmd", [["predict", "--hardware", "h100-sxm"], ["frontier", "--hardware", "h100-sxm"]])
def test_empty_model_rejected(capsys, cmd):
    _one_line(*_run([*cmd, "--model", ""], capsys), "--model", "must not be empty")


def test_usable_hbm_above_capacity_rejected(tmp_path, capsys):
    f = _write(tmp_path, {"hardware": "h100-sxm", "model": "llama-3.1-8b",
                          "overrides": {"hardware": {"hbm_visible_gib": 3000}}}, "sc.yaml")
    _one_line(*_run(["predict", f], capsys), f, "overrides.hardware.hbm_visible_gib", "exceeds the capacity 80")


def test_ep_that_does_not_divide_the_experts_rejected(capsys):
    code, err = _run(["predict", "--hardware", "gb200-nvl72", "--model", "deepseek-v3", "--gpus", "7", "--tp", "1",
                      "--ep", "7", "--dp-attention"], capsys)
    _one_line(code, err, "deployment.ep", "ep=7 does not divide the 256 routed experts")


def test_prefill_pool_layout_checked(tmp_path, capsys):
    f = _write(tmp_path, {"hardware": "gb200-nvl72", "model": "deepseek-v3",
                          "deployment": {"gpus": 8, "tp": 1, "ep": 8, "dp_attention": True, "serving": "disaggregated",
                                         "decode_gpus": 8, "prefill": {"gpus": 8, "tp": 8, "ep": 1000}}}, "sc.yaml")
    _one_line(*_run(["predict", f], capsys), "deployment.prefill.ep")


def test_claimed_nan_rejected(tmp_path, capsys):
    src = sorted((ROOT / "claims").glob("*.yaml"))[0].read_text()
    assert "\nclaimed: " in src
    f = tmp_path / "c.yaml"
    f.write_text("\n".join("claimed: .nan" if ln.startswith("claimed:") else ln for ln in src.splitlines()) + "\n")
    _one_line(*_run(["check", str(f)], capsys), str(f), "claimed", "finite")


def test_variant_values_checked_when_loaded(tmp_path, capsys):
    d = copy.deepcopy(H100)
    d["variants"] = {"slow": {"description": "x", "specs": {"hbm_bandwidth_tbps": {
        "value": -1, "status": "estimate", "source": "https://example.com"}}}}
    f = _write(tmp_path, d)
    _one_line(*_run(["predict", "--hardware", f, "--model", "llama-3.1-8b"], capsys), f, "variant 'slow'")


@pytest.mark.parametrize("kind", ["hardware", "models", "workloads", "profiles", "claims"])
def test_show_file_of_every_kind(tmp_path, capsys, kind):
    src = sorted((ROOT / kind).glob("*.yaml"))[0]
    f = tmp_path / "entry.yaml"           # not in a kind folder: the kind follows from the fields
    f.write_text(src.read_text())
    assert main(["show", str(f)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"[{kind}]"


def test_json_number_out_of_range_rejected(tmp_path, capsys):
    j = tmp_path / "config.json"
    j.write_text('{"hidden_size": 1e999}')
    _one_line(*_run(["models", "import", str(j)], capsys), str(j), "out of range")


@pytest.mark.parametrize("argv,opt", [
    (["attribute", "--from", "h100-sxm", "--to", "b200", "--model", "llama-3.1-8b", "--peak", "--layouts", "0"],
     "--layouts"),
    (["sensitivity", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--batch", "0"], "--batch"),
    (["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--gpus", "0"], "--gpus"),
    (["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--max-gpus", "-2"], "--max-gpus"),
])
def test_counts_below_one_rejected_by_the_parser(capsys, argv, opt):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1 and opt in err and ">= 1" in err


def test_frontier_gpu_list_below_one_rejected(capsys):
    _one_line(*_run(["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--gpus", "0,8"], capsys),
              "--gpus", ">= 1")


def test_very_deep_flow_nesting_fails_fast(tmp_path, capsys):
    import time
    y = tmp_path / "deep.yaml"
    y.write_text("a: " + "[" * 200_000 + "]" * 200_000 + "\n")
    t0 = time.perf_counter()
    _one_line(*_run(["show", str(y)], capsys), str(y), "nested deeper")
    assert time.perf_counter() - t0 < 2


def test_unknown_variant_of_hardware_without_variants(capsys):
    _one_line(*_run(["predict", "--hardware", "h100-sxm@bad", "--model", "llama-3.1-8b"], capsys),
              "unknown variant 'bad'", "h100-sxm has no variants")


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_hf_config_non_finite_integer_field(value):
    import json

    from perfmodel.importers.hf_config import import_hf_config
    cfg = json.loads((ROOT / "tests" / "fixtures" / "hf_configs" / "deepseek-v3.json").read_text())
    cfg["hidden_size"] = value
    with pytest.raises(SpecError, match="hidden_size: expected an integer"):
        import_hf_config(cfg)


def test_ambiguous_short_name_in_whatif_is_refused_with_the_choices(capsys):
    from perfmodel.cli.main import main
    rc = main(["whatif", "--hardware", "gb300-nvl72", "--model", "deepseek-v3", "--scale", "hbm=2.4"])
    err = capsys.readouterr().err
    assert rc == 2 and "ambiguous" in err and "hbm_bandwidth" in err and "hbm_capacity" in err
    assert "Traceback" not in err


def test_memory_fit_message_agrees_with_max_batch():
    import numpy as np

    from perfmodel.serving.aggregated import fit_reasons
    r = fit_reasons(np.array([False]), np.array([1690.7]), np.array([1691.0]), np.array([1e9]),
                     np.array([1e8]), np.array([300.0]))
    assert "at most 1690 sequences fit" in r[0]


def test_version_flag(capsys):
    import pytest as _pytest

    from perfmodel import __version__
    from perfmodel.cli.main import main
    with _pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"perfmodel {__version__}"


def test_predict_csv_writes_to_the_file_it_is_given(tmp_path, capsys):
    from perfmodel.cli.main import main
    out = tmp_path / "sub" / "row.csv"
    assert main(["predict", "--hardware", "h200-sxm", "--model", "llama-3.1-8b", "--csv", str(out)]) == 0
    assert out.read_text().startswith("hardware,") or "tpot_ms" in out.read_text().splitlines()[0]
    assert main(["predict", "--hardware", "h200-sxm", "--model", "llama-3.1-8b", "--csv"]) == 0
    assert "tpot_ms" in capsys.readouterr().out


def test_catalog_is_accepted_after_the_subcommand(tmp_path, capsys):
    import shutil

    from perfmodel import catalog
    from perfmodel.cli.main import main
    (tmp_path / "hardware").mkdir()
    src = catalog.resolve_path("hardware", "h100-sxm")
    text = src.read_text().replace("id: h100-sxm", "id: my-h100", 1)
    (tmp_path / "hardware" / "my-h100.yaml").write_text(text)
    try:
        assert main(["show", "my-h100", "--catalog", str(tmp_path)]) == 0
        assert "my-h100" in capsys.readouterr().out
    finally:
        catalog._user_dirs.clear()
        shutil.rmtree(tmp_path / "hardware")


def test_unknown_id_lists_are_marked_when_cut(capsys):
    from perfmodel.cli.main import main
    assert main(["predict", "--hardware", "h100-sxm", "--model", "zzzzqqq"]) == 2
    err = capsys.readouterr().err
    assert "unknown model id 'zzzzqqq'" in err and "... (" in err and "perfmodel list models" in err


def test_list_models_json_gives_aliases_as_a_list(capsys):
    import json

    from perfmodel.cli.main import main
    assert main(["list", "models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    v3 = next(r for r in rows if r["id"] == "deepseek-v3")
    assert isinstance(v3["aliases"], list) and "deepseek-r1" in v3["aliases"]


def test_prefix_hit_alone_names_the_missing_lengths(capsys):
    from perfmodel.cli.main import main
    assert main(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--prefix-hit", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "--isl and --osl" in err and "Field required" not in err and "FixedWorkload" not in err


def test_show_lists_sources_variant_changes_and_refuses_a_wrong_variant_with_the_choices(capsys):
    from perfmodel.cli.main import main
    assert main(["show", "vr200-nvl72"]) == 0
    out = capsys.readouterr().out
    assert "sources:" in out and "hbm_bandwidth_tbps: announced: http" in out
    assert "hbm_bandwidth_tbps: 22 -> 20 [estimate]" in out and "select: vr200-nvl72@hbm-20tbps" in out
    assert main(["show", "vr200-nvl72@hbm-21tbps"]) == 2
    err = capsys.readouterr().err
    assert "unknown variant 'hbm-21tbps'" in err and "hbm-20tbps" in err and len(err.strip().splitlines()) == 1


def test_a_typo_in_an_id_is_reported_before_a_deployment_shape_problem(capsys):
    from perfmodel.cli.main import main
    assert main(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-70bx", "--gpus", "3", "--tp", "2"]) == 2
    err = capsys.readouterr().err
    assert "unknown model id 'llama-3.1-70bx'" in err and "llama-3.1-70b" in err and "tp x pp" not in err


# -------------------------------------------------------------- issue 46: an alias bomb, an enormous batch
def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    """Nine levels of nine aliases: 9^9 (387 million) values once expanded, about 500 bytes of text."""
    lines = ["bomb0: &a0 [" + ", ".join(['"x"'] * width) + "]"]
    lines += [f"bomb{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind, name", [("models", "deepseek-v3"), ("workloads", "agentx"),
                                        ("claims", "vllm-58x-at-387")])
def test_alias_bomb_appended_to_a_catalog_file_is_one_line_at_once(tmp_path, capsys, kind, name):
    import time
    path = tmp_path / f"{name}.yaml"
    path.write_text(catalog.resolve_path(kind, name).read_text() + _alias_bomb())
    t0 = time.perf_counter()
    code = main(["show", str(path)] if kind != "claims" else ["check", str(path)])
    _one_line(code, capsys.readouterr().err, str(path), "aliases expand to more than")
    assert time.perf_counter() - t0 < 1.0


def test_aliases_within_the_limit_still_load():
    from perfmodel.fileio import parse_yaml
    data = parse_yaml("base: &b {x: 1}\nuse: [*b, *b]\n")
    assert data["use"] == [{"x": 1}, {"x": 1}]


def test_enormous_batch_in_a_csv_is_written_not_a_traceback(tmp_path, capsys):
    """deployment.batch = 2^63 (beyond int64) with --csv --allow-overflow: the row is written, the batch as a
    float, not a TypeError from the integer column."""
    sc = yaml.safe_load(Path("examples/llama70b-h100.yaml").read_text())
    sc["deployment"]["batch"] = 9223372036854775808
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(sc))
    out = tmp_path / "big.csv"
    code = main(["predict", str(path), "--csv", str(out), "--allow-overflow"])
    err = capsys.readouterr().err
    assert code in (0, 1) and "Traceback" not in err, err
    header, row = out.read_text().splitlines()[:2]
    assert float(row.split(",")[header.split(",").index("batch")]) == pytest.approx(2.0 ** 63)
