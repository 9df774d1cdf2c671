"""The running-request cap a record's notes quote (mechanism record_running_cap, switched off in the catalog
profiles until its refit passes the family gate): parsed by hand-checked rules, and wired only when switched on."""

from __future__ import annotations

import math

import numpy as np
from mechanisms_on import profile_with

from perfmodel import catalog
from perfmodel.specs.records import Record, read_records
from perfmodel.validation.point_rows import point_frame, point_inputs
from perfmodel.validation.row_context import make_ctx
from perfmodel.validation.samples import central_params
from perfmodel.validation.workload_versions import record_running_cap, resolve_record


def _rec(notes: str, **kw) -> Record:
    base = dict(id="x1", kind="point", hardware="h200-sxm", model="deepseek-v4-flash", engine="sglang",
                isl=8192, osl=1024, concurrency=256, metric="tpot_ms", value=80.0, notes=notes)
    return Record.model_validate({**base, **kw})


def test_sglang_cap_is_global_and_split_over_the_dp_ranks():
    # SGLang divides --max-running-requests over attn_dp_size: 128 over 4 DP ranks is 32 per scheduler
    assert record_running_cap(_rec("--tp 4 --dp 4 --enable-dp-attention, max-running-requests 128"), 4) == 32.0
    assert record_running_cap(_rec("--max-running-requests=256"), 1) == 256.0
    assert record_running_cap(_rec("chunked-prefill 32768, max-running 256)"), 8) == 32.0
    assert record_running_cap(_rec("--max-running-requests 6"), 8) == 1.0          # at least one per scheduler


def test_vllm_cap_is_per_engine_and_the_field_comes_first():
    assert record_running_cap(_rec("vllm serve ... --max-num-seqs 512", engine="vllm"), 4) == 512.0
    assert record_running_cap(_rec("max-running-requests 128", max_running_requests=64), 4) == 64.0
    assert record_running_cap(_rec("cuda-graph-max-bs 256, mem-fraction 0.92"), 8) is None


def test_switch_off_reads_no_cap_and_on_reads_the_notes():
    rec = resolve_record(next(r for r in read_records("data/shared/agentic.csv") if r.id == "a399"))
    m = catalog.model(rec.model)
    off, _ = point_inputs(rec, m, profile_with("sglang"))
    on, _ = point_inputs(rec, m, profile_with("sglang", "record_running_cap"))
    none, _ = point_inputs(rec, m)
    assert math.isnan(off["max_running"]) and math.isnan(none["max_running"])
    dp = on["gpus"] / (on["tp"] * on["pp"])
    assert dp == 4 and on["max_running"] == 128 / 4                  # notes: --dp 4, max-running-requests 128


def test_a_stated_cap_below_the_clients_makes_the_excess_wait():
    """a399: 256 clients on a deployment whose notes cap it at 128 running: on, 128 run and the rest wait for a
    slot (TTFT up by their wait); off, the profile's cap lets nearly all run."""
    rec = resolve_record(next(r for r in read_records("data/shared/agentic.csv") if r.id == "a399"))
    out = {}
    for label, mech in (("off", ()), ("on", ("record_running_cap",))):
        rest = [m for m in catalog.profile("sglang").mechanisms if m != "record_running_cap"]
        prof = profile_with("sglang", *rest, *mech)
        out[label] = point_frame(rec, make_ctx(rec.hardware, rec, prof, central_params(prof)), []).df.iloc[0]
    assert out["on"]["batch"] <= 128 + 1e-9 < out["off"]["batch"]
    assert out["on"]["capacity_wait_ms"] > 10 * out["off"]["capacity_wait_ms"]
    assert np.isclose(out["on"]["max_batch"], 128)
