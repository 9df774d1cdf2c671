"""Batch-aware speculative decoding: the best draft count per operating point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..engine.evaluate import Setup, point_arrays
from ..spec_decoding import acceptance_length
from .aggregated import evaluate

if TYPE_CHECKING:
    import pandas as pd


def best_spec_tokens(setup: Setup, points: dict, drafts=(0, 1, 2, 3, 4, 5, 6, 7), acceptance_rate: float = 0.7,
                     metric: str = "output_tps_per_gpu") -> pd.DataFrame:
    """Batch-aware speculative decoding: for each operating point, the draft count k that maximises ``metric``.

    Acceptance length per k from the per-draft rate p: a = (1 - p^(k+1)) / (1 - p). All (point, k) pairs are
    evaluated in one vectorized call. Returns the best row per point with its ``spec_tokens``.
    """
    p = point_arrays(points)
    n, ks = len(p["batch"]), np.asarray(drafts, float)
    rep = {k: np.repeat(v, len(ks)) for k, v in p.items()}
    kk = np.tile(ks, n)
    rep["spec_tokens"] = kk
    rep["acc"] = acceptance_length(acceptance_rate, kk)
    df = evaluate(setup, rep)
    score = np.where(df["fits"], df[metric].to_numpy(), -np.inf).reshape(n, len(ks))
    best = np.argmax(score, axis=1)
    return df.iloc[np.arange(n) * len(ks) + best].reset_index(drop=True)
