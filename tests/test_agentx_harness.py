"""AgentX harness versions and the per-user speed a record quotes (issue 38 item 1; ../shared/data/AUDIT.md 1.1)."""

from __future__ import annotations

from perfmodel import catalog
from perfmodel.specs.records import Record
from perfmodel.validation.workload_versions import (
    AGENTX_HARNESS,
    AGENTX_POST,
    AGENTX_PRE,
    HARNESS_UPDATE,
    harness_on,
    record_harness,
    record_interactivity,
    workload_version,
)


def rec(**kw) -> Record:
    base = dict(id="r", kind="point", hardware="b300", model="glm-5.2", workload="agentx", metric="tps_per_user",
                value=1.0)
    return Record(**{**base, **kw})


def test_harness_versions_by_date():
    """Before 2026-07-29 a 10 s per-trace gap cap; from 07-29 gaps as recorded; from 08-02 a 300 s tree cap;
    a 10 s system-wide idle cap throughout (InferenceX PRs #2268, #2415, #2457)."""
    assert HARNESS_UPDATE == "2026-07-29"
    assert [h.since for h in AGENTX_HARNESS] == sorted(h.since for h in AGENTX_HARNESS)
    assert harness_on("2026-07-18").gap_cap_s == 10.0 and harness_on("2026-07-18").cap_scope == "trace"
    assert harness_on("2026-07-28").workload == AGENTX_PRE
    assert harness_on("2026-07-29").gap_cap_s is None and harness_on("2026-07-29").workload == AGENTX_POST
    assert harness_on("2026-08-01").gap_cap_s is None
    assert harness_on("2026-08-02").gap_cap_s == 300.0 and harness_on("2026-09-16").cap_scope == "tree"
    assert all(h.system_idle_cap_s == 10.0 for h in AGENTX_HARNESS)
    # undated: the notes decide (the AUDIT clause wording included), else the current harness
    assert harness_on(None, "Harness before the 2026-07-29 switch (InferenceX PRs #2395/#2415)").workload == AGENTX_PRE
    assert harness_on(None, "").gap_cap_s == 300.0
    assert record_harness(rec(date="2026-07-18")).gap_cap_s == 10.0
    assert record_harness(rec(workload="mooncake-agentic")) is None


def test_rows_map_to_the_version_of_their_harness():
    assert workload_version("agentx", "2026-07-28", "") == AGENTX_PRE
    assert workload_version("agentx", "2026-07-29", "") == AGENTX_POST
    assert workload_version("agentx", None, "AUDIT: Harness before the 2026-07-29 switch") == AGENTX_PRE
    assert workload_version("agentx", None, "AUDIT: Harness after 2026-07-29: gaps kept as recorded") == AGENTX_POST


def test_intvty_is_one_over_the_itl_statistic():
    """InferenceX request_metrics.py: intvty = 1 / the ITL statistic, e2e_norm_intvty = 1 / (E2E / OSL). PR #2268's
    'intvty mean (p50) 1.4 (1.8)' is the ITL one; a row without it reads the workload's E2E axis."""
    w = catalog.workload(AGENTX_PRE)
    assert w.interactivity == "e2e"
    assert record_interactivity(rec(notes="AgentX pareto table row, intvty mean (p50) 1.4 (1.8) tok/s/user"), w) == "itl"
    assert record_interactivity(rec(notes="p90_e2e_norm_intvty 12.0 tok/s/user"), w) == "e2e"
    assert record_interactivity(rec(notes="interactivity 20 tok/s/user"), w) == "e2e"
    assert record_interactivity(rec(notes="intvty 20"), catalog.workload("mooncake-agentic")) == "itl"
