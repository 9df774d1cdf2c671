"""A claim whose two systems run different weight formats (B200 NVFP4 over H200 INT4, issue 55's vendor multiples
about a new model): each system names its format, its side's operating points are evaluated in it, and a claim
without per-system formats reads exactly as before (the store's one format, the same side names)."""

from __future__ import annotations

import pandas as pd
import pytest

from perfmodel import catalog
from perfmodel.claims import curves
from perfmodel.claims.curves import CurveStore, Side
from perfmodel.errors import SpecError
from perfmodel.specs.claim import SystemRef


def test_system_weights_read_and_checked():
    assert SystemRef.model_validate({"hardware": "b200", "weights": "nvfp4"}).weights == "nvfp4"
    assert SystemRef.model_validate("b200").weights is None
    with pytest.raises(ValueError, match="unknown weight format"):
        SystemRef.model_validate({"hardware": "b200", "weights": "int3"})


def test_side_evaluates_in_its_own_format(monkeypatch):
    seen = []

    def fake_candidates(system, model, workload, weights, space, keep):
        seen.append(weights)
        return pd.DataFrame()

    monkeypatch.setattr(curves, "candidates", fake_candidates)
    store = CurveStore(weights="fp8")
    store.points(Side("h200-sxm", "vllm"), "kimi-k2.6", "fixed-8k1k")
    store.points(Side("h200-sxm", "vllm", weights="int4"), "kimi-k2.6", "fixed-8k1k")
    assert seen == [("fp8",), ("int4",)]


def test_side_names_unchanged_without_a_format():
    assert Side("b200", "vllm").name == "b200:vllm"
    assert Side("b200", "vllm", gpus=(4,), weights="nvfp4").name == "b200:vllm (4 GPUs) [nvfp4]"
    assert Side("b200", "vllm") != Side("b200", "vllm", weights="nvfp4")     # separate store entries


def test_bad_system_format_is_one_line(tmp_path):
    src = catalog.resolve_path("claims", "vllm-2.7x-at-peak").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(src.replace("    profile: vllm\n", "    profile: vllm\n    weights: int3\n", 1))
    with pytest.raises(SpecError) as e:
        catalog.load("claims", str(bad))
    assert "weights" in str(e.value) and "unknown weight format" in str(e.value) and "\n" not in str(e.value)


def test_no_existing_claim_states_a_system_format():
    """Claims before issue 55's name no per-system format: their sides, names and store keys are as before."""
    for cid in catalog.ids("claims"):
        if not cid.startswith("inferencex-kimi-k2.6"):
            assert all(s.weights is None for s in catalog.claim(cid).systems), cid


@pytest.mark.parametrize("cid,formats", [
    ("inferencex-kimi-k2.6-b200-nvfp4-2.95x-per-dollar-h200", ("nvfp4", "int4")),
    ("inferencex-minimax-m3-h200-3.5x-b200", (None, None)),
])
def test_new_model_claims_name_their_formats(cid, formats):
    """The two vendor multiples about a new model (issue 55): each names a catalog model and its formats."""
    claim = catalog.claim(cid)
    assert tuple(s.weights for s in claim.systems) == formats
    assert claim.model in ("kimi-k2.6", "minimax-m3") and claim.source.startswith("https://")
