"""Fit shared software-profile parameters per engine family on measured records.

Method (reproducible, deterministic):
  * fitted parameters FIT_PARAMS (kernel efficiencies for weights, KV, GEMM and attention; the per-kernel,
    per-step and per-sequence CPU/launch costs; the MoE routing skew; the serving layer's request overhead
    and arrival waves), plus eff_gemm_fp4 where at least MIN_FORMAT_ROWS records run 4-bit weights on FP4
    tensor cores (else it equals eff_gemm), plus the per-draft MTP acceptance rate where the family's
    records draft tokens without publishing it; each inside its search range (no efficiency above 1).
  * fit: scipy.optimize.least_squares on r_i = ln(predicted_i / measured_i) with a robust soft-L1 loss
    (``fit_family``), every record predicted for many parameter vectors at once (batch_predict).
  * a family gets its own fit when it has at least MIN_ROWS records and ROWS_PER_PARAM records per fitted
    parameter. Otherwise it starts from the fit of its base engine (dynamo-X from X: same kernels) or, without
    one, from the pooled fit over all records, and, with enough records (SMALL_MIN_ROWS, and ROWS_PER_PARAM per
    parameter) from at least MIN_SMALL_SOURCES sources, refits only SMALL_FIT (its per-step and per-sequence
    overheads, and the acceptance rate when its records draft without publishing it): what the serving stack
    changes; from one source it inherits the starting fit whole. A
    dynamo-X profile with no records at all inherits the fit of X. Every other parameter keeps its catalog value.
  * plausible range of each fitted parameter: value +- 1.645 sigma from the Gauss-Newton covariance scaled by
    the residual scatter (a 90% interval), clipped to the search range.
  * reproducible from the code and the data alone: ``perfmodel calibrate`` starts every fit from the middle of
    the search ranges (``neutral_start``, as cross-validation does), never from the values a previous run wrote,
    and evaluates eff_gemm_fp4 as eff_gemm where it is not fitted (as it is written), so running it twice, or on
    a checkout whose profiles it wrote, gives the same profiles.
  * a fitted parameter on (within EDGE_SHARE of) an edge of its search range is reported (``at_range_edge``): the data pull past a
    plausible value, the sign of a missing mechanism.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import least_squares

from .. import catalog, progress
from ..acceptance_priors import record_prior
from ..errors import SpecError
from ..fileio import write_whole
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from ..specs.records import Record
from ..workers import jobs
from .batch_predict import plan, predict_matrix
from .envelope import profile_alone
from .fit_weights import fit_weights, speed_fit_row
from .kernel_bands import bands as kernel_bands
from .kernel_bands import gemm_bands
from .predict_rows import profile_id
from .row_context import Unsupported
from .samples import central_params

# search ranges (inside the physical PROFILE_PARAMS bounds): kernel efficiencies, the per-step, per-kernel and
# per-sequence CPU/launch costs, the routing skew, the serving layer's request overhead and arrival waves, and
# the HBM the engine keeps for itself beside weights and KV (activations, CUDA graphs, communication buffers:
# with few GB left for KV it sets the running capacity, hence the queueing of a closed-loop benchmark)
FIT_PARAMS: dict[str, tuple[float, float]] = {
    "eff_weights": (0.3, 1.0), "eff_kv": (0.2, 1.0), "eff_gemm": (0.15, 1.0), "eff_attention": (0.1, 1.0),
    "eff_attention_decode": (0.1, 1.0),
    "kernel_overhead_us": (0.0, 8.0), "step_overhead_ms": (0.0, 5.0), "seq_overhead_us": (0.0, 60.0),
    "moe_imbalance": (1.0, 3.0), "request_overhead_ms": (0.0, 400.0), "arrival_burst": (0.0, 1.0),
    "workspace_gb": (0.5, 20.0), "kernel_floor_share": (0.0, 1.0)}
# the attention efficiencies' ranges are the engine's kernel-table bands where it has kernel tables
# (kernel_bands.py: the hardware layer bounds them; the ranges above are the priors of engines without tables);
# eff_gemm and eff_gemm_fp4 too where the profile switches on mechanism gemm_kernel_band (kernel_bands.gemm_band)
# not fitted: eff_grouped_gemm and collective_latency_us, which the kernel fits replace wherever a GPU has them
# (engine/kernel_bind.py: the grouped-GEMM rate by tokens per local expert, the all-reduce latency law); they keep
# their catalog values for the GPUs without kernel tables (H800, AMD)
# the engine's own memory knob: SGLang reserves mem_fraction_static x HBM for weights plus the KV pool
# (activations and CUDA graphs live in the rest, so no workspace is subtracted on top: it is held at 0 and the
# fraction is fitted); vLLM (gpu_memory_utilization x HBM less its profiled activation peak) and TensorRT-LLM
# (a KV fraction of what weights and activations leave) fit the workspace beside their default fraction
MEMORY_FIT: dict[str, dict[str, tuple[float, float]]] = {"sglang": {"mem_fraction": (0.70, 0.95)}}
EDGE_SHARE = 0.05        # a fit within 5% of its search range from a bound is reported as on the edge
JAC_STEP = 0.02          # forward-difference step in the scaled [0, 1] parameter space
F_SCALE = 0.3            # soft-L1 scale in ln units: rows beyond ~35% error count linearly, not squared
MAX_NFEV = 25
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
# prior (value, low, high) of parameters written by the calibration but not fitted (none at present: the
# per-step CPU cost is fitted beside the per-sequence one)
PRIORS: dict[str, tuple[float, float, float]] = {}
MIN_ROWS = 5
SMALL_MIN_ROWS = 3
ROWS_PER_PARAM = 2  # an own fit needs at least two records per fitted parameter
# what a small family refits around a larger fit: its serving stack's own overheads, the per-step CPU and
# scheduler cost and the per-sequence cost (the engine-overhead layer: DESIGN.md, three layers of parameters)
SMALL_FIT = ["step_overhead_ms", "seq_overhead_us"]
# ... and only where its records come from at least MIN_SMALL_SOURCES sources (data files): a small family's rows
# from one source say as much about that source's harness as about the serving stack (issue 41 item 5: eight
# agentic rows moved dynamo-sglang's GEMM efficiency to 1.0). Kernel efficiencies are never refitted on a small
# family: they are the GPU's and the engine's kernels', which a dynamo-X stack shares with X.
MIN_SMALL_SOURCES = 2


def record_sources(records: list[Record]) -> set[str]:
    """The sources (data files: the family's stem, e.g. 'agentic' of 'agentic:point') of ``records``."""
    return {(r.family or "unnamed").split(":", 1)[0] for r in records}


# the serving layer's queue parameters: fitted on TTFT records only, everything else on throughput / TPOT
# records only, so that one metric cannot set the other's constants
QUEUE_PARAMS = ("request_overhead_ms", "arrival_burst")
TTFT_METRICS = ("ttft_ms",)


# memo of fit_family results while a cross-validation runs (``memo_fits``): folds whose training records of an
# engine family are the same (a left-out data family without rows of that engine) reuse the fit
_MEMO: dict | None = None


class memo_fits:
    """Context manager: inside it, identical fit_family calls (same records, starting profile, parameters and
    bounds) are fitted once. The fit is deterministic, so reuse changes no number."""

    def __enter__(self):
        global _MEMO
        self._outer, _MEMO = _MEMO, ({} if _MEMO is None else _MEMO)
        return self

    def __exit__(self, *exc):
        global _MEMO
        _MEMO = self._outer
        return False


def _memo_key(records: list[Record], profiles: dict[str, ProfileSpec], fit, bounds, neutral_start: bool) -> tuple:
    """What a fit_family result depends on: the records (ids, in order), the starting profile, the fitted
    parameters, the bounds and the start."""
    pid = profile_id(records[0])
    return (tuple(r.id for r in records), profiles[pid].model_dump_json(), tuple(fit or ()),
            tuple(sorted((bounds or {}).items())), neutral_start)


def fit_family(records: list[Record], profiles: dict[str, ProfileSpec], fit: list[str] | None = None,
               bounds: dict[str, tuple[float, float]] | None = None, neutral_start: bool = False) -> dict:
    """``_fit_family`` (below), memoised inside ``memo_fits``."""
    if _MEMO is None:
        return _fit_family(records, profiles, fit, bounds, neutral_start)
    key = _memo_key(records, profiles, fit, bounds, neutral_start)
    if key not in _MEMO:
        _MEMO[key] = _fit_family(records, profiles, fit, bounds, neutral_start)
    return _MEMO[key]


_OWN: tuple | None = None   # (items, profiles, fit, neutral_start) of the running parallel own fits


def _own_fit(i: int) -> dict:
    assert _OWN is not None
    items, profiles, fit, neutral_start = _OWN
    pid, recs = items[i]
    return _fit_family(recs, profiles, fit, engine_bounds(pid), neutral_start)


def own_fits(items: list[tuple[str, list[Record]]], profiles: dict[str, ProfileSpec], fit: list[str] | None,
             neutral_start: bool) -> dict[str, dict]:
    """The own fits (``fit_family`` with the engine's bounds) of the engine families ``items`` [(pid, records)],
    which are independent: in forked workers (``workers.jobs``, largest first) unless this process is itself a
    worker (a crossval fold: no second level of processes), each taken from and stored in the memo inside
    ``memo_fits``. Same numbers as fitting them one after another."""
    import multiprocessing as mp
    global _OWN
    out: dict[str, dict] = {}
    todo = []
    for pid, recs in items:
        key = _memo_key(recs, profiles, fit, engine_bounds(pid), neutral_start)
        if _MEMO is not None and key in _MEMO:
            out[pid] = _MEMO[key]
        else:
            todo.append((pid, recs, key))
    n_jobs = 1 if mp.parent_process() is not None else min(jobs(), len(todo))
    if n_jobs > 1:
        from concurrent.futures import ProcessPoolExecutor
        todo.sort(key=lambda t: -len(t[1]))
        _OWN = ([(pid, recs) for pid, recs, _ in todo], profiles, fit, neutral_start)
        try:
            with ProcessPoolExecutor(n_jobs, mp_context=mp.get_context("fork")) as pool:
                done = list(pool.map(_own_fit, range(len(todo))))
        finally:
            _OWN = None
    else:
        done = [_fit_family(recs, profiles, fit, engine_bounds(pid), neutral_start) for pid, recs, _ in todo]
    for (pid, _recs, key), res in zip(todo, done):
        out[pid] = res
        if _MEMO is not None:
            _MEMO[key] = res
    return out


def _fit_family(records: list[Record], profiles: dict[str, ProfileSpec], fit: list[str] | None = None,
                bounds: dict[str, tuple[float, float]] | None = None, neutral_start: bool = False) -> dict:
    """Least-squares fit of ``fit`` parameters shared by ``records``. Returns values, ranges, loss and row ids.

    Residuals r_i = sqrt(w_i) ln(predicted_i / measured_i) (infeasible: ln 10), w_i the row's weight
    (``fit_weights.fit_weights``: 1/sqrt(rows of its family), no row above 1% of the fit; capacity rows are not
    fitted, ``fit_weights.speed_fit_row``), robust soft-L1 loss (scale F_SCALE) so a few rows the physics cannot reach do not drag
    the fit; scipy.optimize.least_squares (trust-region reflective, bounded) in parameters scaled to [0, 1] over
    their search ranges, from the profile's current values. Stages: every parameter but QUEUE_PARAMS on the
    throughput / TPOT records, then QUEUE_PARAMS on the TTFT records with the first stage's values, then the
    first stage again (a closed loop's running batch, hence its TPOT, depends on the queue); a stage with no
    parameter or no record is skipped. The Jacobian is a forward difference taken for all parameters at
    once: k + 1 parameter vectors are the samples of ONE batched evaluation (batch_predict.predict_matrix).
    Ranges: value +- 1.645 sigma, sigma^2 = diag((J^T J)^-1) loss / (n - k), clipped to the search range.
    ``neutral_start``: start from the middle of the search ranges instead of the profile's values."""
    bounds = {**FIT_PARAMS, **FORMAT_FIT, **SPEC_FIT, **{k: v for m in MEMORY_FIT.values() for k, v in m.items()}, **(bounds or {})}
    fit = list(fit or default_fit(records))
    pl = plan(records)
    prof0 = profiles[profile_id(records[0])]
    base = central_params(prof0)
    if neutral_start:   # every fitted parameter from the middle of its range, also while another stage runs
        base = {**base, **{k: np.array([float(np.mean(bounds[k]))]) for k in fit}}
    meas = np.array([r.value for r in pl.records])
    is_ttft = np.array([r.metric in TTFT_METRICS for r in pl.records])

    def ln_errors(params: dict) -> np.ndarray:
        if "eff_gemm" in fit and "eff_gemm_fp4" not in fit:   # as written (_apply): no 4-bit evidence, same value
            params = {**params, "eff_gemm_fp4": params["eff_gemm"]}
        with np.errstate(divide="ignore", invalid="ignore"), profile_alone():   # variants never steer the defaults
            e = np.log(predict_matrix(pl, profiles, params) / meas[:, None])
        return np.where(np.isfinite(e), e, np.log(10.0))

    r_all = ln_errors(base)[:, 0]          # the first pass also marks the rows that cannot be predicted
    supported = np.array([i not in pl.unsupported and speed_fit_row(r) for i, r in enumerate(pl.records)])
    if not supported.any():
        raise Unsupported("no record of the family could be predicted")
    weight = np.zeros(len(pl.records))
    weight[supported] = fit_weights([r for r, ok in zip(pl.records, supported) if ok])
    values: dict[str, float] = {}
    ranges: dict[str, tuple[float, float]] = {}
    edge: list[str] = []
    nfev = 0
    speed = ([k for k in fit if k not in QUEUE_PARAMS], supported & ~is_ttft)
    queue = ([k for k in fit if k in QUEUE_PARAMS], supported & is_ttft)
    # speed, queue, speed again: a closed loop's running batch (hence its TPOT) depends on the queue parameters
    stages = [speed, queue, speed] if queue[0] and queue[1].any() else [speed]
    if not (supported & ~is_ttft).any():        # TTFT records only: one stage over everything
        stages = [(fit, supported)]
    for names, rows in stages:
        if not names or not rows.any():
            continue
        # a repeated stage starts from the values the earlier stages fitted (a neutral start is for the first)
        st = _fit_stage(ln_errors, base, names, bounds, rows, weight, neutral_start and not set(names) & set(values))
        values.update(st["values"])
        ranges.update(st["ranges"])
        edge = [e for e in edge if e not in st["values"]] + st["edge"]   # the last stage fitting a name decides
        nfev += st["nfev"]
        for k, v in st["values"].items():
            base = {**base, k: np.array([v])}
    r = ln_errors(base)[:, 0]
    used = supported
    n = int(used.sum())
    loss = float(np.sum(weight[used] * r[used] ** 2))
    at_bound = [p for p in edge if p.startswith("eff_") and np.isclose(values[p], bounds[p][1])]
    ids = [pl.records[i].id for i in np.flatnonzero(used)]
    fams = sorted({pl.records[i].family or "unnamed" for i in np.flatnonzero(used)})
    fam_of = np.array([pl.records[i].family or "unnamed" for i in np.flatnonzero(used)])
    by_family = {f: float(np.median(np.abs(r[used][fam_of == f]))) for f in fams}
    return {"values": values, "ranges": ranges, "loss": loss, "rows": ids, "bounds": {k: bounds[k] for k in fit},
            "rms_log_error": float(np.sqrt(loss / max(n, 1))), "row_errors": dict(zip(ids, np.abs(r[used]))),
            "at_upper_bound": at_bound, "at_range_edge": [p for p in edge if p not in at_bound],
            "median_abs_log_error": float(np.median(np.abs(r[used]))), "nfev": nfev,
            "median_abs_log_error_by_family": by_family, "initial_median_abs_log_error": float(np.median(
                np.abs(r_all[used])))}


def _fit_stage(ln_errors, base: dict, fit: list[str], bounds: dict, rows: np.ndarray, weight: np.ndarray,
               neutral_start: bool) -> dict:
    """One least-squares stage: ``fit`` parameters on the records ``rows`` (weighted), the rest held at ``base``."""
    lo = np.array([bounds[k][0] for k in fit])
    hi = np.array([bounds[k][1] for k in fit])
    start = np.array([float(base[k][0]) if k in base and np.isfinite(base[k][0]) else np.mean(bounds[k])
                      for k in fit])
    x0 = np.full(len(fit), 0.5) if neutral_start else np.clip((start - lo) / (hi - lo), 1e-3, 1 - 1e-3)
    sw = np.sqrt(weight[rows])

    def residuals(xs: np.ndarray) -> np.ndarray:
        """(rows, samples) weighted ln errors for scaled parameter vectors xs (samples, k)."""
        S = xs.shape[0]
        params = {k: np.repeat(v, S) for k, v in base.items()}
        for j, k in enumerate(fit):
            params[k] = lo[j] + xs[:, j] * (hi[j] - lo[j])
        return ln_errors(params)[rows] * sw[:, None]

    cache: dict[bytes, np.ndarray] = {}

    def fun(x):
        key = x.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = residuals(x[None, :])[:, 0]
        return cache[key]

    def jac(x):
        h = np.where(x + JAC_STEP <= 1, JAC_STEP, -JAC_STEP)
        xs = np.vstack([x, x + np.diag(h)])
        r = residuals(xs)
        return (r[:, 1:] - r[:, :1]) / h

    sol = least_squares(fun, x0, jac=jac, bounds=(0.0, 1.0), loss="soft_l1", f_scale=F_SCALE,
                        x_scale="jac", max_nfev=MAX_NFEV)
    r = fun(sol.x)
    n, k = int(rows.sum()), len(fit)
    loss = float(np.sum(r ** 2))
    J = sol.jac * (hi - lo)[None, :] ** -1          # d r / d parameter (unscaled)
    try:
        cov = np.linalg.pinv(J.T @ J) * loss / max(n - k, 1)
        sigma = np.sqrt(np.maximum(np.diag(cov), 0.0))
    except np.linalg.LinAlgError:
        sigma = np.full(k, np.inf)
    values, ranges = {}, {}
    for j, p in enumerate(fit):
        v = float(lo[j] + sol.x[j] * (hi[j] - lo[j]))
        half = max(1.645 * sigma[j], 1e-3 * (hi[j] - lo[j]))
        values[p], ranges[p] = v, (max(lo[j], v - half), min(hi[j], v + half))
    edge = [p for j, p in enumerate(fit) if sol.x[j] <= EDGE_SHARE or sol.x[j] >= 1 - EDGE_SHARE]
    return {"values": values, "ranges": ranges, "edge": edge, "nfev": int(sol.nfev)}


def default_fit(records: list[Record]) -> list[str]:
    """Parameters a family's own fit estimates: FIT_PARAMS, plus eff_gemm_fp4 and the acceptance rate where
    the records can inform them."""
    names = list(FIT_PARAMS)
    try:
        mem = MEMORY_FIT.get(base_engine(profile_id(records[0])))
    except Unsupported:
        mem = None
    if mem:
        names = [n for n in names if n != "workspace_gb"] + list(mem)
    return names + (list(FORMAT_FIT) if needs_fp4_fit(records) else []) \
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
    """True if at least MIN_SPEC_ROWS records draft tokens with neither a published acceptance length nor a
    sourced prior (acceptance_priors.py)."""
    return sum((r.spec_tokens or 0) > 0 and r.acceptance_length is None
               and record_prior(r, _catalog_profile(r)) is None for r in records) >= MIN_SPEC_ROWS


def _catalog_profile(rec: Record) -> ProfileSpec | None:
    """The catalog profile a record is predicted on (its mechanisms decide which priors apply), None if none."""
    try:
        return catalog.profile(profile_id(rec))
    except (Unsupported, SpecError):
        return None


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


def engine_bounds(pid: str) -> dict[str, tuple[float, float]]:
    """Search ranges that depend on the engine: its attention efficiencies inside its kernel-table bands, and its
    GEMM efficiencies too where the catalog profile switches on ``gemm_kernel_band`` (specs/mechanisms.py)."""
    out = kernel_bands(base_engine(pid))
    if _catalog_uses(pid, "gemm_kernel_band"):
        out = {**out, **gemm_bands(base_engine(pid))}
    return out


def _catalog_uses(pid: str, mechanism: str) -> bool:
    """True if the catalog profile ``pid`` switches on ``mechanism`` (False for an unknown profile)."""
    try:
        return catalog.profile(pid).uses(mechanism)
    except SpecError:
        return False


def calibrate(records: list[Record], profiles: dict[str, ProfileSpec] | None = None,
              fit: list[str] | None = None, neutral_start: bool = False) -> dict[str, dict]:
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

    # full fits first (families with enough records, independent: own_fits), so that small dynamo-X families can
    # start from X
    full = [(pid, recs) for pid, recs in by.items() if own_fit_ok(recs)]
    fitted_own = own_fits(full, profiles, fit, neutral_start)
    for pid, recs in full:
        results[pid] = {**fitted_own[pid], "basis": f"own fit on {len(recs)} records"}
    for pid, recs in progress.bar([kv for kv in by.items() if not own_fit_ok(kv[1])],
                                  desc="calibrating engine families", unit="family", at_once=True):
        base = base_engine(pid)
        if base != pid and base in results:
            start_fit, start_basis = results[base], f"the fit of {base}"
        else:
            if pooled is None:
                pooled = fit_family(records, profiles, fit, bounds=engine_bounds(pid), neutral_start=neutral_start)
            start_fit, start_basis = pooled, f"the pooled fit over all {len(pooled['rows'])} records"
        small = list(SMALL_FIT)
        if needs_acceptance_fit(recs) and len(recs) >= ROWS_PER_PARAM * (len(small) + 1):
            small += list(SPEC_FIT)
        own = None
        n_src = len(record_sources(recs))
        if n_src < MIN_SMALL_SOURCES:     # one source's rows carry its harness as much as the stack: inherit
            start_basis += f" (its records come from {n_src} source: nothing refitted)"
        elif len(recs) >= max(SMALL_MIN_ROWS, ROWS_PER_PARAM * len(small)):
            try:
                own = fit_family(recs, {pid: fitted_profile(pid, start_fit)}, small, neutral_start=neutral_start)
            except Unsupported:      # none of its records can be predicted: it keeps the starting fit
                own = None
        if own is not None:
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
    """Write ``out_dir``/<pid>.yaml whole (``fileio.write_whole``): ``render_profile``."""
    return write_whole(Path(out_dir) / f"{pid}.yaml", render_profile(pid, result, command))


# what a fitted parameter on an edge of its search range stands for (written into the profile's calibration note):
# a physical bound reached, or the mechanism the data ask for that the equations lack
EDGE_MEANING: dict[str, tuple[str, str]] = {   # parameter -> (at the low edge, at the high edge)
    "moe_imbalance": ("the physical bound: no routing skew beyond the random spread the equations compute",
                      "the records ask for more MoE time at large batch than the busiest rank's expected load: "
                      "missing, the expert-parallel dispatch and combine per token (DeepEP all-to-all) and the "
                      "grouped GEMMs' tile waste at few tokens per expert (issue 50 item 1)"),
    "eff_attention_decode": ("the records ask for slower decode attention than the engine's kernel tables measure "
                             "(the band's low edge): missing, decode attention at the serving shapes the band does "
                             "not cover (fewer than 8 sequences per rank, long contexts, MTP verification rows)",
                             "decode attention faster than the kernel tables' band: missing, the KV read charged "
                             "beside it (eff_kv) overlapping the attention kernel"),
    "kernel_floor_share": ("the engine's launch floors are carried by kernel_overhead_us (the two are not told "
                           "apart on its records)", "the isolated-kernel floors of the kernel tables apply in full "
                           "(the physical reading: graph launches do not hide them)"),
    "kernel_overhead_us": ("the launch cost is carried by the kernel-table floors", ""),
    "step_overhead_ms": ("no per-step CPU cost beyond the per-sequence and kernel floors", ""),
    "seq_overhead_us": ("no per-sequence CPU cost separate from batch-dependent kernel time", ""),
    "mem_fraction": ("", "the engine holds more sequences than mem_fraction x visible HBM - weights allows: "
                     "missing, a lower KV hold per admitted request (admission by an estimated new-token ratio, "
                     "retraction when full) or a narrower KV format than the records state"),
    "eff_gemm_fp4": ("4-bit GEMMs run far below FP4 peak on these records: missing, the 4-bit GEMM kernels' own "
                     "efficiency by shape (scale-factor traffic, dequantising paths), for the GEMM kernel tables "
                     "to ground", ""),
    "eff_kv": ("", "decode attention costs less than a KV read at this efficiency: missing, the attention kernels' "
               "efficiency by batch and context from the kernel tables"),
    "eff_attention": ("", "attention FLOPs cost less than modeled: missing, the prefill attention kernels' "
                      "efficiency by shape from the kernel tables"),
    "acceptance_rate": ("fewer drafts accepted than any prior allows", "more drafts accepted than the priors allow"),
}


def edge_notes(result: dict, bounds: dict | None = None) -> list[str]:
    """One note per fitted parameter on an edge of its search range: which edge and what it stands for."""
    bounds = {**FIT_PARAMS, **FORMAT_FIT, **SPEC_FIT, **{k: v for m in MEMORY_FIT.values() for k, v in m.items()},
              **result.get("bounds", {}), **(bounds or {})}
    notes = []
    for name in [*result.get("at_range_edge", []), *result.get("at_upper_bound", [])]:
        lo, hi = bounds.get(name, (None, None))
        v = result["values"].get(name)
        if v is None or lo is None:
            continue
        low = abs(v - lo) <= abs(hi - v)
        why = EDGE_MEANING.get(name, ("", ""))[0 if low else 1] or "a mechanism the equations lack"
        notes.append(f"{name} at its {'lower' if low else 'upper'} edge {lo if low else hi:g}: {why}")
    return notes


def render_profile(pid: str, result: dict, command: str) -> str:
    """The text of profiles/<pid>.yaml with the fitted values and ranges (other fields of the catalog's file kept),
    validated as a profile."""
    src = catalog.resolve_path("profiles", pid)
    data = catalog.load_yaml(src)
    values = {p: _sig(v) for p, v in result["values"].items()}
    ranges = {p: (_sig(lo), _sig(hi)) for p, (lo, hi) in result["ranges"].items()}
    data = _apply(data, values, ranges)
    data["name"] = f"{pid} (calibrated)"
    data["calibration"] = (f"{command}: {result['basis']}; fitted {', '.join(result['values'])} "
                           f"on ln(pred/meas) (least squares, soft-L1), rms ln error "
                           f"{result['rms_log_error']:.3f}, median |ln error| "
                           f"{result.get('median_abs_log_error', float('nan')):.3f}; ranges = 90% intervals; "
                           f"other parameters keep their catalog values"
                           + "".join(f"; {n}" for n in edge_notes(result)))
    ProfileSpec.model_validate(data)  # never write an invalid profile
    lines = []
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"{k}: {yaml.safe_dump(v, default_flow_style=True, sort_keys=False).strip()}")
        else:
            lines.append(yaml.safe_dump({k: v}, default_flow_style=False, sort_keys=False, width=110).strip())
    return "\n".join(lines) + "\n"


def fitted_profile(pid: str, result: dict) -> ProfileSpec:
    """The catalog profile ``pid`` with a fit result applied (what write_profile would write)."""
    return ProfileSpec.model_validate(_apply(catalog.profile(pid).model_dump(), result["values"], result["ranges"]))


__all__ = ["FIT_PARAMS", "PROFILE_PARAMS", "calibrate", "fit_family", "write_profile", "fitted_profile"]
