"""The GEMM-shape physics of ``equations/gemm_shape.py`` (tile padding, SM waves) compiled to numpy.

The same sympy expressions the serving model uses are lambdified once, so the kernel fits and the engine
share one definition of issued work:
    dense:   2 K N rows_pad(M) / u(ceil(M / M_t) ceil(N / N_t))
    grouped: 2 K N max(D m, A + D m / 2) / u_grouped,  m = min(M_t, max(m_min, A / D))
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

TILE_M, TILE_N, TILE_M_MIN = 128.0, 128.0, 16.0
"""Tile sizes of the fits: the profiles' defaults (gemm_tile_m, gemm_tile_n, gemm_tile_m_min)."""


@lru_cache(maxsize=None)
def _compiled():
    from ..engine.compiled import NUMPY_MODULES
    from ..equations import gemm_shape as gs
    from ..equations.symbols import S
    tok, w, kd, a, d = sp.symbols("tok w kd a d", positive=True)
    shape = [S["n_sm"], S["M_t"], S["N_t"], S["m_min"]]
    dense = sp.lambdify([tok, w, kd, *shape], gs.dense_issued_flops(w, tok, kd), modules=NUMPY_MODULES)
    grouped = sp.lambdify([w, a, d, kd, *shape], gs.grouped_issued_flops(w, a, d, kd), modules=NUMPY_MODULES)
    return dense, grouped


def dense_issued_flops(m, n, k, n_sm, tile_m=TILE_M, tile_n=TILE_N, tile_m_min=TILE_M_MIN):
    """Issued FLOP-equivalents of an (m x k) (k x n) GEMM on ``n_sm`` SMs (gemm_shape.dense_issued_flops)."""
    m, n, k = (np.asarray(x, dtype=float) for x in (m, n, k))
    return np.broadcast_to(_compiled()[0](m, n * k, k, n_sm, tile_m, tile_n, tile_m_min), m.shape).astype(float)


def grouped_issued_flops(weights_per_expert, pairs, experts, k, n_sm, tile_m=TILE_M, tile_n=TILE_N,
                         tile_m_min=TILE_M_MIN):
    """Issued FLOP-equivalents of a grouped GEMM (gemm_shape.grouped_issued_flops)."""
    w, a, d, k = (np.asarray(x, dtype=float) for x in (weights_per_expert, pairs, experts, k))
    return _compiled()[1](w, a, d, k, n_sm, tile_m, tile_n, tile_m_min) * np.ones_like(a)
