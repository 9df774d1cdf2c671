"""Picks over admissible points (fitting, finite, meeting the SLO): the best value per sample (``best``), the best
point (``best_index``), the best distinct layouts (``top_k``), or the envelope of an objective against tokens/s per
user (``pareto_index``). Values in the objective's unit."""

from __future__ import annotations

import numpy as np
import pandas as pd


def best(value: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Best ``value`` over the last axis among the ``ok`` points (shape value.shape[:-1]; -inf where none is ok),
    in ``value``'s unit."""
    return np.where(ok, value, -np.inf).max(axis=-1)


def best_index(value: np.ndarray, ok: np.ndarray) -> int:
    """Index of the best ``value`` among the ``ok`` points of a 1-D array (the first on ties; 0 where none is ok)."""
    return int(np.argmax(np.where(ok, value, -np.inf)))


def fewest_index(value: np.ndarray, ok: np.ndarray) -> int:
    """Index of the lowest ``value`` among the ``ok`` points of a 1-D array (the first on ties; 0 where none is ok)."""
    return int(np.argmin(np.where(ok, value, np.inf)))


def top_k(frame: pd.DataFrame, score: pd.Series, key: list[str], k: int) -> pd.DataFrame:
    """The ``k`` rows of ``frame`` with the highest ``score`` (NaN: not admissible), one per distinct ``key``."""
    c = frame.assign(_score=score).dropna(subset=["_score"])
    return c.sort_values("_score", ascending=False).drop_duplicates(key).head(k)


def pareto_index(x: np.ndarray, y: np.ndarray, bins: int = 4096) -> np.ndarray:
    """Indices of the upper-right envelope, ordered by x ascending (y strictly decreasing).

    A linear pre-pass drops points beaten by the best point of a higher log-x bin; the exact sweep runs on
    the few that remain.
    """
    ok = np.nonzero(np.isfinite(x) & np.isfinite(y) & (x > 0))[0]
    if len(ok) == 0:
        return ok
    if len(ok) > 4 * bins:
        lx = np.log(x[ok])
        lo, hi = lx.min(), lx.max()
        b = np.minimum(((lx - lo) / max(hi - lo, 1e-300) * bins).astype(np.int64), bins - 1)
        top = np.full(bins + 1, -np.inf)
        np.maximum.at(top, b, y[ok])
        above = np.maximum.accumulate(top[::-1])[::-1]      # best y in bins >= k
        ok = ok[y[ok] > above[b + 1]]
    order = ok[np.lexsort((-y[ok], -x[ok]))]          # x descending, ties: y descending
    ys = y[order]
    best_before = np.concatenate(([-np.inf], np.maximum.accumulate(ys)[:-1]))
    return order[ys > best_before][::-1]
