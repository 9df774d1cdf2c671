"""Fit a few shared software-profile parameters per engine family on measured records.

Method (reproducible, no randomness except the fixed-seed band sampling elsewhere):
  * fitted parameters FIT_PARAMS (eff_weights, eff_gemm, layer_overhead_us, moe_imbalance), plus the per-draft
    MTP acceptance rate where the family's records draft tokens without publishing it, searched inside
    physical ranges (no efficiency above 1) by a vectorized grid search: every grid combination is one "sample" of
    the compiled equations, so one evaluation per record scores the whole grid; then a finer grid around the best.
  * loss: sum over the family's records of ln(predicted / measured)^2 (infeasible predictions cost ln(10)^2).
  * a family with fewer than MIN_ROWS records is fitted jointly with its base engine (dynamo-X with X); if the
    group still has fewer than MIN_ROWS records it takes a pooled fit over all records; a dynamo-X profile with
    no records at all inherits the fit of X. Every other parameter keeps its catalog value.
  * parameters that are not fitted but were fitted by earlier versions (PRIORS: step_overhead_ms, now that the
    fixed cost per layer carries the launch/tail cost) are written back at their documented prior value and range.
  * plausible range of each fitted parameter: the extent over grid points whose loss is within
    sigma^2 * CHI2_90[k] of the minimum, sigma^2 = loss_min / max(n - k, 1): the 90% profile-likelihood region,
    scaled by the model's own residual scatter, so that the band (5th-95th percentile of the Monte Carlo over
    the ranges) has the same nominal level as the region it samples; never narrower than one fine-grid step.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import yaml

from .. import catalog
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from .predict_rows import Unsupported, central_params, predict_record, profile_id
from .records import Record

FIT_PARAMS: dict[str, tuple[float, float]] = {
    "eff_weights": (0.3, 1.0), "eff_gemm": (0.15, 1.0), "layer_overhead_us": (0.0, 150.0), "moe_imbalance": (1.0, 3.0)}
# fitted too where a family's records draft tokens without publishing the acceptance: per-draft acceptance rate
SPEC_FIT: dict[str, tuple[float, float]] = {"acceptance_rate": (0.3, 0.95)}
# prior (value, low, high) of parameters written by the calibration but not fitted: CPU/scheduler cost per step
# with CUDA graphs and an overlapped scheduler (sub-millisecond to ~1.5 ms)
PRIORS: dict[str, tuple[float, float, float]] = {"step_overhead_ms": (0.5, 0.2, 1.5)}
COARSE = 6
FINE = 5
MIN_ROWS = 5
INFEASIBLE_COST = np.log(10.0) ** 2
CHI2_90 = {1: 2.71, 2: 4.61, 3: 6.25, 4: 7.78, 5: 9.24}


def _grid(axes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    names = list(axes)
    combos = np.array(list(itertools.product(*(axes[n] for n in names))), float)
    return {n: combos[:, i] for i, n in enumerate(names)}


def _sq_log_errors(records: list[Record], profiles: dict[str, ProfileSpec], grid: dict[str, np.ndarray],
                   fit: list[str]) -> tuple[np.ndarray, list[str]]:
    """(rows, combos) squared log errors, and the ids of rows that could be predicted."""
    n = len(next(iter(grid.values())))
    out, used = [], []
    for rec in records:
        prof = profiles[profile_id(rec)]
        params = {k: np.repeat(v, n) for k, v in central_params(prof).items()}
        params.update({k: grid[k] for k in fit})
        try:
            pred = predict_record(rec, prof, params)
        except Unsupported:
            continue
        e = np.log(pred / rec.value) ** 2
        out.append(np.where(np.isfinite(e), e, INFEASIBLE_COST))
        used.append(rec.id)
    return (np.array(out) if out else np.zeros((0, n))), used


def fit_family(records: list[Record], profiles: dict[str, ProfileSpec], fit: list[str] | None = None,
               bounds: dict[str, tuple[float, float]] | None = None) -> dict:
    """Grid fit of ``fit`` parameters shared by ``records``. Returns values, ranges, loss and row ids."""
    bounds = {**FIT_PARAMS, **SPEC_FIT, **(bounds or {})}
    fit = list(fit or FIT_PARAMS)
    if fit == list(FIT_PARAMS) and needs_acceptance_fit(records):
        fit += list(SPEC_FIT)
    axes = {k: np.linspace(*bounds[k], COARSE) for k in fit}
    g1 = _grid(axes)
    e1, used = _sq_log_errors(records, profiles, g1, fit)
    if not used:
        raise Unsupported("no record of the family could be predicted")
    L1 = e1.sum(axis=0)
    b = int(np.argmin(L1))
    step = {k: (bounds[k][1] - bounds[k][0]) / (COARSE - 1) for k in fit}
    fine_axes = {k: np.clip(np.linspace(g1[k][b] - step[k], g1[k][b] + step[k], FINE), *bounds[k]) for k in fit}
    fine_axes = {k: np.unique(v) for k, v in fine_axes.items()}
    g2 = _grid(fine_axes)
    e2, _ = _sq_log_errors([r for r in records if r.id in used], profiles, g2, fit)
    L2 = e2.sum(axis=0)
    grid = {k: np.concatenate([g1[k], g2[k]]) for k in fit}
    L = np.concatenate([L1, L2])
    E = np.concatenate([e1, e2], axis=1)
    best = int(np.argmin(L))
    n, k = len(used), len(fit)
    sigma2 = L[best] / max(n - k, 1)
    ok = L <= L[best] + sigma2 * CHI2_90.get(k, 2 * k)
    fine_step = {k_: max((fine_axes[k_][-1] - fine_axes[k_][0]) / max(FINE - 1, 1), 1e-3) for k_ in fit}
    values, ranges = {}, {}
    for p in fit:
        v = float(grid[p][best])
        lo, hi = float(grid[p][ok].min()), float(grid[p][ok].max())
        lo = max(min(lo, v - fine_step[p]), bounds[p][0])
        hi = min(max(hi, v + fine_step[p]), bounds[p][1])
        values[p], ranges[p] = v, (lo, hi)
    at_bound = [p for p in fit if np.isclose(values[p], bounds[p][1]) and p.startswith("eff_")]
    return {"values": values, "ranges": ranges, "loss": float(L[best]), "rows": used,
            "rms_log_error": float(np.sqrt(L[best] / n)), "row_errors": dict(zip(used, np.sqrt(E[:, best]))),
            "at_upper_bound": at_bound}


def needs_acceptance_fit(records: list[Record]) -> bool:
    """True if some record drafts tokens but does not publish its acceptance length."""
    return any((r.spec_tokens or 0) > 0 and r.acceptance_length is None for r in records)


def with_priors(prof: ProfileSpec, fit: list[str]) -> ProfileSpec:
    """The profile with PRIORS applied to the parameters that are not fitted."""
    upd = {p: {"value": v, "low": lo, "high": hi} for p, (v, lo, hi) in PRIORS.items() if p not in fit}
    return ProfileSpec.model_validate({**prof.model_dump(), **upd}) if upd else prof


def base_engine(pid: str) -> str:
    return pid.split("-", 1)[1] if pid.startswith("dynamo-") else pid


def calibrate(records: list[Record], profiles: dict[str, ProfileSpec] | None = None,
              fit: list[str] | None = None) -> dict[str, dict]:
    """Fit every engine family present in ``records``. Returns profile id -> fit result (with 'basis')."""
    by: dict[str, list[Record]] = {}
    for r in records:
        try:
            by.setdefault(profile_id(r), []).append(r)
        except Unsupported:
            continue
    profiles = dict(profiles or {})
    fit_names = list(fit or FIT_PARAMS)
    for pid in list(by) + [base_engine(p) for p in by]:
        if pid not in profiles:
            profiles[pid] = with_priors(catalog.profile(pid), fit_names)
    groups: dict[str, list[Record]] = {}
    for pid, recs in by.items():
        key = pid if len(recs) >= MIN_ROWS else base_engine(pid)
        groups.setdefault(key, []).extend(recs)
    fits: dict[str, dict] = {}
    pooled = None
    results: dict[str, dict] = {}
    for pid, recs in sorted(by.items()):
        key = pid if len(recs) >= MIN_ROWS else base_engine(pid)
        grp = groups[key]
        if len(grp) >= MIN_ROWS:
            if key not in fits:
                fits[key] = fit_family(grp, profiles, fit)
            members = sorted({profile_id(r) for r in grp})
            basis = (f"own fit on {len(grp)} records" if members == [pid] else
                     f"joint fit on {len(grp)} records of {', '.join(members)}")
            results[pid] = {**fits[key], "basis": basis}
        else:
            if pooled is None:
                pooled = fit_family(records, profiles, fit)
            results[pid] = {**pooled, "basis": f"{len(recs)} records (< {MIN_ROWS}): pooled fit over all "
                                               f"{len(pooled['rows'])} records"}
    # a dynamo-X profile with no records of its own runs engine X's kernels: it inherits X's fit
    for pid in catalog.ids("profiles"):
        base = base_engine(pid)
        if pid != base and pid not in results and base in results:
            results[pid] = {**results[base], "basis": f"no records of its own: inherits the fit of {base} "
                                                      f"({results[base]['basis']})"}
    return results


def _sig(x: float) -> float:
    return float(f"{x:.3g}")


def write_profile(pid: str, result: dict, out_dir: Path, command: str) -> Path:
    """Rewrite profiles/<pid>.yaml with the fitted values and ranges (other fields kept)."""
    src = catalog.resolve_path("profiles", pid)
    data = yaml.safe_load(src.read_text())
    for p, (v, lo, hi) in PRIORS.items():
        if p not in result["values"]:
            data[p] = {"value": v, "low": lo, "high": hi}
    for p, v in result["values"].items():
        lo, hi = result["ranges"][p]
        entry = {"value": _sig(v), "low": _sig(min(lo, v)), "high": _sig(max(hi, v))}
        if p in SPEC_FIT:
            data.setdefault("spec_decoding", {})[p] = entry
        else:
            data[p] = entry
    data["name"] = f"{pid} (calibrated)"
    data["calibration"] = (f"{command}: {result['basis']}; fitted {', '.join(result['values'])} by grid search "
                           f"on ln(pred/meas)^2, rms ln error {result['rms_log_error']:.3f}; ranges = "
                           f"90% profile-likelihood region; other parameters are priors")
    ProfileSpec.model_validate(data)  # never write an invalid profile
    out = Path(out_dir) / f"{pid}.yaml"
    lines = []
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"{k}: {yaml.safe_dump(v, default_flow_style=True, sort_keys=False).strip()}")
        else:
            lines.append(yaml.safe_dump({k: v}, default_flow_style=False, sort_keys=False, width=110).strip())
    out.write_text("\n".join(lines) + "\n")
    return out


def fitted_profile(pid: str, result: dict) -> ProfileSpec:
    prof = catalog.profile(pid)
    upd = {p: {"value": v, "low": lo, "high": hi} for p, (v, lo, hi) in PRIORS.items() if p not in result["values"]}
    upd |= {p: {"value": v, "low": min(result["ranges"][p][0], v), "high": max(result["ranges"][p][1], v)}
           for p, v in result["values"].items()}
    return ProfileSpec.model_validate({**prof.model_dump(), **upd})


__all__ = ["FIT_PARAMS", "PROFILE_PARAMS", "calibrate", "fit_family", "write_profile", "fitted_profile"]
