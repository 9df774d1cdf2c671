"""Predict many records for many profile-parameter vectors at once: a (records x samples) matrix.

Point rows (the bulk of the concurrency sweeps: aggregated, decode-only and disaggregated with named pools; and
aggregated Poisson-arrival runs, read at their Little's-law concurrency where the rate exceeds the modeled capacity)
that share a setup (hardware, model, weights, KV format, profile) are evaluated in ONE call of the serving
dispatcher (serving/dispatch.serve), every record tiled over the S parameter
samples (no Python loop per record or per sample). Every other row (frontier, ratio, prefill-only) goes
through ``predict_record`` once per record with all S samples.
The operating point of a row is exactly the one ``predict_rows`` uses (``point_inputs``), so a fit on this
matrix and ``perfmodel validate`` agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import catalog
from ..acceptance_priors import acceptance_at, fixed_acceptance, record_acceptance
from ..engine.evaluate import Setup, bind_parts
from ..errors import SpecError
from ..serving.dispatch import Pools, Sessions, serve, serve_columns
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from ..specs.records import Record
from .agentic_rows import agentic_inputs, agentic_metric, agentic_pool_inputs, finish_agentic
from .benchmark_runs import record_percentile
from .envelope import envelope_on
from .frontier_batch import frontier_values
from .point_rows import point_inputs
from .predict_rows import predict_record, profile_id
from .row_context import Unsupported, make_ctx, prefill_pool
from .workload_versions import record_host_tier, record_workload_spec, resolve_record

BATCHED_METRICS = {"tpot_ms": "tpot_ms", "ttft_ms": "ttft_ms", "tps_per_user": "tps_per_user",
                   "max_tps_per_user": "tps_per_user", "output_tps_per_gpu": "output_tps_per_gpu",
                   "total_tps_per_gpu": "total_tps_per_gpu"}


@dataclass
class Plan:
    """Records split into batched groups (setup key -> [(row index, points)]) and per-record rows."""

    records: list[Record]
    groups: dict[tuple, list[tuple[int, dict]]] = field(default_factory=dict)
    single: list[int] = field(default_factory=list)
    unsupported: dict[int, str] = field(default_factory=dict)
    agentic: dict[tuple, list[tuple[int, object]]] = field(default_factory=dict)   # key -> [(row, AgenticInputs)]
    agentic_pools: dict[tuple, list[tuple[int, dict, dict]]] = field(default_factory=dict)  # [(row, pts, pool)]
    frontier: dict[tuple, list[int]] = field(default_factory=dict)     # setup key -> frontier rows (frontier_batch)
    cache: dict = field(default_factory=dict, repr=False)   # what predict_matrix keeps between calls (_group)


def _agentic(rec: Record) -> bool:
    """Agentic rows go through predict_record (sessions, prefix-cache residency: serving/sessions.agentic)."""
    return bool(rec.workload and catalog.workload(rec.workload).kind == "agentic")


def plan(records: list[Record]) -> Plan:
    pl = Plan(list(records))
    for i, rec in enumerate(pl.records):
        try:
            rec = pl.records[i] = resolve_record(rec)
            pid = profile_id(rec)
            m = catalog.model(rec.model)
            catalog.hardware(rec.hardware)
            if (rec.kind == "point" and rec.metric in BATCHED_METRICS and _agentic(rec)
                    and rec.serving in (None, "aggregated")):
                w = record_workload_spec(rec)
                pts, _pooled = point_inputs(rec, m, catalog.profile(pid))
                a = agentic_inputs(rec, m, pts, w, catalog.profile(pid))
                key: tuple = (rec.hardware, rec.model, rec.weights or "fp8", rec.kv_cache or "fp8", pid, w.id,
                              a.host, a.q, a.ttft_qs)
                pl.agentic.setdefault(key, []).append((i, a))
                continue
            if (rec.kind == "point" and rec.metric in BATCHED_METRICS and _agentic(rec)
                    and rec.serving == "disaggregated"):
                pts, pooled = point_inputs(rec, m, catalog.profile(pid))
                pts, pool = agentic_pool_inputs(rec, m, pts, pooled)
                key = (rec.hardware, rec.model, rec.weights or "fp8", rec.kv_cache or "fp8", pid,
                       record_workload_spec(rec).id, record_host_tier(rec))
                pl.agentic_pools.setdefault(key, []).append((i, pts, pool))
                continue
            if rec.kind == "frontier" and rec.metric != "agents_per_gpu":
                key = (rec.hardware, rec.model, rec.weights or "fp8", rec.kv_cache or "fp8", pid)
                pl.frontier.setdefault(key, []).append(i)
                continue
            batched = (rec.kind == "point" and rec.metric in BATCHED_METRICS and not _agentic(rec)
                       and rec.serving in (None, "aggregated", "decode_only", "disaggregated"))
            pts, pooled = point_inputs(rec, m, catalog.profile(pid)) if batched else ({}, False)
            poisson = np.isfinite(pts.get("arrival_rate", np.nan))
            if not batched or (rec.serving == "disaggregated" and not pooled) or \
                    (poisson and record_percentile(rec) is not None):
                pl.single.append(i)
                continue
            # a Poisson run (an open loop at the served rate) above the modeled capacity is read at the run's
            # Little's-law concurrency (point_rows.point_frame): kept beside its point (NaN: not a Poisson run)
            pts = {**pts, FALLBACK: _fallback_concurrency(rec, pts) if poisson else np.nan}
            if pooled:
                pts = {**pts, **prefill_pool(rec, m)}
            key = (rec.hardware, rec.model, rec.weights or "fp8", rec.kv_cache or "fp8", pid, pooled)
            pl.groups.setdefault(key, []).append((i, pts))
        except (Unsupported, SpecError) as exc:
            pl.unsupported[i] = str(exc)
    return pl


FALLBACK = "fallback_concurrency"
"""A batched point's extra column (``plan``): the clients per instance a Poisson row is read at when its rate exceeds
the modeled capacity (NaN: a closed-loop row, or no published concurrency: the largest batch that fits)."""


def _fallback_concurrency(rec: Record, pts: dict) -> float:
    """Clients per instance of a Poisson run above capacity: its concurrency x instance GPUs / its GPUs (as
    point_rows.point_frame reads it)."""
    return np.nan if rec.concurrency is None else rec.concurrency * pts["gpus"] / (rec.gpus or pts["gpus"])


def predict_matrix(pl: Plan, profiles: dict[str, ProfileSpec], params: dict[str, np.ndarray]) -> np.ndarray:
    """(records, S) predictions for S parameter vectors ``params`` (PROFILE_PARAMS names and
    'acceptance_rate' -> (S,) arrays) applied to each record's profile; NaN where unsupported/infeasible."""
    n = len(pl.records)
    S = len(next(iter(params.values())))
    out = np.full((n, S), np.nan)
    prof_vals = {k: np.asarray(params[k], float) for k in PROFILE_PARAMS}
    rate = np.asarray(params.get("acceptance_rate", np.full(S, np.nan)), float)
    for key, rows in pl.groups.items():
        _point_group(pl, key, rows, profiles, prof_vals, rate, S, out)
    for key, agentic_rows in pl.agentic.items():
        _agentic_group(pl, key, agentic_rows, profiles, prof_vals, rate, S, out)
    for key, pool_rows in pl.agentic_pools.items():
        _agentic_pool_group(pl, key, pool_rows, profiles, prof_vals, rate, S, out)
    single = list(pl.single)
    for key, frontier_rows in pl.frontier.items():
        single += _frontier_group(pl, key, frontier_rows, profiles, params, out)
    for i in sorted(single):
        rec = pl.records[i]
        try:
            out[i] = predict_record(rec, profiles[profile_id(rec)], params)
        except (Unsupported, SpecError):
            pl.unsupported.setdefault(i, "unsupported")
    return out


def _frontier_group(pl: Plan, key: tuple, rows: list[int], profiles: dict, params: dict, out: np.ndarray) -> list[int]:
    """The frontier rows of one setup read together (validation/frontier_batch.py) into ``out``; returns the rows
    read on the envelope over the profile's variants (no engine named, outside ``profile_alone``), which
    predict_record reads one by one."""
    on_envelope = envelope_on()
    alone = [i for i in rows if on_envelope and not pl.records[i].engine]
    together = [i for i in rows if i not in alone]
    if together:
        first = pl.records[together[0]]
        ctx = make_ctx(first.hardware, first, profiles[key[4]], params)
        for i, value in zip(together, frontier_values([pl.records[i] for i in together], ctx)):
            if isinstance(value, Exception):
                pl.unsupported.setdefault(i, "unsupported")
            else:
                out[i] = value
    return alone


@dataclass
class _Group:
    """The parameter-free arrays of one batched group (``Plan.groups``), built once per plan: the records'
    indices, their operating points (one row a record, ``keys`` the columns), which records draft tokens (their
    acceptance follows the per-draft rate, ``record_acceptance``) and the column each record reads."""

    rows: np.ndarray
    keys: list[str]
    points: np.ndarray
    drafts: np.ndarray
    metrics: np.ndarray


def _group(pl: Plan, key: tuple, rows: list[tuple[int, dict]]) -> _Group:
    if key not in pl.cache:
        keys = list(rows[0][1])
        pl.cache[key] = _Group(np.array([i for i, _p in rows]), keys,
                               np.array([[float(p[k]) for k in keys] for _i, p in rows]).reshape(len(rows), len(keys)),
                               np.array([bool(pl.records[i].spec_tokens) for i, _p in rows]),
                               np.array([BATCHED_METRICS[pl.records[i].metric] for i, _p in rows]))
    return pl.cache[key]


def _setup_of(pl: Plan, key: tuple, profile: ProfileSpec) -> tuple[Setup, tuple]:
    """The group's Setup on ``profile`` and its ``symbol_parts`` (what does not depend on the parameter values),
    built once per plan and profile object."""
    hit = pl.cache.get(("setup", key))
    if hit is None or hit[0] is not profile:
        hw, model, weights, kv = key[:4]
        setup = Setup(catalog.hardware(hw), catalog.model(model), profile, weights=weights, kv_cache=kv)
        hit = pl.cache[("setup", key)] = (profile, setup, setup.symbol_parts())
    return hit[1], hit[2]


def _fixed_acceptance(pl: Plan, key: tuple, g: _Group, profile: ProfileSpec) -> dict[int, float | None]:
    """Row -> ``fixed_acceptance`` of the group's records that draft tokens (the others accept 1), per plan and
    profile object."""
    hit = pl.cache.get(("acceptance", key))
    if hit is None or hit[0] is not profile:
        hit = pl.cache[("acceptance", key)] = (profile, {int(j): fixed_acceptance(pl.records[g.rows[j]], profile)
                                                         for j in np.flatnonzero(g.drafts)})
    return hit[1]


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse) of the rows of the 2-D float array ``a`` that are equal bit for bit: ``first`` the index of
    each distinct row's first occurrence, in the order they occur, ``inverse`` the position in ``first`` of every
    row's twin (a[first][inverse] == a)."""
    a = np.ascontiguousarray(a)
    view = a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    _u, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[np.ravel(inverse)]


def _point_group(pl: Plan, key: tuple, rows: list, profiles: dict, prof_vals: dict, rate, S: int,
                 out: np.ndarray) -> None:
    """The point rows of one setup: ONE call of the serving dispatcher over the group's distinct (operating
    point, acceptance) pairs x the S parameter samples (record-major, sample-minor: record r, sample s at
    r * S + s). Records that share their point and acceptance (a sweep's TPOT and TTFT records) are evaluated
    once: the evaluation is elementwise, so each point's numbers are those of a call with every record."""
    pid, pooled = key[4], key[5]
    g = _group(pl, key, rows)
    setup, parts = _setup_of(pl, key, profiles[pid])
    m = len(g.rows)
    acc = np.ones((m, S))
    for j, fixed in _fixed_acceptance(pl, key, g, setup.profile).items():
        acc[j] = acceptance_at(pl.records[g.rows[j]], rate, fixed)
    first, inverse = unique_rows(np.concatenate([g.points, acc], axis=1))
    u = len(first)
    vals = bind_parts(parts, _tiled(prof_vals, u, S))
    pts = {k: np.repeat(g.points[first, c], S) for c, k in enumerate(g.keys)}
    pts["acc"] = acc[first].ravel()
    fallback = pts.pop(FALLBACK)
    if pooled:
        pools = Pools(*(pts.pop(c) for c in ("pf_gpus", "pf_tp", "pf_ep", "instances", "pf_instances")))
        df = serve(setup, pts, "disaggregated", pools=pools, symbol_values=vals)
        column = lambda name: df[name].to_numpy()  # noqa: E731
    else:          # the frame's columns, no DataFrame built (serve_columns)
        mode = "aggregated" if pts["mix"].max() > 0 else "decode_only"
        cols = serve_columns(setup, pts, mode, symbol_values=vals)
        cols = _over_capacity(setup, mode, pts, fallback, cols, (parts, prof_vals, S),
                              ["kv_max_batch", "fit_reason", *dict.fromkeys(g.metrics)])
        column = lambda name: np.broadcast_to(cols[name], (u * S,))  # noqa: E731
    no_room = np.asarray(column("kv_max_batch"), float).reshape(u, S) < 1      # weights leave no KV room: refused
    unfit = np.asarray(no_room.all(axis=1))[inverse]
    if unfit.any():
        reasons = column("fit_reason")
        for r in np.flatnonzero(unfit):
            pl.unsupported.setdefault(int(g.rows[r]), f"memory: {reasons[inverse[r] * S]}")
    for col in dict.fromkeys(g.metrics):
        sel = (g.metrics == col) & ~unfit
        out[g.rows[sel]] = np.asarray(column(col), float).reshape(u, S)[inverse[sel]]


def _over_capacity(setup: Setup, mode: str, pts: dict, fallback: np.ndarray, cols: dict, binding: tuple,
                   names: list[str]) -> dict:
    """The columns ``names`` of a point group's evaluation ``cols`` with every Poisson point whose rate exceeds
    the modeled capacity in any sample (a ``fit_reason`` beginning 'arrival_rate': the open loop has no steady
    state) evaluated again as a closed loop at its ``fallback`` clients (point_rows.point_frame reads such a run
    so). ``pts``: the group's points (u x S, sample-minor), ``binding`` (symbol_parts, profile values, S)."""
    parts, prof_vals, S = binding
    n = len(pts["batch"])
    rate = pts["arrival_rate"].reshape(-1, S)[:, 0]
    poisson = np.flatnonzero(np.isfinite(rate))
    if poisson.size == 0:
        return cols
    reasons = np.broadcast_to(cols["fit_reason"], (n,)).reshape(-1, S)
    redo = np.array([i for i in poisson if any(str(r).startswith("arrival_rate") for r in reasons[i])], int)
    if redo.size == 0:
        return cols
    sel = (redo[:, None] * S + np.arange(S)).ravel()
    again = {k: np.asarray(v)[sel] for k, v in pts.items()}
    again["arrival_rate"] = np.full(sel.size, np.nan)
    again["concurrency"] = fallback[sel]
    closed = serve_columns(setup, again, mode, symbol_values=bind_parts(parts, _tiled(prof_vals, redo.size, S)))
    out = {}
    for name in names:
        col = np.broadcast_to(cols[name], (n,))
        col = np.array(col, dtype=object if col.dtype.kind in "OUS" else col.dtype)
        col[sel] = np.broadcast_to(closed[name], (sel.size,))
        out[name] = col
    return out


def _setup_vals(key, m: int, profiles: dict, prof_vals: dict, S: int):
    hw, model, weights, kv, pid = key[:5]
    setup = Setup(catalog.hardware(hw), catalog.model(model), profiles[pid], weights=weights, kv_cache=kv)
    return setup, setup.symbol_values(profile=_tiled(prof_vals, m, S))


def _tiled(prof_vals: dict, m: int, S: int) -> dict:
    """Profile parameter draws (S,) repeated for m records (sample-minor: record r, sample s at r * S + s)."""
    return {k: np.tile(np.asarray(v, float), m) if np.size(v) == S and np.ndim(v) else v
            for k, v in prof_vals.items()}


def _agentic_pool_group(pl: Plan, key: tuple, rows: list, profiles: dict, prof_vals: dict, rate, S: int,
                        out: np.ndarray) -> None:
    """Disaggregated agentic point rows of one setup, workload and host tier: ONE call of
    serving/sessions.agentic_disaggregated over every (record, sample) pair, each with its own pools."""
    w = record_workload_spec(pl.records[rows[0][0]])
    m = len(rows)
    setup, vals = _setup_vals(key, m, profiles, prof_vals, S)
    keys = list(rows[0][1])
    pts = {k: np.repeat([float(p[k]) for _i, p, _pool in rows], S) for k in keys}
    pts["acc"] = np.concatenate([record_acceptance(pl.records[i], rate, setup.profile) for i, _p, _pool in rows])
    col = lambda name: np.repeat([float(pool[name]) for _i, _p, pool in rows], S)  # noqa: E731
    hit = np.repeat([np.nan if pl.records[i].prefix_hit is None else pl.records[i].prefix_hit
                     for i, _p, _pool in rows], S)
    pools = Pools(*(col(c) for c in ("pf_gpus", "pf_tp", "pf_ep", "instances", "pf_instances")))
    df = serve(setup, pts, "disaggregated", pools=pools, symbol_values=vals,
               sessions=Sessions(w.agentic.pause_s, key[6], w.agentic, prefix_hit=hit))
    for j, (i, _p, _pool) in enumerate(rows):
        out[i] = df[agentic_metric(pl.records[i], df)].to_numpy(float)[j * S:(j + 1) * S]


def _agentic_group(pl: Plan, key: tuple, rows: list, profiles: dict, prof_vals: dict, rate, S: int,
                   out: np.ndarray) -> None:
    """Aggregated agentic point rows of one setup, workload, host tier and statistic: ONE call of
    serving/sessions.agentic over every (record, sample) pair (record-major, sample-minor), each record with its
    own lanes, workers and forced hit (NaN: the cache model's)."""
    host, q, ttft_qs = key[6:]
    w = record_workload_spec(pl.records[rows[0][0]])
    m = len(rows)
    setup, vals = _setup_vals(key, m, profiles, prof_vals, S)
    keys = [k for k in rows[0][1].pts]
    pts = {k: np.repeat([float(a.pts[k]) for _i, a in rows], S) for k in keys}
    pts["acc"] = np.concatenate([record_acceptance(pl.records[i], rate, setup.profile) for i, _a in rows])
    workers = np.repeat([a.workers for _i, a in rows], S)
    hit = np.repeat([a.hit for _i, a in rows], S)
    df = serve(setup, pts, "aggregated", symbol_values=vals,
               sessions=Sessions(w.agentic.pause_s, host, w.agentic, q, workers=workers, prefix_hit=hit,
                                 ttft_percentiles=ttft_qs))
    df = finish_agentic(rows[0][1], df)
    for j, (i, _a) in enumerate(rows):
        out[i] = df[agentic_metric(pl.records[i], df)].to_numpy(float)[j * S:(j + 1) * S]
