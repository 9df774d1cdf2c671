"""The Python API behind the CLI: every command is a function returning a DataFrame or a dict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import ValidationError

from . import catalog
from .engine.evaluate import Setup, evaluate, evaluate_columns
from .errors import SpecError, pydantic_to_spec_error
from .specs.deployment import Deployment, FixedWorkload, Scenario
from .specs.workload import WorkloadSpec


def load_scenario(path: str | Path) -> Scenario:
    data = catalog.load_yaml(Path(path))
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise pydantic_to_spec_error(exc, file=str(path)) from None


def workload_lengths(w: FixedWorkload | WorkloadSpec | str) -> dict[str, float]:
    """isl (incl. cached prefix), osl and uncached input per request for a workload.

    Agentic workloads use MEAN lengths (throughput follows Little's law, which needs means): the mean
    context as isl, the mean output (capped at max_output_tokens) as osl, and the mean new tokens per
    turn as the uncached input, raised where needed so the hit rate 1 - new/isl stays at or below the
    published ceiling ``max_hit_rate``. A harness that starts each session mid-trajectory
    (``replay_start_ratio``) adds the mean context once per replayed session: new + isl / replayed_turns.

    Returns a dict of tokens per request: ``isl`` (input incl. cached prefix), ``osl`` (output), ``new``
    (uncached input).
    """
    if isinstance(w, str):
        w = catalog.workload(w)
    if isinstance(w, FixedWorkload) or w.kind == "fixed":
        return {"isl": w.isl, "osl": w.osl, "new": w.isl * (1 - w.prefix_hit)}
    a = w.agentic
    isl = a.context_tokens.mean_value
    osl = a.output_tokens.mean_value
    if a.max_output_tokens:
        osl = min(osl, a.max_output_tokens)
    new = a.new_tokens_per_turn.mean_value
    # Sessions: the context grows by (new + output) tokens a turn, so the mean context over N turns is
    # c0 + (N - 1)/2 (new + osl); the first turn prefills its whole initial context c0 uncached, which
    # adds c0 / N uncached tokens per turn on average. The prefix-hit rate 1 - new/isl follows.
    if a.replayed_turns is not None:
        # replayed from a mid-trajectory start: the first replayed request of each session prefills the context
        # reached there, on average the mean context (linear growth, start fraction at the range's middle)
        new = new + isl / a.replayed_turns
    elif a.turns is not None:
        turns = a.turns.mean_value
        c0 = min(max(isl - (turns - 1) / 2 * (new + osl), 0.0), isl)
        new = new + c0 / turns
    if a.max_hit_rate is not None:
        new = max(new, isl * (1 - a.max_hit_rate))
    return {"isl": isl, "osl": osl, "new": min(new, isl)}


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


def layout_problem(model, gpus: int, tp: int, ep: int, pp: int = 1) -> tuple[str, str] | None:
    """(message, field) if the model cannot be split this way (attention heads over tp, expert width over
    expert-TP = gpus / (pp ep), ep without MoE layers), else None."""
    moes = [f for f in model.ffn.values() if f.kind == "moe"]
    if ep > 1 and not moes:
        return f"ep={ep} but {model.id} has no MoE layers", "deployment.ep"
    for name, a in model.attention.items():
        heads = getattr(a, "heads", None) or getattr(a, "v_heads", None)
        if heads and heads % tp:
            return (f"tp={tp} does not divide the {heads} heads of attention {name!r} (attention TP shards whole "
                    "heads)", "deployment.tp")
    if moes and gpus % (pp * ep):
        return (f"pp x ep = {pp} x {ep} does not divide the instance's {gpus} GPUs (each GPU holds one expert "
                "shard of one stage)", "deployment.ep")
    expert_tp = gpus // (pp * ep)
    for f in moes:
        if expert_tp < 1 or f.expert_intermediate % expert_tp:
            return (f"expert-TP gpus/(pp x ep) = {gpus}/({pp} x {ep}) = {expert_tp} does not divide the expert "
                    f"width {f.expert_intermediate} (expert TP shards each expert's intermediate dimension); "
                    "raise ep", "deployment.ep")
    return None


def expert_problem(model, ep: int) -> str | None:
    """Why ``ep`` ranks cannot hold the routed experts evenly (uneven or redundant placement is not modelled)."""
    for name, f in model.ffn.items():
        if f.kind == "moe" and ep > 1 and f.experts % ep:
            return (f"ep={ep} does not divide the {f.experts} routed experts of ffn {name!r} "
                    "(uneven or redundant expert placement is not modelled)")
    return None


def check_layout(model, dep: Deployment) -> None:
    """Reject layouts the model cannot be split into (``layout_problem``, ``expert_problem``), the prefill
    pool's included, with a one-line SpecError."""
    problem = layout_problem(model, dep.gpus, dep.tp, dep.ep, dep.pp)
    if problem:
        raise SpecError(problem[0], field=problem[1])
    if expert_problem(model, dep.ep):
        raise SpecError(expert_problem(model, dep.ep), field="deployment.ep")
    p = dep.prefill
    if p is not None and dep.serving == "disaggregated":
        if p.gpus % p.tp or (not p.dp_attention and p.gpus != p.tp):
            raise SpecError(f"gpus={p.gpus} must equal tp={p.tp} (or be a multiple of it with dp_attention)",
                            field="deployment.prefill.gpus")
        if p.gpus % p.ep:
            raise SpecError(f"ep={p.ep} must divide gpus={p.gpus}", field="deployment.prefill.ep")
        problem = layout_problem(model, p.gpus, p.tp, p.ep) or (
            (expert_problem(model, p.ep), "deployment.ep") if expert_problem(model, p.ep) else None)
        if problem:
            raise SpecError(problem[0], field=problem[1].replace("deployment.", "deployment.prefill."))


def predict(scenario: Scenario) -> pd.DataFrame:
    """Evaluate one scenario: a one-row DataFrame with every metric, the breakdown and the memory fit.

    Serving: aggregated (chunked prefill mixed into decode steps), decode_only, prefill_only, or
    disaggregated (deployment.prefill is the prefill pool; deployment.decode_gpus the decode pool).
    An agentic workload (catalog kind 'agentic') evaluates sessions with tool pauses: the decode batch is
    the sessions generating; deployment.concurrency (live sessions per instance) sets it instead of batch;
    deployment.kv_host_tier keeps paused sessions' KV in host memory. Agentic and disaggregated together: the
    prefixes are cached on the prefill pool (engine/serving.agentic_disaggregated).
    """
    from .engine.serving import agentic, agentic_disaggregated, disaggregated, sessions_to_batch

    dep = scenario.deployment
    setup = setup_for(scenario.hardware, scenario.model, scenario.profile, dep,
                      scenario.overrides.hardware, scenario.overrides.profile)
    check_layout(setup.model, dep)
    rate = setup.profile.spec_decoding.acceptance_rate
    acc = dep.accepted_tokens(rate.value if rate else None)
    wl = catalog.workload(scenario.workload) if isinstance(scenario.workload, str) else scenario.workload
    lengths = workload_lengths(wl)
    pts = deployment_points(dep, lengths, acc)
    agentic_wl = isinstance(wl, WorkloadSpec) and wl.kind == "agentic"
    if agentic_wl:
        pts["concurrency"] = np.nan        # live sessions set the batch below; they are not queued clients
        if dep.arrival_rate is not None:
            raise SpecError("an agentic workload runs sessions, not an arrival rate: give concurrency (live "
                            "sessions per instance)", field="deployment.arrival_rate")
    if dep.serving == "disaggregated":
        pf = dep.prefill
        instances = (dep.decode_gpus or dep.gpus) / dep.gpus
        if instances != int(instances):
            raise SpecError(f"decode_gpus={dep.decode_gpus} is not a multiple of gpus={dep.gpus}",
                            field="deployment.decode_gpus")
        pfd = {"gpus": pf.gpus, "tp": pf.tp, "ep": pf.ep}
        cap = None
        if np.isnan(pts["batch"]) or (agentic_wl and dep.concurrency is not None):
            cap = max(float(evaluate(setup, {**pts, "mix": 0.0})["max_batch"].iloc[0]), 1.0)
        if agentic_wl:
            a = wl.agentic
            if dep.concurrency is not None:
                # live sessions per decode instance -> decode batch: sessions rise with the batch, so one
                # vectorized call over a log grid of batches and an interpolation (no loop per point)
                grid = np.unique(np.round(np.geomspace(1.0, cap, 96)))
                g = agentic_disaggregated(setup, {**pts, "batch": grid}, pfd, instances, pf.instances, a.pause_s,
                                          dep.kv_host_tier)
                sess = np.maximum.accumulate(g["sessions"].to_numpy())
                pts["batch"] = float(np.interp(dep.concurrency, sess, grid))
            elif np.isnan(pts["batch"]):
                pts["batch"] = cap
            df = agentic_disaggregated(setup, pts, pfd, instances, pf.instances, a.pause_s, dep.kv_host_tier,
                                       dists=a)
        else:
            if np.isnan(pts["batch"]):
                pts["batch"] = cap
            # the prefill instance holds the weights plus a request's KV per attention-DP rank while it prefills
            probe = evaluate(setup, {**pts, "gpus": pf.gpus, "tp": pf.tp, "ep": pf.ep, "pp": 1, "batch": pf.gpus / pf.tp,
                                     "spec_tokens": 0, "acc": 1.0, "mix": 0.0})
            if not bool(probe["fits"].iloc[0]):
                raise SpecError(f"the prefill instance ({pf.gpus} GPUs, tp={pf.tp}, ep={pf.ep}) does not fit: "
                                f"{probe['fit_reason'].iloc[0]}", field="deployment.prefill.gpus")
            df = disaggregated(setup, pts, {"gpus": pf.gpus, "tp": pf.tp, "ep": pf.ep}, instances, pf.instances)
            if bool(df["bound"].eq("prefill_pool").iloc[0]):
                df["note"] = (f"deployment.prefill: {pf.instances} prefill instance(s) of {pf.gpus} GPUs cannot "
                                    "keep up with the decode pool; the request rate is the prefill pool's (bound "
                                    "prefill_pool); add prefill instances")
    elif agentic_wl:
        a = wl.agentic
        pause = a.pause_s
        if dep.concurrency is not None:
            pts["batch"] = float(sessions_to_batch(setup, pts, pause, dep.concurrency, dep.kv_host_tier)[0])
        elif np.isnan(pts["batch"]):
            pts["batch"] = max(float(evaluate(setup, pts)["max_batch"].iloc[0]), 1.0)
        df = agentic(setup, pts, pause, dep.kv_host_tier, dists=a, percentile=wl.interactivity_percentile,
                     pool_gb_per_gpu=dep.kv_pool_gb_per_gpu)
    else:
        df = evaluate(setup, pts)
    df.insert(0, "hardware", setup.hardware.id)
    df.insert(1, "model", setup.model.id)
    df.insert(2, "profile", setup.profile.id)
    df["serving"] = dep.serving
    if dep.serving == "prefill_only":
        from .engine.evaluate import _arrays, prefill_step
        p = _arrays(pts)
        tokens, seconds = prefill_step(setup, p, setup.symbol_values())
        df["input_tps_per_gpu"] = float((tokens / seconds / p["gpus"])[0])
    return df


_setups: dict = {}


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
    check_layout(setup.model, dep)
    rate = setup.profile.spec_decoding.acceptance_rate
    pts = deployment_points(dep, workload_lengths(wl), dep.accepted_tokens(rate.value if rate else None))
    cols = evaluate_columns(setup, pts, symbol_values=vals)
    out = {"hardware": setup.hardware.id, "model": setup.model.id, "profile": setup.profile.id}
    for k, v in cols.items():
        x = np.asarray(v).reshape(-1)[0]
        out[k] = x.item() if hasattr(x, "item") else x
    out["serving"] = dep.serving
    return out


def predict_point_cache_clear() -> None:
    """Forget the setups ``predict_point`` bound (after a catalog file changed within the session)."""
    _setups.clear()
