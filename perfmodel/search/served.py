"""Operating points served under Poisson arrivals: the served columns an SLO reads (search/slo.py).

An aggregated fixed-length point is offered its own closed-loop request rate lambda = y G / osl (y output tokens/s
per GPU, G GPUs of the instance) as an open loop (serving/queueing.py: running batch B = lambda S, the prefill
queue M/D/c, TTFT P50/P90/P99 as the queue's quantiles, the TPOT tail from the prefill chunks a request's steps
meet); a disaggregated (or decode-only) point keeps its pools' closed loop; an agentic point its sessions (TTFT
P90/P99 not modeled: NaN, so a P90/P99 TTFT limit fails there). Units: ms, requests (or sessions) in flight.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..serving.dispatch import serve

SERVED_COLUMNS = ("ttft_ms", "ttft_p90_ms", "ttft_p99_ms", "tpot_ms", "tpot_p99_ms", "in_flight")


def poisson(setup, pts: dict, closed: pd.DataFrame, serving: str, agentic: bool, gpus: np.ndarray,
            osl: float) -> pd.DataFrame:
    """Points of ONE serving mode served under Poisson arrivals (module docstring): SERVED_COLUMNS, aligned with
    ``closed`` (the closed-loop frame of the same points). ``gpus``: GPUs per instance; ``in_flight`` requests (or
    agentic sessions) in flight per instance."""
    out = pd.DataFrame(index=range(len(closed)), columns=list(SERVED_COLUMNS), dtype=float)
    if agentic:                   # sessions: the closed loop's own columns
        out["ttft_ms"] = closed["ttft_ms"].to_numpy(float)
        out["tpot_ms"] = out["tpot_p99_ms"] = closed["tpot_ms"].to_numpy(float)
        if "sessions_per_gpu" in closed:
            out["in_flight"] = closed["sessions_per_gpu"].to_numpy(float) * gpus
        return out
    if serving == "disaggregated" or serving == "decode_only":
        df = closed
    else:
        rate = closed["output_tps_per_gpu"].to_numpy(float) * gpus / osl
        df = serve(setup, {**pts, "batch": np.nan, "arrival_rate": rate}, serving)
    for c in SERVED_COLUMNS[:-1]:
        out[c] = df[c].to_numpy(float)
    out["in_flight"] = df["concurrency"].to_numpy(float)
    return out
