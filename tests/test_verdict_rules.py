"""The seven rules of issue 32, one synthetic claim (or synthetic reading) per rule; no model evaluation except
where a rule needs one (fast: pure functions and synthetic envelopes)."""

import importlib
import math

import pandas as pd
import pytest
from test_claims_verdicts import _Store as SyntheticEnvelopes  # the same synthetic envelopes

from perfmodel.claims.curves import Side
from perfmodel.claims.interval import distance, interval
from perfmodel.claims.reading import Figure, Term
from perfmodel.claims.shared import solve
from perfmodel.claims.verdict import grade
from perfmodel.specs.claim import ClaimSpec, OperatingPoint

chk = importlib.import_module("perfmodel.claims.check")     # the module (the package exports the function)
sides = importlib.import_module("perfmodel.claims.sides")
outcome = importlib.import_module("perfmodel.claims.outcome")


def _claim(**kw):
    d = {"id": "synthetic", "title": "t", "source": "a synthetic note, as reported in seeds/synthetic.txt", "kind": "ratio", "quote": "q",
         "systems": [{"hardware": "vr200-nvl72", "profile": "vllm"}, {"hardware": "gb300-nvl72", "profile": "vllm"}],
         "model": "deepseek-v4.1-flash", "workload": "agentx", "metric": {"quantity": "throughput", "tokens": "total", "per": "gpu"},
         "at": {"point": "peak"}, "claimed": 2.0, "date": "2026-11-12"}
    d.update(kw)
    return ClaimSpec.model_validate(d)


def _row(conc=8.0):
    return pd.Series({"concurrency": conc, "step_ms": 10.0, "res_hbm_bandwidth_ms": 5.0, "res_compute_ms": 5.0})


def test_rule1_one_error_term_of_the_claims_kind_applied_vertically():
    terms = [{"hardware": "vr200-nvl72", "row": _row(), "sign": 1, "metric": "total_tps_per_gpu"},
             {"hardware": "gb300-nvl72", "row": _row(), "sign": -1, "metric": "total_tps_per_gpu"}]
    narrow = interval(2.0, (2.0, 2.0), terms, workload="agentic")
    wide = interval(2.0, (0.2, 20.0), terms, workload="agentic")      # profile corners 10x either way
    assert (narrow["low"], narrow["high"]) == (wide["low"], wide["high"])   # corners leave the interval
    assert wide["profile"]["up"] > 2                                     # ... but are reported (headroom)
    (me,) = wide["model_error"]
    assert me["quantity"] == "rate-ratio" and me["workload"] == "agentic"   # the pair error, agentic records
    fixed = interval(2.0, (2.0, 2.0), terms, workload="all")["model_error"][0]
    assert fixed["workload"] == "all" and fixed["rows"] != me["rows"]


def test_rule2_a_stated_setting_is_the_one_read():
    c = _claim(deployment_hints=[{"system": "vr200-nvl72", "spec_tokens": 0, "serving": "disaggregated"}])
    assert sides._spec_tokens(c, "vr200-nvl72", (0, 1, 3, 7)) == (0,)
    assert sides._serving(c, "vr200-nvl72") == ("disaggregated",)
    assert sides._spec_tokens(c, "gb300-nvl72", (0, 1, 3, 7)) is None          # unstated: searched
    r = _claim(deployment_hints=[{"spec_tokens_range": [3, 7]}])
    assert sides._spec_tokens(r, "gb300-nvl72", (0, 1, 3, 7)) == (3, 7)
    assumed = _claim(deployment_hints=[{"spec_tokens": 7}], unstated=["deployment_hints[0].spec_tokens"])
    assert sides._spec_tokens(assumed, "vr200-nvl72", (0, 1, 3, 7)) is None   # the catalog's guess is not read


def test_rule3_graded_on_the_claims_side_no_width_rule():
    iv = {"value": 2.0, "low": 1.8, "high": math.inf, "down": math.log(2 / 1.8), "up": math.inf}
    d = distance(1.9, iv)                       # below, inside; the unbounded side is away from the claim
    g = grade(iv, d, {}, {"nominal": []})
    assert g["verdict"] == "consistent" and "spans" in g["flag"]
    iv2 = {"value": 2.0, "low": 0.2, "high": 20.0, "down": math.log(10), "up": math.log(10)}
    g2 = grade(iv2, distance(5.0, iv2), {}, {"nominal": []})
    assert g2["verdict"] == "consistent"        # a 100x-wide interval is a flag, not 'not decidable'
    assert grade(iv2, distance(30.0, iv2), {}, {"nominal": []}) is None     # outside: conditions are solved


def test_rule4_shared_unknown_solved_once_per_source():
    res = [{"id": "a", "source": "as reported in seeds/x.txt", "conditions": [
               {"kind": "all-in power", "key": "A/B power", "range_needed": [1.6, 3.0], "allowed": True,
                "catalog": 1.27, "evidence": "unknown but checkable"}]},
           {"id": "b", "source": "as reported in seeds/x.txt", "conditions": [
               {"kind": "all-in power", "key": "A/B power", "range_needed": [1.3, 2.5], "allowed": True,
                "catalog": 1.27, "evidence": "unknown but checkable"}]},
           {"id": "c", "source": "as reported in seeds/x.txt", "conditions": [
               {"kind": "all-in power", "key": "A/B power", "range_needed": [0.4, 0.7], "allowed": False,
                "catalog": 1.27, "evidence": "unknown but checkable"}]}]
    (g,) = solve(res)["x"]
    assert g["solved"] == [1.6, 2.5] and [c[0] for c in g["not_alone"]] == ["c"]


_Store = SyntheticEnvelopes   # A: f = 1e6 / x on [10, 400]; B: f = 5e5 / x^2 on [10, 200], a cliff at its end


class _C:
    def __init__(self, claim):
        self.claim, self.model = claim, "m"


def test_rule7_up_to_on_a_cliff_names_the_speed_where_the_model_reaches_it():
    A, B = Side("vr200-nvl72", "vllm"), Side("gb300-nvl72", "vllm")
    p = OperatingPoint.model_validate({"point": "fastest_common"})
    fig = Figure(_Store(), "m", "w", "total_tps_per_gpu", "itl", [Term(A, 1, p), Term(B, -1, p)], "up_to")
    nom = fig.read()
    assert math.isclose(nom["q"], 400, rel_tol=1e-6)          # 2x at 200 tok/s/user: ratio 2x
    ev = {"nom": nom, "q": nom["q"], "c": 100.0, "iv": {"up": 0.2, "down": 0.2},
          "ends": {"vr200-nvl72": {"end": 400.0}, "gb300-nvl72": {"end": 200.0}}}
    cl = outcome.up_to_cliff(_C(_claim(qualifier="up_to", claimed=100.0)), fig, ev)
    assert cl["kind"] == "tested_speed" and math.isclose(cl["speed"], 50, rel_tol=0.05)   # 2x = 100 at x = 50
    assert "gb300-nvl72's cliff" in cl["text"]


def test_rule6_unstated_model_whose_candidates_disagree_is_under_specified(monkeypatch):
    vals = {"m1": ("consistent", 2.0), "m2": ("implausible", 9.0)}

    def fake(store, claim, model, wl, out):
        v, q = vals[model]
        return {**out, "verdict": v, "condition": f"c{q}" if v == "consistent only if" else None, "reason": "",
                "model": {"value": q}}
    monkeypatch.setattr(chk, "_check_model", fake)
    c = _claim(model=None, unstated=["model"])
    store = type("S", (), {"weights": "nvfp4"})()
    r = chk.check(c, store=store, models=("m1", "m2"))
    assert r["verdict"] == "not checkable (under-specified)" and r["candidate_range"] == [2.0, 9.0]
    vals["m2"] = ("consistent", 2.2)
    assert chk.check(c, store=store, models=("m1", "m2"))["verdict"] == "consistent"
    vals.update(m1=("consistent only if", 2.0), m2=("consistent only if", 3.0))
    r = chk.check(c, store=store, models=("m1", "m2"))        # a condition each: both named, none picked
    assert r["verdict"] == "consistent only if" and "m1:" in r["condition"] and "m2:" in r["condition"]


def test_rule5_implausible_only_beyond_speed_of_light():
    from perfmodel.claims import CurveStore
    st = CurveStore()
    base = dict(kind="max_interactivity", systems=[{"hardware": "vr200-nvl72", "profile": "vllm"}],
                metric={"quantity": "tps_per_user"}, at={"point": "max_speed", "interactivity": "itl", "percentile": 50},
                deployment_hints=[{"gpus": 8, "spec_tokens": 3}])
    beyond = chk.check(_claim(**base, claimed=1e6), st)
    assert beyond["verdict"] == "implausible" and "speed-of-light" in beyond["reason"]
    q = beyond["model"]["value"]
    # a curve-end speed's interval is the speed error itself: a claim outside it needs steps beyond that band
    far = chk.check(_claim(**base, claimed=q * 4.0), st)
    (nd,) = [n for n in far["needs"] if n["kind"] == "curve_end"]            # the 'needs' line: the step it needs
    assert nd["needed_step_ms"] == pytest.approx(far["systems"][0]["end_deployment"]["step_ms"] / 4.0, rel=1e-6)
    # beyond the band and the fitted fast corner, with no record of the system: implausible on the evidence
    (st_,) = [c for c in far["conditions"] if c["kind"] == "steps"]
    assert st_["factor"] < st_["band"][0] and st_["factor"] < st_["fast_corner"]       # the premise, read back
    assert far["verdict"] == "implausible" and st_["tag"] == "implausible on the evidence"


def test_rule6_an_unstated_axis_is_read_on_each_candidate_axis():
    base = dict(kind="max_interactivity", systems=[{"hardware": "vr200-nvl72", "profile": "vllm"}],
                metric={"quantity": "tps_per_user"}, claimed=500.0)
    none = _claim(**base, at={"point": "max_speed"}, unstated=["at.interactivity", "at.percentile"])
    assert chk._axis_unstated(none)
    given = _claim(**base, at={"point": "max_speed", "interactivity": "itl"}, unstated=["at.percentile"])
    assert not chk._axis_unstated(given)
    assert not chk._axis_unstated(_claim(at={"point": "peak"}, unstated=["at.interactivity"]))
