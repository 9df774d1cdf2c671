"""Issue 56 item 4: 'stated' only for what a source states. The AA-AgentPerf peak claims read each system's peak at
or above a 20 tok/s/user speed floor; a source states that floor for DeepSeek V4 Pro only (AA's SLO tiers are
model-specific; a secondary report gives V4 Pro's as 20-180 tok/s), so on the other three models it is the
catalog's default, listed under ``unstated`` and printed as assumed wherever the floor is named."""

import importlib

from perfmodel import catalog

chk = importlib.import_module("perfmodel.claims.check")
planner = importlib.import_module("perfmodel.report.planner")

ASSUMED = ("aa-1.26x-peak-per-mw-kimi-k3", "aa-1.35x-peak-per-mw-glm-5.2", "aa-1.45x-peak-per-mw-deepseek-v4.1-flash")
STATED = "aa-1.14x-peak-per-mw-deepseek-v4-pro"


def test_the_floor_is_stated_only_where_a_source_states_it():
    for cid in ASSUMED:
        c = catalog.claim(cid)
        assert c.at.min_tps_per_user == 20 and "at.min_tps_per_user" in c.assumed, cid
        assert "ASSUMED" in c.notes and "model-specific" in c.notes, cid
    c = catalog.claim(STATED)
    assert "at.min_tps_per_user" not in c.unstated
    # its source: the workload's secondary report, which gives DeepSeek V4 Pro's tiers as 20-180 tok/s
    assert any("DeepSeek V4 Pro SLO tiers 20-180" in s for s in catalog.workload("aa-agentperf").sources)


def test_an_assumed_floor_is_printed_as_assumed():
    c = catalog.claim(ASSUMED[0])
    assert chk._describe_point(c.at, True) == "each system's peak at >= 20 tok/s/user (assumed)"
    assert chk._describe_point(catalog.claim(STATED).at) == "each system's peak at >= 20 tok/s/user"
    rows = [{"id": cid, "model_id": catalog.claim(cid).model, "kind": "ratio"} for cid in (*ASSUMED, STATED)]
    x, src = planner._peak_floor(rows, "kimi-k3")
    assert x == 20 and src.startswith("assumed (not stated): ") and ASSUMED[0] in src
    x, src = planner._peak_floor(rows, "deepseek-v4-pro")
    assert x == 20 and src == f"stated: {STATED}"
    x, src = planner._peak_floor(rows, "llama-3.3-70b")
    assert x == planner.PEAK_FLOOR and "planner's choice" in src
