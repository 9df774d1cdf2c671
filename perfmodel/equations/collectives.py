"""Collective latency by algorithm, group size and message size.

The bandwidth term of an all-reduce of m bytes per GPU over n GPUs, 2 (n - 1)/n m / (BW e_ln) (ring, two-shot
and NVLS move the same bytes per GPU), is link time in step.py and may hide behind compute. What the algorithm
adds on top is its latency, which no GPU can hide (every rank waits for the slowest peer). The engine runs
the fastest algorithm it has for the message:

    one-shot (engine's custom kernel, n <= n_cus):   a_1s n^g_1s + (n - 1)(1 - 2/n) m / (BW_link e_ln)
        without a kernel fit a_1s = 2 a, g_1s = 0: two barriers (start, end) of one scale-up hop a each; every
        GPU reads all n - 1 peers' m bytes, i.e. (n - 1) m instead of the ring's 2 (n - 1)/n m: the extra bytes
        are what one-shot pays for one step
    two-shot (custom, n <= n_cus):                   a_2s n^g_2s
        without a kernel fit a_2s = 3 a, g_2s = 0: reduce-scatter then all-gather with barriers before,
        between and after
        (with a fit of the engine's custom all-reduce on that GPU, a_1s, g_1s, a_2s, g_2s are its measured
        small-message latencies and their growth with the group: kernels/collectives.py, engine/kernel_bind.py)
    NCCL ring, LL protocol:                          a_ring + 2 (n - 1 - n_x) h_nvl + 2 n_x h_net
        2 (n - 1) sequential steps, n_x = n / D_dom of them cross the NIC when the group spans whole
        domains (none inside one domain)
    NCCL NVLS (in-switch reduction, one domain):     a_nvls          (n <= D_dom)

    lat_AR(n, m) = min(one-shot, two-shot, ring, NVLS) over the algorithms available,
with a = lat_link (hardware) and the custom kernels limited to n <= min(n_cus, D_dom) (profile: vLLM and
SGLang serve world sizes up to 8, larger groups fall back to NCCL). An unavailable algorithm gets a penalty
of UNAVAILABLE_S seconds, which never wins.

The expert all-to-all (dispatch and combine) pays one scale-up hop, plus one NIC hop h_net when the instance
spans domains: lat_A2A = a + [G > D_dom] h_net.

The NCCL constants come from NCCL's own tuning model (src/graph/tuning.cc: baseLat and hwLat tables), which
NCCL uses to choose its algorithm; they are per fabric (NVLink vs network), not per GPU generation.
"""

from __future__ import annotations

from ..specs.common import Sourced

# the sympy terms (roofline, symbols) are imported where a term is built: the numeric constants and binders
# below serve the engine without sympy

_NCCL = "https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc"

COLLECTIVE_CONSTANTS: dict[str, Sourced] = {
    "ring_base_us": Sourced(value=6.6, status="datasheet", source=_NCCL,
                            note="baseLat[Ring][LL] (NCCL 2.18+; 3.6 us in NCCL 2.7). Base latency of a ring "
                                 "all-reduce in NCCL's tuning model."),
    "nvlink_step_us": Sourced(value=0.6, status="datasheet", source=_NCCL,
                              note="hwLat[NVLINK][Ring][LL] (0.47 us in NCCL 2.7): latency per ring step over "
                                   "NVLink."),
    "net_step_us": Sourced(value=2.7, status="datasheet", source=_NCCL,
                           note="hwLat[NET][Ring][LL]: latency per ring step over the scale-out network; also "
                                "used as the NIC hop of the expert all-to-all across domains."),
    "nvls_us": Sourced(value=23.0, status="datasheet", source=_NCCL,
                       note="hwLat[NVLINK][NVLS][Simple]: NVLink SHARP (in-switch reduction) all-reduce latency, "
                            "independent of the group size inside one NVLink domain (NCCL 2.17+)."),
}

UNAVAILABLE_S = 1.0   # penalty for an algorithm the engine or fabric does not offer (never the minimum)


FABRIC_SYMBOLS = {"a_ring": "ring_base_us", "h_nvl": "nvlink_step_us", "h_net": "net_step_us", "a_nvls": "nvls_us"}


def bind_fabric() -> dict[str, float]:
    """Fabric symbol -> seconds, from COLLECTIVE_CONSTANTS."""
    return {sym: COLLECTIVE_CONSTANTS[name].value * 1e-6 for sym, name in FABRIC_SYMBOLS.items()}


def default_custom_latencies(lat_link_s: float) -> dict[str, float]:
    """The custom all-reduce latency law without a kernel fit: one-shot 2 a, two-shot 3 a (a = lat_link)."""
    return {"a_1s": 2 * lat_link_s, "g_1s": 0.0, "a_2s": 3 * lat_link_s, "g_2s": 0.0}


def at_most(n, limit):
    """1 if the integer n <= limit else 0 (integers): min(1, max(0, limit + 1 - n))."""
    from .roofline import smax, smin
    return smin(1, smax(0, limit + 1 - n))


def allreduce_latency(n, m):
    """Latency of one all-reduce of m bytes per GPU over n GPUs, seconds (0 for n = 1); see module docstring."""
    from .roofline import smin
    from .symbols import S
    s = S
    bw = s["BW_link"] * s["e_ln"]
    custom_ok = at_most(n, smin(s["n_cus"], s["D_dom"]))
    penalty = (1 - custom_ok) * UNAVAILABLE_S
    one_shot = s["a_1s"] * n ** s["g_1s"] + (n - 1) * (1 - 2 / n) * m / bw + penalty
    two_shot = s["a_2s"] * n ** s["g_2s"] + penalty
    n_x = spans_domains(n / s["D_dom"]) * n / s["D_dom"]     # domains spanned (groups are whole domains)
    ring = s["a_ring"] + 2 * (n - 1 - n_x) * s["h_nvl"] + 2 * n_x * s["h_net"]
    nvls = s["a_nvls"] + (1 - at_most(n, s["D_dom"])) * UNAVAILABLE_S
    best = smin(smin(one_shot, two_shot), smin(ring, nvls))
    return smin(1, n - 1) * best


def spans_domains(x):
    """1 if x = n / D_dom > 1 else 0, for integers n and D_dom <= 1000 (x > 1 means x >= 1 + 1/D_dom, so the
    slope 1000 turns the smallest step above 1 into a full 1)."""
    from .roofline import smax, smin
    return smin(1, smax(0, (x - 1) * 1000))


def alltoall_latency():
    """Latency of one expert all-to-all phase (dispatch or combine), seconds: one scale-up hop, plus a NIC hop
    when the instance of G GPUs spans scale-up domains."""
    from .symbols import S
    s = S
    return s["lat_link"] + spans_domains(s["G"] / s["D_dom"]) * s["h_net"]
