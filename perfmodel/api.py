"""The Python API behind the CLI: every command is a function returning a DataFrame or a dict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import ValidationError

from . import catalog
from .engine.evaluate import Setup, evaluate
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

    Agentic workloads use the median request: context median as isl, output median as osl, new tokens
    per turn as the uncached input (the prefix-hit rate follows: 1 - new / isl).
    """
    if isinstance(w, str):
        w = catalog.workload(w)
    if isinstance(w, FixedWorkload):
        return {"isl": w.isl, "osl": w.osl, "new": w.isl * (1 - w.prefix_hit)}
    if w.kind == "fixed":
        return {"isl": w.isl, "osl": w.osl, "new": w.isl * (1 - w.prefix_hit)}
    a = w.agentic
    isl = a.context_tokens.median
    return {"isl": isl, "osl": a.output_tokens.median, "new": min(a.new_tokens_per_turn.median, isl)}


def setup_for(hardware, model, profile, dep: Deployment, hw_overrides=None, profile_overrides=None) -> Setup:
    hw = catalog.hardware(hardware) if isinstance(hardware, str) else hardware
    m = catalog.model(model) if isinstance(model, str) else model
    pr = catalog.profile(profile) if isinstance(profile, str) else profile
    return Setup(hw, m, pr, weights=dep.weights, kv_cache=dep.kv_cache, attention_weights=dep.attention_weights,
                 hw_overrides=dict(hw_overrides or {}), profile_overrides=dict(profile_overrides or {}))


def deployment_points(dep: Deployment, lengths: dict[str, float], acc: float) -> dict:
    return {"batch": np.nan if dep.batch is None else dep.batch, "gpus": dep.gpus, "tp": dep.tp,
            "ep": dep.ep, "pp": dep.pp, "spec_tokens": dep.spec_tokens, "acc": acc,
            "mix": 1.0 if dep.serving == "aggregated" else 0.0, **lengths}


def predict(scenario: Scenario) -> pd.DataFrame:
    """Evaluate one scenario: a one-row DataFrame with every metric, the breakdown and the memory fit."""
    dep = scenario.deployment
    setup = setup_for(scenario.hardware, scenario.model, scenario.profile, dep,
                      scenario.overrides.hardware, scenario.overrides.profile)
    if dep.ep > 1 and not any(f.kind == "moe" for f in setup.model.ffn.values()):
        raise SpecError(f"ep={dep.ep} but {setup.model.id} has no MoE layers", field="deployment.ep")
    rate = setup.profile.spec_decoding.acceptance_rate
    acc = dep.accepted_tokens(rate.value if rate else None)
    lengths = workload_lengths(scenario.workload)
    df = evaluate(setup, deployment_points(dep, lengths, acc))
    df.insert(0, "hardware", setup.hardware.id)
    df.insert(1, "model", setup.model.id)
    df.insert(2, "profile", setup.profile.id)
    return df
