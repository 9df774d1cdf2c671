"""Issue 56 item 5: kinds of claims a new user writes, each read on the right quantity, with a hand-worked case.
Synthetic envelopes (tests/test_verdicts_readback.Synth): A f = 1e6 / x on [10, 400], B f = 5e5 / x^2 on
[10, 200], TTFT 100 ms everywhere; A/B at x reads 2 x."""

import importlib

import pytest

from perfmodel.claims.evidence import engine_family, on_steps

chk = importlib.import_module("perfmodel.claims.check")
sides = importlib.import_module("perfmodel.claims.sides")
rb = importlib.import_module("tests.test_verdicts_readback")
A, B, Synth, _claim = rb.A, rb.B, rb.Synth, rb._claim


# ------------------------------------------------------------------ a software-only multiple
def test_a_software_only_multiple_is_a_software_claim_never_beyond_physics():
    """Two builds of one engine on the same B: the model reads them alike (1x); a claimed 3.5x is 3.5x the
    model's ratio, beyond its error, and its condition is the software gap (3.5x), never a physics bound or a
    step factor (which moves both sides alike and cannot change the ratio)."""
    c = _claim(systems=[{"hardware": B, "profile": "vllm", "engine": "vLLM 0.14 (new scheduler)"},
                        {"hardware": B, "profile": "vllm", "engine": "vLLM 0.11"}], claimed=3.5)
    r = chk.check(c, Synth())
    assert r["model"]["value"] == pytest.approx(1.0)
    assert r["verdict"] == "consistent only if" and "software gap" in r["condition"]
    gap = r["conditions"][0]
    assert gap["kind"] == "software" and gap["needed"] == pytest.approx(3.5) and gap["allowed"]
    assert "vLLM 0.14 (new scheduler) 3.5x faster than vLLM 0.11" in r["condition"]
    assert "beyond physics" not in r["reason"] and "steps" not in r["condition"]
    assert "do not tell the two builds apart" in r["reason"]
    # a multiple inside the ratio's error is consistent, as any ratio
    assert chk.check(c.model_copy(update={"claimed": 1.1}), Synth())["verdict"] == "consistent"


# ------------------------------------------------------------------ per-system multiples
def test_a_per_system_multiple_is_read_per_system():
    """A 72-GPU system against an 8-GPU one: per GPU A/B at 50 tok/s/user is 100x; per system 100 x 72 / 8 = 900x.
    A claimed 900x per system is consistent; read per GPU (the old reading) it would be 9x the model's."""
    sys_ = [{"hardware": A, "profile": "vllm", "gpus_per_system": 72},
            {"hardware": B, "profile": "vllm", "gpus_per_system": 8}]
    per_rack = {"quantity": "throughput", "tokens": "total", "per": "rack"}
    r = chk.check(_claim(systems=sys_, metric=per_rack, claimed=900.0), Synth())
    assert r["model"]["value"] == pytest.approx(900.0) and r["verdict"] == "consistent"
    assert any("72 GPUs (the claim)" in a and "8 GPUs (the claim)" in a and "times 9" in a
               for a in r["assumptions"])
    # per GPU the same multiple reads 9x the model's
    r2 = chk.check(_claim(systems=sys_, claimed=900.0), Synth())
    assert r2["model"]["value"] == pytest.approx(100.0) and r2["verdict"] != "consistent"
    # without gpus_per_system: the catalog's NVLink domains (both NVL72 racks: 72 / 72)
    r3 = chk.check(_claim(metric=per_rack, claimed=100.0), Synth())
    assert r3["model"]["value"] == pytest.approx(100.0)


# ------------------------------------------------------------------ an absolute TTFT at a stated load
def test_a_ttft_at_a_single_request_is_read_on_the_ttft():
    """TTFT of one request: the curve end's (batch-1) row, 100 ms in the synthetic envelope, never the curve end's
    per-user speed (400 tok/s/user, which the old reading returned as '400 s')."""
    ttft = {"quantity": "ttft_s"}
    one = _claim(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], metric=ttft,
                 at={"point": "max_speed", "interactivity": "itl", "percentile": 50}, claimed=0.1)
    r = chk.check(one, Synth())
    assert r["model"]["value"] == pytest.approx(0.1) and r["verdict"] == "consistent"
    # at a stated speed with one request in flight (a concurrency-1 hint): the same single-request TTFT
    hinted = _claim(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], metric=ttft, claimed=0.1,
                    deployment_hints=[{"concurrency": 1}])
    r2 = chk.check(hinted, Synth())
    assert r2["model"]["value"] == pytest.approx(0.1) and r2["verdict"] == "consistent"
    assert chk.check(one.model_copy(update={"claimed": 2.0}), Synth())["verdict"] != "consistent"


# ------------------------------------------------------------------ packaging hints and the serving layout
def test_a_tray_hint_is_packaging_not_the_serving_instance():
    c = _claim(deployment_hints=[{"system": A, "gpus": 4, "note": "4-GPU compute tray"}])
    assert sides._gpus(c, A) is None
    out = {"assumptions": []}
    chk.sides_of(Synth(), c, c.model, c.workload, out)
    assert any("packaged, not the serving instance" in a for a in out["assumptions"])
    inst = _claim(deployment_hints=[{"system": A, "gpus": 4, "tp": 4, "note": "TP4 on one tray"}])
    assert sides._gpus(inst, A) == (4,)          # a layout given: the instance's size
    assert sides._gpus(_claim(deployment_hints=[{"system": A, "gpus": 8}]), A) == (8,)
    tray = _claim(deployment_hints=[{"system": A, "tray_gpus": 4}])
    assert sides._gpus(tray, A) is None


# ------------------------------------------------------------------ evidence: the same engine and workload only
def test_records_of_another_engine_or_workload_are_named_as_other_never_evidence():
    recs = (("r1", A, "m", 300.0, 1.0, "sglang", "fixed"), ("r2", A, "m", 120.0, 1.0, "trtllm", "agentic"))
    assert engine_family("dynamo-trtllm") == "trtllm" and engine_family("TensorRT-LLM") == "trtllm"
    # B's end 200 moved to 200 / 1.5 = 133 by slower steps: r1 (sglang, fixed lengths) at 300 would contradict it
    anyr = on_steps(A, "m", 1.5, 200.0, recs)
    assert anyr["tag"] == "contradicts records" and anyr["record"] == "r1"
    same = on_steps(A, "m", 1.5, 200.0, recs, engine="dynamo-trtllm", wclass="agentic")
    assert same["tag"] == "consistent with records" and same["record"] == "r2"
    none = on_steps(A, "m", 1.5, 200.0, recs, engine="vllm", wclass="agentic")
    assert none["tag"] == "vendor's word" and none["record"] is None
    assert "no record of vr200-nvl72 on m with vllm on agentic workloads" in none["text"]
    assert "other: record r1, sglang on fixed lengths, 300 tok/s/user" in none["text"]
