"""Sourced priors for the per-draft acceptance rate of speculative decoding, by token source and model.

A record's acceptance comes, in this order, from:
  1. its ``acceptance_length`` (published);
  2. a prior here for its token source and model (``prior_for``);
  3. the engine profile's ``spec_decoding.acceptance_rate`` (calibrated where records draft without a published
     acceptance and no prior applies).

Token source: benchmarks on random tokens (bench_serving/InferenceX ``random`` datasets, ignore_eos). What the
draft head accepts there differs by model and engine, in both directions, so each prior names the models its
source measured: SGLang's GLM-5.2 benchmark reports almost every draft accepted (degenerate, predictable output),
while vLLM's DeepSeek-V4-Flash MTP on random 1024/256 prompts accepts 49% of drafts (acceptance length 1.99 of 3),
far below the 85-90% DeepSeek reports on text; the DeepSeek MTP heads (V3/R1 and V4 alike: one MTP layer trained
with the base model) take that prior on random tokens, InferenceX's frontier reads among them. A record is on random tokens when its workload is blank and its notes name a random
dataset (``random prompts``, ``bench_serving random``, ``random 8192/1024``, ``random tokens``); see
``token_source``. The rate p turns into accepted tokens per step through a = (1 - p^(k+1)) / (1 - p)
(spec_decoding.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .specs.common import Sourced

_SGLANG_GLM = ("https://github.com/sgl-project/sglang/blob/main/docs_new/src/"
               "snippets/configs/zai-org/glm-5.2-benchmarks.jsx")
_DSV3 = "https://arxiv.org/abs/2412.19437"
_VLLM_DSV4_RANDOM = "https://github.com/vllm-project/vllm/pull/41044"
DEEPSEEK_MTP = ("deepseek-v3", "deepseek-r1", "deepseek-v3.1", "deepseek-v3.2", "deepseek-v4-flash", "deepseek-v4-pro")

RANDOM_NOTES = re.compile(r"\brandom (prompts|tokens|data|\d+/\d+)|bench_serving random|--dataset-name random",
                          re.IGNORECASE)


@dataclass(frozen=True)
class AcceptancePrior:
    token_source: str             # random | text
    models: tuple[str, ...]       # model ids the source covers
    rate: Sourced                 # per-draft acceptance probability
    low: float
    high: float
    mechanism: str | None = None  # a prior that applies only where the profile switches it on (specs/mechanisms.py)


PRIORS: tuple[AcceptancePrior, ...] = (
    AcceptancePrior(
        "random", ("glm-5.2",),
        Sourced(value=0.998, status="estimate", source=_SGLANG_GLM,
                note="An earlier (v0.5.13.post1) version of SGLang's GLM-5.2 benchmark file noted an accept length of "
                     "~5.96-5.98 of 6 for the 5-1-6 MTP recipe on bench_serving random data (quoted in "
                     "data/shared/curve-end.csv notes); a = (1 - p^6)/(1 - p) gives p = 0.9973-0.9987. Only "
                     "GLM-5.2 is sourced: other models' acceptance on random tokens differs (InferenceX warns MTP "
                     "acceptance implementations differ across engines), so they keep the profile's rate."),
        0.997, 0.999),
    AcceptancePrior(
        "random", DEEPSEEK_MTP,
        Sourced(value=0.614, status="estimate", source=_VLLM_DSV4_RANDOM,
                low=0.41, high=0.70,
                range_note="the same run's per-position acceptance: 70.0% at the first draft (high) and "
                           "28.74 / 70.02 = 41% at the second given the first (low); acceptance falls with depth",
                note="vLLM PR #41044 (2026-04-30, 4x B200, TP4 + EP, v0.20.0 with the PR's probability draft "
                     "proposal): DeepSeek-V4-Flash MTP with 2 draft tokens on the random dataset (input 1024, output "
                     "256, ignore_eos, temperature 1.0, concurrency 1) accepts 4062 / 8226 drafts, mean acceptance "
                     "length 1.99; a = 1 + p + p^2 = 1.99 gives p = 0.614. Measured on V4-Flash, carried to the "
                     "other DeepSeek MTP heads (no per-model figure on random tokens is published)."),
        0.41, 0.70, mechanism="deepseek_mtp_random_prior"),
    AcceptancePrior(
        "text", DEEPSEEK_MTP[:4],
        Sourced(value=0.875, status="datasheet", source=_DSV3,
                note="DeepSeek-V3 Technical Report, section 5.4.3: the acceptance rate of the second-token (MTP) "
                     "prediction ranges between 85% and 90% across generation topics."),
        0.85, 0.90),
)


def token_source(workload: str | None, notes: str | None) -> str:
    """'random' for a benchmark on random tokens (blank workload, notes naming a random dataset), else 'text'."""
    if not workload and notes and RANDOM_NOTES.search(notes):
        return "random"
    return "text"


def prior_for(model_id: str, has_draft_head: bool, source: str, profile=None) -> AcceptancePrior | None:
    """The prior for this model and token source, or None (then the profile's rate applies). A prior behind a
    mechanism applies only where ``profile`` (a ProfileSpec) switches that mechanism on."""
    for p in PRIORS:
        if p.mechanism is not None and (profile is None or not profile.uses(p.mechanism)):
            continue
        if p.token_source == source and model_id in p.models and has_draft_head:
            return p
    return None


def record_prior(rec, profile=None) -> AcceptancePrior | None:
    """The prior that applies to a validation record (drafting, no published acceptance), or None."""
    from . import catalog
    if not (rec.spec_tokens or 0) or rec.acceptance_length is not None:
        return None
    try:
        has_head = catalog.model(rec.model).mtp is not None
    except Exception:   # unknown model: reported unsupported by the predictor
        return None
    return prior_for(rec.model, has_head, token_source(rec.workload, rec.notes), profile)


def fixed_acceptance(rec, profile=None) -> float | None:
    """Accepted tokens per step of a record that no profile rate changes: 1 without drafts, the published
    acceptance_length, else the prior's (``record_prior``); None where the profile's per-draft rate decides."""
    from .spec_decoding import acceptance_length
    k = rec.spec_tokens or 0
    if k == 0:
        return 1.0
    if rec.acceptance_length is not None:
        return float(rec.acceptance_length)
    prior = record_prior(rec, profile)
    if prior is not None:
        return float(acceptance_length(prior.rate.value, k))
    return None


def record_acceptance(rec, rate, profile=None):
    """Accepted tokens per step for a record, one per profile sample of the per-draft rate ``rate`` (S,):
    1 without drafts; the published acceptance_length; else the prior's rate (fixed at its value, so that a
    fit's parameter vectors differ only in profile parameters); else the profile's rate (NaN rate: 1)."""
    return acceptance_at(rec, rate, fixed_acceptance(rec, profile))


def acceptance_at(rec, rate, fixed: float | None):
    """``record_acceptance`` with the record's ``fixed_acceptance`` given (calibration keeps it per record):
    ``fixed`` for every sample, else a = (1 - p^(k+1)) / (1 - p) at the per-draft rates p = ``rate`` (NaN: 1)."""
    import numpy as np

    from .spec_decoding import acceptance_length
    rate = np.asarray(rate, float)
    if fixed is not None:
        return np.full_like(rate, fixed)
    return np.where(np.isnan(rate), 1.0, acceptance_length(rate, rec.spec_tokens))
