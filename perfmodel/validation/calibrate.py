"""Fit a few shared software-profile parameters per engine family on measured records.

Method (reproducible, no randomness except the fixed-seed band sampling elsewhere):
  * fitted parameters FIT_PARAMS (eff_weights, eff_gemm, kernel_overhead_us, moe_imbalance), plus eff_gemm_fp4
    where at least MIN_FORMAT_ROWS records run 4-bit weights on FP4 tensor cores (else it equals eff_gemm), plus the per-draft
    MTP acceptance rate where the family's records draft tokens without publishing it, searched inside
    physical ranges (no efficiency above 1) by a vectorized grid search: every grid combination is one "sample" of
    the compiled equations, so one evaluation per record scores the whole grid; then REFINE finer grids around
    the best point, the step halved each time.
  * loss: sum over the family's records of ln(predicted / measured)^2 (infeasible predictions cost ln(10)^2).
  * a family gets its own fit when it has at least MIN_ROWS records and ROWS_PER_PARAM records per fitted
    parameter. Otherwise it starts from the fit of its base engine (dynamo-X from X: same kernels) or, without
    one, from the pooled fit over all records, and, with enough records (SMALL_MIN_ROWS, and ROWS_PER_PARAM per
    parameter), refits only SMALL_FIT (the fixed cost per kernel and the GEMM efficiency, and the acceptance rate
    when its records draft without publishing it): what the serving stack and the benchmark's data change. A dynamo-X profile with no
    records at all inherits the fit of X. Every other parameter keeps its catalog value.
  * parameters that are not fitted but were fitted by earlier versions (PRIORS: step_overhead_ms, now that the
    fixed cost per kernel carries the launch/tail cost) are written back at their documented prior value and range.
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
from ..errors import SpecError
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from .predict_rows import Unsupported, central_params, predict_record, profile_id
from .records import Record

FIT_PARAMS: dict[str, tuple[float, float]] = {
    "eff_weights": (0.3, 1.0), "eff_gemm": (0.15, 1.0), "kernel_overhead_us": (0.0, 8.0), "moe_imbalance": (1.0, 3.0)}
# fitted too where at least MIN_FORMAT_ROWS of a family's records run 4-bit weights on FP4 tensor cores
FORMAT_FIT: dict[str, tuple[float, float]] = {"eff_gemm_fp4": (0.15, 1.0)}
MIN_FORMAT_ROWS = 3
# fitted too where a family's records draft tokens without publishing the acceptance: per-draft acceptance rate
SPEC_FIT: dict[str, tuple[float, float]] = {"acceptance_rate": (0.3, 0.95)}
# ... but only from at least MIN_SPEC_ROWS such records (never from one or two rows); otherwise the prior
# (value, low, high): DeepSeek-V3 reports 85-90% acceptance of the second token; TensorRT-LLM's B200 MTP table
# (data/measured/trtllm-blog01-mtp-depth.csv) gives 1.92 / 2.58 / 2.82 accepted tokens for 1 / 2 / 3 drafts,
# i.e. a per-draft rate of about 0.74-0.92
MIN_SPEC_ROWS = 3
SPEC_PRIORS: dict[str, tuple[float, float, float]] = {"acceptance_rate": (0.8, 0.6, 0.95)}
# prior (value, low, high) of parameters written by the calibration but not fitted: CPU/scheduler cost per step
# with CUDA graphs and an overlapped scheduler (sub-millisecond to ~1.5 ms)
PRIORS: dict[str, tuple[float, float, float]] = {"step_overhead_ms": (0.5, 0.2, 1.5)}
COARSE = 6
FINE = 5
REFINE = 2          # fine passes after the coarse grid
MIN_ROWS = 5
SMALL_MIN_ROWS = 3
ROWS_PER_PARAM = 2  # an own fit needs at least two records per fitted parameter
# what a small family refits around a larger fit: its serving stack's fixed cost per kernel and its GEMM
# efficiency. Chosen among four candidates ([kernel_overhead_us], [eff_gemm], [eff_weights], both of these) by
# leave-one-out and held-out error (perfmodel crossval; data/holdout), not by in-sample error.
SMALL_FIT = ["kernel_overhead_us", "eff_gemm"]
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
               bounds: dict[str, tuple[float, float]] | None = None,
               grid_size: tuple[int, int, int] | None = None) -> dict:
    """Grid fit of ``fit`` parameters shared by ``records``. Returns values, ranges, loss and row ids.

    ``grid_size``: (coarse points per axis, fine points per axis, refinement passes); default
    (COARSE, FINE, REFINE)."""
    coarse, fine, refine = grid_size or (COARSE, FINE, REFINE)
    bounds = {**FIT_PARAMS, **FORMAT_FIT, **SPEC_FIT, **(bounds or {})}
    fit = list(fit or default_fit(records))
    axes = {k: np.linspace(*bounds[k], coarse) for k in fit}
    g1 = _grid(axes)
    e1, used = _sq_log_errors(records, profiles, g1, fit)
    if not used:
        raise Unsupported("no record of the family could be predicted")
    used_recs = [r for r in records if r.id in used]
    grid, E = g1, e1
    step = {k: (bounds[k][1] - bounds[k][0]) / (coarse - 1) for k in fit}
    for _stage in range(refine):   # finer grids around the best point so far, the step shrunk each time
        b = int(np.argmin(E.sum(axis=0)))
        fine_axes = {k: np.unique(np.clip(np.linspace(grid[k][b] - step[k], grid[k][b] + step[k], fine),
                                          *bounds[k])) for k in fit}
        g2 = _grid(fine_axes)
        e2, _ = _sq_log_errors(used_recs, profiles, g2, fit)
        grid = {k: np.concatenate([grid[k], g2[k]]) for k in fit}
        E = np.concatenate([E, e2], axis=1)
        step = {k: 2 * step[k] / (fine - 1) for k in fit}
    L = E.sum(axis=0)
    best = int(np.argmin(L))
    n, k = len(used), len(fit)
    sigma2 = L[best] / max(n - k, 1)
    ok = L <= L[best] + sigma2 * CHI2_90.get(k, 2 * k)
    fine_step = {k_: max(step[k_], 1e-3) for k_ in fit}
    values, ranges = {}, {}
    for p in fit:
        v = float(grid[p][best])
        lo, hi = float(grid[p][ok].min()), float(grid[p][ok].max())
        lo = max(min(lo, v - fine_step[p]), bounds[p][0])
        hi = min(max(hi, v + fine_step[p]), bounds[p][1])
        values[p], ranges[p] = v, (lo, hi)
    at_bound = [p for p in fit if np.isclose(values[p], bounds[p][1]) and p.startswith("eff_")]
    # any other fitted parameter on an edge of its search range: the data pull beyond a plausible value
    at_edge = [p for p in fit if p not in at_bound and (np.isclose(values[p], bounds[p][0])
                                                         or np.isclose(values[p], bounds[p][1]))]
    return {"values": values, "ranges": ranges, "loss": float(L[best]), "rows": used,
            "rms_log_error": float(np.sqrt(L[best] / n)), "row_errors": dict(zip(used, np.sqrt(E[:, best]))),
            "at_upper_bound": at_bound, "at_range_edge": at_edge}


def default_fit(records: list[Record]) -> list[str]:
    """Parameters a family's own fit estimates: FIT_PARAMS, plus eff_gemm_fp4 and the acceptance rate where
    the records can inform them."""
    return list(FIT_PARAMS) + (list(FORMAT_FIT) if needs_fp4_fit(records) else []) \
        + (list(SPEC_FIT) if needs_acceptance_fit(records) else [])


def needs_fp4_fit(records: list[Record]) -> bool:
    """True if at least MIN_FORMAT_ROWS records run 4-bit weights on hardware with FP4 tensor cores."""
    from ..engine.bind import hardware_fields, runs_fp4
    n = 0
    for r in records:
        try:
            n += runs_fp4(hardware_fields(catalog.hardware(r.hardware)), r.weights or "fp8")
        except (SpecError, KeyError):   # unknown hardware / format: reported unsupported by the predictor
            continue
    return n >= MIN_FORMAT_ROWS


def needs_acceptance_fit(records: list[Record]) -> bool:
    """True if at least MIN_SPEC_ROWS records draft tokens without publishing their acceptance length."""
    return sum((r.spec_tokens or 0) > 0 and r.acceptance_length is None for r in records) >= MIN_SPEC_ROWS


def _entry(v: float, lo: float, hi: float) -> dict:
    return {"value": v, "low": min(lo, v), "high": max(hi, v)}


def _apply(data: dict, values: dict[str, float], ranges: dict[str, tuple[float, float]],
           keep: tuple[str, ...] = ()) -> dict:
    """Profile data with the fitted ``values`` and the priors of every other parameter (except ``keep``)."""
    data = {**data, "spec_decoding": dict(data.get("spec_decoding") or {})}
    for p, (v, lo, hi) in PRIORS.items():
        if p not in values and p not in keep:
            data[p] = _entry(v, lo, hi)
    for p, (v, lo, hi) in SPEC_PRIORS.items():
        if p not in values and p not in keep:
            data["spec_decoding"][p] = _entry(v, lo, hi)
    if "eff_gemm" in values and "eff_gemm_fp4" not in values:   # no 4-bit evidence: same as eff_gemm
        values, ranges = {**values, "eff_gemm_fp4": values["eff_gemm"]}, {**ranges, "eff_gemm_fp4": ranges["eff_gemm"]}
    for p, v in values.items():
        entry = _entry(v, *ranges[p])
        if p in SPEC_FIT:
            data["spec_decoding"][p] = entry
        else:
            data[p] = entry
    return data


def with_priors(prof: ProfileSpec, fit: list[str]) -> ProfileSpec:
    """The profile with PRIORS and SPEC_PRIORS applied to the parameters that are not fitted."""
    return ProfileSpec.model_validate(_apply(prof.model_dump(), {}, {}, keep=tuple(fit)))


def base_engine(pid: str) -> str:
    return pid.split("-", 1)[1] if pid.startswith("dynamo-") else pid


def calibrate(records: list[Record], profiles: dict[str, ProfileSpec] | None = None,
              fit: list[str] | None = None, grid_size: tuple[int, int, int] | None = None) -> dict[str, dict]:
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
    results: dict[str, dict] = {}
    pooled = None

    def own_fit_ok(recs):
        return len(recs) >= max(MIN_ROWS, ROWS_PER_PARAM * len(fit or default_fit(recs)))

    # full fits first (families with enough records), so that small dynamo-X families can start from X
    for pid, recs in sorted(by.items(), key=lambda kv: not own_fit_ok(kv[1])):
        if own_fit_ok(recs):
            results[pid] = {**fit_family(recs, profiles, fit, grid_size=grid_size),
                            "basis": f"own fit on {len(recs)} records"}
            continue
        base = base_engine(pid)
        if base != pid and base in results:
            start_fit, start_basis = results[base], f"the fit of {base}"
        else:
            if pooled is None:
                pooled = fit_family(records, profiles, fit, grid_size=grid_size)
            start_fit, start_basis = pooled, f"the pooled fit over all {len(pooled['rows'])} records"
        small = list(SMALL_FIT)
        if needs_acceptance_fit(recs) and len(recs) >= ROWS_PER_PARAM * (len(small) + 1):
            small += list(SPEC_FIT)
        if len(recs) >= max(SMALL_MIN_ROWS, ROWS_PER_PARAM * len(small)):
            own = fit_family(recs, {pid: fitted_profile(pid, start_fit)}, small, grid_size=grid_size)
            results[pid] = {**own, "values": {**start_fit["values"], **own["values"]},
                            "ranges": {**start_fit["ranges"], **own["ranges"]},
                            "basis": f"{len(recs)} records: {start_basis}, with {', '.join(small)} refitted on "
                                     f"its own records"}
        else:
            results[pid] = {**start_fit, "basis": f"{len(recs)} records: {start_basis}"}
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
    values = {p: _sig(v) for p, v in result["values"].items()}
    ranges = {p: (_sig(lo), _sig(hi)) for p, (lo, hi) in result["ranges"].items()}
    data = _apply(data, values, ranges)
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
    """The catalog profile ``pid`` with a fit result applied (what write_profile would write)."""
    return ProfileSpec.model_validate(_apply(catalog.profile(pid).model_dump(), result["values"], result["ranges"]))


__all__ = ["FIT_PARAMS", "PROFILE_PARAMS", "calibrate", "fit_family", "write_profile", "fitted_profile"]
