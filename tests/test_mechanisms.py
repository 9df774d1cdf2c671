"""Physics mechanisms written but switched off (perfmodel/specs/mechanisms.py): each switch is wired (on, it moves
a number; off, the number is the one before it was written) and an unknown name is a one-line error. The numbers
with every mechanism off are pinned as a whole by tests/test_serving_reference.py (main's reference); the other
mechanisms' on/off checks sit beside their hand checks (test_kernel_bind, test_attention_phases,
test_acceptance_random, test_agentic_cliff, test_curve_end_parts)."""

from __future__ import annotations

import numpy as np
import pytest
from mechanisms_on import profile_file, profile_with

from perfmodel import api, catalog
from perfmodel.engine.evaluate import point_arrays
from perfmodel.errors import SpecError
from perfmodel.serving import sessions
from perfmodel.serving.lengths import workload_lengths
from perfmodel.specs.deployment import Scenario
from perfmodel.specs.mechanisms import MECHANISMS
from perfmodel.specs.profile import ProfileSpec

AGENTIC = {"hardware": "b200", "model": "deepseek-v4-pro",
           "deployment": {"gpus": 8, "tp": 8, "ep": 8, "weights": "mxfp4", "spec_tokens": 3, "concurrency": 64},
           "workload": "agentx"}


def _predict(folder, *mechanisms, concurrency=64):
    sc = {**AGENTIC, "profile": profile_file(folder, "sglang", *mechanisms),
          "deployment": {**AGENTIC["deployment"], "concurrency": concurrency}}
    return api.predict(Scenario.model_validate(sc)).iloc[0]


def test_catalog_profiles_name_known_mechanisms_and_an_unknown_one_is_refused():
    for pid in catalog.ids("profiles"):
        assert set(catalog.profile(pid).mechanisms) <= set(MECHANISMS)
    data = catalog.profile("vllm").model_dump(mode="json", exclude_none=True)
    with pytest.raises(ValueError, match="unknown mechanism 'warp_drive'; choose from"):
        ProfileSpec.model_validate({**data, "mechanisms": ["warp_drive"]})
    with pytest.raises(AssertionError):
        catalog.profile("vllm").uses("warp_drive")            # a typo in the code fails loudly


def test_unknown_mechanism_in_a_profile_file_is_one_line(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(open(profile_file(tmp_path, "vllm")).read() + "mechanisms: [warp_drive]\n")
    with pytest.raises(SpecError) as exc:
        catalog.profile(str(path))
    assert "mechanisms" in str(exc.value) and "\n" not in str(exc.value)


def test_agentic_lanes_switch(tmp_path):
    """On, the 64 lanes are a closed loop whose running batch is solved (capped, lanes pausing); off, the live
    sessions set the batch by inverting C(B)."""
    off, on = _predict(tmp_path), _predict(tmp_path, "agentic_lanes")
    assert on["batch"] != pytest.approx(off["batch"], rel=1e-3)


def test_kv_admitted_prefill_switch(tmp_path):
    """Past the KV cliff (256 lanes on 8 B200), requests admitted to prefill holding their KV take the room the
    idle prefixes kept: the hit falls and the TTFT grows."""
    lanes = _predict(tmp_path, "agentic_lanes", concurrency=256)
    both = _predict(tmp_path, "agentic_lanes", "kv_admitted_prefill", concurrency=256)
    assert both["prefix_hit"] < lanes["prefix_hit"] - 0.05 and both["ttft_ms"] > lanes["ttft_ms"]


def test_prefix_cache_renewal_switch():
    """On, the idle prefixes age out by the sessions' own gaps (a renewal Che law); off, the exponential law (None)."""
    dists = catalog.workload("agentx").agentic
    args = (dists, dists.pause_s, np.array([40.0]), np.array([8.0]), np.array([20.0]), "session")
    on = sessions.idle_gaps(type("S", (), {"profile": profile_with("sglang", "prefix_cache_renewal")}), *args)
    off = sessions.idle_gaps(type("S", (), {"profile": profile_with("sglang")}), *args)
    assert off is None and on is not None
    assert on.survival(np.array([0.5]))[0] != pytest.approx(0.5, abs=1e-3)      # not n / P


def test_first_turn_requests_switch():
    """On, 1 / replayed turns of the request samples prefill the whole context they start at (AgentX after its
    harness update replays from mid-trajectory): the mean sampled TTFT grows."""
    from perfmodel.api import deployment_points, setup_for
    wl = catalog.workload("agentx-062126-0730")
    sc = Scenario.model_validate({**AGENTIC, "profile": "sglang", "workload": wl.id})
    pts = {**deployment_points(sc.deployment, workload_lengths(wl), 2.0), "batch": 16.0, "concurrency": np.nan}
    mean = {}
    for label, prof in (("off", profile_with("sglang")), ("on", profile_with("sglang", "first_turn_requests"))):
        setup = setup_for(sc.hardware, sc.model, prof, sc.deployment)
        df = sessions.agentic(setup, pts, wl.agentic.pause_s, False, dists=wl.agentic)
        mean[label] = sessions._request_samples(setup, point_arrays(pts), df, wl.agentic)[0].mean()
    assert mean["on"] > 1.01 * mean["off"]


def test_record_intvty_itl_switch():
    """a205 quotes AgentX's 'intvty' (1 / ITL): on, it is read as ITL speed; off, on the workload's E2E axis."""
    from perfmodel.specs.records import read_records
    from perfmodel.validation.agentic_rows import agentic_inputs
    from perfmodel.validation.point_rows import point_inputs
    from perfmodel.validation.workload_versions import record_workload_spec, resolve_record
    rec = resolve_record(next(r for r in read_records("data/shared/agentic.csv") if r.id == "a205"))
    m, w = catalog.model(rec.model), record_workload_spec(rec)
    pts, _ = point_inputs(rec, m)
    off = agentic_inputs(rec, m, pts, w, profile_with("sglang"))
    on = agentic_inputs(rec, m, pts, w, profile_with("sglang", "record_intvty_itl"))
    assert w.interactivity == "e2e" and off.q is not None and on.q is None


def test_sessions_littles_law_switch():
    """Hand check of Little's law on the sessions: on, the live sessions of an agentic frame at a fixed batch are the
    request rate times a lane's cycle, X (mean TTFT + osl TPOT + pause); off, B (t_busy + pause) / t_busy with
    t_busy on the P50 TTFT (fewer wherever requests queue)."""
    from perfmodel.api import deployment_points, setup_for
    wl = catalog.workload("agentx")
    sc = Scenario.model_validate({**AGENTIC, "profile": "sglang"})
    lengths = workload_lengths(wl)
    pts = {**deployment_points(sc.deployment, lengths, 2.0), "batch": 48.0, "concurrency": np.nan}
    out = {}
    for label, names in (("off", ()), ("on", ("sessions_littles_law",))):
        setup = setup_for(sc.hardware, sc.model, profile_with("sglang", *names), sc.deployment)
        out[label] = sessions.agentic(setup, pts, wl.agentic.pause_s, False, dists=wl.agentic).iloc[0]
    osl, pause = point_arrays(pts)["osl"][0], wl.agentic.pause_s
    on, off = out["on"], out["off"]
    cycle = on["ttft_mean_ms"] / 1e3 + osl * on["tpot_ms"] / 1e3 + pause
    # the sessions come from the fixed point's last pass, the latencies from its final evaluation: equal to 0.1%
    assert on["sessions"] == pytest.approx(on["request_rate_per_s"] * cycle, rel=1e-3)
    busy = off["ttft_ms"] / 1e3 + osl * off["tpot_ms"] / 1e3
    assert off["sessions"] == pytest.approx(off["batch"] * (busy + pause) / busy, rel=1e-3)
    assert on["sessions"] > off["sessions"]


GB300_DISAGG = {"hardware": "gb300-nvl72", "model": "glm-5.2", "workload": "agentx",
                "deployment": {"serving": "disaggregated", "gpus": 32, "tp": 2, "ep": 32, "dp_attention": True,
                               "weights": "nvfp4", "spec_tokens": 4, "batch": 368,
                               "prefill": {"instances": 20, "gpus": 2, "tp": 1, "ep": 2, "dp_attention": True}}}


def test_frame_miss_share_hand_check():
    """e = (u - u_hit) / (isl - u_hit): a context of 100,000 tokens, 2,000 uncached on a hit, 51,000 uncached on
    average -> half the requests re-prefill the whole context; where the fixed point converged (u = isl - (1 -
    evicted)(isl - u_hit)) it is the cache model's eviction itself; off, the eviction as given."""
    from perfmodel.api import setup_for
    sc = Scenario.model_validate({**AGENTIC, "profile": "sglang"})
    on = setup_for(sc.hardware, sc.model, profile_with("sglang", "agentic_miss_from_frame"), sc.deployment)
    off = setup_for(sc.hardware, sc.model, profile_with("sglang"), sc.deployment)
    isl, u_hit = np.array([1e5, 1e5]), np.array([2e3, 2e3])
    assert sessions.frame_miss_share(on, [0.9, 0.9], isl, [51e3, 2e3], u_hit) == pytest.approx([0.5, 0.0])
    ev = np.array([0.3, 0.7])
    converged = isl - (1 - ev) * (isl - u_hit)
    assert sessions.frame_miss_share(on, [0.0, 0.0], isl, converged, u_hit) == pytest.approx(ev)
    assert sessions.frame_miss_share(off, [0.9, 0.9], isl, [51e3, 2e3], u_hit) == pytest.approx([0.9, 0.9])


def test_agentic_miss_from_frame_switch():
    """The rack-scale AgentX point of issue 53 (GB300 NVL72, GLM-5.2, Dynamo-SGLang, DEP32 decode at batch 368,
    20 two-GPU prefill workers): its fixed point stops between two states, and off, the median request read the
    next iterate's eviction (59% of the others' prefixes) while the frame's own prefix hit is 0.963, so its P50 TTFT
    (8.1 s) sat above its P90 (2.4 s). On, the request statistics read the miss share the frame holds (here 0 to
    the rounding of the hit): P50 <= P90, and every throughput and mean column is unchanged."""
    catalog_on = catalog.profile("dynamo-sglang").mechanisms
    rows = {}
    for label, names in (("off", [m for m in catalog_on if m != "agentic_miss_from_frame"]),
                         ("on", [*dict.fromkeys([*catalog_on, "agentic_miss_from_frame"])])):
        sc = Scenario.model_validate({**GB300_DISAGG, "profile": "dynamo-sglang"})
        sc = sc.model_copy(update={"profile": profile_with("dynamo-sglang", *names)})
        rows[label] = api.predict(sc).iloc[0]
    off, on = rows["off"], rows["on"]
    assert off["ttft_ms"] > off["ttft_p90_ms"] and off["evicted_share"] > 0.5      # the inconsistency, off
    assert on["ttft_ms"] <= on["ttft_p90_ms"] and on["evicted_share"] < 0.05
    for col in ("total_tps_per_gpu", "tpot_ms", "ttft_mean_ms", "prefix_hit", "uncached_input", "batch"):
        assert on[col] == pytest.approx(off[col], rel=1e-12)
