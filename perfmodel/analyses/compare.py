"""Compare two systems (or a system and its what-if) along their frontiers. Ratio convention: A/B.

- curve: both frontiers read on a common log grid of interactivity, from the lower of the two starting
  points to the highest interactivity BOTH reach (``frontier.read_at``), and the ratio A/B per GPU, per MW
  and per dollar at each point;
- summary: each one's peak per GPU, per MW and per dollar, where each curve ends (its maximum
  interactivity) and where it peaks, with the ratio A/B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SpecError
from .frontier import X, frontier, read_at
from .systems import DEFAULT_PROFILE, System, as_system


@dataclass
class Comparison:
    """What ``compare`` and ``whatif`` return. ``a`` / ``b``: the two frontiers (``frontier``'s columns and
    units). ``curve``: one row per point of a common log grid of ``tps_per_user`` (tokens/s per user) with
    ``a_<metric>`` / ``b_<metric>`` (tokens/s per GPU by default), ``ratio`` = A/B and, for per-GPU metrics,
    ``ratio_per_mw`` / ``ratio_per_usd`` (the ratio per MW of all-in power and per dollar). ``summary``: one row
    per ``quantity`` (peaks per GPU, per MW and per dollar, the curve end in tokens/s per user, where each peaks)
    with ``a``, ``b`` and ``ratio`` = a / b. ``names``: (A's name, B's name)."""

    a: pd.DataFrame        # frontier of A
    b: pd.DataFrame        # frontier of B
    curve: pd.DataFrame    # common interactivity grid: A, B and A/B
    summary: pd.DataFrame  # peaks and curve ends: A, B and A/B

    @property
    def names(self) -> tuple[str, str]:
        return self.a.attrs.get("system", "A"), self.b.attrs.get("system", "B")


def _per(front: pd.DataFrame, key: str) -> float:
    if key == "power_w":
        return front.attrs["power_w"]
    return front.attrs.get("price_usd_per_gpu_hour") or np.nan


def ratio_curve(a: pd.DataFrame, b: pd.DataFrame, points: int = 60, metric: str = "total_tps_per_gpu") -> pd.DataFrame:
    """Both frontiers on a common log grid of tokens/s per user, and the ratio A/B."""
    lo = min(a[X].min(), b[X].min())
    hi = min(a[X].max(), b[X].max())
    if not hi > 0 or hi < lo:
        raise SpecError("the two frontiers share no interactivity range", field="compare")
    grid = np.unique(np.concatenate([np.geomspace(lo, hi, points), [hi]]))
    ya, yb = read_at(a, grid, metric), read_at(b, grid, metric)
    out = pd.DataFrame({X: grid, "intvty": grid, f"a_{metric}": ya, f"b_{metric}": yb, "ratio": ya / yb})
    pa, pb = _per(a, "power_w"), _per(b, "power_w")
    ca, cb = _per(a, "price"), _per(b, "price")
    if metric.endswith("_per_gpu"):
        out["ratio_per_mw"] = out["ratio"] * pb / pa
        out["ratio_per_usd"] = out["ratio"] * cb / ca
    for side, f in (("a", a), ("b", b)):
        out[f"{side}_system"] = f.attrs.get("system", side.upper())
        dep = _deployment_at(f, grid)
        for c in CURVE_DEPLOYMENT:
            out[f"{side}_{c}"] = dep[c].to_numpy() if c in dep else None
    return out


CURVE_DEPLOYMENT = ["serving", "weights", "gpus", "tp", "dp", "ep", "pp", "spec_tokens", "instances", "pf_instances",
                    "pf_gpus", "kv_host_tier", "batch"]
LAYOUT_KEYS = [c for c in CURVE_DEPLOYMENT if c != "batch"]
"""What makes a curve segment: the deployment without its batch (the batch moves continuously along a segment)."""


def curve_csv_columns(metric: str = "total_tps_per_gpu", extra: tuple[str, ...] = ()) -> list[str]:
    """The compare/whatif CSV: interactivity (tok/s/user), both sides' ``metric``, A/B (and, for a per-GPU metric,
    per MW and per USD), each system's name and the deployment of its frontier point at or just above that
    interactivity; then ``extra`` (whatif: ``jump``)."""
    per = ["ratio_per_mw", "ratio_per_usd"] if metric.endswith("_per_gpu") else []
    return [X, "intvty", f"a_{metric}", f"b_{metric}", "ratio", *per, "a_system", "b_system",
            *(f"{s}_{c}" for s in "ab" for c in CURVE_DEPLOYMENT), *extra]


CURVE_CSV_COLUMNS = curve_csv_columns()
"""The compare CSV (total tokens/s per GPU): ``curve_csv_columns``."""


def _deployment_at(front: pd.DataFrame, grid: np.ndarray) -> pd.DataFrame:
    """For each interactivity of ``grid``, the frontier row at or just above it (its deployment)."""
    fx = front[X].to_numpy()
    order = np.argsort(fx)
    i = np.searchsorted(fx[order], grid * (1 - 1e-12)).clip(0, len(fx) - 1)
    return front.iloc[order[i]].reset_index(drop=True)


PEAK_RATIO = "throughput ratio, each at its own peak"
INTERACTIVITY_RATIO = "ratio of two interactivities, not a throughput speed-up"
END_RATIO = "throughput ratio at two different interactivities (each curve's end)"


def peak_summary(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Peaks per GPU / per MW / per dollar, where each curve ends and where it peaks, with A/B; ``ratio_is``
    says what each ratio compares (a ratio of interactivities is not a speed-up)."""
    def row(name, fa, fb, ratio_is=PEAK_RATIO):
        va, vb = fa(a), fb(b) if fb else fa(b)
        return {"quantity": name, "a": va, "b": vb, "ratio": va / vb if vb else np.nan, "ratio_is": ratio_is}

    peak = lambda col: (lambda f: float(f[col].max()) if col in f and f[col].notna().any() else np.nan)  # noqa
    at_peak = lambda f: float(f[X].iloc[int(f["total_tps_per_gpu"].to_numpy().argmax())])  # noqa: E731
    rows = [
        row("peak total_tps_per_gpu", peak("total_tps_per_gpu"), None),
        row("peak output_tps_per_gpu", peak("output_tps_per_gpu"), None),
        row("peak total_tps_per_mw", peak("total_tps_per_mw"), None),
        row("peak total_tokens_per_usd", peak("total_tokens_per_usd"), None),
        row("max tps_per_user (curve end)", lambda f: float(f[X].max()), None, INTERACTIVITY_RATIO),
        row("tps_per_user at peak", at_peak, None, INTERACTIVITY_RATIO),
        row("total_tps_per_gpu at curve end",
            lambda f: float(f["total_tps_per_gpu"].iloc[int(f[X].to_numpy().argmax())]), None, END_RATIO),
    ]
    return pd.DataFrame(rows)


def compare_frontiers(a: pd.DataFrame, b: pd.DataFrame, points: int = 60,
                      metric: str = "total_tps_per_gpu") -> Comparison:
    return Comparison(a, b, ratio_curve(a, b, points, metric), peak_summary(a, b))


def compare(a: System | str, b: System | str, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *,
            points: int = 60, **frontier_kw) -> Comparison:
    """Frontier of A and of B (``HARDWARE[:PROFILE]`` or System), their ratio A/B along the curve and at peak.

    ``frontier_kw`` go to ``frontier`` (weights, kv_cache, space, ...); ``points``: grid points of the curve.
    Returns a ``Comparison`` (curve and summary DataFrames, ratios A/B dimensionless)."""
    sa, sb = as_system(a, profile), as_system(b, profile)
    if sa.name == sb.name and not sa.label:
        sb = sb.with_changes(label=sb.name + " (B)")
        sa = sa.with_changes(label=sa.name + " (A)")
    fa = frontier(sa, model, workload, profile, **frontier_kw)
    fb = frontier(sb, model, workload, profile, **frontier_kw)
    return compare_frontiers(fa, fb, points)
