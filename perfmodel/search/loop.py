"""The candidate loop of a search read per parameter sample (validation's frontier rows): each candidate deployment
is served over its batch grid for S samples at once, masked by the SLO (or a per-user speed floor), and the best
objective per sample is kept. Units: the objective's (tokens/s per GPU, per MW, or per user); speeds tokens/s per
user."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

import numpy as np
import pandas as pd

from .pick import best
from .slo import SLO

T = TypeVar("T")


@dataclass
class Read:
    """One candidate's points, shape (S, n): ``fits`` in memory, the ``value`` of the objective, the per-user
    ``speed`` (tokens/s), and the ``served`` frame (S*n rows, sample-major) an SLO reads."""

    fits: np.ndarray
    value: np.ndarray
    speed: np.ndarray
    served: pd.DataFrame


@dataclass
class Best:
    """Per sample (S,): the best admissible ``value`` (-inf: none), the fastest ``peak_speed`` any fitting point with
    a finite value reaches (before the SLO), and whether any point ``fit_any`` in memory."""

    value: np.ndarray
    peak_speed: np.ndarray
    fit_any: bool


def best_over(candidates: Iterable[T], read: Callable[[T], Read | None], samples: int, slo: SLO | None = None,
              min_speed: float | None = None, osl: float = math.nan) -> Best:
    """The search: for each candidate, ``read(candidate)`` (None: skipped); admissible points fit, have a finite
    value and meet ``slo`` (else, with ``min_speed``, run at least that many tokens/s per user); keep the best per
    sample."""
    top = np.full(samples, -np.inf)
    peak = np.full(samples, -np.inf)
    fit_any = False
    for c in candidates:
        r = read(c)
        if r is None:
            continue
        ok = r.fits & np.isfinite(r.value)
        fit_any = fit_any or bool(r.fits.any())
        peak = np.maximum(peak, best(r.speed, ok))
        if slo is not None:
            ok = ok & slo.meets(r.served, osl).reshape(ok.shape)
        elif min_speed is not None:
            ok = ok & (r.speed >= min_speed)
        top = np.maximum(top, best(r.value, ok))
    return Best(top, peak, fit_any)
