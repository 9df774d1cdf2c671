"""Re-evaluate only the operating points whose inputs changed (fixed-point iterations over many points).

An iteration such as the agentic KV-residency fixed point (``serving.agentic``) changes a few inputs of a
few points per pass (measured on the claims report: ~5% of the points). Every point is evaluated on its
own (the engine is elementwise over points), so the unchanged points' columns are kept as they are and
only the changed ones are evaluated again: the same numbers as evaluating them all.
"""

from __future__ import annotations

import numpy as np

from .evaluate import Setup, evaluate_columns


def _take(v, idx: np.ndarray, n: int):
    """``v`` at the points ``idx`` if it holds one value per point, else ``v`` (a scalar shared by all)."""
    return np.asarray(v)[idx] if np.ndim(v) == 1 and np.size(v) == n else v


def _put(a: np.ndarray, idx: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A copy of column ``a`` with the points ``idx`` replaced by ``b`` (text columns widened to fit)."""
    out = np.array(a, dtype=np.promote_types(a.dtype, b.dtype) if a.dtype.kind == "U" else a.dtype)
    out[idx] = b
    return out


def reevaluate(setup: Setup, points: dict, symbol_values: dict, cols: dict | None, last: dict | None,
               changing: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``evaluate_columns(setup, points)``, given ``cols``, the columns evaluated at ``last`` (None: none
    yet), where ``points`` differs from ``last`` only in the keys ``changing``."""
    if cols is None:
        return evaluate_columns(setup, points, symbol_values=symbol_values)
    n = len(cols["tpot_ms"])
    changed = np.zeros(n, bool)
    for k in changing:
        changed |= np.broadcast_to(np.asarray(points[k]) != np.asarray(last[k]), (n,))
    if not changed.any():
        return cols
    idx = np.nonzero(changed)[0]
    sub = evaluate_columns(setup, {k: _take(v, idx, n) for k, v in points.items()},
                           symbol_values={k: _take(v, idx, n) for k, v in symbol_values.items()})
    full = {k: np.broadcast_to(np.asarray(v), (n,)) for k, v in cols.items()}
    return {k: _put(full[k], idx, np.broadcast_to(np.asarray(sub[k]), (len(idx),))) for k in cols}
