"""Racks as bought (analyses/plan_racks.py): units packed whole into scale-up domains, MW and $ from the domains
bought, domains to add per period of a demand over time, and the measured power basis's labelled fallback."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.plan import Demand, plan
from perfmodel.analyses.plan_racks import domains_for, racks_to_add, units_in_domains
from perfmodel.analyses.systems import System
from perfmodel.search import SLO


def test_units_that_fit_a_domain_sit_inside_one_by_hand():
    """GLM-5 on GB200 (the issue's case): 73 units of 64 GPUs each need a 72-GPU rack of their own: 73 racks,
    where ceil(73 x 64 / 72) = 65 would split units over racks. 10 instances of 2 GPUs: 4 per 8-GPU node, 3 nodes."""
    assert domains_for(73, 64, 72)[0] == 73 and math.ceil(73 * 64 / 72) == 65
    assert domains_for(10, 2, 8)[0] == 3 and domains_for(10, 8, 8)[0] == 10 and domains_for(36, 2, 72)[0] == 1
    assert domains_for(0, 8, 8)[0] == 0


def test_a_split_larger_than_a_domain_packs_its_instances_whole_by_hand():
    """A split of 4 decode instances of 16 GPUs and 18 prefill instances of 2 (100 GPUs) in 72-GPU racks: the four
    16s fill 64 GPUs of a rack, 4 prefill instances take its last 8, the other 14 (28 GPUs) a second rack: 2.
    Three such units: 12 decode instances in 3 racks (8 GPUs left in each: 12 prefill slots), 54 - 12 = 42 prefill
    instances in ceil(42 / 36) = 2 more racks: 5."""
    inst = ((16, 4), (2, 18))
    assert domains_for(1, 100, 72, inst)[0] == 2
    assert domains_for(3, 100, 72, inst)[0] == 5


def test_units_in_domains_and_racks_to_add_by_hand():
    assert list(units_in_domains(np.array([3.0, 3.0, 5.0]), np.array([2.0, 64.0, 100.0]), 72.0,
                                 np.array([1.0, 1.0, 2.0]))) == [108.0, 3.0, 2.0]
    assert racks_to_add([3, 5, 4, 7]) == [3, 2, 0, 2]         # racks bought are kept


@pytest.fixture(scope="module")
def split():
    space = DeploymentSpace(spec_tokens=(0,), batch_points=8, max_gpus=8, serving=("disaggregated",))
    return plan("llama-3.3-70b", "fixed-1k1k", ["gb200-nvl72:dynamo-trtllm"], Demand("requests_per_s", 40),
                SLO(ttft_ms=1500, tps_per_user=20), scales=(1, 3, 2), space=space,
                periods=["2027Q1", "2027Q2", "2027Q3"])


def test_a_plan_buys_whole_domains_and_pays_for_them(split):
    sysm = System.parse("gb200-nvl72:dynamo-trtllm")
    for _, r in split.iterrows():
        u, d = r["unit_gpus"], r["scaleup_domain_gpus"]
        assert r["unit_gpus"] == r["prefill_gpus"] + r["decode_gpus"]
        assert r["decode_gpus"] == r["instances"] * r["gpus_per_instance"]
        assert r["prefill_gpus"] == r["pf_instances"] * r["pf_gpus"]
        if u <= d:
            assert r["scaleup_domains"] == math.ceil(r["units"] / (d // u))
        assert r["gpus_bought"] == r["scaleup_domains"] * d >= r["gpus"]
        assert r["mw"] == pytest.approx(r["gpus_bought"] * sysm.power_w() / 1e6)
        assert r["usd_per_hour"] == pytest.approx(r["gpus_bought"] * sysm.price())


def test_domains_to_add_per_period(split):
    d = list(split["scaleup_domains"])
    assert list(split["domains_to_add"]) == racks_to_add(d)
    assert split["domains_to_add"].sum() == max(d)


def test_measured_power_falls_back_to_board_with_a_label():
    from perfmodel.analyses.plan_error import power
    sysm = System.parse("b200:vllm")
    w, _lo, _hi, text = power(sysm, "measured")
    assert text.startswith("FALLBACK board: no measured draw of b200") and w == power(sysm, "board")[0]
