"""Prefill-first scheduling: prefill batches run as their own forward passes, ahead of the decode batch.

The engine behaviour (SGLang's default): ``enable_mixed_chunk`` is False
(https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py), and the scheduler's
``get_next_batch_to_run`` forms a new prefill batch from the waiting queue (chunked at ``chunked_prefill_size``
tokens) and runs it *before* the running decode batch whenever there is one
(https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/managers/scheduler.py). So a prefill never
shares a pass with decode tokens (no shared weight read), the decode batch stalls for the whole prefill pass, and
a request's chunks run back to back. The profile switch is ``features.mixed_prefill`` (True for vLLM V1 and
TensorRT-LLM, which batch prefill chunks with the decode tokens under their token budget; False is SGLang's
schedule). The shipped sglang profiles keep True for now: with False, the SGLang records of curve-end.csv at 256
to 4,096 clients are over-predicted (total_tps_per_gpu in-sample median |error| of the file 12.6% -> 20.8%), and
agentic.csv cross-validated by configuration moves 33.2% -> 32.6% only (TTFT better, throughput worse): a
mechanism that holds SGLang back at high concurrency (admission by its new-token ratio and retraction, or decode
batches beyond its CUDA-graph sizes) is still missing, and without it the prefill-first form is not an
improvement on the records.

Equations (per instance with c attention-DP ranks prefilling in parallel; seconds):
    t_pf        one request's prefill passes (its ``new`` uncached tokens after the cached prefix)
    t_s         = (new / N_ch) t_budget   (prefill-server time per request: its share of budget-sized passes,
                                          t_budget = one pass of the c N_ch budget tokens, as the mixed engine's
                                          server time without the decode step; the queue is M/G/c over them)
    T_own       = t_s                     (its own prefill phase: no decode steps in between)
    step(f)     = step0 + f (B - 1) (acc / osl) t_s / c
                                          (the decode step a running request sees: per step the other B - 1
                                          requests finish acc / osl of themselves each and are replaced, and
                                          the replacements' prefill passes stall it; a share f of them fall
                                          while it decodes, solved with the queue in ``queueing.decode_share``)
With no token budget between prefill and decode the stall is uncapped: ``chunks`` = 1 wherever there is
prefill to mix, so the budget branch of ``decode_share`` never binds.

At saturation the passes and the steps take turns: X t_s / c + X (osl / acc) step0 / B = 1 bounds the
throughput (``saturation_time``), where the mixed engine's bound is X t_s / c = 1.

Compared with mixed chunks (``aggregated.chunk_mixture``), throughput is lower (the decode batch's weight and
KV reads are not shared with the prefill), TPOT higher (every prefill stalls every decoder) and TTFT lower
(a waiting request queues behind prefills only, not behind decode steps).
"""

from __future__ import annotations

import numpy as np

from .ops import ARRAYS


def mixed(vals: dict, ops=ARRAYS):
    """1 where the engine mixes prefill chunks into the decode steps, 0 where it runs prefill first."""
    return ops.floats(vals.get("mixed_pf", 1.0))


def stall_step(p: dict, step0, t_s) -> tuple[np.ndarray, np.ndarray]:
    """(chunks, step_chunk) of a prefill-first engine for ``queueing.decode_share``: chunks = 1 where the other
    running requests bring prefill (B > 1), and the step at f = 1, step0 + (B - 1) (acc / osl) t_s / c
    (t_s: ``server_time``)."""
    c = p["gpus"] / (p["tp"] * p["pp"])
    per_step = np.maximum(p["batch"] - 1, 0.0) * p["acc"] / p["osl"]         # replacements per decode step
    chunks = np.where((per_step > 0) & (p["mix"] > 0), 1.0, 0.0)
    return chunks, np.asarray(step0, float) + chunks * per_step * np.asarray(t_s, float) / c


def server_time(t_pf, t_budget, new, n_ch_tokens, ops=ARRAYS):
    """Prefill-server seconds per request with prefill passes only: t_s = (new / N_ch) t_budget (the request's
    share of budget-sized passes of N_ch tokens per rank; short requests share a pass), t_pf without a budget."""
    return ops.where(ops.floats(t_budget) > 0, ops.maximum(new, 1.0) / n_ch_tokens * t_budget, t_pf)


def saturation_time(mixed_share, t_s, step0, p: dict, c, ops=ARRAYS):
    """Seconds of the instance per request that bound the throughput, X <= c / t_cap. Mixed engines: t_s (the
    decode batch rides in the budget steps). Prefill-first engines: the prefill passes and the decode steps take
    turns, X t_s / c + X (osl / acc) step0 / B = 1, so t_cap = t_s + c (osl / acc) step0 / B (the decode time per
    request, shared by the B requests of a step)."""
    m = ops.floats(mixed_share) > 0.5
    decode = c * p["osl"] / p["acc"] * ops.floats(step0) / ops.maximum(p["batch"], 1.0)
    return ops.where(m, t_s, ops.floats(t_s) + decode)


def own_and_serve(mixed_share, t_pf, t_budget, step0, n_ch, chunks, new, n_ch_tokens, ops=ARRAYS) -> tuple:
    """(T_own, t_s). Mixed engines (``mixed_share`` 1): T_own = t_pf + n_ch step0 (each of its n_ch chunk steps
    carries the decode batch) and t_s = (new / N_ch)(step0 + t_budget) where there is prefill to mix, else
    t_pf. Prefill-first engines (0): T_own = t_s = ``server_time`` (no decode step in between)."""
    m = ops.floats(mixed_share) > 0.5
    t_mixed = ops.where(chunks > 0, ops.maximum(new, 1.0) / n_ch_tokens * (step0 + t_budget), t_pf)
    t_first = server_time(t_pf, t_budget, new, n_ch_tokens, ops)
    return ops.where(m, t_pf + n_ch * step0, t_first), ops.where(m, t_mixed, t_first)
