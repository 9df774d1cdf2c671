"""Frontier rows: the best modeled value per sample over the candidate layouts, draft depths and batches a row
allows, read at its per-user speed (or the peak), under its latency limits when the benchmark sets them."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..acceptance_priors import record_acceptance
from ..model import is_moe
from ..search import SLO, Best, best_over
from ..search.loop import Read
from ..serving.dispatch import serve, serve_columns
from ..specs.records import Record
from .benchmark_runs import record_instance_gpus, record_latency_limits
from .row_context import Ctx, Unsupported, eval_points, layout, layout_why, lengths, pools_of, prefill_pool, tile

FRONTIER_HINTS = "constrain"
FRONTIER_SPEC_DEPTHS = (0, 1, 2, 3)   # draft depths engines serve from an MTP head (the MTP 1-3 recipes)
BATCH_GRID = np.unique(np.round(np.geomspace(1, 65536, 73)))


def _candidates(rec: Record, model, instance: int | None) -> list[tuple[float, float, float]]:
    moe = is_moe(model)
    if instance is not None or rec.tp is not None or rec.ep is not None:
        if instance is None and rec.tp is not None and not rec.dp_attention:
            instance = rec.tp
        if instance is not None and rec.tp is None and not rec.dp_attention:
            # dp_attention not published: try both plain TP (within a domain) and attention-DP + EP
            outs = [(float(instance), 1.0, float(rec.ep or instance))] if moe else []
            outs += [(float(instance), float(t), float(rec.ep or (instance if moe else 1)))
                     for t in (1, 2, 4, 8) if instance % t == 0 and (moe or t == instance)]
            if not outs:     # dense on a whole domain (an NVL72) with no layout: instances of up to 8 GPUs (TP)
                outs = [(float(t), float(t), 1.0) for t in (1, 2, 4, 8) if instance % t == 0]
            return sorted(set(outs))
        return [layout(rec, model, instance)]
    outs = [(float(t), float(t), float(t if moe else 1)) for t in (1, 2, 4, 8)]
    if moe:
        outs.append((8.0, 1.0, 8.0))
    return outs


def _eval_disaggregated_grid(rec: Record, ctx: Ctx, pts: dict, nb: int, G: float, model, search) -> pd.DataFrame:
    """A disaggregated frontier row over a batch grid: the published split (decode workers of G GPUs tiling
    decode_gpus, the prefill pool of ``prefill_pool``) through the closed loop, or, without a published split,
    the pool search (serving/pools.py) choosing the prefill layout and both counts per point."""
    p, vals = tile(ctx, pts, nb)
    if search is not None:
        return serve(ctx.setup, p, "disaggregated", search=search, symbol_values=vals)
    assert rec.decode_gpus is not None  # no pool search: the row gives prefill_gpus and decode_gpus (split)
    pool = prefill_pool(rec.model_copy(update={"decode_workers": int(rec.decode_gpus // G)}), model)
    return serve(ctx.setup, p, "disaggregated", pools=pools_of(pool), symbol_values=vals)


def open_loop_points(ctx: Ctx, pts: dict, m: int) -> pd.DataFrame:
    """The batch grid as Poisson arrival rates (a LoadGen Server / Interactive run): each point's closed-loop
    request rate X(B) (requests/s per instance) is offered as an open loop, lambda = X(B), whose batch
    (B = lambda S), queue and P99 latencies serving/queueing.py solves. Two vectorized evaluations."""
    closed = eval_points(ctx, pts, m)
    p, vals = tile(ctx, {**pts, "batch": np.nan}, m)
    p["arrival_rate"] = closed["request_rate_per_s"].to_numpy(float)
    return serve(ctx.setup, p, "aggregated", symbol_values=vals)


def spec_depths(rec: Record, m) -> tuple[int, ...]:
    """Draft depths a frontier row searches: the published spec_tokens; blank on a model that ships a draft
    head (the curve is the best over configurations, depth unstated) -> FRONTIER_SPEC_DEPTHS; else 0."""
    if rec.spec_tokens is not None:
        return (int(rec.spec_tokens),)
    return FRONTIER_SPEC_DEPTHS if m.mtp is not None else (0,)


def multi_domain_candidates(model, domain: int) -> list[tuple[float, float, float]]:
    """Instances of 2 and 4 scale-up domains (over the NIC), for a model no single domain holds: MoE with
    attention-DP + EP over all GPUs, or TP = one domain x EP over all; dense with TP over all GPUs."""
    outs = []
    for k in (2, 4):
        G = float(k * domain)
        outs += [(G, 1.0, G), (G, float(domain), G)] if is_moe(model) else [(G, G, 1.0)]
    return [c for c in outs if not layout_why(model, *c)]


SPEED_METRICS = ("tps_per_user", "max_tps_per_user")
THROUGHPUT_METRICS = ("output_tps_per_gpu", "total_tps_per_gpu", "total_tps_per_mw")


@dataclass(frozen=True)
class FrontierRow:
    """What a frontier row searches: its model, the decode instance size it publishes (``inst`` GPUs, ``pp``
    stages; None: not published), the benchmark's latency limits as an ``slo`` (search.SLO; read under Poisson
    arrivals), whether a disaggregated row publishes its pool ``split``, and the prefill-pool search (``pools``,
    set once the row has a valid layout) of a disaggregated row that does not."""

    rec: Record
    model: Any
    inst: int | None
    pp: float
    slo: SLO | None
    split: bool
    lengths: tuple[float, float, float]     # isl, osl, new input tokens per request
    pools: Any = None

    @property
    def disagg(self) -> bool:
        return self.rec.serving == "disaggregated"


def frontier_row(rec: Record, ctx: Ctx) -> FrontierRow:
    """The search a frontier row asks for (``FrontierRow``)."""
    lens = lengths(rec)
    disagg = rec.serving == "disaggregated"
    inst = rec.decode_gpus if disagg else rec.gpus
    pp = 1.0
    if not disagg and (named := record_instance_gpus(rec)) is not None:
        inst, pp = named[0], float(named[1])     # "N instance(s) on G GPUs": instances of G / N GPUs
    if disagg and rec.dp_attention and rec.ep and rec.decode_gpus and rec.decode_gpus % rec.ep == 0:
        # a decode worker spans its EP group (attention-DP over the same GPUs): D20 EP4 = 5 workers of 4 GPUs
        # (one 20-GPU instance would need expert-TP 5, which does not divide the expert width)
        inst = rec.ep
    split = disagg and bool(rec.prefill_gpus and rec.decode_gpus)
    return FrontierRow(rec, ctx.setup.model, inst, pp, record_latency_limits(rec) if not disagg else None, split,
                       lens)


def _pool_search(rec: Record, ctx: Ctx):
    """The prefill-pool search (serving/pools.py) of a disaggregated row that publishes no split."""
    from ..analyses.deployments import DeploymentSpace, prefill_layouts
    from ..serving.pools import PoolSearch, cluster_budget
    domain = int(ctx.setup.symbol_values()["D_dom"])
    return PoolSearch(prefill_layouts(ctx.setup.model, domain, DeploymentSpace(
        pf_tp=(rec.prefill_tp,) if rec.prefill_tp else None, pf_ep=(rec.prefill_ep,) if rec.prefill_ep else None)),
        cluster_budget(domain, rec.gpus))


def _batch_grid(row: FrontierRow, G: float) -> np.ndarray:
    """Batches (sequences in flight per decode instance of G GPUs) a candidate is read at: BATCH_GRID, up to a
    published concurrency where FRONTIER_HINTS constrain."""
    rec, grid = row.rec, BATCH_GRID
    if FRONTIER_HINTS == "constrain" and rec.concurrency is not None:
        if row.split:
            assert rec.decode_gpus is not None  # split: both pools given
            cap = rec.concurrency * G / rec.decode_gpus          # concurrency spread over the decode workers
        elif row.disagg:
            cap = rec.concurrency
        else:
            cap = rec.concurrency * (G / rec.gpus if (rec.gpus and rec.gpus > G) else 1.0)
        grid = np.unique(np.append(grid[grid < cap], cap))
    return grid


def _objective(row: FrontierRow, df: pd.DataFrame, user: np.ndarray) -> np.ndarray:
    """The row's metric at each point, shaped like ``user`` (tokens/s per user, or per GPU / MW)."""
    rec = row.rec
    if rec.metric in SPEED_METRICS:
        return user
    if rec.metric not in THROUGHPUT_METRICS:
        raise Unsupported(f"metric {rec.metric} on a frontier row")
    # disaggregated: every GPU of both pools counted (serving/disaggregated._pooled); a published gpus that
    # differs from prefill_gpus + decode_gpus is the denominator of the measured figure
    val = np.asarray(df[rec.metric], float).reshape(user.shape)
    if row.split and rec.gpus:
        assert rec.prefill_gpus is not None and rec.decode_gpus is not None  # split: both given
        val = val * (rec.prefill_gpus + rec.decode_gpus) / rec.gpus
    return val


def candidate_points(row: FrontierRow, ctx: Ctx, cand) -> tuple[Ctx, dict, int]:
    """One candidate ((G, tp, ep), draft depth k) of a row: the context at its acceptance, its points over the
    batch grid (``_batch_grid``) and the grid's size."""
    (G, tp, ep), k = cand
    kctx = dataclasses.replace(ctx, acc=record_acceptance(row.rec.model_copy(update={"spec_tokens": k}), ctx.rate,
                                                                ctx.setup.profile))
    grid = _batch_grid(row, G)
    isl, osl, new = row.lengths
    pts = dict(batch=grid, gpus=G, tp=tp, ep=ep, pp=row.pp if G % (tp * row.pp) == 0 else 1.0,
               spec_tokens=float(k), isl=isl, osl=osl, new=new, mix=0.0 if row.disagg else 1.0)
    return kctx, pts, len(grid)


def candidate_read(row: FrontierRow, df, S: int, nb: int) -> Read:
    """A candidate's Read from its served points ``df`` (a frame or its columns, S x nb points, sample-major)."""
    user = np.asarray(df["tps_per_user"], float).reshape(S, nb)
    return Read(np.asarray(df["fits"]).reshape(S, nb), _objective(row, df, user), user, df)


def _read(row: FrontierRow, ctx: Ctx, cand) -> Read | None:
    """One candidate ((G, tp, ep), draft depth k) over its batch grid x S samples (None: it cannot tile the
    published decode pool): closed loop, the published or searched pools, or Poisson arrivals under an SLO."""
    G = cand[0][0]
    rec = row.rec
    if row.split and rec.decode_gpus % G:
        return None                                                 # decode workers of G GPUs must tile decode_gpus
    kctx, pts, nb = candidate_points(row, ctx, cand)
    if row.disagg:
        df = _eval_disaggregated_grid(rec, kctx, pts, nb, G, row.model, row.pools)
    elif row.slo is not None:
        df = open_loop_points(kctx, pts, nb)
    else:
        df = eval_points(kctx, pts, nb)
    return candidate_read(row, df, ctx.n, nb)


def closed_loop_columns(ctx: Ctx, parts: list[tuple[Ctx, dict, int]]) -> dict:
    """The closed loop of aggregated candidates ``parts`` (``candidate_points``) in ONE evaluation: each tiled as
    ``tile`` tiles it, concatenated (sample-major within a part), served once as columns (serve_columns; the
    evaluation is elementwise, so each part's numbers are those of its own call)."""
    S = ctx.n
    tiled = [tile(kctx, pts, nb)[0] for kctx, pts, nb in parts]
    sizes = [nb for _k, _p, nb in parts]
    p = {key: np.concatenate([q[key] for q in tiled]) for key in tiled[0]}
    vals = {key: (np.concatenate([np.repeat(v, m) for m in sizes]) if isinstance(v, np.ndarray) and v.size == S
                  and S > 1 else v) for key, v in ctx.vals.items()}
    return serve_columns(ctx.setup, p, "aggregated", symbol_values=vals)


def split_columns(cols: dict, lengths: list[int]) -> list[dict]:
    """``cols`` (name -> array over the concatenated parts, or a scalar) cut into one mapping per part."""
    out, start = [], 0
    for n in lengths:
        out.append({k: (v[start:start + n] if isinstance(v, np.ndarray) and v.ndim else np.broadcast_to(v, (n,)))
                    for k, v in cols.items()})
        start += n
    return out


def _closed_loop_reads(row: FrontierRow, ctx: Ctx, cands: list) -> list[Read]:
    """Every candidate of an aggregated row without latency limits through ONE closed-loop evaluation
    (``closed_loop_columns``), split back into one Read a candidate."""
    parts = [candidate_points(row, ctx, c) for c in cands]
    cols = closed_loop_columns(ctx, parts)
    return [candidate_read(row, sub, ctx.n, nb)
            for sub, (_k, _p, nb) in zip(split_columns(cols, [ctx.n * nb for _k, _p, nb in parts]), parts)]


def scan(row: FrontierRow, ctx: Ctx, cands: list) -> Best:
    """The search (search.best_over) over the candidate layouts x draft depths: the best value per sample among
    the points that fit and meet the row's SLO (or its at_tps_per_user). An aggregated row without latency limits
    evaluates all its candidates in one call (``_closed_loop_reads``)."""
    rec = row.rec
    target = rec.at_tps_per_user if rec.metric not in SPEED_METRICS else None
    todo = list(itertools.product(cands, spec_depths(rec, row.model)))
    if todo and not row.disagg and row.slo is None:
        return best_over(_closed_loop_reads(row, ctx, todo), lambda r: r, ctx.n, min_speed=target)
    return best_over(todo, lambda c: _read(row, ctx, c), ctx.n, slo=row.slo, min_speed=target)


def _multi_domain_scan(row: FrontierRow, ctx: Ctx, note: list) -> Best:
    """Nothing on one scale-up domain holds the weights (DeepSeek-R1 FP8 on 8 x H100): an engine runs the instance
    over the fewest whole domains that do (2, 4, 8), its collectives crossing the NIC (equations/collectives)."""
    m = row.model
    domain = int(ctx.setup.symbol_values()["D_dom"])
    for nodes in (2, 4, 8):
        G = float(nodes * domain)
        multi = [(G, float(t), G if is_moe(m) else 1.0) for t in (1, 2, 4, 8, G) if G % t == 0
                 and (is_moe(m) or t == G)]
        found = scan(row, ctx, [c for c in dict.fromkeys(multi) if not layout_why(m, *c)])
        if found.fit_any:
            note.append(f"no layout on one {domain}-GPU domain fits the weights; instances of {nodes} domains")
            break
    return found


def frontier_value(rec: Record, ctx: Ctx, note: list | None = None,
                   cands_override: list | None = None) -> np.ndarray:
    """Best modeled value per sample (S,) on the frontier, read at at_tps_per_user (or the peak): the row's
    search (``frontier_search``), its scan (``scan``) and its reading (``frontier_result``)."""
    note = [] if note is None else note
    row, cands = frontier_search(rec, ctx, cands_override)
    return frontier_result(row, ctx, scan(row, ctx, cands), note, cands_override)


def frontier_search(rec: Record, ctx: Ctx, cands_override: list | None = None) -> tuple[FrontierRow, list]:
    """The row's search (``FrontierRow``, with the pool search of a disaggregated row without a published split)
    and its candidate layouts (``cands_override``, else ``_candidates``) the model can be split over; Unsupported
    where none."""
    row = frontier_row(rec, ctx)
    problems = {c: layout_why(row.model, *c) for c in (cands_override or _candidates(rec, row.model, row.inst))}
    cands = [c for c, why in problems.items() if not why]
    if not cands:
        raise Unsupported(f"layout: {next(iter(problems.values()), f'no candidate layout on {row.inst} GPUs')}")
    if row.disagg and not row.split:
        row = dataclasses.replace(row, pools=_pool_search(rec, ctx))
    return row, cands


def frontier_result(row: FrontierRow, ctx: Ctx, found: Best, note: list,
                    cands_override: list | None = None) -> np.ndarray:
    """The best value per sample of a row's scan ``found``.

    A row that publishes no layout, on a model none of the single-node candidates holds in memory, is searched
    again over instances of 2 and 4 scale-up domains (``multi_domain_candidates``: e.g. DeepSeek-R1 FP8, 671 GB
    of weights, needs two 8 x 80 GB H100 nodes)."""
    rec = row.rec
    if not found.fit_any and not (row.inst or rec.gpus or rec.tp or rec.ep):
        found = _multi_domain_scan(row, ctx, note)
    best = np.where(np.isfinite(found.value), found.value, np.nan)
    if not np.isnan(best).all():
        return best
    if rec.at_tps_per_user is not None and np.isfinite(found.peak_speed).any():
        raise Unsupported(f"modeled frontier ends at {np.nanmax(found.peak_speed):.0f} tok/s/user, below the "
                          f"target {rec.at_tps_per_user:g}")
    unpublished = row.inst is None and rec.tp is None and rec.ep is None
    if cands_override is None and unpublished and not np.isfinite(found.peak_speed).any():
        more = multi_domain_candidates(row.model, int(ctx.setup.symbol_values()["D_dom"]))
        if more:
            return frontier_value(rec, ctx, note, cands_override=more)
    raise Unsupported("no candidate deployment fits in memory" + (
        f" (up to {4 * int(ctx.setup.symbol_values()['D_dom'])} GPUs)" if cands_override else ""))
