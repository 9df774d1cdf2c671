"""Speculative acceptance per kind of data (issue 37, item 2): DeepSeek MTP heads on random-token benchmarks."""

from __future__ import annotations

import numpy as np
import pytest
from mechanisms_on import profile_with

from perfmodel.acceptance_priors import prior_for, record_acceptance, token_source
from perfmodel.spec_decoding import acceptance_length
from perfmodel.specs.records import Record

ON = profile_with("vllm", "deepseek_mtp_random_prior")


def _rec(notes: str | None, model: str = "deepseek-r1", acceptance_length: float | None = None) -> Record:
    return Record(id="x", kind="frontier", hardware="b200", model=model, weights="nvfp4", spec_tokens=3,
                  acceptance_length=acceptance_length, isl=1024, osl=1024, at_tps_per_user=100.0,
                  metric="total_tps_per_gpu", value=100.0, notes=notes)


def test_random_prior_reproduces_its_source():
    """vLLM #41044: 2 drafts, mean acceptance length 1.99 -> 1 + p + p^2 = 1.99 at p = 0.614 (hand check)."""
    assert prior_for("deepseek-v4-flash", True, "random") is None       # the mechanism off: no prior
    p = prior_for("deepseek-v4-flash", True, "random", ON)
    assert p is not None and p.rate.value == pytest.approx(0.614)
    assert 1 + 0.614 + 0.614 ** 2 == pytest.approx(1.99, abs=0.002)
    assert float(acceptance_length(p.rate.value, 2)) == pytest.approx(1.99, abs=0.002)
    assert p.low < p.rate.value < p.high


def test_inferencex_random_prompts_read_below_text_and_a_pinned_acceptance_is_kept():
    """InferenceX's DeepSeek-R1 frontier notes say 'random prompts': 3 drafts accept 1 + .614 + .614^2 + .614^3 =
    2.22 tokens per step, against 1 + .875 + .875^2 + .875^3 = 3.31 on text; a published (AgentX-pinned)
    acceptance length is used as it is."""
    rnd = _rec("frontier across engines/configs; random prompts, no prefix caching.")
    assert token_source(rnd.workload, rnd.notes) == "random"
    assert record_acceptance(rnd, np.array([0.8]), ON)[0] == pytest.approx(2.2224, abs=1e-3)
    assert record_acceptance(_rec(None), np.array([0.8]), ON)[0] == pytest.approx(3.3105, abs=1e-3)
    pinned = _rec("AgentX golden acceptance", acceptance_length=3.51)
    assert record_acceptance(pinned, np.array([0.8]), ON)[0] == 3.51
    # the mechanism off (the catalog profiles): random prompts take the profile's rate, as before it was written
    assert record_acceptance(rnd, np.array([0.8]))[0] == pytest.approx(1 + 0.8 + 0.8 ** 2 + 0.8 ** 3)
