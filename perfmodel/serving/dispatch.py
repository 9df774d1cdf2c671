"""The one serving dispatcher: operating points of one serving mode -> the declared result frame.

    serve(setup, points, mode, pools=..., search=..., sessions=..., symbol_values=...)

``mode`` is deployment.serving (aggregated, decode_only, prefill_only, disaggregated); ``sessions`` (an agentic
workload's pauses, length distributions and residency options) turns a mode into agentic sessions. Every caller
(api.predict, analyses/evaluation for the frontier and attribution, validation/predict_rows, validation/
batch_predict) routes here; the mechanisms are

- aggregated / decode_only, fixed workload -> the step equations under load (``engine.evaluate.evaluate``:
  chunked prefill mixed into decode steps, the TTFT queue, a blank batch solved from concurrency / arrival rate)
- prefill_only                             -> the same frame plus the prefill roofline ``input_tps_per_gpu``
- disaggregated, named pools (``Pools``)   -> the closed loop over both pools (``serving.disaggregated.disaggregated``)
- disaggregated, ``search`` (PoolSearch)    -> the prefill layout and both counts chosen per point
  (``serving.pools.disaggregated_search``)
- agentic, aggregated                      -> sessions with tool pauses and KV residency (``serving.sessions.agentic``)
- agentic, disaggregated                   -> prefixes cached on the prefill pool
  (``serving.sessions.agentic_disaggregated``), on named pools or on the pools the search chose

The columns of every mode are declared in ``serving/result.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engine.evaluate import PREFILL_TOKENS_PER_GPU, Setup, point_arrays, prefill_step
from ..errors import SpecError
from ..specs.deployment import SERVING_MODES
from .aggregated import evaluate, evaluate_columns
from .disaggregated import disaggregated
from .pools import PoolSearch, disaggregated_search
from .sessions import agentic, agentic_disaggregated

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Pools:
    """A disaggregated deployment's prefill instance layout (``gpus``, ``tp``, ``ep``) and the counts of decode
    (``instances``) and prefill (``pf_instances``) instances: scalars or per-point arrays."""

    gpus: object
    tp: object
    ep: object
    instances: object
    pf_instances: object

    def layout(self) -> dict:
        return {"gpus": self.gpus, "tp": self.tp, "ep": self.ep}


@dataclass(frozen=True)
class Sessions:
    """Agentic sessions: ``pause_s`` tool pause between turns, ``host_tier`` KV host tier on, ``dists`` the
    workload's length distributions (None: means only), ``percentile`` the E2E interactivity percentile read,
    ``pool_gb_per_gpu`` spare HBM elsewhere in the domain, ``workers`` instances prefix routing spreads over,
    ``prefix_hit`` a measured hit forced (NaN / None: the cache model's), ``ttft_percentiles`` request TTFT
    percentiles to add."""

    pause_s: float
    host_tier: bool = False
    dists: object = None
    percentile: float | None = None
    pool_gb_per_gpu: float = 0.0
    workers: object = 1.0
    prefix_hit: object = None
    ttft_percentiles: tuple = ()


def serve(setup: Setup, points: dict, mode: str, *, pools: Pools | None = None, search: PoolSearch | None = None,
          sessions: Sessions | None = None, symbol_values: dict | None = None,
          prefill_tokens_per_gpu: float = PREFILL_TOKENS_PER_GPU) -> pd.DataFrame:
    """Evaluate ``points`` (engine POINT_COLUMNS, scalars or arrays) served in ``mode``: one row a point.

    Disaggregated points need ``pools`` (named) or ``search`` (chosen per point); their decode points are
    evaluated without prefill mixed in (mix = 0). ``prefill_tokens_per_gpu``: the prefill step of a
    prefill_only point (tokens per GPU per step)."""
    if mode not in SERVING_MODES:
        raise SpecError(f"unknown serving mode {mode!r}; choose from {list(SERVING_MODES)}", field="serving")
    if mode == "disaggregated":
        return _disaggregated(setup, {**points, "mix": 0.0}, pools, search, sessions, symbol_values)
    if sessions is not None and mode == "aggregated":
        s = sessions
        return agentic(setup, points, s.pause_s, s.host_tier, dists=s.dists, percentile=s.percentile,
                       symbol_values=symbol_values, pool_gb_per_gpu=s.pool_gb_per_gpu, workers=s.workers,
                       prefix_hit=s.prefix_hit, ttft_percentiles=s.ttft_percentiles).reset_index(drop=True)
    df = evaluate(setup, points, symbol_values=symbol_values)
    if mode == "prefill_only":
        df["input_tps_per_gpu"] = prefill_throughput(setup, points, symbol_values, prefill_tokens_per_gpu)
    return df


def serve_columns(setup: Setup, points: dict, mode: str, *, symbol_values: dict | None = None) -> dict[str, np.ndarray]:
    """``serve`` of aggregated or decode-only points of a fixed workload (no sessions, no pools) as its columns
    (name -> array or scalar, the frame's columns before a DataFrame is built): for callers that read a few
    columns of many evaluations (calibration, validation/batch_predict.py)."""
    if mode not in ("aggregated", "decode_only"):
        raise SpecError(f"serve_columns serves aggregated or decode_only points, not {mode!r}", field="serving")
    return evaluate_columns(setup, points, symbol_values=symbol_values)


def prefill_throughput(setup: Setup, points: dict, symbol_values: dict | None = None,
                       tokens_per_gpu: float = PREFILL_TOKENS_PER_GPU) -> np.ndarray:
    """Input tokens/s per GPU of prefill steps of max(tokens_per_gpu x gpus, new) tokens:
    T / t_prefill(T) / G per point (``engine.evaluate.prefill_step``)."""
    p = point_arrays(points)
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    tokens, seconds = prefill_step(setup, p, vals, tokens_per_gpu)
    return tokens / seconds / p["gpus"]


def _disaggregated(setup, pts, pools, search, sessions, vals) -> pd.DataFrame:
    if pools is None:
        if search is None:
            raise SpecError("disaggregated points need their prefill pool (pf_gpus, pf_tp, pf_ep, instances, "
                            "pf_instances) or a pool search", field="serving")
        found = disaggregated_search(setup, pts, search, symbol_values=vals).reset_index(drop=True)
        return found if sessions is None else _sessions_on_found_pools(setup, pts, found, sessions, vals)
    if sessions is None:
        return disaggregated(setup, pts, pools.layout(), pools.instances, pools.pf_instances,
                             symbol_values=vals).reset_index(drop=True)
    s = sessions
    return agentic_disaggregated(setup, pts, pools.layout(), pools.instances, pools.pf_instances, s.pause_s,
                                 s.host_tier, symbol_values=vals, dists=s.dists,
                                 prefix_hit=s.prefix_hit).reset_index(drop=True)


def _sessions_on_found_pools(setup, pts: dict, found: pd.DataFrame, s: Sessions, vals) -> pd.DataFrame:
    """Agentic sessions on the pools the search chose (serving/pools.py sizes them on the workload's mean uncached
    input): each point evaluated again as sessions on that prefill layout and those counts; the search's pool
    verdict (``pool_fits``, the budget) is kept."""
    pools = Pools(*(found[c].to_numpy(float) for c in ("pf_gpus", "pf_tp", "pf_ep", "instances", "pf_instances")))
    out = _disaggregated(setup, pts, pools, None, s, vals)
    ok = found["pool_fits"].to_numpy(bool)
    out["pool_fits"] = ok
    out["fits"] = out["fits"].to_numpy(bool) & found["fits"].to_numpy(bool)
    out["fit_reason"] = np.where(ok, out["fit_reason"].to_numpy(object), found["fit_reason"].to_numpy(object))
    out["bound"] = np.where(ok, out["bound"].to_numpy(object), "pool_budget")
    return out
