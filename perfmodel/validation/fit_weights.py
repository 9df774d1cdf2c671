"""Weights of the calibration's records, so that no data family and no single row captures an engine's fit
(issue 41 item 2), and which records the speed fit reads at all.

Group of a record (``weight_group``): its data family (``Record.family``, source and kind), except that the
families of one source listed in SOURCE_FAMILIES form one group (MLPerf's Offline/Server throughputs and its
latency points are one benchmark suite: one voice, not two).

Weight of a row in a group of n_g rows (``fit_weights``):

    w_i = W_g / n_g,   W_g proportional to sqrt(n_g)   =>   w_i = 1 / sqrt(n_g)

so a group's total grows with its rows, but only as their square root: the 1,356 TensorRT-LLM rows of the
InferenceX silicon sweeps weigh sqrt(1356) = 37 single-row groups together, and each of them 1/37 of one such
row. Then the cap: no row above ROW_CAP of the total. Water-filling, w_i <- min(w_i, c) with the level c solved
from c = ROW_CAP * sum_j min(w_j, c); the rows below the level keep their ratios. With fewer than 1 / ROW_CAP
rows no weighting can meet the cap and every row weighs the same (the lowest largest share there is, 1/N).
The weights are scaled to sum to N (the loss keeps the scale of an unweighted sum).

Rows out of the speed fit (``speed_fit_row``): capacity rows (``agents_per_gpu``, the number of agents a
deployment serves under an SLO, read through an SLO search over deployments): their value moves by a whole
deployment step when a latency crosses its limit, so a fit would trade every speed parameter for one threshold.
They are predicted after the fit (``perfmodel validate``), never fitted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..specs.records import Record

ROW_CAP = 0.01                      # no row above 1% of an engine's fit
SOURCE_FAMILIES = ("mlperf",)       # file stems whose kinds (point, frontier) form one weighting group
CAPACITY_METRICS = ("agents_per_gpu",)


def weight_group(rec: Record) -> str:
    """The group a record is weighted in: its family, or its source for the SOURCE_FAMILIES."""
    fam = rec.family or "unnamed"
    stem = fam.split(":", 1)[0]
    return stem if stem in SOURCE_FAMILIES else fam


def speed_fit_row(rec: Record) -> bool:
    """False for rows the fit never reads (capacity rows behind an SLO search); True otherwise."""
    return rec.metric not in CAPACITY_METRICS


def capped(w: np.ndarray, cap: float = ROW_CAP) -> np.ndarray:
    """min(w_i, c) with c = cap * sum_j min(w_j, c) (water-filling; equal weights when len(w) < 1/cap).

    Sorting w descending as v_1 >= v_2 >= ..., with the k largest capped the level is
    c_k = cap * R_k / (1 - cap k), R_k the sum of the other rows; the solution is the first k with
    v_{k+1} <= c_k."""
    w = np.asarray(w, float)
    n = len(w)
    if n == 0:
        return w
    if n * cap <= 1.0:
        return np.full(n, float(np.mean(w)))
    v = np.sort(w)[::-1]
    rest = np.concatenate([np.cumsum(v[::-1])[::-1], [0.0]])   # rest[k] = sum of v[k:]
    for k in range(n):
        if cap * k >= 1.0:
            break
        c = cap * rest[k] / (1.0 - cap * k)
        if v[k] <= c:
            return np.minimum(w, c)
    return np.full(n, float(np.mean(w)))


def fit_weights(records: Sequence[Record], cap: float = ROW_CAP) -> np.ndarray:
    """Weight of each record (module docstring): 1/sqrt(n_g) per row of a group of n_g rows, capped at ``cap``
    of the total, scaled to sum to N."""
    groups = [weight_group(r) for r in records]
    counts = Counter(groups)
    w = capped(np.array([1.0 / np.sqrt(counts[g]) for g in groups]), cap)
    return w * (len(w) / w.sum()) if len(w) else w


def shares(records: Sequence[Record], weights: np.ndarray) -> dict[str, float]:
    """Share of the total weight per weighting group (for the profiles' calibration notes and the tests)."""
    tot = float(np.sum(weights))
    out: dict[str, float] = {}
    for r, w in zip(records, weights):
        g = weight_group(r)
        out[g] = out.get(g, 0.0) + float(w) / tot
    return out
