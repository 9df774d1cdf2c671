"""Issue 42: verdicts a planner reads correctly. One synthetic claim per rule on synthetic envelopes with known
answers (A: f = 1e6 / x on [10, 400]; B: f = 5e5 / x^2 on [10, 200]; the ratio A/B = 2x, so a ratio at x reads
2x, and B's steps k times the modeled ones read 2x k^3, A's 2x / k^2), and the read-back of every printed
'[within error]' condition through the model. The error table is read at run time (its numbers move with a
refit): each synthetic claim is placed relative to the band it reads."""

import importlib
import math

import numpy as np
import pandas as pd
import pytest

from perfmodel import catalog
from perfmodel.claims.arith import spec_ratio_check
from perfmodel.claims.evidence import on_steps
from perfmodel.claims.findings import evaluate
from perfmodel.claims.values import StepFactor, magnitude
from perfmodel.specs.claim import ClaimSpec, OperatingPoint

chk = importlib.import_module("perfmodel.claims.check")
cond = importlib.import_module("perfmodel.claims.conditions")

A, B = "vr200-nvl72", "gb300-nvl72"


class Synth:
    """Synthetic envelopes by hardware: the profile's fast corner ('opt') has every speed and figure ``fast`` x
    the modeled one, the speed-of-light profile 10x."""

    weights = "nvfp4"
    space = {"spec_tokens": (0,)}
    evaluations = 0

    def __init__(self, fast=1.2, b=None):
        xa, xb = np.geomspace(10, 400, 31), np.geomspace(10, 200, 23)
        self.base = {A: (xa, 1e6 / xa), B: b if b is not None else (xb, 5e5 / xb ** 2)}
        self.fast = fast

    @staticmethod
    def _env(x, y):
        d = pd.DataFrame({"tps_per_user": x, "total_tps_per_gpu": y, "ttft_ms": 100.0, "concurrency": 1e4 / x,
                          "step_ms": 1e3 / x, "sessions_per_gpu": 1e3 / x, "gpus": 8.0, "ttft_mean_ms": 100.0})
        for ax in ("tps_per_user_e2e", "tps_per_user_e2e_p50", "tps_per_user_e2e_p90"):
            d[ax] = x
        return d

    def envelope(self, side, model, wl, axis="itl", metric="total_tps_per_gpu"):
        x, y = self.base[side.hardware]
        s = 10.0 if side.profile == "speed-of-light" else self.fast if side.corner == "opt" else 1.0
        return self._env(x * s, y * s)

    def _envelope_points(self, side, model, wl):
        return self.envelope(side, model, wl)

    points = _envelope_points


def _claim(**kw):
    d = {"id": "synthetic", "title": "t", "source": "a synthetic note, as reported in seeds/synthetic.txt",
         "kind": "ratio", "quote": "q", "date": "2026-11-12",
         "systems": [{"hardware": A, "profile": "vllm"}, {"hardware": B, "profile": "vllm"}],
         "model": "deepseek-v4.1-flash", "workload": "agentx",
         "metric": {"quantity": "throughput", "tokens": "total", "per": "gpu"},
         "at": {"point": "speed", "tps_per_user": 50, "interactivity": "itl", "percentile": 50}, "claimed": 2.0}
    d.update(kw)
    return ClaimSpec.model_validate(d)


def _band(x=50.0):
    """The speed band the synthetic point at x reads (its concurrency 1e4 / x sets the region)."""
    from perfmodel.analyses.model_error import CURVE_END_CONCURRENCY, half_widths, region_of
    conc = 1e4 / x
    h = half_widths("speed", "curve-end" if conc <= CURVE_END_CONCURRENCY else region_of(conc), "agentic")
    return math.exp(h["q10"]), math.exp(h["q90"])


def _cond(r, hw, kind="steps"):
    return next(c for c in r["conditions"] if c["kind"] == kind and c["system"] == hw)


# ------------------------------------------------------------------ rule: the error spent once, at the claim
def _absolute_b(claimed: float) -> ClaimSpec:
    """An absolute claim on B's total tok/s/GPU at 50 tok/s/user: the model reads 5e5 / 50^2 = 200, and B's steps
    k times the modeled ones read 200 / k^3 (every point of B moved to (x / k, y / k))."""
    return _claim(kind="absolute", systems=[{"hardware": B, "profile": "vllm"}], claimed=claimed)


def test_within_error_is_tested_at_the_claimed_value_against_the_points_own_band():
    lo, hi = _band()
    assert 200 / (hi * 1.08) > 50, "the synthetic B must still reach 50 tok/s/user at the factors tried (end 200 / k)"
    inside = hi ** 0.9                          # B's steps this much slower: 200 / k^3 at x = 50
    r = chk.check(_absolute_b(200 / inside ** 3), Synth())
    b = _cond(r, B)
    assert b["factor"] == pytest.approx(inside, rel=2e-3) and b["tag"] == "within error"
    assert r["verdict"] == "consistent only if" and "[within error]" in r["condition"]
    # just beyond the band: the old rule (the claim first moved to the interval's edge) called it within error
    beyond = hi * 1.08
    r2 = chk.check(_absolute_b(200 / beyond ** 3), Synth())
    b2 = _cond(r2, B)
    assert b2["factor"] == pytest.approx(beyond, rel=2e-3) and b2["edge"] < hi    # the edge would have passed
    assert b2["tag"] != "within error" and not b2["within_model_error"]


def test_a_ratio_condition_spends_the_ratios_error_not_one_systems():
    """Issue 56 item 1, by hand: A/B at 50 tok/s/user is 1e6/50 over 5e5/50^2 = 20,000 / 200 = 100 (2 x, x = 50).
    B's steps k = hi^0.9 lie inside B's own speed band, and give the ratio
    100 k^3: a claim k^3 times the model's ratio (8x and more for a ~2x band), far beyond the ratio's held-out
    error (about x1.4). Not within error: B slower with no record of B on the model is implausible on the
    evidence, and the verdict prints the ratio's band, not B's."""
    lo, hi = _band()
    inside = hi ** 0.9
    r = chk.check(_claim(claimed=100 * inside ** 3), Synth())
    assert r["model"]["value"] == pytest.approx(100, rel=1e-6)
    b = _cond(r, B)
    assert b["factor"] == pytest.approx(inside, rel=2e-3) and lo <= b["factor"] <= hi       # inside its own band
    rs = b["ratio_shift"]
    assert rs["multiple"] == pytest.approx(inside ** 3, rel=1e-6) and not rs["inside"]
    assert rs["band"][1] == pytest.approx(math.exp(r["interval"]["up"]), rel=1e-6)
    assert b["tag"] == "implausible on the evidence" and not b["allowed"]
    assert f"{inside ** 3:.3g}x the model's" in b["text"] and "ratio's held-out error" in b["text"]
    assert r["verdict"] == "implausible" and "[within error]" not in r["reason"]
    assert "the ratio's held-out error allows" in r["condition"]
    # a claim whose ratio lies inside the ratio's band is consistent (no condition is needed at all)
    k_in = math.exp(0.9 * r["interval"]["up"])
    assert chk.check(_claim(claimed=100 * k_in), Synth())["verdict"] == "consistent"


def test_a_faster_step_beyond_the_ratios_error_rests_on_the_software_headroom():
    """A's steps k = 1/1.25 give A/B = 100 / k^2 = 156 (1.56x the model's ratio, beyond x1.37): inside A's band and
    inside a fast corner of 1.5x (k_opt = 1/1.5), so it is allowed as the software headroom, never 'within error';
    with a fast corner of 1.2x it is beyond the fitted ranges and implausible on the evidence."""
    lo, _ = _band()
    k = 1 / 1.25
    assert lo <= k
    r = chk.check(_claim(claimed=100 / k ** 2), Synth(fast=1.5))
    a = _cond(r, A)
    assert a["factor"] == pytest.approx(k, rel=2e-3) and a["fast_corner"] == pytest.approx(1 / 1.5, rel=1e-6)
    assert a["allowed"] and a["tag"] == "software headroom"
    assert r["verdict"] == "consistent only if" and "[software headroom]" in r["condition"]
    r2 = chk.check(_claim(claimed=100 / k ** 2), Synth(fast=1.2))
    a2 = _cond(r2, A)
    assert not a2["allowed"] and a2["tag"] == "implausible on the evidence"


def test_never_within_error_beside_beyond_the_fitted_ranges():
    lo, _ = _band()
    k = max(lo, 1 / 2.0) ** 0.5 / 1.0           # A's steps faster than the fast corner (1.2x) but inside the band
    k = min(k, 1 / 1.3)
    r = chk.check(_claim(claimed=100 / k ** 2), Synth())
    a = _cond(r, A)
    assert a["factor"] == pytest.approx(k, rel=2e-3) and a["beyond_fit"]
    assert a["tag"] != "within error" and "within error" not in a["short"]
    for c in r["conditions"]:
        assert not ("[within error" in c["text"] and "beyond the fitted ranges" in c["text"])


# ------------------------------------------------------------------ rule: the solver reads its solution back
def test_a_solution_on_a_jump_is_no_solution():
    # at 190 tok/s/user B's curve (end 200) ends 5% past the point: slowing B ends it there, and the figure jumps
    # from ~20x to unbounded; 1,000x lies in the jump, so no step factor of B alone gives it
    r = chk.check(_claim(at={"point": "speed", "tps_per_user": 190, "interactivity": "itl", "percentile": 50},
                         claimed=1000.0), Synth())
    b = _cond(r, B)
    assert b.get("jump") and not b["allowed"]
    assert r["verdict"] != "consistent only if" or b["short"] not in r["condition"]


def test_a_no_op_condition_on_a_jump_of_the_curve_reads_consistent():
    xb = np.array([10, 20, 50, 100, 100.5, 150, 200.0])
    yb = 5e5 / xb ** 2 * np.where(xb <= 100, 3.0, 1.0)          # B's figure falls 3x between 100 and 100.5
    s = Synth(b=(xb, yb))
    x = 100.2
    fb_low = 5e5 / 100.5 ** 2                                       # just past the jump
    r = chk.check(_claim(at={"point": "speed", "tps_per_user": x, "interactivity": "itl", "percentile": 50},
                         claimed=(1e6 / x) / fb_low), s)
    assert r["verdict"] == "consistent" and "jump" in r["flag"]
    assert not r["condition"]


# ------------------------------------------------------------------ rule: implausible on the evidence
def test_beyond_the_error_and_the_fast_corner_with_no_record_is_implausible_on_the_evidence():
    lo, _ = _band()
    k = lo / 1.2                                # A's steps faster than its band allows, and than the fast corner
    r = chk.check(_claim(claimed=100 / k ** 2), Synth())
    a = _cond(r, A)
    assert a["factor"] == pytest.approx(k, rel=2e-3)
    assert not a["allowed"] and a["tag"] == "implausible on the evidence"
    assert "no record of vr200-nvl72" in a["text"]


# ------------------------------------------------------------------ rule: two unknowns jointly, in quadrature
def test_two_step_unknowns_are_solved_jointly_in_quadrature():
    lo, hi = _band()
    if not (lo <= 0.6 and hi < 3.2):
        pytest.skip("the synthetic placement assumes a speed band at least 1.67x wide on the fast side")
    c = 100 * 1.19 ** 2 * hi ** 2.7             # A 1.19x faster and B hi^0.9 slower give it (2x k_B^3 / k_A^2)
    r = chk.check(_claim(claimed=c), Synth())
    assert _cond(r, B)["tag"] != "within error"            # B alone: beyond its band
    assert _cond(r, A)["tag"] != "within error"            # A alone: beyond the fitted fast corner
    j = _cond(r, f"{A}+{B}", "joint_steps")
    ka, kb = j["factors"][A], j["factors"][B]
    assert 100 * kb ** 3 / ka ** 2 == pytest.approx(c, rel=0.01)                 # it gives the claim, read back
    assert math.hypot(math.log(ka) / math.log(lo), math.log(kb) / math.log(hi)) == pytest.approx(j["z"], rel=1e-6)
    # the pair spends less than each system's band (z <= 1) but the ratio it implies, c / 100, is far beyond the
    # ratio's held-out error: not within error, and B slower with no record behind it is not allowed
    assert j["z"] <= 1 and j["ratio_shift"]["multiple"] == pytest.approx(c / 100, rel=1e-6)
    assert j["tag"] == "implausible on the evidence" and not j["allowed"] and not j["within_model_error"]
    assert r["verdict"] == "implausible" and "[within error]" not in (r["condition"] or "")


def test_a_pair_that_puts_a_curve_end_at_the_claimed_speed_is_not_decidable_with_its_ridge():
    """At 190 tok/s/user B's curve (end 200) ends 5% past the point: 1,000x (the model reads 1e6/190 over
    5e5/190^2 = 380x) needs, with A inside the fitted ranges, B's end moved onto the point, where the figure jumps
    from ~400x to unbounded: the least-z pair puts B's end at 190-200 (k_B = 200/190 = 1.053 at most), where a 2%
    change of k_B moves the figure through the whole interval. Not decidable on a jump, the ridge printed."""
    r = chk.check(_claim(at={"point": "speed", "tps_per_user": 190, "interactivity": "itl", "percentile": 50},
                         claimed=1000.0), Synth())
    assert r["model"]["value"] == pytest.approx(2 * 190, rel=1e-3)
    j = _cond(r, f"{A}+{B}", "joint_steps")
    assert j["jump"] and j["jump_systems"] == [B] and not j["allowed"]
    assert 190 * 0.999 <= 200 / j["factors"][B] <= 200 * 1.001
    assert len(j["ridge"]["pairs"]) >= 2
    assert r["verdict"] == "not decidable by this model" and "on a jump" in r["condition"]
    assert f"{B}'s end at " in r["condition"] and "the pairs of step factors that give the claim" in r["condition"]


def test_a_ttft_without_a_load_is_not_checkable_on_either_side():
    base = dict(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], metric={"quantity": "ttft_s"})
    for claimed in (0.1, 0.105, 10.0):          # the model's own 100 ms, just beside it, 100x
        assert chk.check(_claim(**base, claimed=claimed), Synth())["verdict"] == "not checkable"
    loaded = _claim(**base, claimed=0.1, deployment_hints=[{"system": A, "concurrency": 64}])
    assert chk.check(loaded, Synth())["verdict"] == "consistent"                # a stated load: graded


# ------------------------------------------------------------------ rule: a spec ratio rests on stated specs
def test_a_spec_ratio_is_consistent_only_with_stated_specs():
    hbm = catalog.claim("spec-hbm-bandwidth-2.4x")
    r = spec_ratio_check(hbm)
    assert r["verdict"] == "consistent only if" and "19.16/8" in r["condition"] and "estimate" in r["condition"]
    assert "2.5x, 2.75x" in r["condition"]                           # every stated spec named
    assert spec_ratio_check(hbm.model_copy(update={"claimed": 2.5}))["verdict"] == "consistent"  # shipments' 20
    assert spec_ratio_check(hbm.model_copy(update={"claimed": 2.75}))["verdict"] == "consistent"  # announced 22
    # a per-GPU value derived by arithmetic from a stated figure keeps its status and says the arithmetic
    c2c = spec_ratio_check(catalog.claim("spec-c2c-2x"))
    assert c2c["verdict"] == "consistent" and "1800 / 2 / 2 = 450" in c2c["reason"]
    assert "announced" in c2c["reason"] and "900 / 2 / 2 = 225" in c2c["reason"]


def test_a_derivation_must_give_the_catalogs_value(tmp_path):
    from perfmodel.claims.derived import derived
    from perfmodel.errors import SpecError
    f = tmp_path / "d.yaml"
    f.write_text("- {hardware: vr200-nvl72, field: host_link_bandwidth_gbps, arithmetic: '1800 / 2', steps: s,\n"
                 "   stated: {value: 1800, unit: GB/s, status: announced, source: 'https://example.com'}}\n")
    with pytest.raises(SpecError) as e:
        derived("vr200-nvl72", "host_link_bandwidth_gbps", str(f))
    assert "arithmetic" in e.value.line() and "900" in e.value.line() and str(f) in e.value.line()
    assert derived("vr200-nvl72", "hbm_bandwidth_tbps", str(f)) is None


# ------------------------------------------------------------------ rule: evidence from records, by id
def test_records_of_that_hardware_and_model_are_the_evidence_named_by_id():
    recs = (("r1", B, "m", 224.0, 1.0), ("r2", B, "m", 150.0, 16.0), ("r3", B, "other", 900.0, 1.0))
    slower = on_steps(B, "m", 1.5, 402.0, recs)      # the end moves to 268: nothing measured is faster
    assert slower["tag"] == "consistent with records" and slower["record"] == "r1"
    assert on_steps(B, "m", 2.0, 402.0, recs)["tag"] == "contradicts records"      # 201 < r1's 224
    assert on_steps(B, "m", 0.5, 200.0, recs)["tag"] == "supported by records"     # r1 above the modeled end
    assert on_steps(B, "m", 0.5, 400.0, recs)["tag"] == "vendor's word"            # no record above the end
    assert on_steps(A, "m", 0.5, 400.0, recs)["tag"] == "vendor's word" and on_steps(A, "m", 0.5, 400.0, recs)[
        "record"] is None


def test_a_sources_own_fastest_run_bounds_its_other_claims():
    c = catalog.claim("aa-1.26x-peak-per-mw-kimi-k3")
    store = type("S", (), {})()
    def judge(claim):                                        # its verdict (reports/claims.md)
        return {"aa-255-tps-kimi-k3": "consistent"}[claim.id]
    C = type("C", (), {"claim": c, "model": "kimi-k3", "store": store, "judge": staticmethod(judge)})()
    assert cond.measured_speed(C, A) == pytest.approx(catalog.claim("aa-255-tps-kimi-k3").claimed)


class _Catalog:
    """The catalog with one synthetic claim added to its claims (for the rules that read a source's others)."""

    def __init__(self, extra: ClaimSpec):
        self.extra = extra

    def ids(self, kind):
        return [*catalog.ids(kind), self.extra.id] if kind == "claims" else catalog.ids(kind)

    def claim(self, i):
        return self.extra if i == self.extra.id else catalog.claim(i)

    def __getattr__(self, name):
        return getattr(catalog, name)


def test_a_fastest_run_judged_implausible_bounds_no_other_claim(monkeypatch):
    """The source's own fastest run on A bounds how much slower A may be, unless the model judges that run
    implausible: 1,000 tok/s/user on A (modeled end 400, fast corner 480) is; 400 is not. A claim that needs A
    slower (inside its band) is then allowed, and the story's bound on A's steps is the source's stated 50."""
    _, hi = _band()
    k = hi ** 0.7                                            # A's steps this much slower: 2e4 / k^2 at 50 tok/s/user
    x = _absolute(2e4 / k ** 2)
    got = {}
    for fastest in (1000.0, 400.0):
        f = _claim(id=f"fastest-{fastest:g}", kind="absolute", systems=[{"hardware": A, "profile": "vllm"}],
                   metric={"quantity": "tps_per_user"},
                   at={"point": "max_speed", "interactivity": "itl", "percentile": 50}, claimed=fastest)
        monkeypatch.setattr(cond, "catalog", _Catalog(f))
        s = Synth()
        r = chk.check(x, s)
        C = chk.sides_of(s, x, x.model, x.workload, {"assumptions": []})
        got[fastest] = (cond.judged_implausible(C, f), _cond(r, A), r["story_grid"]["bounds"][f"{A}:speed"][1], r)
    judged, a, bound, r = got[1000.0]
    assert judged and a["allowed"] and a["tag"] == "within error" and "[within error]" in r["condition"]
    assert a["factor"] == pytest.approx(k, rel=2e-3) and bound == pytest.approx(400 / 50 * 1.01)
    judged, a, bound, r = got[400.0]
    assert not judged and not a["allowed"] and a["tag"] == "below the source's own speeds"
    assert bound == pytest.approx(1.01) and "400 tok/s/user the source states" in a["text"]


# ------------------------------------------------------------------ the read-back of every '[within error]'


def _readback(r: dict, claim: ClaimSpec, store) -> int:
    """Every '[within error]' in the printed verdict, read back through the model: the printed factors give the
    claim inside the interval, and each lies inside the band it was tagged against (one factor: its region's
    band; two: their quadrature sum <= 1). Returns the number of conditions read back."""
    n = 0
    conds = [c for c in r.get("conditions") or [] if c.get("allowed") and c.get("tag") == "within error"]
    printed = r.get("condition") or ""
    for c in conds:
        if c["short"] not in printed:
            continue
        ks = {s.hardware: s.k for s in StepFactor.parse(c["short"])}       # the printer's own parser
        assert ks, c["short"]
        C = chk.sides_of(store, claim, claim.model, claim.workload, {"assumptions": []})
        fig = C.figure()
        ev = evaluate(C, fig)
        got = fig.read(shifts=ks, diagonal=True)
        assert not got["unreached"]
        assert cond.lands(got["q"], ev["c"], ev["iv"]), (c["short"], got["q"], ev["c"])
        assert abs(math.log(got["q"] / ev["c"])) < 0.05          # at the claim itself, not at the interval's edge
        if c["kind"] == "steps":
            lo, hi = c["band"]
            assert lo <= ks[c["system"]] * (1 + 1e-2) and ks[c["system"]] <= hi * (1 + 1e-2)
        else:
            z = math.hypot(*(math.log(ks[h]) / math.log(c["bands"][h][0 if ks[h] < 1 else 1]) for h in ks))
            assert z <= 1.02
        n += 1
    return n


def test_every_printed_within_error_condition_reads_back_synthetic():
    lo, hi = _band()
    n = 0
    for kb in (hi ** 0.3, hi ** 0.7, hi ** 0.95):       # absolute claims on B: 200 / k^3 (ratio claims spend the
        for f in (1.0, 1.1):                             # ratio's error: none is within error beyond it)
            c = _absolute_b(200 / kb ** 3 / f)
            s = Synth()
            n += _readback(chk.check(c, s), c, s)
    assert n >= 3


@pytest.mark.parametrize("cid", ["vllm-58x-at-387", "aa-12-18x-per-gpu-fastest", "aa-5x-output-per-mw-at-165",
                                 "aa-gb300-minus-81pct-120-to-165"])
def test_every_printed_within_error_condition_reads_back_seed(cid, real_store):
    c = catalog.claim(cid)
    r = chk.check(c, real_store)
    n = _readback(r, c, real_store)
    assert n == r["condition"].count("[within error]") if r.get("condition") else n == 0


@pytest.fixture(scope="module")
def real_store():
    from perfmodel.claims import CurveStore
    return CurveStore(space=dict(batch_points=8, spec_tokens=(0, 3)))


# ------------------------------------------------------------------ rule: one story per seed, at most two unknowns
def test_one_story_solves_two_shared_unknowns_jointly_and_names_what_it_leaves():
    from perfmodel.claims.story import KS, TOL, solve
    n = len(KS)

    def g(c, fn, slot="speed"):       # a ratio claim whose figure is fn(k_A, k_B) on the grid
        return {"systems": [A, B], "slots": {A: f"{A}:{slot}", B: f"{B}:{slot}"}, "model": "m",
                "q": [[fn(ka, kb) for kb in KS] for ka in KS], "qmin": None, "c": c, "c_range": [c, c],
                "qualifier": "about", "per_mw": False, "r0": None,
                "bands": {f"{A}:{slot}": [0.5, 2.0], f"{B}:{slot}": [0.5, 2.0]},
                "bounds": {f"{A}:{slot}": [0.0, 99.0], f"{B}:{slot}": [0.0, 99.0]}}
    ka, kb = float(KS[n // 2 - 4]), float(KS[n // 2 + 6])       # the true story: A faster, B slower
    kp = float(KS[n // 2 + 3])                                   # ... and A slower at its peak
    src = "as reported in seeds/s.txt"
    res = [{"id": "x", "source": src, "verdict": "consistent only if", "story_grid": g(2 * kb / ka, lambda a, b: 2 * b / a)},
           {"id": "y", "source": src, "verdict": "consistent only if", "story_grid": g(3 / ka, lambda a, b: 3 / a)},
           {"id": "p", "source": src, "verdict": "consistent", "story_grid": g(4 / kp, lambda a, b: 4 / a, "peak")},
           {"id": "z", "source": src, "verdict": "consistent only if", "story_grid": g(50.0, lambda a, b: 1.0)}]
    st = solve(res)["s"]
    f = st["per_model"]["m"]["factors"]
    assert sorted(st["unknowns"]) == ["A", "B"]
    # separate factors at peak and at speed: the peak claim does not pull the at-speed factor
    # (the tolerance lets a cell a step or two off read back: the least-z one is taken)
    assert f[f"{A}:speed"] < 1 < f[f"{B}:speed"] and f[f"{A}:peak"] > 1
    assert abs(math.log(f[f"{A}:speed"] / ka)) <= TOL + 1e-9 and abs(math.log(f[f"{A}:peak"] / kp)) <= TOL + 1e-9
    assert sorted(st["explained"]) == ["p", "x", "y"] and st["left"] == ["z"] and "`z`" in st["text"]
    for i in ("x", "y", "p"):        # at the claimed value, not anywhere inside the interval
        rb = st["readback"][i]
        assert rb["ok"] and abs(math.log(rb["q"] / rb["claimed"][0])) <= TOL


def test_a_story_holds_the_power_ratio_to_its_same_basis_range():
    from perfmodel.claims.conditions import power_ratio_range
    from perfmodel.claims.story import KS, TOL, solve
    pr = power_ratio_range(A, B)
    tdp_a, tdp_b = catalog.hardware(A).specs.gpu_tdp_w, catalog.hardware(B).specs.gpu_tdp_w
    assert pr["tdp"][1] == pytest.approx((tdp_a.high or tdp_a.value) / (tdp_b.low or tdp_b.value))
    n, r0 = len(KS), 1.27
    src = "as reported in seeds/s.txt"

    def g(c):                        # per-MW figure 2 r0 ... the model's per-GPU 2x at the catalog's r0
        return {"systems": [A, B], "slots": {A: f"{A}:peak", B: f"{B}:peak"}, "model": "m",
                "q": [[2.0 / r0] * n for _ in range(n)], "qmin": None, "c": c, "c_range": [c, c],
                "qualifier": "about", "per_mw": True, "r0": r0,
                "bands": {f"{A}:peak": [0.5, 2.0], f"{B}:peak": [0.5, 2.0]},
                "bounds": {f"{A}:peak": [1.0, 1.0], f"{B}:peak": [1.0, 1.0]}}      # the steps may not move
    ok = solve([{"id": "in", "source": src, "verdict": "x", "story_grid": g(2.0 / 1.5)}])["s"]
    pm = ok["per_model"]["m"]
    assert ok["explained"] == ["in"] and abs(math.log(pm["r"] / 1.5)) <= TOL + 1e-9
    assert pm["r_range"][0] <= 1.5 <= pm["r_range"][1] and pr["low"] <= pm["r"] <= pr["high"]
    out = solve([{"id": "out", "source": src, "verdict": "x", "story_grid": g(2.0 / 2.0)}])["s"]
    assert out["left"] == ["out"]          # a power ratio of 2.0x is outside the same-basis range


STORY_IDS = ("vllm-2.7x-at-peak", "vllm-58x-at-387", "vllm-rubin-1.7m-at-387", "vllm-rubin-2.52m-at-peak",
             "aa-1.14x-peak-per-mw-deepseek-v4-pro", "aa-5.7x-per-mw-deepseek-v4-pro", "aa-5x-output-per-mw-at-165",
             "aa-rubin-minus-16pct-120-to-165", "aa-gb300-minus-81pct-120-to-165", "aa-12-18x-per-gpu-fastest")


def test_every_explained_claim_in_every_story_reads_back_at_the_claim(real_store):
    """Each story's values (its factors per slot, its power ratio) read back through the model for every claim
    it explains: the figure within the story's tolerance of the claimed value, each factor inside its band."""
    from perfmodel.claims.story import TOL, solve
    res = [chk.check(catalog.claim(i), real_store) for i in STORY_IDS]
    stories = solve(res)
    n = 0
    for st in stories.values():
        for cid in st["explained"]:
            rb, c = st["readback"][cid], catalog.claim(cid)
            g = next(r for r in res if r["id"] == cid)["story_grid"]
            C = chk.sides_of(real_store, c, c.model, c.workload, {"assumptions": []})
            got = C.figure().read(shifts=rb["shifts"], diagonal=True)
            assert not got["unreached"], cid
            q = got["q"] * (g["r0"] / rb["r"] if g["per_mw"] and rb["r"] else 1.0)
            lo, hi = c.claimed_range or ((1 + c.claimed,) * 2 if c.kind == "delta" else (c.claimed,) * 2)
            if c.qualifier == "up_to":
                qmin = got["qmin"] * q / got["q"]
                assert qmin * math.exp(-TOL) <= hi and q >= lo * math.exp(-TOL), cid
            else:
                assert lo * math.exp(-TOL) * (1 - 1e-9) <= q <= hi * math.exp(TOL) * (1 + 1e-9), (cid, q, lo, hi)
            for h, k in rb["shifts"].items():
                b = g["bands"][g["slots"][h]]
                assert b[0] * (1 - 1e-9) <= k <= b[1] * (1 + 1e-9), (cid, h, k, b)
            if rb["r"] is not None:
                assert st["power_range"][0] * (1 - 1e-9) <= rb["r"] <= st["power_range"][1] * (1 + 1e-9)
            n += 1
    assert n >= 4


def test_the_planners_table_states_its_bases_and_never_a_cliff_maximum():
    from perfmodel.report.planner import markdown
    base = {"source": "s", "model": "m", "axis": "itl", "a": f"{A}:vllm", "b": f"{B}:vllm", "a_hw": A, "b_hw": B,
            "a_end": 400.0, "b_end": 200.0, "slo_ttft_percentile": 95.0}
    df = pd.DataFrame([{**base, "point": "peak", "a_tps_per_gpu": 3000.0, "b_tps_per_gpu": 1000.0,
                        "per_gpu": 3.0, "per_gpu_low": 2.0, "per_gpu_high": 4.0, "per_mw": 2.4,
                        "per_usd": 1.8, "a_sessions_per_rack_ttft2s": 600.0, "b_sessions_per_rack_ttft2s": 100.0,
                        "a_sessions_per_rack_ttft5s": 700.0, "b_sessions_per_rack_ttft5s": 300.0,
                        "slo_tps_per_user": 20.0, "slo_limit": "TPOT P25 <= 50 ms (>= 20 tok/s/user)",
                        "slo_source": "stated: c1"},
                       {**base, "point": "190", "a_tps_per_gpu": 500.0, "b_tps_per_gpu": 50.0, "per_gpu": 10.0,
                        "per_gpu_low": 7.0, "per_gpu_high": math.inf, "per_mw": 8.0, "per_usd": 6.0,
                        "a_sessions_per_rack_ttft2s": 50.0, "b_sessions_per_rack_ttft2s": None,
                        "a_sessions_per_rack_ttft5s": 50.0, "b_sessions_per_rack_ttft5s": None,
                        "slo_tps_per_user": 190.0, "slo_limit": "TPOT P25 <= 5.26 ms (>= 190 tok/s/user)",
                        "slo_source": "named: c2"},
                       {**base, "point": "300", "a_tps_per_gpu": 500.0, "b_tps_per_gpu": math.nan,
                        "per_gpu": math.nan, "per_gpu_low": math.nan, "per_gpu_high": math.nan,
                        "per_mw": math.nan, "per_usd": math.nan, "a_sessions_per_rack_ttft2s": 50.0,
                        "b_sessions_per_rack_ttft2s": None, "a_sessions_per_rack_ttft5s": 50.0,
                        "b_sessions_per_rack_ttft5s": None, "slo_tps_per_user": 300.0,
                        "slo_limit": "TPOT P25 <= 3.33 ms (>= 300 tok/s/user)", "slo_source": "named: c3"}])
    md = "\n".join(markdown(df, "s"))
    assert "W;" in md and "per GPU-hour" in md and "TTFT <= 2 s" in md and "TTFT <= 5 s" in md   # bases, SLOs
    assert "read at that row's SLO" in md and "planner's choice" in md and "TTFT P95" in md
    assert "none for tok/s/GPU and the multiples" in md              # the TTFT limit of every column stated
    assert ("| peak | TPOT P25 <= 50 ms (>= 20 tok/s/user); stated: c1 | 3,000 / 1,000 | 3x (2-4) | 2.4x (1.6-3.2) | "
            "1.8x (1.2-2.4) | 600 / 100 | 700 / 300 |") in md
    assert "| 10x (7-unbounded) |" in md                     # a curve ending near the speed: no upper bound
    assert "beyond its end (200)" in md and "none meets it" in md and "up to" not in md.split("\n", 1)[1]


def test_a_rows_speed_limit_is_a_tpot_or_an_e2e_limit():
    from perfmodel.report.planner import slo_limit
    itl = slo_limit(120.0, "itl", "aa-agentperf")           # AA-AgentPerf: speed floor at P25, TTFT at P95
    assert itl["slo_tpot_ms"] == pytest.approx(1000 / 120) and math.isnan(itl["slo_e2e_s"])
    assert (itl["slo_speed_percentile"], itl["slo_ttft_percentile"]) == (25.0, 95.0)
    assert itl["text"] == "TPOT P25 <= 8.33 ms (>= 120 tok/s/user)"
    e2e = slo_limit(387.0, "e2e_p90", "agentx")             # osl / (P90 TTFT + osl TPOT) >= 387: E2E P90 <= osl/387
    assert e2e["slo_e2e_s"] == pytest.approx(444 / 387) and math.isnan(e2e["slo_tpot_ms"])
    assert e2e["text"].startswith("E2E P90 <= 1.15 s for a 444-token reply")


class SynthDeployments(Synth):
    """Synth with deployments off the throughput envelope: half its throughput and sessions at the same speeds,
    and a TTFT of 1 s where the envelope's (large-batch) points take 6 s."""

    def envelope(self, side, model, wl, axis="itl", metric="total_tps_per_gpu"):
        e = super().envelope(side, model, wl, axis, metric)
        e["ttft_ms"] = 6000.0
        return e

    def points(self, side, model, wl, keep=None):
        e = self.envelope(side, model, wl)
        off = e.assign(total_tps_per_gpu=e["total_tps_per_gpu"] / 2, sessions_per_gpu=e["sessions_per_gpu"] / 2,
                       ttft_ms=1000.0)
        return pd.concat([e, off], ignore_index=True)


def test_sessions_per_rack_are_read_at_each_rows_own_slo_over_every_deployment():
    """The bug this catches: sessions read over the throughput envelope's points only (large batches, long TTFT)
    gave one figure, or none, on every row. Read over every deployment, each row's floor picks its own point:
    the most sessions (500 / x per GPU at the off-envelope points, TTFT 1 s) at the slowest speed x >= the floor."""
    from perfmodel.report.planner import PEAK_FLOOR, tables
    res = [{"id": i, "kind": "ratio", "systems": [{"hardware": A, "profile": "vllm"}, {"hardware": B, "profile": "vllm"}],
            "model_id": "deepseek-v4.1-flash", "workload": "agentx", "source": "vLLM blog, as reported in seeds/v.txt",
            "axis": ax} for i, ax in (("vllm-2.7x-at-peak", "itl"), ("vllm-58x-at-387", "e2e_p90"))]
    t = tables(SynthDeployments(), res).set_index("point")
    xa, xb = np.geomspace(10, 400, 31), np.geomspace(10, 200, 23)
    rack = 72
    for pt, floor in (("peak", PEAK_FLOOR), ("387", 387.0)):
        for s, x in (("a", xa), ("b", xb)):
            ok = x[x >= floor * (1 - 1e-12)]
            want = 500 / ok.min() * rack if len(ok) else None
            for ttft in ("2s", "5s"):
                got = t.loc[pt, f"{s}_sessions_per_rack_ttft{ttft}"]
                assert (got is None or math.isnan(got)) if want is None else got == pytest.approx(want), (pt, s)
    assert t.loc["peak", "a_sessions_per_rack_ttft2s"] > 10 * t.loc["387", "a_sessions_per_rack_ttft2s"]
    assert t.loc["peak", "slo_source"].startswith("the planner's choice") and t.loc["387", "slo_e2e_s"] > 0


PLANNER_IDS = ("vllm-2.7x-at-peak", "vllm-58x-at-387", "vllm-rubin-1.7m-at-387", "vllm-rubin-2.52m-at-peak")


def test_three_numbers_of_the_planners_table_read_back_through_check(real_store):
    """The planner's rows use the software the verdicts use: its 387 tok/s/user multiple is the 58x claim's
    model figure, its Rubin throughput there the 1.7M claim's, its peak multiple the 2.7x claim's read at the row's
    stated floor (the seed states none: the planner's 20 tok/s/user)."""
    from perfmodel.report.planner import PEAK_FLOOR, tables
    res = {i: chk.check(catalog.claim(i), real_store) for i in PLANNER_IDS}
    t = tables(real_store, list(res.values()))
    t = t[t["model"] == "deepseek-v4.1-flash"].set_index("point")
    assert t.loc["387", "per_gpu"] == pytest.approx(res["vllm-58x-at-387"]["model"]["value"], rel=1e-6)
    assert t.loc["387", "a_tps_per_gpu"] == pytest.approx(res["vllm-rubin-1.7m-at-387"]["model"]["value"], rel=1e-6)
    assert t.loc["peak", "slo_tps_per_user"] == PEAK_FLOOR and "planner's choice" in t.loc["peak", "slo_source"]
    at_floor = catalog.claim("vllm-2.7x-at-peak").model_copy(update={"at": OperatingPoint(point="peak",
                                                                                         min_tps_per_user=PEAK_FLOOR)})
    assert t.loc["peak", "per_gpu"] == pytest.approx(chk.check(at_floor, real_store)["model"]["value"], rel=1e-6)


AA_PEAKS = ("aa-1.14x-peak-per-mw-deepseek-v4-pro", "aa-5x-output-per-mw-at-165")


def test_a_peak_row_is_read_at_the_floor_its_peak_claim_states(real_store):
    """The AA peak claims state a 20 tok/s/user floor: the planner's peak row is read there too (read with no floor,
    GB300's peak sits below it and the row's per-MW multiple was 1.51x against the check's 1.84x)."""
    from perfmodel.report.planner import tables
    res = {i: chk.check(catalog.claim(i), real_store) for i in AA_PEAKS}
    t = tables(real_store, list(res.values()))
    t = t[t["model"] == "deepseek-v4-pro"].set_index("point")
    assert t.loc["peak", "slo_tps_per_user"] == 20 and "aa-1.14x-peak-per-mw-deepseek-v4-pro" in t.loc["peak",
                                                                                                     "slo_source"]
    assert t.loc["peak", "per_mw"] == pytest.approx(res[AA_PEAKS[0]]["model"]["value"], rel=1e-6)
    assert t.loc["165", "slo_tpot_ms"] == pytest.approx(1000 / 165) and t.loc["165", "slo_speed_percentile"] == 25


# ------------------------------------------------------------------ issue 48: four outcomes, never a wrong label
def _absolute(claimed: float):
    """A's total tokens/s per GPU at 50 tok/s/user: 1e6 / 50 = 2e4 modeled; A's steps k read 2e4 / k^2."""
    return _claim(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], claimed=claimed)


def test_below_the_speed_of_light_is_never_beyond_physics():
    lo, _ = _band()
    k = min(lo, 1 / 1.2) / 1.5                      # beyond the band and the fast corner, 10x inside speed of light
    r = chk.check(_absolute(2e4 / k ** 2), Synth())
    assert r["verdict"] == "implausible" and r["implausible"] == "on the evidence"
    assert "beyond physics" not in r["reason"] and r["condition"].startswith("on the evidence")
    assert f"allows {magnitude(1 / lo)}x faster" in r["condition"]          # the band it is beyond, printed
    far = chk.check(_absolute(2e4 * 12.0 ** 2), Synth())             # 12x faster: past speed of light (10x)
    assert far["verdict"] == "implausible" and far["implausible"] == "beyond physics"
    assert "speed of light allows 10x faster" in far["condition"]


def test_a_slower_competitor_beyond_the_band_with_no_record_is_implausible_on_the_evidence():
    _, hi = _band()
    k = hi * 1.15                                   # B's steps beyond its band; no record of B on the model
    r = chk.check(_claim(claimed=100 * k ** 3), Synth())
    b = _cond(r, B)
    assert b["factor"] == pytest.approx(k, rel=2e-3) and b["records"]["tag"] == "vendor's word"
    assert not b["allowed"] and b["tag"] == "implausible on the evidence"
    assert "[vendor's word]" not in (r["condition"] or "")


def test_a_claim_on_a_jump_is_solved_with_two_conditions_or_not_decidable():
    # 195 tok/s/user: B's curve (end 200) ends within the curve-end speed error of the point
    r = chk.check(_claim(at={"point": "speed", "tps_per_user": 195, "interactivity": "itl", "percentile": 50},
                         claimed=5000.0), Synth())
    assert r["verdict"] in ("consistent only if", "not decidable by this model")
    if r["verdict"] == "not decidable by this model":
        assert r["implausible"] == "on a jump" and f"{B}'s curve ends" in r["condition"]
    else:
        assert " and " in r["condition"]
    assert "beyond physics" not in r["reason"]


class SynthMW(Synth):
    """Synth with total tokens/s per MW of the catalog's all-in power per GPU beside the per-GPU figure."""

    def envelope(self, side, model, wl, axis="itl", metric="total_tps_per_gpu"):
        e = super().envelope(side, model, wl, axis, metric)
        e["total_tps_per_mw"] = e["total_tps_per_gpu"] * 1e6 / catalog.hardware(side.hardware).value("allin_power_w")
        return e


def test_a_multiple_whose_own_per_gpu_figure_needs_a_power_ratio_off_the_specs_is_inconsistent_with_them(
        monkeypatch):
    """The source states 100x per GPU (the model's own figure) and 5,000x per MW at 50 tok/s/user: together they need
    an all-in power ratio of 0.02x, outside the catalog's range. The model's steps could close the per-MW gap only
    by contradicting the source's own per-GPU figure, so the verdict is the fourth outcome, worded as such."""
    from perfmodel.claims import pairs
    gpu = _claim(id="synthetic-per-gpu", claimed=100.0)
    mw = _claim(id="synthetic-per-mw", claimed=5000.0, metric={"quantity": "throughput", "tokens": "total", "per": "mw"})
    alone = chk.check(mw, SynthMW())                          # no per-GPU figure of the source: the steps decide
    assert alone["verdict"] == "implausible" and alone["implausible"] == "on the evidence"
    real = pairs.cross_checks
    monkeypatch.setattr(pairs, "cross_checks", lambda claims: real([gpu, mw]))
    r = chk.check(mw, SynthMW())
    assert r["verdict"] == "inconsistent with the published specs" and r["implausible"] == "specs"
    pr = cond.power_ratio_range(A, B)           # one power basis: the same-basis range (issue 56 item 4)
    assert r["condition"] == (f"synthetic-per-gpu (100x per GPU) over synthetic-per-mw (5000x per mw) implies {A}/{B} "
                              f"all-in power 0.02x: the all-in power ratio they imply, 0.02x, lies outside the "
                              f"catalog's same-basis range {pr['low']:.2f}-{pr['high']:.2f}x")
    assert "beyond physics" not in r["reason"] and "Conditions:" in r["reason"]
    assert chk.check(gpu, SynthMW())["verdict"] == "consistent"          # the per-GPU figure itself is the model's
