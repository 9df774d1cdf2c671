"""Issue 56 items 2, 3 and 5 (precedent): the planner's rows near a curve end, 'up to' claims without a tested
range kept apart from the story, the nearest precedent of an earlier model version. Hand-worked on synthetic
envelopes: A f = 1e6 / x on [10, 400], B f = 5e5 / x^2 on [10, 400]."""

import importlib
import math

import numpy as np
import pytest

from perfmodel.claims.evidence import earlier_versions, precedent

rb = importlib.import_module("tests.test_verdicts_readback")
A, B, Synth = rb.A, rb.B, rb.Synth


def _env(f, hi=400.0):
    x = np.geomspace(10, hi, 41)
    return Synth._env(x, f(x))


def test_a_planner_row_near_a_curve_end_prints_the_multiple_at_the_record_backed_end():
    """Row at 150 tok/s/user: A/B = (1e6/150) / (5e5/150^2) = 300x. B (gb300-nvl72 on deepseek-v4-pro) has a record,
    n54, at 224 tok/s/user below its modeled end 400: k_rec = 400/224 = 1.786, and B moved along the diagonal reads
    f_B(150 k)/k, so the multiple is 300 k^3 = 1,709x; 150 >= 224 / 1.6 puts the row inside the curve-end error of
    that end. A verdict of the section needing B 1.5x slower gives 300 x 1.5^3 = 1,013x."""
    from perfmodel.claims.evidence import fastest
    from perfmodel.report.planner import near_end
    rec = fastest(B, "deepseek-v4-pro")
    assert rec is not None and rec[0] == "n54" and rec[1] == pytest.approx(224, abs=1)
    ea, eb = _env(lambda x: 1e6 / x), _env(lambda x: 5e5 / x ** 2)
    x, fa = 150.0, 1e6 / 150
    m = fa / (5e5 / x ** 2)
    assert m == pytest.approx(300.0)
    rs = [{"model_id": "deepseek-v4-pro", "conditions": [
        {"kind": "steps", "system": B, "key": f"{B} steps on deepseek-v4-pro (at speed)", "allowed": True,
         "factor": 1.5},
        {"kind": "steps", "system": B, "key": f"{B} steps on deepseek-v4-pro (at speed)", "allowed": False,
         "factor": 3.0}]}]
    he = {"q90": math.log(1.6)}
    note, lo, hi = near_end(rs, "deepseek-v4-pro", x, "itl", m, fa, (A, ea, 400.0), (B, eb, 400.0), he)
    k = 400.0 / rec[1]
    assert "near a curve end" in note and "record-backed end (n54" in note
    assert fmt_x(300 * k ** 3) in note and "1.5x slower: 1,01" in note       # 1,012.5x
    assert lo == pytest.approx(300.0) and hi == pytest.approx(300 * k ** 3, rel=2e-2)
    # far from any end (row at 50: 224 / 1.6 = 140 > 50 and 400 / 1.5 / 1.6 = 167 > 50): no note
    note2, lo2, hi2 = near_end(rs, "deepseek-v4-pro", 50.0, "itl", 40.0, 2e4, (A, ea, 400.0), (B, eb, 400.0), he)
    assert note2 == "" and lo2 == hi2 == 40.0


def fmt_x(v):
    from perfmodel.claims.fmt import fmt
    return f"{fmt(v)}x"


def test_up_to_claims_without_a_tested_range_are_reported_apart_not_read_back():
    from perfmodel.claims.story import KS, solve
    n = len(KS)

    def g(c, fn, untested=False):
        return {"systems": [A, B], "slots": {A: f"{A}:speed", B: f"{B}:speed"}, "model": "m",
                "q": [[fn(ka, kb) for kb in KS] for ka in KS], "qmin": [[0.5 * fn(ka, kb) for kb in KS] for ka in KS],
                "c": c, "c_range": [c, c], "qualifier": "up_to" if untested else "about", "per_mw": False,
                "r0": None, "untested_up_to": untested,
                "bands": {f"{A}:speed": [0.5, 2.0], f"{B}:speed": [0.5, 2.0]},
                "bounds": {f"{A}:speed": [0.0, 99.0], f"{B}:speed": [0.0, 99.0]}}
    src = "as reported in seeds/s.txt"
    res = [{"id": "x", "source": src, "verdict": "consistent", "story_grid": g(2.0, lambda a, b: 2 * b / a)},
           {"id": "u", "source": src, "verdict": "consistent only if",
            "story_grid": g(3.0, lambda a, b: 4 * b / a, untested=True)}]
    st = solve(res)["s"]
    assert st["up_to_apart"] == ["u"] and "u" not in st["explained"] and "u" not in st["left"]
    assert "`u` 2-4 as modeled (claimed up to 3)" in st["text"] and "not read back" in st["text"]
    assert st["explained"] == ["x"]
    assert n == 41


def test_the_nearest_precedent_is_an_earlier_version_of_the_same_model():
    assert earlier_versions("deepseek-v4.1-flash") == ["deepseek-v4-flash"]
    k = earlier_versions("kimi-k3")          # nearest first: kimi-k2.5 before kimi-k2 (and any k2.x between)
    assert "kimi-k3" not in k and k.index("kimi-k2.5") < k.index("kimi-k2") == len(k) - 1
    assert earlier_versions("deepseek-v4-flash") == [] and earlier_versions("llama-3.3-70b")[0] == "llama-3.1-70b"
    recs = (("p1", "b200", "deepseek-v4-flash", 300.0, 1.0, "sglang", "fixed"),
            ("p2", "gb300-nvl72", "deepseek-v4-flash", 250.0, 1.0, "trtllm", "fixed"),
            ("p3", "b200", "deepseek-v4.1-flash", 900.0, 1.0, "vllm", "agentic"))
    p = precedent("gb300-nvl72", "deepseek-v4.1-flash", recs)
    assert p["record"] == "p2" and p["model"] == "deepseek-v4-flash"        # the same hardware first
    assert precedent("vr200-nvl72", "deepseek-v4.1-flash", recs)["record"] == "p1"   # else the fastest on any


def test_a_consistent_multiple_that_turns_on_the_baselines_engine_names_it():
    """B read on vllm gives A/B = 2x = 100 at 50 tok/s/user; a synthetic store whose B runs 3x faster on trtllm
    reads 33.3x there: a claimed 100x holds only against B's vllm, and the verdict names it."""
    chk = importlib.import_module("perfmodel.claims.check")

    class EngineSynth(Synth):
        def envelope(self, side, model, wl, axis="itl", metric="total_tps_per_gpu"):
            e = super().envelope(side, model, wl, axis, metric)
            if side.hardware == B and side.profile == "trtllm":
                e = e.assign(total_tps_per_gpu=e["total_tps_per_gpu"] * 3.0)
            return e
    r = chk.check(rb._claim(claimed=100.0), EngineSynth())
    assert r["verdict"] == "consistent" and "it turns on gb300-nvl72's engine" in r["flag"]
    assert r["engine_turn"]["others"]["trtllm"] == pytest.approx(100 / 3, rel=1e-6)
    assert "sglang" not in r["engine_turn"]["others"]
    assert "engine_turn" not in chk.check(rb._claim(claimed=100.0), Synth())
