"""Physics mechanisms as profile switches. Each moves predictions of fitted rows, so each lands switched off (a
profile lists the ones it uses in ``mechanisms``) and is switched on, with a refit, only through the calibration
gate (docs/accuracy.md, the ledger). While a profile does not list a mechanism, the code computes exactly what it
did before the mechanism was written: the landing of 2026-12-07 kept every number of main's serving reference with
all of them off, and tests/test_mechanisms.py (with the hand checks it names) pins each switch both ways. The
first ten below are on in every catalog profile since the E refit, ``record_running_cap`` and
``sessions_littles_law`` since their gates of 2026-12-07, ``agentic_miss_from_frame`` since 2026-12-07 (evening:
no record's prediction moved, so no fitted value did); a new mechanism starts off.

Name -> what switching it on changes (and where the code is).
"""

from __future__ import annotations

MECHANISMS: dict[str, str] = {
    "floors_net_of_harness": (
        "kernel-table floors net of the collector's per-call node period (harness_call_us once per kernel of the "
        "measured call, MOE_KERNELS for a fused MoE call), curves whose t0 sits on its fitting bound left out of the "
        "floor's median (engine/kernel_bind.py)"),
    "mla_decode_row_tiles": (
        "MLA decode attention issues whole 64-row MMA tiles: issued / useful FLOPs = 64 ceil(r / 64) / r, "
        "r = q_len H / tp (model/mla.py, equations/step.py)"),
    "prefix_cache_renewal": (
        "the prefix cache as an LRU cache over the sessions' own idle gaps (renewal Che law, log-normal tool "
        "pauses plus the admission wait) in place of the exponential working-set law n / P "
        "(serving/prefix_cache.ReuseGaps, serving/sessions.idle_gaps)"),
    "kv_admitted_prefill": (
        "requests admitted to prefill hold their KV (n_pf = X (W_q + T_pf), Little's law), and past the KV cliff "
        "the admitted requests fill the running cap: a second pass of the agentic fixed point "
        "(serving/sessions.spare_hbm_prefixes)"),
    "agentic_lanes": (
        "an aggregated agentic deployment's concurrency is the benchmark's lanes, a closed loop whose running "
        "batch the step evaluation solves capped at the capacity, the excess waiting for a slot, instead of "
        "inverting C(B) uncapped (api.predict, serving/load.running_batch)"),
    "deepseek_mtp_random_prior": (
        "DeepSeek MTP heads on random-token benchmarks accept drafts at vLLM #41044's measured 0.614 (a prior, "
        "acceptance_priors.py) instead of the profile's rate"),
    "record_intvty_itl": (
        "a per-user speed record whose notes quote AgentX's 'intvty' is read as 1 / ITL, not on the workload's "
        "E2E axis (validation/workload_versions.record_interactivity)"),
    "envelope_over_engines": (
        "a frontier row naming no engine is read on the envelope of the default profiles (trtllm, sglang, vllm) "
        "plus variants validated mid-curve, instead of the profile and its min-latency variant "
        "(validation/envelope.envelope_members)"),
    "hit_ceiling_per_trace": (
        "a published prefix-hit ceiling bounds the trace-wide hit: later turns' new tokens scaled by "
        "k = max(1, (E[ctx](1 - h_max) - w_1 E[first]) / E[new]) in the median request and the request samples "
        "(serving/sessions.ceiling_scale)"),
    "first_turn_requests": (
        "the request samples (TTFT and E2E percentiles) include the sessions' first turns, which prefill their "
        "whole starting context (serving/sessions.first_turn_share, first_turn_tokens)"),
    "record_running_cap": (
        "a record is read with the running-request cap its notes quote from the serve flags (SGLang "
        "--max-running-requests N, global, N // dp per attention-DP scheduler; vLLM --max-num-seqs N, per engine), "
        "the clients beyond it waiting for a slot, instead of the profile's cap "
        "(validation/workload_versions.record_running_cap, validation/point_rows.point_inputs)"),
    "w4a16_without_fp4": (
        "4-bit weights (mxfp4, nvfp4) on hardware without FP4 tensor units compute at the BF16 rate, as the "
        "weight-only W4A16 kernels the engines run there do (the H100/H200 kernel tables list only w4a16_mxfp4 "
        "and int4_wo 4-bit MoE kernels), instead of the FP8 rate (engine/bind.compute_rate)"),
    "sessions_littles_law": (
        "live agentic sessions by Little's law, S = max(X (t_busy + pause), clients) with X the request rate per "
        "instance and t_busy = mean TTFT + osl TPOT, and the prefix's idle gap S / X - t_busy, instead of "
        "B (t_busy + pause) / t_busy, which counts B / t_busy requests a second and undercounts them by the share of "
        "t_busy spent queueing (serving/sessions.live_sessions, the disaggregated agentic loop)"),
    "agentic_miss_from_frame": (
        "the request statistics of an agentic frame (the median request's P50 TTFT, the request samples' TTFT "
        "percentiles and E2E interactivity) and its reported eviction read the miss share the frame was "
        "evaluated with, e = (u - u_hit) / (isl - u_hit) from its own uncached input u, instead of the next "
        "iterate's eviction, which differs where the fixed point stopped before converging "
        "(serving/sessions.frame_miss_share)"),
    "gemm_kernel_band": (
        "the GEMM efficiencies grounded in the engine's measured GEMM tables: eff_gemm and eff_gemm_fp4 searched "
        "inside the band of its production GEMM curves' large-M plateaus, eff_c k / (k + k_half) at serving "
        "reduction lengths (validation/kernel_bands.gemm_band, calibrate.engine_bounds), and the small-M loss the "
        "plateau lacks at decode shapes computed from the same tables on the GPU, not fitted: a dense GEMM runs at "
        "F e_mm M / (M + m_half) min(1, tiles / n_sm)^beta_c (equations/gemm_shape.small_m_efficiency, "
        "engine/kernel_bind.gemm_shape_values)"),
}
"""Every mechanism a profile may switch on."""


def check(names: list[str]) -> list[str]:
    """``names`` if every one is a known mechanism; else ValueError naming the unknown one and the choices."""
    for n in names:
        if n not in MECHANISMS:
            raise ValueError(f"unknown mechanism {n!r}; choose from {', '.join(sorted(MECHANISMS))}")
    return names
