"""Frontier: the Pareto envelope of throughput per GPU against tokens/s per user, over every deployment.

For each weight format: one capacity probe (serving/load.capacity) of every deployment (batch = one
sequence per DP rank), then one call per serving mode evaluates every deployment over its batch grid
(vectorized; no loop over points). Points that do not fit are dropped. The envelope keeps each point that
no point of higher-or-equal interactivity beats: sorted by tps_per_user, throughput falls strictly as
interactivity rises.

Reading a frontier at an interactivity x means "the best throughput at a per-user speed of at least x":
between frontier points, log-log interpolation; below the first point, the peak; past the last, NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..engine.bind import attention_format
from ..errors import SpecError
from ..formats import check_formats
from ..search import SLO, pareto_index, poisson, slo_cut, slo_infeasible, ttft_cut
from ..serving.load import capacity
from ..serving.pools import PoolSearch, cluster_budget
from .deployments import LAYOUT_COLUMNS, DeploymentSpace, batch_grid, layouts, points, prefill_layouts
from .evaluation import evaluate_rows, workload_info
from .systems import DEFAULT_PROFILE, System, as_model, as_system

X = "tps_per_user"
Y = "total_tps_per_gpu"
THROUGHPUT_METRICS = ("total_tps_per_gpu", "output_tps_per_gpu", "total_tps_per_mw", "output_tps_per_mw",
                      "total_tokens_per_usd")
DEPLOYMENT_COLUMNS = ["hardware", "profile", "model", "weights", "attention_weights", "kv_cache", "serving",
                      "gpus", "tp", "dp", "dp_attention", "ep", "pp", "spec_tokens", "acceptance_length",
                      "instances", "pf_instances", "pf_gpus", "pf_tp", "pf_dp", "pf_ep", "prefill_ratio",
                      "prefill_gpus", "decode_gpus", "kv_host_tier", "batch"]
CURVE_COLUMNS = ["tps_per_user", "total_tps_per_gpu", "output_tps_per_gpu", "intvty", "tput_per_gpu",
                 "output_tput_per_gpu", "total_tps_per_mw", "total_tokens_per_usd", "tpot_ms", "ttft_ms",
                 "tps_per_user_e2e", "tps_per_user_e2e_p50", "tps_per_user_e2e_p90", "bound", "mem_gb_per_gpu",
                 "max_batch", "sessions_per_gpu", "evicted_share", "prefix_hit", "prefill_utilization",
                 "prefill_queue_ms", "kv_transfer_ms"]


CSV_COLUMNS = list(dict.fromkeys(["system", *DEPLOYMENT_COLUMNS, *CURVE_COLUMNS]))
"""The frontier CSV (``perfmodel frontier --csv``): these columns in this order on every run; pool columns
(csvout.DISAGG_ONLY) blank on rows that are not disaggregated; agentic columns blank on fixed workloads."""


def _formats(weights) -> list[str]:
    return [weights] if isinstance(weights, str) else list(weights)


@dataclass
class _Block:
    """Evaluated points of one weight format: engine frame and the deployment rows, aligned."""

    df: pd.DataFrame
    grid: pd.DataFrame
    weights: str
    pools: PoolSearch | None = None
    max_ttft_ms: float | None = None
    slo: SLO | None = None


def _cut(df: pd.DataFrame, grid: pd.DataFrame, setup, wl, max_ttft_ms: float | None, slo: SLO | None,
         metric: str, stats: dict) -> pd.DataFrame:
    """The SLO inside the search (search/cut.py): the closed loop's P50 TTFT limit, then the SLO at its
    percentiles on the points served under Poisson arrivals (search/served.poisson)."""
    df = ttft_cut(df, max_ttft_ms)
    serving = grid["serving"].to_numpy() if "serving" in grid else np.full(len(grid), "aggregated")

    def serve_mode(sel: np.ndarray, mode: str) -> pd.DataFrame:
        sub = grid.iloc[sel]
        return poisson(setup, points(sub, wl.lengths), df.iloc[sel].reset_index(drop=True), mode, wl.agentic,
                       sub["gpus"].to_numpy(float), wl.lengths["osl"])
    return slo_cut(df, serving, serve_mode, slo, wl.lengths["osl"], metric, stats)


CHUNK = 250_000   # operating points per evaluate call: bounded memory for any grid size


def _evaluate(sysm: System, m, workload, weights, kv_cache, attention_weights, space, reduce: str | None = None):
    """Evaluate every candidate, in chunks. ``reduce``: keep only each chunk's envelope of that metric (the
    global envelope is a subset of the union of the chunks' envelopes), so memory stays bounded."""
    wl = workload_info(workload)
    space = space or DeploymentSpace()
    domain_gpus = sysm.fields()["scaleup_domain_gpus"]
    assert domain_gpus is not None  # a required hardware field (HardwareSpec), overrides are numbers
    domain = int(domain_gpus)
    feats = sysm.profile_spec().features
    rows, notes = layouts(m, domain, sysm.spec_rate(), space, disaggregation=feats.disaggregation,
                          kv_host_tier=feats.kv_host_tier, agentic=wl.agentic)
    pools = None
    keep_up_ms = space.max_ttft_ms if space.max_ttft_ms is not None else (
        space.slo.ttft_ms if space.slo is not None else None)
    if (rows["serving"] == "disaggregated").any():
        pools = PoolSearch(prefill_layouts(m, domain, space), cluster_budget(domain, space.max_disagg_gpus),
                           keep_up=keep_up_ms is not None,
                           max_ttft_s=None if keep_up_ms is None else keep_up_ms / 1e3)
    blocks, n_cand, n_fit, best_ttft = [], 0, 0, np.inf
    slo_stats: dict = {}
    budget_reason: list[str] = []
    for w in _formats(weights):
        setup = sysm.setup(m, weights=w, kv_cache=kv_cache, attention_weights=attention_weights)
        cap = capacity(setup, {**points(rows, wl.lengths), "batch": rows["dp"].to_numpy()})
        grid_all = batch_grid(rows, cap, space.batch_points, space.max_batch)
        for start in range(0, len(grid_all), CHUNK):
            grid = grid_all if len(grid_all) <= CHUNK else grid_all.iloc[start:start + CHUNK].reset_index(drop=True)
            df, order = evaluate_rows(lambda mask: setup, grid, wl, pools)
            if not (order == np.arange(len(order))).all():
                grid = grid.iloc[order].reset_index(drop=True)
            fits_mem = df["fits"].to_numpy()
            if fits_mem.any():
                best_ttft = min(best_ttft, float(np.nanmin(np.where(fits_mem, df["ttft_ms"].to_numpy(), np.inf))))
            df = _cut(df, grid, setup, wl, space.max_ttft_ms, space.slo, reduce or Y, slo_stats)
            fits = df["fits"].to_numpy()
            if "pool_fits" in df and not budget_reason and df["pool_fits"].eq(False).any():
                budget_reason.append(df["fit_reason"][df["pool_fits"].eq(False).to_numpy()].iloc[0])
            n_cand, n_fit = n_cand + len(df), n_fit + int(fits.sum())
            if reduce:
                keep = pareto_index(np.where(fits, df[X].to_numpy(), np.nan),
                                    np.where(fits, df[reduce].to_numpy(), np.nan))
                df, grid = df.iloc[keep].reset_index(drop=True), grid.iloc[keep].reset_index(drop=True)
            blocks.append(_Block(df, grid, w, pools, space.max_ttft_ms, space.slo))
    if not blocks:
        raise SpecError(f"{m.id} does not fit on {sysm.name} in any enumerated deployment "
                        f"(up to {space.max_gpus or domain} GPUs per instance)", field="model")
    meta = dict(candidates=n_cand, fitting=n_fit, deployments=len(rows) * len(_formats(weights)),
                notes=notes, pool_budget=budget_reason[:1], lowest_ttft_ms=best_ttft, isl=wl.lengths["isl"],
                osl=wl.lengths["osl"], workload=wl.name, slo_stats=slo_stats)
    return blocks, meta


def _annotate(b: _Block, idx: np.ndarray | None, sysm: System, m, attention_weights, kv_cache) -> pd.DataFrame:
    take = (lambda a: a) if idx is None else (lambda a: a[idx])  # noqa: E731
    cols = {c: take(b.df[c].to_numpy()) for c in b.df.columns}
    g = {c: take(b.grid[c].to_numpy()) for c in b.grid.columns}
    cols.update(serving=g["serving"], dp=g["dp"], dp_attention=g["dp"] > 1)
    for c, v in g.items():   # extra deployment dimensions travel along
        if c not in cols and c not in ("acc", "mix"):
            cols[c] = v
    n = len(cols["dp"])
    const = dict(weights=b.weights, kv_cache=kv_cache,
                 attention_weights=attention_format(m, b.weights, attention_weights),
                 hardware=sysm.hardware_spec().id, profile=sysm.profile_spec().id, model=m.id)
    if sysm.label:
        const["system"] = sysm.label
    cols.update({k: np.full(n, v, dtype=object) for k, v in const.items()})
    return pd.DataFrame(cols)


def candidates(system: System | str, model, workload="fixed-1k1k", *, profile=DEFAULT_PROFILE,
               weights=("fp8",), kv_cache: str = "fp8", attention_weights: str | None = None,
               space: DeploymentSpace | None = None, fitting_only: bool = True, keep=None) -> pd.DataFrame:
    """Every enumerated operating point, evaluated, with its deployment columns.

    ``keep``: optional ``keep(engine_frame, rows) -> rows`` choosing which of the (fitting) rows of each weight
    format to return, before the deployment columns are attached (e.g. the points of some envelopes).
    ``df.attrs``: ``candidates`` (points evaluated on the batch grids), ``deployments``, ``notes``.
    """
    sysm = as_system(system, profile)
    m = as_model(model)
    blocks, meta = _evaluate(sysm, m, workload, weights, kv_cache, attention_weights, space)
    frames = []
    for b in blocks:
        idx = np.nonzero(b.df["fits"].to_numpy())[0] if fitting_only else None
        if keep is not None:
            idx = keep(b.df, np.arange(len(b.df)) if idx is None else idx)
        frames.append(_annotate(b, idx, sysm, m, attention_weights, kv_cache))
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    out.attrs.update(meta)
    return out


def pareto(df: pd.DataFrame, x: str = X, y: str = Y) -> pd.DataFrame:
    """The envelope of a DataFrame: sorted by ``x`` ascending, ``y`` strictly decreasing."""
    if df.empty:
        return df
    return df.iloc[pareto_index(df[x].to_numpy(), df[y].to_numpy())].reset_index(drop=True)


def frontier(hardware, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *, weights=("fp8",),
             kv_cache: str = "fp8", attention_weights: str | None = None, space: DeploymentSpace | None = None,
             hw_overrides: dict | None = None, profile_overrides: dict | None = None,
             acceptance_rate: float | None = None, metric: str = Y, refine: int = 128,
             all_columns: bool = False) -> pd.DataFrame:
    """Pareto frontier of ``metric`` (default total tokens/s per GPU) against tokens/s per user.

    ``hardware`` is a catalog id / HardwareSpec or a ``System``. Returns one row per frontier point with the
    curve columns (incl. InferenceX ``intvty``, ``tput_per_gpu``, ``output_tput_per_gpu``) and the deployment
    behind it. ``df.attrs`` holds ``candidates``, ``max_tps_per_user``, ``peak``, ``notes``, power and price.
    ``refine``: the deployments on the first envelope are re-evaluated on a ``refine``-point batch grid (one more
    vectorized call) and the envelope is taken again, so the curve is smooth between layouts (0: off).

    Returns a DataFrame sorted by ``tps_per_user`` (rising; ``metric`` falling). Units: ``tps_per_user``
    output tokens/s per user while decoding (1 / TPOT; = ``intvty``); ``total_tps_per_gpu`` input (incl.
    cached prefix) + output tokens/s per GPU (= ``tput_per_gpu``); ``output_tps_per_gpu`` output tokens/s
    per GPU; ``total_tps_per_mw`` tokens/s per MW of all-in power; ``total_tokens_per_usd`` tokens per US
    dollar; ``tpot_ms`` and ``ttft_ms`` (P50) in ms; ``mem_gb_per_gpu`` GB; ``gpus``, ``tp``, ``dp``, ``ep``,
    ``pp`` counts; ``batch`` sequences in flight per instance; ``spec_tokens`` drafts per step; ``bound`` the
    binding resource. ``df.attrs['power_w']`` W per GPU, ``df.attrs['price_usd_per_gpu_hour']`` USD per
    GPU-hour. Raises SpecError when no deployment fits.
    ``all_columns``: also keep every other column the serving layer gave the frontier points (the KV residency
    shares, sessions, prefill and transfer times, step parts: docs/output-columns.md), after the usual ones;
    the points and the usual columns are the same either way (analyses/explain_point.py reads them).
    """
    if metric not in THROUGHPUT_METRICS:
        raise SpecError(f"unknown metric {metric!r}; choose from {list(THROUGHPUT_METRICS)}", field="metric")
    check_formats(weights, kv_cache, attention_weights)
    sysm = as_system(hardware, profile)
    if hw_overrides or profile_overrides or acceptance_rate is not None:
        sysm = sysm.with_changes(hw_overrides, profile_overrides, acceptance_rate)
    m = as_model(model)
    blocks, meta = _evaluate(sysm, m, workload, weights, kv_cache, attention_weights, space, reduce=metric)
    xs, ys, fits = _xy(blocks, metric)
    if not np.isfinite(ys).any():
        budget = meta.get("pool_budget")
        limit = (space or DeploymentSpace()).max_ttft_ms
        slo = (space or DeploymentSpace()).slo
        if slo is not None and meta["slo_stats"] and np.isfinite(meta["lowest_ttft_ms"]):
            raise SpecError(slo_infeasible(slo, meta["slo_stats"], sysm.name), field="slo")
        if limit is not None and np.isfinite(meta["lowest_ttft_ms"]) and meta["lowest_ttft_ms"] > limit:
            raise SpecError(f"no deployment of {m.id} on {sysm.name} meets TTFT <= {limit:g} ms (the lowest "
                            f"modeled is {meta['lowest_ttft_ms']:.0f} ms)", field="max_ttft_ms")
        if budget:
            raise SpecError(f"no disaggregated split fits: {budget[0]}", field="max_disagg_gpus")
        raise SpecError(f"no enumerated deployment of {m.id} fits on {sysm.name}", field="model")
    keep = pareto_index(xs, ys)
    n_fit = meta["fitting"]
    if refine:
        n_blocks = len(blocks)
        blocks += _refine(blocks, keep, sysm, m, workload, kv_cache, attention_weights, refine, metric)
        xs, ys, fits = _xy(blocks, metric)
        keep = pareto_index(xs, ys)
        meta["refined"] = sum(len(b.df) for b in blocks[n_blocks:])
    starts = np.cumsum([0] + [len(b.df) for b in blocks])
    parts = []
    for i, b in enumerate(blocks):
        sel = keep[(keep >= starts[i]) & (keep < starts[i + 1])] - starts[i]
        if len(sel):
            parts.append(_annotate(b, sel, sysm, m, attention_weights, kv_cache))
    front = pd.concat(parts, ignore_index=True).sort_values(X, kind="stable").reset_index(drop=True)
    cols = [c for c in DEPLOYMENT_COLUMNS + ["system"] if c in front] + \
        [c for c in CURVE_COLUMNS if c in front and c not in DEPLOYMENT_COLUMNS]
    extra = [c for c in front.columns if c not in cols and (all_columns or c in LAYOUT_COLUMNS)]
    out = front[cols + extra].copy()
    allx = xs[np.isfinite(xs)]
    out.attrs.update(meta)
    if "prefix_hit" in out and (out["prefix_hit"].fillna(0) > 0).any():
        out.attrs["notes"] = [*meta.get("notes", []), cached_prefix_note(out)]
    out.attrs.update(system=sysm.name, metric=metric, fitting=n_fit,
                     max_tps_per_user=float(allx.max()), peak=float(np.nanmax(ys)),
                     power_w=sysm.power_w(), price_usd_per_gpu_hour=sysm.price())
    return out


def usual_columns(front: pd.DataFrame) -> pd.DataFrame:
    """A frontier computed with ``all_columns``, cut to the columns it has without (the same points, the same
    values: what a caller that reads the serving columns on the side passes on)."""
    usual = {*DEPLOYMENT_COLUMNS, "system", *CURVE_COLUMNS, *LAYOUT_COLUMNS}
    out = front[[c for c in front.columns if c in usual]].copy()
    out.attrs.update(front.attrs)
    return out


def cached_prefix_note(front: pd.DataFrame) -> str:
    """What total tokens/s per GPU counts on a workload with prefix hits (agentic sessions)."""
    hit = front["prefix_hit"].fillna(0)
    return (f"total_tps_per_gpu counts every input token, the cached prefix included (prefix hit "
            f"{hit.min():.0%}-{hit.max():.0%} on this frontier): the prefix is read from the KV cache, not prefilled; "
            f"output_tps_per_gpu, and input_tps_per_gpu x (1 - prefix_hit), are the tokens computed")


def _xy(blocks, metric):
    fits = [b.df["fits"].to_numpy() for b in blocks]
    xs = np.concatenate([np.where(f, b.df[X].to_numpy(), np.nan) for b, f in zip(blocks, fits)])
    ys = np.concatenate([np.where(f, b.df[metric].to_numpy(), np.nan) for b, f in zip(blocks, fits)])
    return xs, ys, fits


def _refine(blocks, keep, sysm, m, workload, kv_cache, attention_weights, n, metric=Y) -> list[_Block]:
    """Dense batch grids for the deployments on the envelope (one evaluate call per format and mode)."""
    wl = workload_info(workload)
    starts = np.cumsum([0] + [len(b.df) for b in blocks])
    out = []
    for i, b in enumerate(blocks):
        sel = keep[(keep >= starts[i]) & (keep < starts[i + 1])] - starts[i]
        if not len(sel):
            continue
        rows = b.grid.iloc[sel]
        key = [c for c in LAYOUT_COLUMNS if c in rows]
        first = ~rows.duplicated(key).to_numpy()
        rows, cap = rows[first].drop(columns="batch"), b.df["max_batch"].to_numpy()[sel][first]
        grid = batch_grid(rows.reset_index(drop=True), cap, n)
        setup = sysm.setup(m, weights=b.weights, kv_cache=kv_cache, attention_weights=attention_weights)
        df, order = evaluate_rows(lambda mask: setup, grid, wl, b.pools)
        if not (order == np.arange(len(order))).all():
            grid = grid.iloc[order].reset_index(drop=True)
        out.append(_Block(_cut(df, grid, setup, wl, b.max_ttft_ms, b.slo, metric, {}), grid, b.weights, b.pools,
                          b.max_ttft_ms, b.slo))
    return out


def summary(front: pd.DataFrame, metric: str | None = None) -> dict:
    """Where the curve ends and what it peaks at, with the deployments there.

    Returns a dict: ``system``, ``workload``, ``metric``; ``candidates`` / ``fitting`` / ``frontier_points``
    (counts of operating points); ``max_tps_per_user`` (tokens/s per user at the curve end) and
    ``<metric>_at_max_tps_per_user``; ``peak_<metric>`` (the metric's unit, e.g. tokens/s per GPU) and
    ``tps_per_user_at_peak``; ``peak_output_tps_per_gpu`` (output tokens/s per GPU); the deployment columns at
    both points (``max_tps_per_user_deployment``, ``peak_deployment``); ``notes``."""
    metric = metric or front.attrs.get("metric", Y)
    i_top = int(front[X].to_numpy().argmax())
    i_peak = int(front[metric].to_numpy().argmax())
    dep = lambda i: {c: _py(front.iloc[i][c]) for c in DEPLOYMENT_COLUMNS if c in front}  # noqa: E731
    return {
        "system": front.attrs.get("system"), "workload": front.attrs.get("workload"), "metric": metric,
        "candidates": front.attrs.get("candidates"), "fitting": front.attrs.get("fitting"),
        "frontier_points": len(front),
        "max_tps_per_user": float(front[X].iloc[i_top]),
        f"{metric}_at_max_tps_per_user": float(front[metric].iloc[i_top]),
        f"peak_{metric}": float(front[metric].iloc[i_peak]),
        "tps_per_user_at_peak": float(front[X].iloc[i_peak]),
        "ttft_ms_at_peak": float(front["ttft_ms"].iloc[i_peak]) if "ttft_ms" in front else None,
        "ttft_ms_at_max_tps_per_user": float(front["ttft_ms"].iloc[i_top]) if "ttft_ms" in front else None,
        "peak_output_tps_per_gpu": float(front["output_tps_per_gpu"].max()),
        "max_tps_per_user_deployment": dep(i_top), "peak_deployment": dep(i_peak),
        "notes": front.attrs.get("notes", []),
    }


def _py(v):
    return v.item() if hasattr(v, "item") else v


def read_at(front: pd.DataFrame, x, metric: str = Y) -> np.ndarray:
    """Best ``metric`` at a per-user speed of at least ``x`` (log-log interpolation between frontier points).

    Below the frontier's lowest interactivity the value is the peak; above its highest it is NaN.
    ``x`` in tokens/s per user (scalar or array). Returns a float array shaped like ``x``, in ``metric``'s unit
    (tokens/s per GPU for the default).
    """
    x = np.atleast_1d(np.asarray(x, dtype=float))
    fx, fy = front[X].to_numpy(), front[metric].to_numpy()
    if len(fx) == 0:
        return np.full(x.shape, np.nan)
    order = np.argsort(fx)
    fx, fy = fx[order], fy[order]
    out = np.exp(np.interp(np.log(x), np.log(fx), np.log(fy)))
    out[x > fx[-1] * (1 + 1e-12)] = np.nan
    out[x <= fx[0]] = fy.max()
    return out
