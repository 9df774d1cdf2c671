"""Speculative decoding: accepted tokens per step from a per-draft acceptance rate.

With k draft tokens, each accepted only if every earlier draft was (probability p each), plus the bonus
token the verify step always yields, the expected tokens per step is the geometric sum
    a = 1 + p + p^2 + ... + p^k = (1 - p^(k+1)) / (1 - p)      (a = k + 1 at p = 1; a = 1 at k = 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import sympy as sp


def acceptance_length_expr(p: sp.Expr, k: sp.Expr) -> sp.Expr:
    """The sympy form (for derivatives)."""
    return (1 - p ** (k + 1)) / (1 - p)


def acceptance_length(rate, k) -> np.ndarray:
    """Vectorized a(p, k). A NaN rate with k > 0 gives NaN (unknown); k = 0 always gives 1."""
    p = np.asarray(rate, dtype=float)
    k = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p >= 1, k + 1, (1 - p ** (k + 1)) / np.where(p < 1, 1 - p, 1.0))
    return np.where(k > 0, a, 1.0)
