"""Frontier rows of one setup read together (validation/batch_predict.py): every aggregated row's candidates
(layouts x draft depths, each over its batch grid) evaluated in ONE closed-loop call, the Poisson reads of the
rows under a benchmark's latency limits (``frontier_rows.open_loop_points``) in one more, then each row searched
and read as ``frontier_rows.frontier_value`` reads it alone (``best_over``, ``frontier_result``). Disaggregated
rows are read alone. The evaluations are elementwise, so each candidate's numbers are those of its own call
(tests/test_batch_predict_shared.py checks it bit for bit)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd

from ..acceptance_priors import record_acceptance
from ..errors import SpecError
from ..search import best_over
from ..serving.dispatch import serve_columns
from ..specs.records import Record
from .frontier_rows import (
    SPEED_METRICS,
    FrontierRow,
    candidate_points,
    candidate_read,
    closed_loop_columns,
    frontier_result,
    frontier_search,
    scan,
    spec_depths,
    split_columns,
)
from .row_context import Ctx, Unsupported, tile


@dataclasses.dataclass
class _Search:
    """One row's search: its index among the rows, its FrontierRow and context, and its candidates' points."""

    j: int
    row: FrontierRow
    ctx: Ctx
    parts: list


def frontier_values(recs: list[Record], ctx: Ctx) -> list[np.ndarray | Exception]:
    """Each frontier row of ``recs`` (one setup: ``ctx``'s hardware, model, formats and parameter samples) read
    at its speed or peak: the best value per sample (S,), or the Unsupported / SpecError its own read raises."""
    out: list[np.ndarray | Exception | None] = [None] * len(recs)
    todo: list[_Search] = []
    for j, rec in enumerate(recs):
        rctx = dataclasses.replace(ctx, acc=record_acceptance(rec, ctx.rate, ctx.setup.profile))
        try:
            row, cands = frontier_search(rec, rctx)
            if row.disagg:              # pools (named or searched) per candidate: read alone
                out[j] = frontier_result(row, rctx, scan(row, rctx, cands), [])
                continue
        except (Unsupported, SpecError) as exc:
            out[j] = exc
            continue
        cands = list(itertools.product(cands, spec_depths(rec, row.model)))
        todo.append(_Search(j, row, rctx, [candidate_points(row, rctx, c) for c in cands]))
    if todo:
        for s, reads in zip(todo, _reads(todo, ctx)):
            rec = s.row.rec
            target = rec.at_tps_per_user if rec.metric not in SPEED_METRICS else None
            try:
                found = best_over(reads, lambda r: r, ctx.n, slo=s.row.slo, min_speed=target)
                out[s.j] = frontier_result(s.row, s.ctx, found, [])
            except (Unsupported, SpecError) as exc:
                out[s.j] = exc
    return [v if v is not None else Unsupported("unread") for v in out]


def _reads(todo: list[_Search], ctx: Ctx) -> list[list]:
    """Every candidate's Read, per row: the closed loop of all candidates in one call; the rows with latency
    limits (``slo``) read again under Poisson arrivals at each point's closed-loop request rate, in one call."""
    S = ctx.n
    parts = [p for s in todo for p in s.parts]
    closed = split_columns(closed_loop_columns(ctx, parts), [S * nb for _k, _p, nb in parts])
    per_row, start = [], 0
    for s in todo:
        per_row.append(closed[start:start + len(s.parts)])
        start += len(s.parts)
    opened = [(s, c, part) for s, cols in zip(todo, per_row) if s.row.slo is not None
              for c, part in zip(cols, s.parts)]
    frames = _open_loop_frames(ctx, [(part, c["request_rate_per_s"]) for _s, c, part in opened])
    served = {id(c): f for (_s, c, _part), f in zip(opened, frames)}
    return [[candidate_read(s.row, served.get(id(c), c), S, nb) for c, (_k, _p, nb) in zip(cols, s.parts)]
            for s, cols in zip(todo, per_row)]


def _open_loop_frames(ctx: Ctx, items: list) -> list[pd.DataFrame]:
    """``frontier_rows.open_loop_points`` of several candidates in one call: each candidate's points with the batch
    blank and its closed-loop request rate offered as Poisson arrivals; one frame per candidate."""
    if not items:
        return []
    S = ctx.n
    tiled, sizes = [], []
    for (kctx, pts, nb), rate in items:
        p, _vals = tile(kctx, {**pts, "batch": np.nan}, nb)
        p["arrival_rate"] = np.asarray(rate, float)
        tiled.append(p)
        sizes.append(nb)
    p = {key: np.concatenate([q[key] for q in tiled]) for key in tiled[0]}
    vals = {key: (np.concatenate([np.repeat(v, m) for m in sizes]) if isinstance(v, np.ndarray) and v.size == S
                  and S > 1 else v) for key, v in ctx.vals.items()}
    df = pd.DataFrame(serve_columns(ctx.setup, p, "aggregated", symbol_values=vals))
    out, start = [], 0
    for m in sizes:
        out.append(df.iloc[start:start + S * m])
        start += S * m
    return out
