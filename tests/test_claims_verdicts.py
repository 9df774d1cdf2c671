"""The verdict rules of issue 24 on synthetic claims: readings on synthetic envelopes with known answers (no model
evaluation), the verdict categories, counted condition searches, spec rounding, cross-claim arithmetic and
one-point-per-line text."""

import math

import numpy as np
import pandas as pd
import pytest

from perfmodel import catalog
from perfmodel.analyses.model_error import spread_table
from perfmodel.claims.arith import round_half_up, spec_ratio_check
from perfmodel.claims.curves import Side
from perfmodel.claims.describe import format_check
from perfmodel.claims.interval import interval, spread_part, width
from perfmodel.claims.pairs import cross_checks, pair_check
from perfmodel.claims.reading import Figure, Term
from perfmodel.claims.verdict import CATEGORIES, SPEC_INCONSISTENT, grade, holds
from perfmodel.specs.claim import ClaimSpec, OperatingPoint


# ------------------------------------------------------------------ synthetic envelopes with known answers
class _Store:
    """Envelopes by hardware id: A: f = 1e6 / x on [10, 400]; B: f = 5e5 / x^2 on [10, 200] (log-log linear, so
    the reader's interpolation is exact). Ratio A/B = 2x; TTFT 100 ms everywhere."""

    def __init__(self):
        xa, xb = np.geomspace(10, 400, 31), np.geomspace(10, 200, 23)
        self.e = {"vr200-nvl72": self._env(xa, 1e6 / xa), "gb300-nvl72": self._env(xb, 5e5 / xb ** 2)}

    @staticmethod
    def _env(x, y):
        return pd.DataFrame({"tps_per_user": x, "total_tps_per_gpu": y, "ttft_ms": 100.0, "concurrency": 1e4 / x})

    def envelope(self, side, model, wl, axis, metric):
        return self.e[side.hardware]


A, B = Side("vr200-nvl72", "vllm"), Side("gb300-nvl72", "vllm")


def _fig(point, qualifier="about", tested=None):
    p = OperatingPoint.model_validate(point)
    return Figure(_Store(), "m", "w", "total_tps_per_gpu", "itl", [Term(A, 1, p), Term(B, -1, p)], qualifier, tested)


def test_a_ratio_at_a_speed_and_the_speed_error_shift():
    f = _fig({"point": "speed", "tps_per_user": 100})
    assert f.read()["q"] == pytest.approx(200, rel=1e-9)            # 2 x 100
    # B's speeds 2x too high in the model: true f_B(x) = f_B,model(2x) = 5e5 / 200^2, its end at 100
    r = f.read(shifts={"gb300-nvl72": 2.0})
    assert r["q"] == pytest.approx(1e4 / 12.5) and r["ends"][1] == pytest.approx(100)
    # beyond B's (shifted) end the point is unreached: Q is unbounded, never dropped
    r = f.read(shifts={"gb300-nvl72": 2.5})
    assert math.isinf(r["q"]) and r["unreached"] == ["gb300-nvl72"]
    r = f.read(shifts={"vr200-nvl72": 5.0})
    assert r["q"] == 0.0 and r["unreached"] == ["vr200-nvl72"]


def test_up_to_is_the_max_over_the_range_and_matched_its_median():
    up = _fig("fastest_common", "up_to").read()
    assert up["q"] == pytest.approx(400) and up["x"] == pytest.approx(200)   # 2x at x = 200, the shorter end
    assert up["grid_step"] < 0.05
    m = _fig("matched").read()
    # the median of 2x over a log-uniform grid on [10, 200]: 2 sqrt(10 * 200)
    assert m["q"] == pytest.approx(2 * math.sqrt(2000), rel=0.03)
    assert m["qmin"] == pytest.approx(20) and m["qmax"] == pytest.approx(400)
    # the source's tested range bounds the maximum; a tested speed beyond B's end is not one both were measured
    # at (issue 32 rule 2): the maximum is over the tested speeds both reach
    t = _fig("fastest_common", "up_to", tested=(10, 100)).read()
    assert t["q"] == pytest.approx(200) and not t["unreached"]
    t3 = _fig("fastest_common", "up_to", tested=(10, 300)).read()
    assert not t3["unreached"] and t3["q"] == pytest.approx(400) and t3["range"][1] == pytest.approx(200)


def test_a_peak_is_read_at_a_usable_point():
    p = OperatingPoint.model_validate({"point": "peak", "min_tps_per_user": 20})
    f = Figure(_Store(), "m", "w", "total_tps_per_gpu", "itl", [Term(A, 1, p)])
    x = _Store().e["vr200-nvl72"]["tps_per_user"]
    assert f.read()["q"] == pytest.approx(1e6 / x[x >= 20].min())
    assert Figure(_Store(), "m", "w", "total_tps_per_gpu", "itl", [Term(A, 1, OperatingPoint(point="peak"))]
                  ).read()["q"] == pytest.approx(1e5)
    with pytest.raises(ValueError, match="min_tps_per_user is only for point 'peak'"):
        OperatingPoint.model_validate({"point": "speed", "tps_per_user": 5, "min_tps_per_user": 2})


# ------------------------------------------------------------------ the verdict rules
def _iv(q, *parts):
    return interval(q, (q, q), [], [spread_part(q, v, label=name) for name, v in parts])


def test_categories_and_no_width_rule():
    """Issue 32 rule 3: inside the interval on the claim's side is consistent, however wide (width is a flag);
    outside, the caller solves the named conditions."""
    ends = {"gb300-nvl72": {"end": 402, "low": 300, "high": 470}}
    narrow = _iv(2.0, ("a", [1.6, 2.5]))
    from perfmodel.claims.interval import distance
    assert grade(narrow, distance(2.05, narrow), ends, {})["verdict"] == "consistent"
    g = grade(narrow, distance(2.4, narrow), ends, {})
    assert g["verdict"] == "consistent" and g["flag"] is None
    assert grade(narrow, distance(5.0, narrow), ends, {}) is None          # outside: conditions, else implausible
    wide = _iv(2.0, ("profile of A", [0.5, 4.0]), ("spec of B", [1.5, 2.6]), ("small", [1.95, 2.05]))
    assert width(wide) > 3
    g = grade(wide, distance(2.1, wide), ends, {})
    assert g["verdict"] == "consistent" and "spans" in g["flag"]
    assert set(CATEGORIES) == {"consistent", "consistent only if", "implausible", "not decidable by this model",
                               "not checkable", "not checkable (under-specified)"}


def test_an_unreached_point_or_an_unbounded_claim_side_goes_to_the_conditions():
    from perfmodel.claims.interval import distance
    ends = {"gb300-nvl72": {"end": 402, "low": 300, "high": 470}}
    iv = _iv(3.0, ("speed error on gb300", [2.5, math.inf]))
    assert math.isinf(iv["high"]) and iv["low"] > 0
    assert grade(iv, distance(58, iv), ends, {"up": ["gb300-nvl72"]}) is None
    assert grade(iv, distance(0.5, iv), ends, {"up": ["gb300-nvl72"]}) is None
    assert grade(iv, distance(2.8, iv), ends, {"up": ["gb300-nvl72"]})["verdict"] == "consistent"
    assert grade(iv, distance(2.8, iv), ends, {"nominal": ["gb300-nvl72"]}) is None


def test_a_condition_must_bring_the_claim_inside():
    from perfmodel.claims.interval import distance
    iv = _iv(2.0, ("a", [1.6, 2.5]))
    assert holds(iv, distance(2.3, iv)) and not holds(iv, distance(4.0, iv))
    unb = _iv(2.0, ("a", [1.6, math.inf]))
    assert not holds(unb, distance(2.3, unb))


# ------------------------------------------------------------------ spec rounding
def test_a_spec_ratio_is_a_rounding_only_if_rounding_gives_the_claim():
    assert round_half_up(2.25, 1) == 2.3 and round_half_up(2.333, 1) == 2.3 and round_half_up(2.5, 1) == 2.5
    hbm = spec_ratio_check(catalog.claim("spec-hbm-bandwidth-2.4x"))
    # 2.5 (20/8) does not round to 2.4; AISimulate's inferred 19.16 TB/s peak (19.16/8 = 2.395) does, an estimate
    assert hbm["verdict"] == "consistent only if" and hbm["nearest"]["ratio"] == pytest.approx(19.16 / 8)
    c2 = catalog.claim("spec-nvlink-1.7x")
    assert spec_ratio_check(c2)["verdict"] == SPEC_INCONSISTENT and "= 2x" in spec_ratio_check(c2)["condition"]
    assert spec_ratio_check(catalog.claim("spec-nvfp4-2.3x"))["verdict"] == "consistent"  # 35/15 = 2.33 -> 2.3
    c = catalog.claim("spec-hbm-bandwidth-2.4x")
    assert spec_ratio_check(c.model_copy(update={"claimed": 2.5}))["verdict"] == "consistent"
    r = spec_ratio_check(c.model_copy(update={"claimed": 2.7}))       # 2.75 rounds half up to 2.8
    assert r["verdict"] == SPEC_INCONSISTENT and r["nearest"]["ratio"] == pytest.approx(2.75)
    assert spec_ratio_check(c.model_copy(update={"claimed": 2.75}))["verdict"] == "consistent"


# ------------------------------------------------------------------ cross-claim arithmetic
def _ratio_claim(cid, per, claimed, rng=None):
    d = {"id": cid, "title": "t", "source": "seeds/x.txt", "quote": "q", "kind": "ratio", "date": "2026-01-01",
         "systems": ["vr200-nvl72", "gb300-nvl72"], "model": "deepseek-v4-pro", "workload": "aa-agentperf",
         "metric": {"quantity": "throughput", "tokens": "total", "per": per},
         "at": {"point": "fastest_common", "interactivity": "itl", "percentile": 50}, "claimed": claimed}
    if rng:
        d["claimed_range"] = rng
    return ClaimSpec.model_validate(d)


def test_per_gpu_over_per_mw_is_the_power_ratio():
    cat = 2500 / 1972
    ok = pair_check(_ratio_claim("g", "gpu", 6.0), _ratio_claim("m", "mw", 6.0 / cat))
    assert ok["implied"][0] == pytest.approx(cat) and ok["verdict"] == "consistent"
    mid = pair_check(_ratio_claim("g", "gpu", 18, (12, 18)), _ratio_claim("m", "mw", 5.7))
    assert mid["implied"] == pytest.approx([12 / 5.7, 18 / 5.7])
    # one power basis (issue 56 item 4): 3194 / 937 divides a provisioned all-in figure by a measured draw, no
    # ratio of powers; the same-basis range is the GPU TDP ratio (1,800-2,300 W over 1,400 W) and the provisioned
    # all-in ratio 2500 / 1972: 1.27-1.64x, and 12-18x over 5.7x (2.11-3.16x) lies outside it
    from perfmodel.claims.conditions import power_ratio_range
    pr = power_ratio_range("vr200-nvl72", "gb300-nvl72")
    assert mid["catalog_range"] == pytest.approx([pr["low"], pr["high"]])
    assert pr["low"] == pytest.approx(2500 / 1972) and pr["high"] < 12 / 5.7 / 1.05
    assert mid["verdict"] == "inconsistent with the published specs" and "same-basis range" in mid["condition"]
    assert "937" not in mid["condition"]
    inside = pair_check(_ratio_claim("g", "gpu", 8.0), _ratio_claim("m", "mw", 5.0))     # implied 1.6x: inside
    assert inside["verdict"] == "consistent only if" and "inside the same-basis range" in inside["condition"]
    far = pair_check(_ratio_claim("g", "gpu", 40), _ratio_claim("m", "mw", 5.0))   # implied 8x: no catalog power
    assert far["verdict"] == "inconsistent with the published specs" and "8.00x, lies outside" in far["condition"]
    pairs = cross_checks([_ratio_claim("g", "gpu", 12), _ratio_claim("m", "mw", 5.7),
                          _ratio_claim("d", "gpu", 3).model_copy(update={"model": "glm-5.2"})])
    assert [p["claims"] for p in pairs] == [["g", "m"]]      # same systems, model, workload and point only


# ------------------------------------------------------------------ the speed error table
def test_speed_rows_and_the_curve_end_region():
    cv = pd.DataFrame({"id": ["a", "b", "c"], "config": ["x", "y", "z"], "hardware": "h",
                       "metric": ["tpot_ms", "tps_per_user", "total_tps_per_gpu"],
                       "measured": [10.0, 100.0, 100.0], "predicted": [20.0, 100.0, 50.0], "status": "ok"})
    t = spread_table(cv, {"a": 1, "b": 2, "c": 1}).set_index(["quantity", "region"])
    # TPOT twice too long is a speed half as fast (e = -ln 2); the throughput row is not a speed
    assert t.loc[("speed", "curve-end"), "rows"] == 2
    assert t.loc[("speed", "curve-end"), "ln_q10"] == pytest.approx(-math.log(2) * 0.9)
    assert t.loc[("rate", "all"), "rows"] == 3


# ------------------------------------------------------------------ one operating point per line
def test_check_text_never_puts_one_points_speed_next_to_another_points_figure():
    r = {"id": "x", "title": "t", "verdict": "consistent", "condition": None, "reason": "r", "metric": "m",
         "systems": [{"name": "gb300", "max_tps_per_user": 513.0, "end_low": 156.0, "end_high": 1461.0,
                      "end_figure": 20558.0, "value": 60486.0, "point_tps_per_user": 452.0, "beyond_end": False}]}
    lines = format_check(r).splitlines()
    end = next(li for li in lines if "curve ends at 513" in li)
    pt = next(li for li in lines if "at the claim's point" in li)
    assert "20,558" in end and "60,486" not in end
    assert "452 tok/s/user" in pt and "60,486" in pt and "20,558" not in pt
