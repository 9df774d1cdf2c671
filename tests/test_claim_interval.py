"""Claim intervals: the combination rule, the distance, spec ranges, the model-error table, what would have to be
true (no model evaluation except where named)."""

import math

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from perfmodel import catalog
from perfmodel.analyses.model_error import half_widths, region_of, spread_table
from perfmodel.claims.interval import distance, elasticities, interval, spec_bounds
from perfmodel.claims.needs import power_or_price
from perfmodel.specs.common import Sourced

URL = "https://example.org/x"


def _row(**kw):
    base = dict(step_ms=10.0, res_hbm_bandwidth_ms=6.0, res_compute_ms=2.0, step_flops_fp4=1e12, step_flops_bf16=0.0,
                step_flops_fp8=0.0, concurrency=8.0, power_basis="all-in")
    return pd.Series({**base, **kw})


def test_sourced_range_is_checked_and_needs_a_note():
    assert Sourced(value=2, status="estimate", source=URL, low=1, high=3, range_note="r").bounds() == (1, 3)
    assert Sourced(value=2, status="estimate", source=URL).bounds() == (2, 2)
    for bad in (dict(low=1), dict(low=3, high=4, range_note="r"), dict(low=1, high=3),
                dict(low=1, high=3, range_note="r", status="datasheet")):
        with pytest.raises(ValidationError):
            Sourced(**{"value": 2, "status": "estimate", "source": URL, **bad})


def test_spec_bounds_hull_the_range_and_the_variants():
    b = spec_bounds("vr200-nvl72", "hbm_bandwidth_tbps")
    assert (b["low"], b["high"], b["value"]) == (10.25, 22, 22) and "hbm-20tbps" in b["range"]
    assert "hbm-19.16tbps-aisimulate: 19.16" in b["range"]          # AISimulate's inferred peak (issue 32)
    assert spec_bounds("gb300-nvl72", "hbm_bandwidth_tbps") is None   # datasheet, one value


def test_elasticities_are_the_resource_shares():
    e = elasticities(_row(), "total_tps_per_mw", "vr200-nvl72")
    assert e["hbm_bandwidth_tbps"] == pytest.approx(0.6)
    assert e["fp4_dense_pflops"] == pytest.approx(0.2)   # all compute time is fp4 here
    assert e["allin_power_w"] == -1.0
    assert elasticities(_row(), "ttft_s", "vr200-nvl72")["hbm_bandwidth_tbps"] == pytest.approx(-0.6)


def test_interval_is_the_model_error_alone_and_the_spec_ranges_are_reported():
    row = _row()
    iv = interval(2.0, (2.0, 2.0 * math.e ** 0.3), [{"hardware": "vr200-nvl72", "row": row, "sign": 1,
                                                      "metric": "total_tps_per_mw"}])
    spec = {p["field"]: p for p in iv["spec"]}
    # power 2500 -> 3194 W at elasticity -1 takes ln(3194/2500) off the figure; HBM 22 -> 10.25 (the lowest
    # variant: AISimulate's measured copy bandwidth) at 0.6
    down_spec = math.sqrt(math.log(3194 / 2500) ** 2 + (0.6 * math.log(22 / 10.25)) ** 2)
    assert spec["allin_power_w"]["down"] == pytest.approx(math.log(3194 / 2500))
    assert spec["hbm_bandwidth_tbps"]["down"] == pytest.approx(0.6 * math.log(22 / 10.25))
    assert spec["fp4_dense_pflops"]["up"] == pytest.approx(0.2 * math.log(50 / 35))
    assert down_spec > 0 and iv["by_source"]["excluded_spec"]["down"] == pytest.approx(down_spec)
    # issue 32 rule 1: the spec ranges and the profile corners are reported beside the interval, not in it
    m = half_widths("rate", region_of(8.0))
    assert iv["down"] == pytest.approx(m["down"]) and iv["up"] == pytest.approx(m["up"])
    assert iv["profile"]["up"] == pytest.approx(0.3)
    assert iv["low"] == pytest.approx(2.0 * math.exp(-m["down"])) and iv["high"] == pytest.approx(2 * math.exp(m["up"]))


def test_a_ratio_reads_the_pair_spread_and_a_delta_cancels_the_shared_spec():
    a, b = _row(), _row(concurrency=500.0)
    iv = interval(1.5, (1.5, 1.5), [{"hardware": "vr200-nvl72", "row": a, "sign": 1, "metric": "total_tps_per_gpu"},
                                    {"hardware": "gb300-nvl72", "row": b, "sign": -1, "metric": "total_tps_per_gpu"}])
    assert [p["quantity"] for p in iv["model_error"]] == ["rate-ratio"]
    d = interval(0.5, (0.5, 0.5), [{"hardware": "vr200-nvl72", "row": a, "sign": 1, "metric": "total_tps_per_mw"},
                                   {"hardware": "vr200-nvl72", "row": a, "sign": -1, "metric": "total_tps_per_mw"}])
    assert d["spec"] == [] and [p["quantity"] for p in d["model_error"]] == ["rate-delta"]


def test_distance_in_half_widths_and_the_qualifiers():
    iv = {"value": 2.0, "down": 0.5, "up": 0.25}
    assert distance(2.0 * math.exp(0.5), iv)["z"] == pytest.approx(2.0)
    assert distance(2.0 * math.exp(-0.25), iv)["z"] == pytest.approx(0.5)
    # "A is at least 1" holds at the model's 2; "at most 3" holds too; "at least 3" is ln 1.5 above
    assert distance(1.0, iv, "at_least")["z"] == 0 and distance(3.0, iv, "at_most")["z"] == 0
    assert distance(3.0, iv, "at_least")["z"] == pytest.approx(math.log(1.5) / 0.25)


def test_spread_table_from_crossval_rows():
    cv = pd.DataFrame({"id": list("abcd"), "config": ["x", "x", "y", "y"], "hardware": ["h1", "h1", "h2", "h2"],
                       "metric": ["tpot_ms", "total_tps_per_gpu", "tpot_ms", "ttft_ms"],
                       "measured": [10.0, 100.0, 10.0, 5.0], "predicted": [20.0, 100.0, 5.0, 10.0],
                       "status": "ok"})
    conc = {"a": 4, "b": 4, "c": 4, "d": 1000}
    setup = {i: (h, "m", "e", "fp8", "agg", 8, 8, 1, 1000, 100, 4, "tpot_ms") for i, h in zip("ac", ("h1", "h2"))}
    t = spread_table(cv, conc, setup).set_index(["quantity", "region"])
    # TPOT twice too long is a speed half as high: e = -ln 2; the throughput row is exact
    assert t.loc[("rate", "high-interactivity"), "rows"] == 3
    assert t.loc[("rate", "high-interactivity"), "ln_q50"] == pytest.approx(0.0)
    assert t.loc[("ttft", "saturation"), "ln_q50"] == pytest.approx(math.log(2))
    # a and c share a setup on two systems: their pair differs by -ln2 - ln2
    assert t.loc[("rate-ratio", "high-interactivity"), "ln_q90"] == pytest.approx(
        np.quantile([-2 * math.log(2), 2 * math.log(2)], 0.9))


def test_power_needed_for_a_per_mw_multiple_is_exact():
    n = {r["hardware"]: r for r in power_or_price("total_tps_per_mw", "vr200-nvl72", "gb300-nvl72", 1.53, 1.14)}
    assert n["vr200-nvl72"]["needed"] == pytest.approx(2500 * 1.53 / 1.14)
    assert n["gb300-nvl72"]["needed"] == pytest.approx(1972 * 1.14 / 1.53)
    assert "3,355 W" in n["vr200-nvl72"]["text"] and "outside" in n["vr200-nvl72"]["text"]
    assert power_or_price("total_tps_per_gpu", "vr200-nvl72", None, 2, 3) == []


def test_committed_model_error_table_covers_the_quantities():
    t = catalog.builtin_root() / "data" / "model-error" / "crossval-spread.csv"
    df = pd.read_csv(t)
    assert {"rate", "ttft", "rate-ratio", "rate-delta"} <= set(df["quantity"])
    assert (df["ln_q10"] <= df["ln_q50"]).all() and (df["ln_q50"] <= df["ln_q90"]).all()


def test_ttft_wait_needed_is_the_claim_less_the_service_part():
    from perfmodel.claims.needs import ttft_wait
    row = pd.Series({"ttft_ms": 300.0, "prefill_queue_ms": 50.0, "capacity_wait_ms": 0.0, "prefill_utilization": 0.3})
    n = ttft_wait(row, 1.0, "gb300-nvl72")
    assert n["service_s"] == pytest.approx(0.25) and n["needed_wait_s"] == pytest.approx(0.75)
    assert "0.75 s" in n["text"] and "0.30" in n["text"]
    assert "no wait at all" in ttft_wait(row, 0.2, "gb300-nvl72")["text"]
