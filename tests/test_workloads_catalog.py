"""The workload catalog: every workload loads, carries sources, and its numbers agree with the published ones."""

import math

import pytest

from perfmodel import catalog

FIXED = {
    "fixed-1k1k": (1024, 1024),
    "fixed-1k8k": (1024, 8192),
    "fixed-8k1k": (8192, 1024),
    "fixed-2k100": (2000, 100),
}
AGENTIC = ["agentx", "agentx-trace", "aa-agentperf"]
ALL = [*FIXED, *AGENTIC]

# Published prefix-hit figures for AgentX: "above 96%" (seed), ceiling 98.3% (trace statistics).
AGENTX_HIT_LOW, AGENTX_HIT_CEILING = 0.96, 0.983


def implied_hit(w) -> float:
    """Prefix-hit rate implied by the workload: 1 - new tokens per turn / input tokens per request (means)."""
    a = w.agentic
    return 1 - a.new_tokens_per_turn.mean_value / a.context_tokens.mean_value


@pytest.mark.parametrize("wid", ALL)
def test_loads_with_sources(wid):
    w = catalog.workload(wid)
    assert w.id == wid
    assert w.sources
    assert any("http" in s or "seeds/" in s for s in w.sources), "each workload names a URL or a seed article"
    assert w.throughput_counts == "total"


def test_catalog_lists_them():
    assert set(ALL) <= set(catalog.ids("workloads"))


@pytest.mark.parametrize("wid,lengths", FIXED.items())
def test_fixed_lengths(wid, lengths):
    w = catalog.workload(wid)
    assert w.kind == "fixed"
    assert (w.isl, w.osl) == lengths
    assert w.prefix_hit == 0
    assert w.interactivity_percentile == 50
    assert any(s.startswith("https://") for s in w.sources)


@pytest.mark.parametrize("wid", AGENTIC)
def test_agentic_block(wid):
    w = catalog.workload(wid)
    assert w.kind == "agentic" and w.agentic is not None


def test_agentx_seed_figures():
    a = catalog.workload("agentx").agentic
    assert (a.turns.median, a.context_tokens.median, a.output_tokens.median) == (43, 142000, 444)
    # median-only figures carry no invented spread
    assert a.turns.mean is None and a.context_tokens.mean is None and a.output_tokens.mean is None
    assert catalog.workload("agentx").interactivity_percentile == 90


def test_agentx_hit_rate_in_published_range():
    hit = implied_hit(catalog.workload("agentx"))
    assert AGENTX_HIT_LOW <= hit <= AGENTX_HIT_CEILING, f"implied hit rate {hit:.4f}"
    # and inside the 96.5-97% measured at high concurrency
    assert 0.965 <= hit <= 0.97 + 1e-9


def test_agentx_trace_figures():
    w = catalog.workload("agentx-trace")
    a = w.agentic
    assert (a.turns.median, a.context_tokens.median, a.output_tokens.median) == (65, 254000, 616)
    assert (a.new_tokens_per_turn.median, a.new_tokens_per_turn.mean) == (1664, 3792)
    assert a.tool_pause_s.median == 4.9
    assert a.max_hit_rate == AGENTX_HIT_CEILING
    assert w.interactivity_percentile == 90


def test_agentx_trace_hit_rate_near_ceiling():
    # Mean new prefill over the MEDIAN ISL (the mean ISL is unpublished) gives 98.5%, 0.2 points above the
    # published 98.3% ceiling; the workload notes explain why (left-skewed ISL). Allow that documented gap.
    w = catalog.workload("agentx-trace")
    hit = implied_hit(w)
    assert AGENTX_HIT_LOW <= hit
    assert abs(hit - w.agentic.max_hit_rate) < 0.005, f"implied hit rate {hit:.4f}"


def test_aa_agentperf_figures():
    w = catalog.workload("aa-agentperf")
    a = w.agentic
    assert a.context_tokens.mean_value == 27000
    assert a.output_tokens.median == 150
    assert a.tool_pause_s.median == 1.0
    assert a.max_hit_rate == 0.97
    assert implied_hit(w) == pytest.approx(0.97)
    # the output spread is fitted to the published P95 of ~2K
    assert a.output_tokens.quantile(0.95) == pytest.approx(2000, rel=0.01)


def _dists():
    out = []
    for wid in AGENTIC:
        for name in ("turns", "context_tokens", "new_tokens_per_turn", "output_tokens", "tool_pause_s"):
            out.append(pytest.param(wid, name, id=f"{wid}-{name}"))
    return out


@pytest.mark.parametrize("wid,name", _dists())
def test_quantiles_monotone(wid, name):
    d = getattr(catalog.workload(wid).agentic, name)
    qs = [d.quantile(q) for q in (0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)]
    assert all(math.isfinite(x) and x > 0 for x in qs)
    assert all(lo <= hi for lo, hi in zip(qs, qs[1:])), qs
    assert d.quantile(0.5) == pytest.approx(d.median)
    assert d.mean_value >= d.median
