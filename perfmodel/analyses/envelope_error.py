"""How the held-out error grows with distance beyond the measured envelope: the plan band's widening rule.

A plan's 80% band (``plan_error.band``) reads the cross-validated throughput error e = ln(predicted / measured)
(TPOT as its inverse: ``model_error.RATE_METRICS``) pooled over every held-out row. A deployment beyond anything
measured may err more. How much is measured here on the same held-out rows (``reports/crossval.csv``, each
predicted by profiles fitted without its configuration's fold):

1. **Distance.** Each held-out row's record (``measured_envelope.record_frame``) is set against the records of
   the *other* folds of its hardware family and engine family, as a plan's point is set against every shipped
   record (``measured_envelope.extrapolation`` at the family level): per quantity the ratio record / largest
   measured, and the ``joint`` ratio to the nearest single run. Its distance ratio is the largest of them,
   ``ratio = max(1, ...)`` (``distance_ratio``), d = ln ratio; d = 0 is inside the envelope. Rows with nothing
   to compare with are left out.
2. **Growth of each end.** The band's ends are quantiles of e: q90 (the model reads high: the pessimistic end,
   true / model = exp(-q90)) and q10 (the optimistic end). Beyond the envelope each is modelled as growing
   linearly in d from its value inside, q_p(d) = q_p(0) + b_p d, q_p(0) the p-quantile of the inside rows. The
   slope minimising the pinball loss sum_i rho_p(e_i - q_p(0) - b d_i) over the outside rows (d_i > 0) is

       b_p = the p-quantile of u_i = (e_i - q_p(0)) / d_i, each u_i weighted by d_i

   (rho_p(d_i (u_i - b)) = d_i rho_p(u_i - b); the weighted quantile: the smallest u_k whose cumulative weight
   reaches p of the total). A band never narrows with distance: the pessimistic slope is max(b_90, 0), the
   optimistic min(b_10, 0).
3. **Reach of the evidence.** The distance at least ``MIN_REACH`` outside rows reach, d_max = ln of the
   MIN_REACH-th largest outside ratio; a plan's distance is read there when it lies beyond (the band's growth is
   not extrapolated past the evidence; the plan's ``envelope`` text says so).

A plan at distance ratio R (d = min(ln R, d_max)) divides the band's low throughput end by
``W_low = exp(max(b_90, 0) d)`` and multiplies its high end by ``W_high = exp(-min(b_10, 0) d)``
(``widening``): true / model in [exp(-q90) / W_low, exp(-q10) W_high]. ``evidence`` gives the fit, the reach,
and the share of the outside rows the widened band holds (and the share the band without widening holds).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .. import catalog
from .measured_envelope import JOINT, QUANTITIES, shipped_frame

MIN_REACH = 5
"""Outside rows that must reach a distance for the band's growth to be read there."""
P_LOW, P_HIGH = 0.1, 0.9
"""The band's quantiles of e: q10 (optimistic end), q90 (pessimistic end)."""


def distance_ratio(ratios: Mapping[str, float] | Iterable[float]) -> float:
    """The distance ratio R >= 1 of a point beyond the measured envelope: the largest of its per-quantity ratios
    model / measured maximum and its joint ratio (NaN ratios skipped; none left, or all <= 1: R = 1)."""
    vals = ratios.values() if isinstance(ratios, Mapping) else ratios
    finite = [float(r) for r in vals if r is not None and math.isfinite(float(r))]
    return max([1.0, *finite])


def weighted_quantile(u: np.ndarray, w: np.ndarray, p: float) -> float:
    """The smallest u_k whose cumulative weight (u sorted ascending) reaches p of the total weight: the minimiser of
    sum_i w_i rho_p(u_i - b) over b (rho_p the pinball loss)."""
    order = np.argsort(u, kind="stable")
    cum = np.cumsum(w[order]) / w.sum()
    return float(u[order][np.searchsorted(cum, p - 1e-12)])


def _ratios(test: pd.DataFrame, ref: pd.DataFrame) -> np.ndarray:
    """Each test record's distance ratio (``distance_ratio``) against the records ``ref``: per quantity
    test / max over ref, and the joint ratio min over ref of max over JOINT of test / ref (a blank EP reads 1,
    any other blank as not reached), as ``measured_envelope.extrapolation`` and ``joint`` read a point."""
    if ref.empty:
        return np.full(len(test), np.nan)
    cols = []
    for q in QUANTITIES:
        top = ref[q].max(skipna=True)
        cols.append(test[q].to_numpy(float) / top if np.isfinite(top) else np.full(len(test), np.nan))
    model = np.column_stack([test[q].to_numpy(float) for q in JOINT])                   # n x q
    rec = np.column_stack([ref[q].to_numpy(float) for q in JOINT])                      # m x q
    rec[:, JOINT.index("ep")] = np.where(np.isnan(rec[:, JOINT.index("ep")]), 1.0, rec[:, JOINT.index("ep")])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = model[:, None, :] / rec[None, :, :]                                         # n x m x q
    r = np.where(np.isnan(rec)[None, :, :], np.inf, r)
    r = np.where(np.isnan(model)[:, None, :], -np.inf, r)                               # a quantity it lacks: skip
    joint = r.max(axis=2).min(axis=1)
    joint = np.where(np.isfinite(joint), joint, np.nan)
    every = np.column_stack([*cols, joint])
    finite = np.isfinite(every)
    return np.where(finite.any(axis=1), np.fmax(np.nanmax(np.where(finite, every, -np.inf), axis=1), 1.0), np.nan)


def held_out_distances(cv: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The held-out rate rows of ``cv`` (crossval rows: id, fold, metric, measured, predicted, status) with e and
    their distance ratio against the records of the other folds of their hardware family and engine family
    (``frame``: ``measured_envelope.record_frame``); rows with nothing to compare with are dropped."""
    from .model_error import RATE_METRICS
    ok = cv[(cv["status"] == "ok") & (cv["measured"] > 0) & (cv["predicted"] > 0)
            & cv["metric"].isin(list(RATE_METRICS))].copy()
    ok["e"] = np.log(ok["predicted"] / ok["measured"]) * ok["metric"].map(RATE_METRICS).astype(float)
    fold = dict(zip(cv["id"], cv["fold"]))
    f = frame.assign(fold=frame["id"].map(fold)).dropna(subset=["fold"])
    f = f.assign(engine_family=f["engine_family"].fillna("none"))
    rec = f.set_index("id")
    ok = ok[ok["id"].isin(rec.index)].copy()
    q = rec.loc[ok["id"]]
    ok["hardware_family"] = q["hardware_family"].to_numpy()
    ok["engine_family"] = q["engine_family"].to_numpy()
    ok["ratio"] = np.nan
    for (fam, eng, k), idx in ok.groupby(["hardware_family", "engine_family", "fold"]).groups.items():
        ref = f[(f["hardware_family"] == fam) & (f["engine_family"] == eng) & (f["fold"] != k)]
        ok.loc[idx, "ratio"] = _ratios(rec.loc[ok.loc[idx, "id"]], ref)
    return ok[np.isfinite(ok["ratio"])]


def fit(rows: pd.DataFrame, min_reach: int = MIN_REACH) -> dict:
    """The widening rule's parameters from held-out rows (columns e and ratio; module docstring): q10_inside,
    q90_inside, slope_low_raw (b_10), slope_high_raw (b_90), slope_optimistic = min(b_10, 0), slope_pessimistic =
    max(b_90, 0), median_slope (b_50, reported, not applied), reach (the MIN_REACH-th largest outside ratio),
    rows, outside; coverage of the outside rows by the widened band, by the band inside (no widening) and by the
    rule this one replaced (the low end divided by the distance ratio itself, the high end kept)."""
    d = np.log(rows["ratio"].to_numpy(float))
    e = rows["e"].to_numpy(float)
    inside, out = d <= 1e-9, d > 1e-9
    q = {p: float(np.quantile(e[inside], p)) for p in (P_LOW, 0.5, P_HIGH)}
    slope = {p: weighted_quantile((e[out] - q[p]) / d[out], d[out], p) if out.sum() else 0.0 for p in q}
    ratios_out = np.sort(rows["ratio"].to_numpy(float)[out])[::-1]
    reach = float(ratios_out[min_reach - 1]) if len(ratios_out) >= min_reach else 1.0
    b_lo, b_hi = min(slope[P_LOW], 0.0), max(slope[P_HIGH], 0.0)
    dd = np.minimum(d[out], math.log(reach))
    held = (e[out] >= q[P_LOW] + b_lo * dd - 1e-12) & (e[out] <= q[P_HIGH] + b_hi * dd + 1e-12)
    plain = (e[out] >= q[P_LOW]) & (e[out] <= q[P_HIGH])
    old = (e[out] >= q[P_LOW]) & (e[out] <= q[P_HIGH] + d[out])        # the rule it replaced: low end / R
    return {"q10_inside": q[P_LOW], "q50_inside": q[0.5], "q90_inside": q[P_HIGH], "slope_low_raw": slope[P_LOW],
            "slope_high_raw": slope[P_HIGH], "median_slope": slope[0.5], "slope_optimistic": b_lo,
            "slope_pessimistic": b_hi, "reach": reach, "rows": int(len(e)), "outside": int(out.sum()),
            "above_q90_outside": int((e[out] > q[P_HIGH]).sum()), "below_q10_outside": int((e[out] < q[P_LOW]).sum()),
            "coverage_outside": float(held.mean()) if out.sum() else math.nan,
            "coverage_outside_unwidened": float(plain.mean()) if out.sum() else math.nan,
            "coverage_outside_largest_ratio_rule": float(old.mean()) if out.sum() else math.nan}


@functools.cache
def evidence() -> dict:
    """``fit`` of the shipped held-out rows (reports/crossval.csv against the shipped records), read once."""
    cv = pd.read_csv(catalog.builtin_root() / "reports" / "crossval.csv")
    return fit(held_out_distances(cv, shipped_frame()))


def widening(ratio: float, ev: Mapping[str, float] | None = None) -> tuple[float, float, float]:
    """(W_low, W_high, ratio read) at distance ratio R: d = min(ln max(R, 1), ln reach),
    W_low = exp(slope_pessimistic d) divides the band's low throughput end, W_high = exp(-slope_optimistic d)
    multiplies its high end."""
    ev = evidence() if ev is None else ev
    r = min(max(ratio, 1.0) if math.isfinite(ratio) else 1.0, max(float(ev["reach"]), 1.0))
    d = math.log(r)
    return math.exp(ev["slope_pessimistic"] * d), math.exp(-ev["slope_optimistic"] * d), r


def band_widening(row: Mapping, level: str = "hardware_family", frame: pd.DataFrame | None = None,
                  ev: Mapping[str, float] | None = None) -> tuple[float, float, float, str]:
    """(R, W_low, W_high, text) of a frontier row (with its serving columns, ``frontier(..., all_columns=True)``):
    its distance ratio at ``level`` (``measured_envelope.extrapolation``), the band's widening there
    (``widening``) and one line naming each quantity beyond the measured envelope, by how much and against which
    records, the distance read and the factors, e.g. 'outside the measured envelope (nvidia-scaleup72, sglang
    records): ep 2x (largest measured 8 ranks: r2); joint 2.5x (nearest r2 (kv_demand_gb_per_gpu)); distance
    2.5x; 80% band: low end / 1, high end x 3.31 (held-out growth beyond the envelope)'; 'inside the measured
    envelope (...)' at R = 1; 'nothing measured ...' without records."""
    from .measured_envelope import INSIDE_TOL, extrapolation
    ext = extrapolation(row, frame=frame)
    ratio = ext[f"{level}_ratio"].to_numpy(float)
    r = distance_ratio(ratio)
    w_low, w_high, read = widening(r, ev)
    where = (f"{ext.attrs['hardware_family'] if level == 'hardware_family' else ext.attrs['hardware']}, "
             f"{ext.attrs['engine_family']} records")
    if not np.isfinite(ratio).any():
        return r, w_low, w_high, f"nothing measured to compare with ({where}): no envelope widening"
    parts = []
    for _, x in ext[np.isfinite(ratio) & (ratio > 1 + INSIDE_TOL)].iterrows():
        if x["quantity"] == "joint":
            parts.append(f"joint {x[f'{level}_ratio']:.3g}x ({x[f'{level}_ids']})")
        else:
            parts.append(f"{x['quantity']} {x[f'{level}_ratio']:.3g}x (largest measured {x[f'{level}_max']:.4g} "
                         f"{x['unit']}: {x[f'{level}_ids']})")
    if not parts:
        return r, w_low, w_high, f"inside the measured envelope ({where}): no widening"
    reach = (f", read at {read:.3g}x (the held-out evidence reaches {read:.3g}x; beyond it the growth is not "
             "extrapolated)" if read < r * (1 - 1e-9) else "")
    return r, w_low, w_high, (f"outside the measured envelope ({where}): {'; '.join(parts)}; distance {r:.3g}x"
                              f"{reach}; 80% band: low end / {w_low:.3g}, high end x {w_high:.3g} (held-out growth "
                              "beyond the envelope, analyses/envelope_error)")
