"""Operating points served under Poisson arrivals, and the ONE served-capacity law a plan sizes every demand with.

**Served points** (``poisson``, the columns an SLO reads, search/slo.py). An aggregated fixed-length point is
offered its own closed-loop request rate lambda = y G / osl (y output tokens/s per GPU, G GPUs of the instance) as
an open loop (serving/queueing.py: running batch B = lambda S, the prefill queue M/D/c, TTFT P50/P90/P99 as the
queue's quantiles, the TPOT tail from the prefill chunks a request's steps meet); a disaggregated (or decode-only)
point keeps its pools' closed loop; an agentic point its sessions (the closed loop's TTFT P50/P90/P99 and TPOT
mean/P99, the columns the agents capacity reads, analyses/agents.py). TPOT P90 follows from the mean and the P99
(``tpot_p90_ms``); the per-user speeds on the E2E-normalised axis, osl / (TTFT_q + osl TPOT), at P50 and P90 are
the frame's (AgentX's axis). ``ttft_mean_ms`` is the mean TTFT, the one Little's law reads. Units: ms, tokens/s.

**The served-capacity law** (``unit_rate``, ``demand_rate``): one deployment unit (an instance, or both pools of
a disaggregated split) of u GPUs at y output tokens/s per GPU serves

    r = y u / osl                                      requests/s (osl: mean output tokens per request)

Every demand is a request rate lambda, and the units it needs are n = ceil(lambda / (r (1 - h))) (headroom h):
    requests_per_s   lambda = D
    output_tps       lambda = T / osl
    tokens_per_day   lambda = T_day / 86400 / osl
    users            lambda = N / R                    (Little's law, N = lambda R: each user holds one request in
                                                        flight, R = E[TTFT] + osl E[TPOT] its mean response time, s)
    sessions         lambda = N / (R + Z)              (Little's law over a session's cycle: a response then a
                                                        mean tool pause Z, s; agentic workloads)
so one unit holds r R users, or r (R + Z) sessions, at capacity. The law is the same for aggregated,
disaggregated and agentic deployments: only r, R and Z are the point's.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from ..errors import SpecError
from ..serving.dispatch import serve

SERVED_COLUMNS = ("ttft_ms", "ttft_p90_ms", "ttft_p99_ms", "tpot_ms", "tpot_p90_ms", "tpot_p99_ms", "ttft_mean_ms",
                  "tps_per_user_e2e_p50", "tps_per_user_e2e_p90")
RATE_KINDS = ("requests_per_s", "output_tps", "tokens_per_day")
LITTLE_KINDS = ("users", "sessions")
_Z90_OVER_Z99 = NormalDist().inv_cdf(0.90) / NormalDist().inv_cdf(0.99)


def tpot_p90_ms(tpot_ms, tpot_p99_ms) -> np.ndarray:
    """TPOT P90 from the mean and the P99 (ms): the TPOT tail is normal in the number of chunk steps a request
    meets (serving/queueing.tpot_quantile: TPOT_q = TPOT_mean + z_q sd), so
        TPOT_90 = TPOT_mean + (z_0.90 / z_0.99) (TPOT_99 - TPOT_mean),   z_0.90 / z_0.99 = 1.2816 / 2.3263.
    Where no prefill mixes into the decode steps (disaggregated pools) TPOT_99 = TPOT_mean and so is TPOT_90."""
    m = np.asarray(tpot_ms, float)
    return m + _Z90_OVER_Z99 * (np.asarray(tpot_p99_ms, float) - m)


def poisson(setup, pts: dict, closed: pd.DataFrame, serving: str, agentic: bool, gpus: np.ndarray,
            osl: float) -> pd.DataFrame:
    """Points of ONE serving mode served under Poisson arrivals (module docstring): SERVED_COLUMNS, aligned with
    ``closed`` (the closed-loop frame of the same points). ``gpus``: GPUs per instance. A column the serving
    frame does not carry is NaN (its SLO term fails: not modeled)."""
    if agentic or serving == "disaggregated" or serving == "decode_only":
        df = closed               # sessions, or pools: the closed loop's own columns
    else:
        rate = closed["output_tps_per_gpu"].to_numpy(float) * gpus / osl
        df = serve(setup, {**pts, "batch": np.nan, "arrival_rate": rate}, serving)
    out = pd.DataFrame(index=range(len(closed)), columns=list(SERVED_COLUMNS), dtype=float)
    for c in SERVED_COLUMNS:
        out[c] = df[c].to_numpy(float) if c in df else np.nan
    out["tpot_p90_ms"] = tpot_p90_ms(out["tpot_ms"], out["tpot_p99_ms"])
    return out


def unit_rate(output_tps_per_gpu, unit_gpus, osl: float) -> np.ndarray:
    """r = y u / osl: requests/s one unit of ``unit_gpus`` GPUs serves at ``output_tps_per_gpu`` (module
    docstring)."""
    return np.asarray(output_tps_per_gpu, float) * np.asarray(unit_gpus, float) / float(osl)


def response_s(ttft_mean_ms, tpot_ms, osl: float) -> np.ndarray:
    """R = E[TTFT] / 1e3 + osl E[TPOT] / 1e3: a request's mean response time, s (TTFT and TPOT means in ms)."""
    return np.asarray(ttft_mean_ms, float) / 1e3 + float(osl) * np.asarray(tpot_ms, float) / 1e3


def cycle_s(kind: str, response: np.ndarray, pause_s: float) -> np.ndarray:
    """The time one unit of demand holds per request (Little's law's W, s): R for users, R + Z for sessions."""
    if kind not in LITTLE_KINDS:
        raise SpecError(f"no Little's-law cycle for a demand in {kind}", field="demand")
    return np.asarray(response, float) + (float(pause_s) if kind == "sessions" else 0.0)


def demand_rate(kind: str, value: float, osl: float, response: np.ndarray | None = None,
                pause_s: float = 0.0) -> np.ndarray | float:
    """lambda, requests/s: a demand of ``kind`` and ``value`` as a request rate (module docstring). ``response``
    (R per point, s) is needed for users and sessions; the result is then one rate per point."""
    if kind == "requests_per_s":
        return float(value)
    if kind == "output_tps":
        return float(value) / osl
    if kind == "tokens_per_day":
        return float(value) / 86400.0 / osl
    if response is None:
        raise SpecError(f"a demand in {kind} needs each point's response time", field="demand")
    w = cycle_s(kind, response, pause_s)
    return np.where(w > 0, float(value) / np.where(w > 0, w, 1.0), np.nan)


def units_needed(rate, r: np.ndarray, headroom: float = 0.0) -> np.ndarray:
    """n = ceil(lambda / (r (1 - h))): whole units carrying ``rate`` requests/s at ``r`` per unit, headroom h
    (NaN where r is not positive)."""
    r = np.asarray(r, float)
    cap = r * (1.0 - headroom)
    return np.where(cap > 0, np.ceil(np.asarray(rate, float) / np.where(cap > 0, cap, 1.0) - 1e-9), np.nan)
