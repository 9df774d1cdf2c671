"""Shared fit machinery: whole-group held-out split, least squares on ln latency, error summary.

Every family's curve is ``latency = f(shape; theta)``; theta is fitted by ``scipy.optimize.least_squares``
on r = ln f - ln t_measured over the training rows (Cauchy loss at 5%, robust to the odd shapes where a
kernel switches configuration; bounded parameters). The held-out rows are
whole shape groups (a group is held out when crc32 of its key is 0 mod 5), so the score measures
extrapolation to shapes the fit never saw: median |f / t - 1| in percent over the held-out rows.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

HOLDOUT_MODULUS = 5
"""One shape group in five (by hash) is held out."""
MAX_TRAIN_ROWS = 2000
"""Training rows per fit (a deterministic subsample above this keeps the run under a few minutes)."""


def group_hash(keys: pd.DataFrame) -> np.ndarray:
    """crc32 of each row's group key (its columns joined as text): stable across runs and platforms."""
    cols = [keys[c].astype(str) for c in keys.columns]
    text = cols[0].str.cat(cols[1:], sep="|") if len(cols) > 1 else cols[0]
    uniq, inv = np.unique(text.to_numpy(dtype=str), return_inverse=True)
    h = np.array([zlib.crc32(u.encode()) for u in uniq], dtype=np.uint64)
    return h[inv]


def held_out_mask(keys: pd.DataFrame, modulus: int = HOLDOUT_MODULUS) -> np.ndarray:
    """True for rows whose whole group is held out; a group is never split.

    The distinct groups are ordered by crc32 of their key and every ``modulus``-th (positions 0, 5, 10, ...)
    is held out: deterministic, about one in ``modulus``, and at least one group when there are two or more."""
    h = group_hash(keys)
    uniq = np.unique(h)
    if uniq.size < 2:
        return np.zeros(len(h), dtype=bool)
    held = uniq[::modulus]
    return np.isin(h, held)


@dataclass
class Param:
    """One fitted parameter: name, start, bounds, and how it is stored (``log``: fitted as ln value)."""

    name: str
    start: float
    low: float
    high: float
    log: bool = True
    unit: str = ""
    doc: str = ""


@dataclass
class Fit:
    """A fitted curve for one (family, gpu, engine, variant)."""

    family: str
    gpu: str
    engine: str
    variant: str
    params: dict[str, float]
    n_train: int
    n_held_out: int
    held_out_groups: int
    rel_err: np.ndarray = field(repr=False)           # pred / meas - 1 on held-out rows
    measured: np.ndarray = field(repr=False)          # held-out measured latency, ms
    predicted: np.ndarray = field(repr=False)         # held-out predicted latency, ms
    size: np.ndarray = field(repr=False)              # a shape size for plots (FLOPs, bytes, tokens, ...)
    table: str = ""

    @property
    def median_abs_err_pct(self) -> float:
        return float(np.median(np.abs(self.rel_err)) * 100) if self.rel_err.size else float("nan")


def fit_curve(model: Callable[[dict, dict], np.ndarray], params: list[Param], feats: dict[str, np.ndarray],
              latency_ms: np.ndarray, train: np.ndarray) -> dict[str, float]:
    """Least squares on ln(model / measured) over ``train`` rows; returns name -> value (in natural units)."""
    idx = np.flatnonzero(train)
    if idx.size > MAX_TRAIN_ROWS:
        idx = idx[np.linspace(0, idx.size - 1, MAX_TRAIN_ROWS).astype(int)]
    sub = {k: (v[idx] if isinstance(v, np.ndarray) and v.shape[:1] == latency_ms.shape else v)
           for k, v in feats.items()}
    ln_t = np.log(latency_ms[idx])

    def unpack(x):
        return {p.name: (float(np.exp(v)) if p.log else float(v)) for p, v in zip(params, x)}

    def resid(x):
        pred = model(unpack(x), sub)
        return np.log(np.maximum(pred, 1e-12)) - ln_t

    x0 = [np.log(p.start) if p.log else p.start for p in params]
    lo = [np.log(p.low) if p.log else p.low for p in params]
    hi = [np.log(p.high) if p.log else p.high for p in params]
    res = least_squares(resid, x0, bounds=(lo, hi), loss="cauchy", f_scale=0.05, x_scale=1.0, max_nfev=150)
    return unpack(res.x)


def fit_and_score(family: str, gpu: str, engine: str, variant: str, model, params: list[Param],
                  feats: dict[str, np.ndarray], latency_ms: np.ndarray, held: np.ndarray,
                  groups: np.ndarray, size: np.ndarray, table: str = "") -> Fit | None:
    """Fit on the rows not held out, score on the held-out groups. None when there is nothing to fit."""
    ok = np.isfinite(latency_ms) & (latency_ms > 0)
    train, test = ok & ~held, ok & held
    if train.sum() < len(params) + 2:
        return None
    theta = fit_curve(model, params, feats, latency_ms, train)
    sub = {k: (v[test] if isinstance(v, np.ndarray) and v.shape[:1] == latency_ms.shape else v)
           for k, v in feats.items()}
    pred = model(theta, sub) if test.any() else np.zeros(0)
    meas = latency_ms[test]
    return Fit(family, gpu, engine, variant, theta, int(train.sum()), int(test.sum()),
               int(len(np.unique(groups[test]))), pred / meas - 1, meas, pred, size[test], table)
