"""The SLO as a constraint inside the search: points that fail it are marked unfit (``fits`` False, with the
reason in ``fit_reason``) before any pick, so every objective is read over the same admissible points.

  * ``ttft_cut``: a P50 TTFT limit (ms) on the closed loop's own ``ttft_ms`` (DeploymentSpace.max_ttft_ms);
  * ``slo_cut``: an ``SLO`` at its percentiles on the points served under Poisson arrivals (search/served.py).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from .served import SERVED_COLUMNS
from .slo import SLO


def ttft_cut(df: pd.DataFrame, max_ttft_ms: float | None) -> pd.DataFrame:
    """Points above the TTFT limit (P50 ``ttft_ms``, ms) do not count: fits False, with the reason."""
    if max_ttft_ms is None or df.empty:
        return df
    over = df["fits"].to_numpy() & ~SLO(ttft_ms=max_ttft_ms).meets(df)
    if over.any():
        df = df.copy()
        df.loc[over, "fits"] = False
        df.loc[over, "fit_reason"] = [f"TTFT {t:.0f} ms above max_ttft_ms {max_ttft_ms:g}"
                                      for t in df["ttft_ms"].to_numpy()[over]]
    return df


ServeMode = Callable[[np.ndarray, str], pd.DataFrame]
"""``serve_mode(sel, mode)``: the points ``sel`` (indices, all of serving mode ``mode``) served under Poisson
arrivals, SERVED_COLUMNS (search/served.poisson)."""


def slo_cut(df: pd.DataFrame, serving: np.ndarray, serve_mode: ServeMode, slo: SLO | None, osl: float,
            metric: str, stats: dict) -> pd.DataFrame:
    """Points failing the SLO at its percentiles under Poisson arrivals do not count: fits False, with the reason.
    ``serving``: each point's serving mode; ``osl`` output tokens per request. ``stats`` gathers, per SLO term,
    the best value any fitting point reaches (``best``) and the highest ``metric`` among the fitting points that
    fail it (``dropped``: what the term costs; key ``queue`` for points with no steady state)."""
    if slo is None or not slo.any or df.empty:
        return df
    fits = df["fits"].to_numpy(bool)
    if not fits.any():
        return df
    served = pd.DataFrame(np.nan, index=range(len(df)), columns=list(SERVED_COLUMNS))
    for mode in np.unique(serving[fits]):
        sel = np.nonzero(fits & (serving == mode))[0]
        served.iloc[sel] = serve_mode(sel, str(mode))[served.columns].to_numpy(float)
    ok, terms = slo.mask(served, osl)
    _gather(stats, terms, fits, df[metric].to_numpy(float))
    drop = fits & ~ok
    if drop.any():
        df = df.copy()
        df.loc[drop, "fits"] = False
        df.loc[drop, "fit_reason"] = f"SLO not met ({slo.text()})"
    return df


def _gather(stats: dict, terms: dict, fits: np.ndarray, y: np.ndarray) -> None:
    """Per term: the best value a fitting point reaches, the highest ``y`` a failing point had (see slo_cut)."""
    for k, (v, lim) in terms.items():
        s = stats.setdefault(k, {"best": np.inf, "dropped": -np.inf})
        fin = fits & np.isfinite(v)
        if fin.any():
            s["best"] = min(s["best"], float(v[fin].min()))
        failed = fits & (v > lim)
        if failed.any():
            s["dropped"] = max(s["dropped"], float(np.nanmax(y[failed])))
        nan = fits & ~np.isfinite(v)
        if nan.any():
            q = stats.setdefault("queue", {"best": np.inf, "dropped": -np.inf})
            q["dropped"] = max(q["dropped"], float(np.nanmax(y[nan])))
