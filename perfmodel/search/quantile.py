"""TTFT at any percentile from an operating point's queue (the SLO's TTFT term where no column holds it). Units: ms."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..serving.queueing import queue_tail


def ttft_quantile_ms(df: pd.DataFrame, q: float) -> np.ndarray:
    """TTFT at percentile q (ms) from a point's queue: the mean TTFT with its mean prefill wait E[W] replaced by
    the wait's q-quantile under the queue's exponential tail (``serving/queueing.queue_tail``, P(W > 0) = rho):
        W_q = (E[W] / rho) max(0, ln(rho / (1 - q/100))),   TTFT_q = TTFT_mean - E[W] + W_q.
    The request-length spread is not in a frontier's columns, so only the queue's spread is (a lower bound on the
    benchmark's percentile where lengths vary)."""
    mean = df["ttft_mean_ms"].to_numpy(float)
    w = np.nan_to_num(df["prefill_queue_ms"].to_numpy(float)) if "prefill_queue_ms" in df else np.zeros(len(df))
    rho = np.clip(np.nan_to_num(df["prefill_utilization"].to_numpy(float)), 1e-12, 1 - 1e-9) \
        if "prefill_utilization" in df else np.full(len(df), 1e-12)
    return mean - w + queue_tail(w, rho, q / 100.0)
