"""The one-point path on Python floats (serving/point.py) gives the array path's columns (aggregated.evaluate_columns):
the same names in the same order, strings and flags equal, numbers equal bit for bit (one code path over two
backends, serving/ops.py)."""

import math

import numpy as np
import pytest

from perfmodel import api, catalog
from perfmodel.serving.aggregated import evaluate_columns
from perfmodel.serving.lengths import workload_lengths
from perfmodel.serving.point import point_columns
from perfmodel.specs.deployment import Scenario

CASES = [
    # (hardware, model, profile, deployment, workload)
    ("h200-sxm", "deepseek-v3", "sglang", dict(gpus=8, tp=8, ep=8, batch=64), dict(isl=1024, osl=1024)),
    ("h200-sxm", "deepseek-v3", "sglang", dict(gpus=8, tp=8, ep=8, batch=1), dict(isl=1024, osl=1024)),
    ("h200-sxm", "deepseek-v3", "vllm", dict(gpus=8, tp=8, ep=8, batch=4000), dict(isl=1024, osl=1024)),  # no fit
    ("h100-sxm", "llama-3.3-70b", "vllm", dict(gpus=4, tp=4, batch=32), dict(isl=8000, osl=300, prefix_hit=0.5)),
    ("h100-sxm", "llama-3.3-70b", "trtllm", dict(gpus=8, tp=8, batch=256, spec_tokens=3), dict(isl=2000, osl=2000)),
    ("gb300-nvl72", "deepseek-v4.1-flash", "vllm", dict(gpus=8, tp=1, ep=8, dp_attention=True, batch=128,
                                                        weights="nvfp4"), dict(isl=30000, osl=800, prefix_hit=0.9)),
    ("vr200-nvl72", "kimi-k3", "speed-of-light", dict(gpus=16, tp=1, ep=16, dp_attention=True, batch=512,
                                                      weights="nvfp4"), dict(isl=4000, osl=1000)),
    ("b200", "qwen3-next-80b-a3b", "sglang", dict(gpus=2, tp=2, batch=100), dict(isl=16000, osl=2000)),
    ("b200", "gpt-oss-120b", "vllm", dict(gpus=1, batch=48, max_running_requests=40), dict(isl=1000, osl=1000)),
    ("h200-sxm", "deepseek-v3", "sglang", dict(gpus=8, tp=8, ep=8, batch=16, serving="decode_only"),
     dict(isl=4000, osl=500)),
    ("mi355x", "llama-3.1-8b", "vllm", dict(gpus=1, batch=512), dict(isl=512, osl=128)),
]


def _inputs(hw, model, profile, dep, wl):
    d = {"weights": "fp8", "kv_cache": "fp8", "serving": "aggregated", **dep}
    sc = Scenario.model_validate({"hardware": hw, "model": model, "profile": profile, "deployment": d,
                                  "workload": {"prefix_hit": 0.0, **wl}})
    setup, vals = api._cached_setup(sc)
    rate = setup.profile.spec_decoding.acceptance_rate
    dp = sc.deployment
    return setup, vals, api.deployment_points(dp, workload_lengths(sc.workload),
                                              dp.accepted_tokens(rate.value if rate else None))


def _same(a, b) -> bool:
    if isinstance(b, str):
        return type(a) is str and a == b
    if isinstance(b, (bool, np.bool_)):
        return type(a) is bool and a == bool(b)
    a, b = float(a), float(b)
    if math.isnan(b):
        return math.isnan(a)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]['batch']}" for c in CASES])
def test_the_float_path_gives_the_array_paths_columns(case):
    setup, vals, pts = _inputs(*case)
    got = point_columns(setup, pts, vals)
    assert got is not None, "the float path applies to a fixed batch of a catalog setup"
    want = {k: np.asarray(v).reshape(-1)[0] for k, v in evaluate_columns(setup, pts, symbol_values=vals).items()}
    assert list(got) == list(want)
    assert [k for k in want if not _same(got[k], want[k])] == []
    assert all(type(v) in (float, bool, str) for v in got.values())


def test_points_outside_its_scope_take_the_array_path():
    setup, vals, pts = _inputs(*CASES[0])
    assert point_columns(setup, {**pts, "batch": np.nan}, vals) is None               # the batch is solved
    assert point_columns(setup, {**pts, "concurrency": 100.0}, vals) is None          # clients in a closed loop
    assert point_columns(setup, {**pts, "arrival_rate": 2.0}, vals) is None           # an open loop
    assert point_columns(setup, {**pts, "batch": np.array([1.0, 2.0])}, vals) is None  # arrays of points
    assert point_columns(setup, pts, {**vals, "mixed_pf": 0.0}) is None               # prefill-first engine
    assert point_columns(setup, pts, {**vals, "e_w": np.array([0.5, 0.6])}) is None   # symbol arrays
    assert point_columns(setup, pts, {**vals, "e_w": "half"}) is None                 # no number
    assert point_columns(setup, {**pts, "osl": 0.0}, vals) is None                    # x / 0: numpy decides


def test_predict_point_takes_the_float_path_and_keeps_predicts_row():
    sc = Scenario.model_validate({"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                                  "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64},
                                  "workload": {"isl": 1024, "osl": 1024, "prefix_hit": 0.0}})
    row = api.predict(sc).iloc[0].to_dict()
    got = api.predict_point(sc)
    assert list(got) == list(row)
    assert [k for k in row if not _same(got[k], row[k])] == []
    assert catalog.model("deepseek-v3").id == got["model"]


def test_predict_point_checks_each_new_layout_once_and_still_refuses_bad_ones():
    from perfmodel.errors import SpecError

    def sc(**dep):
        return Scenario.model_validate({"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                                        "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64, **dep},
                                        "workload": {"isl": 1024, "osl": 1024}})
    api.predict_point_cache_clear()
    api.predict_point(sc())
    assert len(api._layouts_ok) == 1
    with pytest.raises(SpecError, match="does not divide"):
        api.predict_point(sc(tp=6, ep=1, gpus=6))
    with pytest.raises(SpecError, match="does not divide"):
        api.predict_point(sc(tp=6, ep=1, gpus=6))     # a refused layout is never remembered as checked
    assert len(api._layouts_ok) == 1


def test_the_predict_command_reads_an_edited_catalog_file_in_the_same_process(tmp_path, capsys):
    """perfmodel predict prints predict_point's row; a catalog file edited between two commands of one process is
    read again (the command does not keep the setups predict_point binds)."""
    import json

    import yaml

    from perfmodel.cli.main import main
    src = yaml.safe_load((catalog.builtin_root() / "hardware" / "h100-sxm.yaml").read_text())
    src["id"] = "my-h100"
    (tmp_path / "hardware").mkdir()
    path = tmp_path / "hardware" / "my-h100.yaml"
    path.write_text(yaml.safe_dump(src))
    args = ["--catalog", str(tmp_path), "predict", "--hardware", "my-h100", "--model", "llama-3.3-70b", "--gpus", "4",
            "--tp", "4", "--batch", "32", "--isl", "2000", "--osl", "500", "--json"]
    try:
        assert main(args) == 0
        first = json.loads(capsys.readouterr().out)["tpot_ms"]
        src["specs"]["hbm_bandwidth_tbps"]["value"] = src["specs"]["hbm_bandwidth_tbps"]["value"] * 2
        path.write_text(yaml.safe_dump(src) + "\n# edited\n")
        assert main(args) == 0
        second = json.loads(capsys.readouterr().out)["tpot_ms"]
    finally:
        catalog._user_dirs.clear()
        catalog._index.cache_clear()
    assert second < first
