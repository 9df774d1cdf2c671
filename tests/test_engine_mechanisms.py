"""Hand checks of the serving mechanisms of issue 22: memory as the engine sees it (GiB), the running-request
cap, the scheduler cost per attention-DP rank, and refusal (never flooring) of deployments that do not fit."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.engine.bind import hardware_fields, hbm_bytes
from perfmodel.engine.evaluate import Setup
from perfmodel.serving.aggregated import evaluate
from perfmodel.specs.records import Record
from perfmodel.validation.predict_rows import predict_record
from perfmodel.validation.row_context import Unsupported
from perfmodel.validation.samples import central_params


def _eval(model="llama-3.1-70b", hw="h100-sxm", profile="vllm", overrides=None, **pts):
    s = Setup(catalog.hardware(hw), catalog.model(model), catalog.profile(profile), weights="fp8", kv_cache="fp8",
              profile_overrides=overrides or {})
    p = dict(batch=np.array([1.0]), gpus=1.0, tp=1.0, ep=1.0, pp=1.0, spec_tokens=0.0, acc=1.0, isl=1024.0,
             osl=1024.0, new=1024.0, mix=0.0)
    p.update(pts)
    return evaluate(s, p)


def test_hbm_is_what_the_runtime_reports_in_gib():
    f = hardware_fields(catalog.hardware("h100-sxm"))
    assert hbm_bytes(f) == pytest.approx(79.2 * 2 ** 30)           # not 80e9: 85.0e9 bytes
    assert hbm_bytes(f) > 80e9
    # a what-if on the marketed capacity scales what the engine sees with it
    f2 = hardware_fields(catalog.hardware("h100-sxm"), {"hbm_capacity_gb": 160.0})
    assert hbm_bytes(f2) == pytest.approx(2 * 79.2 * 2 ** 30)


def test_running_cap_bounds_the_batch_per_scheduler():
    free = _eval(model="llama-3.1-8b", overrides={"max_running_requests": 1e6}).iloc[0]
    capped = _eval(model="llama-3.1-8b", overrides={"max_running_requests": 64}).iloc[0]
    assert free["kv_max_batch"] > 64
    assert capped["max_batch"] == 64 and capped["kv_max_batch"] == free["kv_max_batch"]
    # two attention-DP ranks (2 GPUs, tp 1): two schedulers, twice the cap
    dp2 = _eval(model="llama-3.1-8b", overrides={"max_running_requests": 64}, gpus=2.0).iloc[0]
    assert dp2["max_batch"] == 128
    # a batch over the cap does not fit and says which limit it hit; the deployment's own cap overrides
    over = _eval(model="llama-3.1-8b", overrides={"max_running_requests": 64}, batch=np.array([100.0])).iloc[0]
    assert not over["fits"] and "running-request cap of 64" in over["fit_reason"]
    own = _eval(model="llama-3.1-8b", overrides={"max_running_requests": 64}, max_running=np.array([200.0])).iloc[0]
    assert own["max_batch"] == 200


def test_blank_batch_is_the_engine_default_load():
    """A blank batch (an offline run) is min(KV capacity, running cap), the engine's own default load."""
    r = _eval(model="llama-3.1-8b", overrides={"max_running_requests": 96}, batch=np.array([np.nan])).iloc[0]
    assert r["batch"] == 96


def test_scheduler_cost_is_per_attention_dp_rank():
    """t_overhead = t_step + (B / dp) t_seq: each DP rank schedules its own sequences, in parallel."""
    ov = {"step_overhead_ms": 1.0, "seq_overhead_us": 10.0}
    B = 256.0
    one = _eval(model="deepseek-v3", hw="b200", overrides=ov, batch=np.array([B]), gpus=8.0, tp=8.0, ep=8.0).iloc[0]
    dp8 = _eval(model="deepseek-v3", hw="b200", overrides=ov, batch=np.array([B]), gpus=8.0, tp=1.0, ep=8.0).iloc[0]
    assert one["t_overhead_ms"] == pytest.approx(1.0 + B * 10e-3)
    assert dp8["t_overhead_ms"] == pytest.approx(1.0 + B / 8 * 10e-3)


def test_weights_that_do_not_fit_are_refused_not_floored():
    # DeepSeek-V3 in FP8 (~670 GB) on one 141 GB GPU
    r = _eval(model="deepseek-v3", hw="h200-sxm", batch=np.array([np.nan])).iloc[0]
    assert r["kv_max_batch"] == 0 and not r["fits"] and "leave no room" in r["fit_reason"]
    rec = Record(id="x", kind="point", hardware="h200-sxm", model="deepseek-v3", engine="vllm", gpus=1, tp=1,
                 isl=1024, osl=1024, concurrency=64, metric="tpot_ms", value=20.0)
    with pytest.raises(Unsupported, match="memory: weights"):
        predict_record(rec, catalog.profile("vllm"), central_params(catalog.profile("vllm")))


@pytest.mark.parametrize("model,hw,pts", [
    ("deepseek-v3", "b200", dict(batch=np.array([1.0]), gpus=8.0, tp=8.0, ep=8.0)),
    ("deepseek-v3", "b200", dict(batch=np.array([256.0]), gpus=8.0, tp=1.0, ep=8.0, spec_tokens=2.0, acc=2.5)),
    ("llama-3.1-70b", "h200-sxm", dict(batch=np.array([64.0]), gpus=4.0, tp=4.0, mix=1.0))])
def test_the_step_parts_add_up_to_the_step(model, hw, pts):
    """The parts the claims report names as what sets a curve end (kernels by group, collective latencies,
    launches and floors, layer floors, scheduler, link, drafts) sum to the decode step."""
    from perfmodel.claims.curves import STEP_PARTS, step_contributors
    r = _eval(model=model, hw=hw, **pts).iloc[0]
    assert sum(r[k] for k in STEP_PARTS if k in r.index) == pytest.approx(r["step_ms"], rel=1e-9)
    top = step_contributors(r)
    assert len(top) == 3 and top[0]["ms"] >= top[1]["ms"] >= top[2]["ms"] > 0
    assert all(0 < p["share"] <= 1 for p in top)


def test_an_overlap_scheduler_hides_the_cpu_step_behind_the_gpu():
    """step = gpu + cpu - q_os min(cpu, gpu): with the overlap scheduler the step is the longer of the two."""
    ov = {"step_overhead_ms": 1.0, "seq_overhead_us": 10.0, "kernel_floor_share": 0.0}
    B = 64.0
    add = _eval(model="llama-3.1-8b", overrides={**ov, "scheduler_overlap": 0.0}, batch=np.array([B])).iloc[0]
    hid = _eval(model="llama-3.1-8b", overrides={**ov, "scheduler_overlap": 1.0}, batch=np.array([B])).iloc[0]
    cpu = 1.0 + B * 10e-3
    gpu = add["step_ms"] - cpu
    assert add["t_overhead_ms"] == pytest.approx(cpu)
    assert hid["step_ms"] == pytest.approx(max(gpu, cpu))
    assert hid["t_overhead_ms"] == pytest.approx(max(cpu - gpu, 0.0))      # the visible part: the parts still add
