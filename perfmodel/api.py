"""The Python API behind the CLI: every command is a function returning a DataFrame or a dict."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import ValidationError

from . import catalog
from .arch.layout import check_layout
from .engine.evaluate import Setup
from .errors import SpecError, pydantic_to_spec_error
from .serving.aggregated import evaluate, evaluate_columns
from .serving.dispatch import Pools, Sessions, serve
from .serving.lengths import workload_lengths
from .serving.load import fewer_sessions_than_one_batch, running_batch
from .serving.point import point_columns
from .specs.deployment import Deployment, Scenario
from .specs.workload import WorkloadSpec

if TYPE_CHECKING:
    import pandas as pd


def load_scenario(path: str | Path) -> Scenario:
    data = catalog.load_yaml(Path(path))
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise pydantic_to_spec_error(exc, file=str(path)) from None


def setup_for(hardware, model, profile, dep: Deployment, hw_overrides=None, profile_overrides=None) -> Setup:
    hw = catalog.hardware(hardware) if isinstance(hardware, str) else hardware
    m = catalog.model(model) if isinstance(model, str) else model
    pr = catalog.profile(profile) if isinstance(profile, str) else profile
    return Setup(hw, m, pr, weights=dep.weights, kv_cache=dep.kv_cache, attention_weights=dep.attention_weights,
                 hw_overrides=dict(hw_overrides or {}), profile_overrides=dict(profile_overrides or {}))


def deployment_points(dep: Deployment, lengths: dict[str, float], acc: float) -> dict:
    return {"batch": np.nan if dep.batch is None else dep.batch, "gpus": dep.gpus, "tp": dep.tp,
            "ep": dep.ep, "pp": dep.pp, "spec_tokens": dep.spec_tokens, "acc": acc,
            "mix": 1.0 if dep.serving == "aggregated" else 0.0, "cold": dep.kv_cold_share,
            "concurrency": np.nan if dep.concurrency is None else dep.concurrency,
            "arrival_rate": np.nan if dep.arrival_rate is None else dep.arrival_rate,
            "max_running": np.nan if dep.max_running_requests is None else dep.max_running_requests, **lengths}


def predict(scenario: Scenario) -> pd.DataFrame:
    """Evaluate one scenario: a one-row DataFrame with every metric, the breakdown and the memory fit.

    Serving: aggregated (chunked prefill mixed into decode steps), decode_only, prefill_only, or
    disaggregated (deployment.prefill is the prefill pool; deployment.decode_gpus the decode pool).
    An agentic workload (catalog kind 'agentic') evaluates sessions with tool pauses: the decode batch is
    the sessions generating; deployment.concurrency (live sessions per instance) sets it instead of batch;
    deployment.kv_host_tier keeps paused sessions' KV in host memory. Agentic and disaggregated together: the
    prefixes are cached on the prefill pool (serving/sessions.agentic_disaggregated).
    """
    dep = scenario.deployment
    setup = setup_for(scenario.hardware, scenario.model, scenario.profile, dep,
                      scenario.overrides.hardware, scenario.overrides.profile)
    check_layout(setup.model, dep)
    rate = setup.profile.spec_decoding.acceptance_rate
    acc = dep.accepted_tokens(rate.value if rate else None)
    wl = catalog.workload(scenario.workload) if isinstance(scenario.workload, str) else scenario.workload
    pts = deployment_points(dep, workload_lengths(wl), acc)
    sessions = None
    if isinstance(wl, WorkloadSpec) and wl.kind == "agentic":
        # aggregated: concurrency counts the benchmark's lanes (live sessions that pause between requests), a
        # closed loop whose running batch the step evaluation solves, capped at the capacity, the excess waiting
        # for a slot (serving/sessions.agentic); disaggregated: the live sessions set the batch below
        # (the profile's mechanism agentic_lanes; else live sessions set the batch in both modes)
        lanes = dep.serving == "aggregated" and setup.profile.uses("agentic_lanes")
        pts["concurrency"] = float(dep.concurrency) if dep.concurrency is not None and lanes else np.nan
        if dep.arrival_rate is not None:
            raise SpecError("an agentic workload runs sessions, not an arrival rate: give concurrency (live "
                            "sessions per instance)", field="deployment.arrival_rate")
        assert wl.agentic is not None  # an agentic workload has its agentic block (WorkloadSpec._kind)
        agg = dep.serving != "disaggregated"
        sessions = Sessions(wl.agentic.pause_s, dep.kv_host_tier, wl.agentic,
                            wl.interactivity_percentile if agg else None, dep.kv_pool_gb_per_gpu,
                            ttft_percentiles=(90.0,) if agg else ())   # ttft_p90_request_ms: P90 over requests
    pools = None
    if dep.serving == "disaggregated":
        assert dep.prefill is not None  # disaggregated serving has its prefill pool (Deployment validator)
        pf = dep.prefill
        instances = (dep.decode_gpus or dep.gpus) / dep.gpus
        if instances != int(instances):
            raise SpecError(f"decode_gpus={dep.decode_gpus} is not a multiple of gpus={dep.gpus}",
                            field="deployment.decode_gpus")
        pools = Pools(pf.gpus, pf.tp, pf.ep, instances, pf.instances)
    pts["batch"] = running_batch(setup, pts, dep.serving, pools=pools, sessions=sessions,
                                 live_sessions=dep.concurrency if sessions is not None else None)
    if pools is not None and sessions is None:
        # the prefill instance holds the weights plus a request's KV per attention-DP rank while it prefills
        probe = evaluate(setup, {**pts, "gpus": pf.gpus, "tp": pf.tp, "ep": pf.ep, "pp": 1, "batch": pf.gpus / pf.tp,
                                 "spec_tokens": 0, "acc": 1.0, "mix": 0.0})
        if not bool(probe["fits"].iloc[0]):
            raise SpecError(f"the prefill instance ({pf.gpus} GPUs, tp={pf.tp}, ep={pf.ep}) does not fit: "
                            f"{probe['fit_reason'].iloc[0]}", field="deployment.prefill.gpus")
    df = serve(setup, pts, dep.serving, pools=pools, sessions=sessions)
    if sessions is not None and dep.concurrency is not None:
        df = fewer_sessions_than_one_batch(df, float(dep.concurrency))
    if pools is not None and sessions is None and bool(df["bound"].eq("prefill_pool").iloc[0]):
        df["note"] = (f"deployment.prefill: {pf.instances} prefill instance(s) of {pf.gpus} GPUs cannot "
                      "keep up with the decode pool; the request rate is the prefill pool's (bound "
                      "prefill_pool); add prefill instances")
    df.insert(0, "hardware", setup.hardware.id)
    df.insert(1, "model", setup.model.id)
    df.insert(2, "profile", setup.profile.id)
    df["serving"] = dep.serving
    if dep.serving == "prefill_only":     # the prefill roofline, appended last (after serving)
        df["input_tps_per_gpu"] = df.pop("input_tps_per_gpu")
    return df


_setups: dict = {}
_layouts_ok: dict = {}   # (id(model), gpus, tp, ep, pp) -> the model whose layout check passed


def _cached_setup(scenario: Scenario) -> tuple[Setup, dict]:
    """(Setup, its symbol values) for catalog ids, kept per process; specs given as objects are bound anew."""
    dep, ov = scenario.deployment, scenario.overrides
    ids = (scenario.hardware, scenario.model, scenario.profile)
    key = None
    if all(isinstance(x, str) for x in ids):
        key = (*ids, dep.weights, dep.kv_cache, dep.attention_weights, tuple(sorted(ov.hardware.items())),
               tuple(sorted(ov.profile.items())))
        if key in _setups:
            return _setups[key]
    setup = setup_for(scenario.hardware, scenario.model, scenario.profile, dep, ov.hardware, ov.profile)
    out = (setup, setup.symbol_values())
    if key is not None:
        _setups[key] = out
    return out


def predict_point(scenario: Scenario) -> dict:
    """The fast path for one operating point: ``predict``'s row as a mapping (column -> float, bool or str;
    units in the names), without a DataFrame. The hardware, model and profile, when given as catalog ids,
    are bound once per process (``predict_point_cache_clear()`` after editing a catalog file in a session).
    Aggregated and decode-only fixed workloads evaluate directly; other modes (disaggregated, agentic,
    prefill-only) take ``predict`` and return its row."""
    dep = scenario.deployment
    wl = catalog.workload(scenario.workload) if isinstance(scenario.workload, str) else scenario.workload
    if dep.serving not in ("aggregated", "decode_only") or (isinstance(wl, WorkloadSpec) and wl.kind == "agentic"):
        return predict(scenario).iloc[0].to_dict()
    setup, vals = _cached_setup(scenario)
    layout = (id(setup.model), dep.gpus, dep.tp, dep.ep, dep.pp)
    if _layouts_ok.get(layout) is not setup.model:   # a layout checked once per bound model (no prefill pool here)
        check_layout(setup.model, dep)
        _layouts_ok[layout] = setup.model
    rate = setup.profile.spec_decoding.acceptance_rate
    pts = deployment_points(dep, workload_lengths(wl), dep.accepted_tokens(rate.value if rate else None))
    out = {"hardware": setup.hardware.id, "model": setup.model.id, "profile": setup.profile.id}
    floats = point_columns(setup, pts, vals)       # Python floats (serving/point.py), else the arrays
    if floats is not None:
        out.update(floats)
    else:
        for k, v in evaluate_columns(setup, pts, symbol_values=vals).items():
            x = np.asarray(v).reshape(-1)[0]
            out[k] = x.item() if hasattr(x, "item") else x
    out["serving"] = dep.serving
    return out


def plan(model, workload, systems, demand=None, slo=None, scales=(1.0,), limits=None, *, weights=("fp8",),
         kv_cache: str = "fp8", space=None) -> pd.DataFrame:
    """Capacity plan (``perfmodel plan``): per system and demand scale the deployment, units, GPUs, scale-up domains,
    MW and USD that carry ``demand`` (analyses.plan.Demand) under ``slo`` (search.SLO) within ``limits``
    (analyses.plan.Limits). Returns a DataFrame with analyses.plan.PLAN_COLUMNS (units in docs/plan.md)."""
    from .analyses.plan import Limits
    from .analyses.plan import plan as _plan
    from .search import SLO
    return _plan(model, workload, systems, demand, slo or SLO(), scales, limits or Limits(), weights=weights,
                 kv_cache=kv_cache, space=space)


def simulate(scenario: Scenario, requests: int = 10_000, seed: int = 0) -> tuple[dict, pd.DataFrame]:
    """The reference event simulation of one aggregated instance (serving/simulation): (summary of the declared
    throughput and latency columns with P50 / P90 / P99, per-request DataFrame). Deterministic for a seed; a
    progress bar on a terminal."""
    from . import progress
    from .serving.simulation import simulate as _simulate
    dep = scenario.deployment
    setup = setup_for(scenario.hardware, scenario.model, scenario.profile, dep, scenario.overrides.hardware,
                      scenario.overrides.profile)
    check_layout(setup.model, dep)
    rate = setup.profile.spec_decoding.acceptance_rate
    wl = catalog.workload(scenario.workload) if isinstance(scenario.workload, str) else scenario.workload
    pts = deployment_points(dep, workload_lengths(wl), dep.accepted_tokens(rate.value if rate else None))
    with progress.bar(desc="simulate", total=requests, unit="request") as b:
        summary, df = _simulate(setup, pts, dep, wl, requests=requests, seed=seed, progress=b.update)
    return _overload(summary, dep, setup, pts), df


def _overload(summary: dict, dep, setup, pts: dict) -> dict:
    """An open loop offered more than the instance serves has no steady state: its TTFT (and E2E) grow with the
    run's length. Overloaded is the closed form's verdict at the offered rate (the check with which ``predict``
    refuses the same set-up: prefill queue rho >= 1, or the batch the rate needs over the capacity; a short run's
    completion rate is too noisy to judge it: 0.85/s measured on 300 requests at 1/s offered). Then ``overloaded`` is True, ``offered_rate_per_s`` the offered rate (requests/s),
    ``saturated_rate_per_s`` the simulated completion rate (the saturated throughput, requests/s; the throughput
    columns are at it), the TTFT / E2E / in-system columns NaN, and ``overload`` one line saying so."""
    summary = {**summary, "overloaded": False}
    if dep.arrival_rate is None:
        return summary
    from .serving.aggregated import evaluate
    offered = float(dep.arrival_rate)
    closed = evaluate(setup, {**pts, "batch": np.nan, "concurrency": np.nan, "arrival_rate": offered})
    unstable = str(closed["fit_reason"].iloc[0]).startswith("arrival_rate")
    served = float(summary.get("request_rate_per_s", np.nan))
    if not unstable:
        return summary
    for k in list(summary):
        if k.startswith(("ttft", "e2e", "in_system")):
            summary[k] = float("nan")
    summary.update(overloaded=True, offered_rate_per_s=offered, saturated_rate_per_s=served,
                   overload=f"overloaded: {offered:.4g} requests/s offered, {served:.4g}/s served at saturation "
                            f"(the queue grows without bound: TTFT has no steady state and grows with the run's "
                            f"length; the throughput shown is the saturated one)")
    return summary


def predict_point_cache_clear() -> None:
    """Forget the setups ``predict_point`` bound (after a catalog file changed within the session)."""
    _setups.clear()
    _layouts_ok.clear()
