"""Reference event simulation of one engine instance, driven by the same compiled step equations.

``simulate(setup, points, deployment, workload, requests, seed)`` -> (summary, per-request frame); the facade's
``api.simulate(scenario)`` binds a scenario to those. The step costs come from one
vectorized evaluation of the compiled decode / prefill equations on a grid (``steps.StepTables``); the symbol
values, capacity and acceptance are those the closed form uses (``Setup.symbol_values``, ``serving/aggregated``'s
``max_batch`` / ``kv_max_batch``, ``Deployment.accepted_tokens``). The clock loop (``engine.Engine``) wires
vLLM's seams: the scheduler policy (``scheduler.Scheduler``: continuous batching with chunked prefill under the
profile's token budget ``prefill_chunk_tokens``, the running-request cap), the KV cache manager
(``kv_cache.KVCacheManager``: KV capacity with an LRU prefix cache) and the cost oracle (``cost.CostOracle``: mixed
or prefill-first steps, ``features.mixed_prefill``), with closed- or open-loop clients (``clients.Clients``),
lengths drawn from the workload (``requests.Lengths``, ``ledger.RequestLog``) and the decode batch
(``decode_batch.DecodeBatch``). Deterministic for a seed.

Not simulated (the closed form has them): disaggregated pools, the host KV tier, KV-aware routing over several
instances, a KV pool, speculative acceptance varying per step (the mean acceptance is used). State snapshots
(sliding-window / linear-attention state) enter as the closed form counts them: a hit recomputes the tokens
past the last snapshot (``prefix_cache.snapshot_lost_tokens``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import catalog
from ...errors import SpecError
from ..aggregated import evaluate
from ..lengths import workload_lengths
from ..sessions import snapshot_policy
from .engine import Engine
from .requests import Lengths
from .steps import StepTables

WARMUP_SHARE = 0.2      # completions discarded before the measurement window
POOL = 65536            # pre-drawn request lengths (reused cyclically beyond)


def simulate(setup, points: dict, dep, workload, requests: int = 10_000, seed: int = 0,
             progress=None) -> tuple[dict, pd.DataFrame]:
    """Simulate one aggregated instance of ``dep`` (a Deployment; concurrency = closed-loop clients, or
    arrival_rate = open loop) on ``setup`` at ``points`` (the closed form's operating point: api.deployment_points)
    with lengths drawn from ``workload``, until ``requests`` requests completed. Returns (summary: the declared
    throughput / latency columns read off the requests completed after the warm-up, with P50 / P90 / P99;
    per-request DataFrame)."""
    if dep.serving != "aggregated":
        raise SpecError(f"the simulation runs one aggregated instance, got serving={dep.serving!r}",
                        field="deployment.serving")
    if not 1 <= requests <= 10_000_000:
        raise SpecError(f"must be between 1 and 10,000,000, got {requests}", field="--requests")
    if dep.concurrency is None and dep.arrival_rate is None:
        raise SpecError("give the load: concurrency (closed-loop clients) or arrival_rate (open loop)",
                        field="deployment.concurrency")
    wl = catalog.workload(workload) if isinstance(workload, str) else workload
    agentic = getattr(wl, "kind", "fixed") == "agentic"
    if agentic and dep.arrival_rate is not None:
        raise SpecError("an agentic workload runs sessions: give concurrency", field="deployment.arrival_rate")
    vals = setup.symbol_values()
    acc = float(points["acc"])
    lengths = workload_lengths(wl)
    pts = {**points, **lengths}
    probe = evaluate(setup, {**pts, "batch": 1.0, "concurrency": np.nan, "arrival_rate": np.nan}, symbol_values=vals)
    if not bool(probe["fits"].iloc[0]):
        raise SpecError(f"the deployment does not fit: {probe['fit_reason'].iloc[0]}", field="deployment")
    ranks = int(round(dep.gpus / (dep.tp * dep.pp)))
    n_run = float(vals["N_run"] if dep.max_running_requests is None else dep.max_running_requests)
    cap = int(min(ranks * n_run, float(dep.concurrency) if dep.concurrency else ranks * n_run))
    q_res = float(vals.get("q_res", 0.0))
    hold = lengths["isl"] + lengths["osl"] - (1 - q_res) * lengths["osl"] / 2
    kv_tokens = float(probe["kv_max_batch"].iloc[0]) * hold
    rng = np.random.default_rng(seed)
    L = Lengths(wl, min(max(requests * 2, 1024), POOL), rng)
    ctx_max = float(np.percentile(L.isl + L.osl, 99.5))
    budget = float(vals["N_ch"])
    tables = StepTables(setup, {k: pts[k] for k in ("gpus", "tp", "ep", "pp", "spec_tokens", "acc", "osl")},
                        vals, max_batch=max(min(cap, kv_tokens / max(float(np.median(L.isl)), 1.0)), 2.0),
                        max_context=ctx_max, budget=budget, request_tokens=float(np.median(L.first_new)))
    _f, lost = snapshot_policy(setup, np.asarray(lengths["isl"], float), np.asarray(lengths["osl"], float))
    eng = Engine(tables, L, acc=acc, cap=cap, kv_tokens=kv_tokens, budget=budget, ranks=ranks,
                 mixed=bool(vals.get("mixed_pf", 1.0) > 0.5), t_req=float(vals["t_req"]), q_res=q_res, rng=rng,
                 lost=float(lost))
    out = eng.run(requests, clients=dep.concurrency, rate=dep.arrival_rate, progress=progress)
    df = pd.DataFrame(out)
    return summarize(df, dep.gpus), df


def summarize(df: pd.DataFrame, gpus: float) -> dict:
    """Throughput over the measurement window (completions after the first WARMUP_SHARE) and per-request
    percentiles of the requests completed in it; Little's law check: mean requests in the system."""
    n = len(df)
    w0 = int(n * WARMUP_SHARE)
    win = df.iloc[w0:]
    t0, t1 = float(df["done_s"].iloc[w0 - 1]) if w0 > 0 else 0.0, float(df["done_s"].iloc[-1])
    span = max(t1 - t0, 1e-12)
    x = len(win) / span
    out = {"requests": n, "measured_requests": len(win), "window_s": span, "request_rate_per_s": x,
           "output_tps_per_gpu": float(win["osl"].sum()) / span / gpus,
           "total_tps_per_gpu": float((win["isl"] + win["osl"]).sum()) / span / gpus,
           "input_tps_per_gpu": float(win["uncached_input"].sum()) / span / gpus,
           "prefix_hit": 1 - float(win["uncached_input"].sum() / win["isl"].sum()),
           "in_system_little": x * float(win["e2e_s"].mean())}
    for name, col in (("tpot_ms", "tpot_s"), ("ttft_ms", "ttft_s"), ("e2e_ms", "e2e_s")):
        v = win[col].to_numpy() * 1e3
        out[name] = float(np.percentile(v, 50))
        out[f"{name[:-3]}_mean_ms"] = float(v.mean())
        out[f"{name[:-3]}_p90_ms"] = float(np.percentile(v, 90))
        out[f"{name[:-3]}_p99_ms"] = float(np.percentile(v, 99))
    out["tps_per_user"] = 1000.0 / out["tpot_ms"]
    return out
