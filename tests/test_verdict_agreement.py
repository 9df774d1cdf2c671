"""Issue 56, last session: verdicts that agree with the source's own story and read the quantity the source quotes.
Hand-worked on the synthetic envelopes of tests/test_verdicts_readback (A: f = 1e6 / x on [10, 400]; B: f = 5e5 / x^2
on [10, 200]; A/B at x reads 2x, so 100 at 50 tok/s/user; B's steps k times the modeled ones read A/B = 100 k^3 and
B alone 200 / k^3 at 50 tok/s/user)."""

import importlib

import numpy as np
import pytest

from perfmodel.claims.values import StepFactor

rb = importlib.import_module("tests.test_verdicts_readback")
chk = importlib.import_module("perfmodel.claims.check")
cond = importlib.import_module("perfmodel.claims.conditions")
A, B, Synth, _claim, _band, _cond, _Catalog = rb.A, rb.B, rb.Synth, rb._claim, rb._band, rb._cond, rb._Catalog


# ------------------------------------------------------------------ a slower competitor the source itself states
def _sibling_on_b(k_s: float, source: str | None = None):
    """The source's own claim on B alone: B's total tok/s/GPU at 50 tok/s/user claimed 200 / k_s^3, which the model
    reads only with B's steps k_s times the modeled ones (inside B's own band: consistent only if, within error)."""
    extra = {"source": source} if source else {}
    return _claim(id="sibling-on-b", kind="absolute", systems=[{"hardware": B, "profile": "vllm"}],
                  claimed=200 / k_s ** 3, **extra)


def test_a_slower_competitor_the_sources_own_claim_needs_is_a_condition_not_implausible(monkeypatch):
    """The ratio A/B = 100 k^3 claimed with k = hi^0.9 (B's own band [lo, hi] holds k; the ratio k^3 ~ 8x lies far
    beyond the ratio's held-out error): with no record of B, 'implausible on the evidence' (as before). The same
    source states B's own figure 200 / k_s^3 at 50 tok/s/user, which needs B's steps k_s = hi^0.95 >= k slower:
    the source puts B's curve at least that low, so the ratio claim is 'consistent only if B steps k slower' on the
    source's own claim, named by id, ranked before a faster-A software condition. A sibling needing less (k_s =
    hi^0.5 < k), or one of another source, backs nothing."""
    lo, hi = _band()
    k = hi ** 0.9
    ratio = _claim(claimed=100 * k ** 3)
    for k_s, source, backed in ((hi ** 0.95, None, True), (hi ** 0.5, None, False),
                                (hi ** 0.95, "another note, as reported in seeds/other.txt", False)):
        sib = _sibling_on_b(k_s, source)
        monkeypatch.setattr(cond, "catalog", _Catalog(sib))
        s = Synth()
        own = chk.check(sib, s)
        assert own["verdict"] == "consistent only if" and _cond(own, B)["factor"] == pytest.approx(k_s, rel=2e-3)
        r = chk.check(ratio, s)
        b = _cond(r, B)
        assert b["factor"] == pytest.approx(k, rel=2e-3) and b["records"]["tag"] == "vendor's word"
        if backed:
            assert b["allowed"] and b["tag"] == "the source's own claim"
            assert b["source_claim"]["id"] == "sibling-on-b"
            assert b["source_claim"]["factor"] == pytest.approx(k_s, rel=2e-3)
            assert "`sibling-on-b`" in b["text"] and f"{k ** 3:.3g}x the model's" in b["text"]
            assert r["verdict"] == "consistent only if"
            assert r["condition"].startswith(StepFactor(B, k).words())     # the printer's own words
            assert "[the source's own claim]" in r["condition"]
        else:
            assert not b["allowed"] and b["tag"] == "implausible on the evidence" and b["source_claim"] is None
            assert r["verdict"] == "implausible"


def test_a_sibling_judged_implausible_backs_nothing(monkeypatch):
    """B alone claimed 200 / k_s^3 with k_s = hi x 1.3 (beyond B's band, no record: implausible on the evidence):
    it backs no other claim of its source, however far it puts B's curve."""
    _, hi = _band()
    k = hi ** 0.9
    sib = _sibling_on_b(hi * 1.3)
    monkeypatch.setattr(cond, "catalog", _Catalog(sib))
    s = Synth()
    assert chk.check(sib, s)["verdict"] == "implausible"
    b = _cond(chk.check(_claim(claimed=100 * k ** 3), s), B)
    assert not b["allowed"] and b["source_claim"] is None


# ------------------------------------------------------------------ MLPerf Server / Interactive limits at their P99
class TailSynth(Synth):
    """A's envelope of four points with a TPOT and TTFT tail (ms): per-user speed x = 10, 20, 40, 80 tok/s/user
    (mean TPOT 1000 / x = 100, 50, 25, 12.5), TPOT P99 150, 90, 30, 13, TTFT P50 500 everywhere, TTFT P99 3000,
    1500, 800, 400; total tok/s/GPU 4000, 3000, 2000, 1000."""

    def envelope(self, side, model, wl, axis="itl", metric="total_tps_per_gpu"):
        x = np.array([10.0, 20.0, 40.0, 80.0])
        d = self._env(x, np.array([4000.0, 3000.0, 2000.0, 1000.0]))
        d["tpot_ms"] = 1000 / x
        d["tpot_p99_ms"] = [150.0, 90.0, 30.0, 13.0]
        d["ttft_ms"] = 500.0
        d["ttft_p90_ms"] = [2000.0, 1000.0, 600.0, 300.0]
        d["ttft_p99_ms"] = [3000.0, 1500.0, 800.0, 400.0]
        return d


def _peak(at: dict, workload: str = "mlperf-deepseek-r1"):
    return _claim(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], workload=workload, at=at,
                  claimed=2000.0)


def test_mlperf_server_limits_are_read_at_their_p99_not_on_the_mean_tpot():
    """MLPerf Server on deepseek-r1: TTFT P99 <= 2,000 ms and TPOT P99 <= 80 ms (workloads/mlperf-deepseek-r1.yaml).
    By hand: on the mean TPOT the 20 tok/s/user point (mean 50 ms <= 80, TTFT P50 500 <= 2,000) is usable and the
    peak is 3,000 tok/s/GPU; at P99 its TPOT is 90 ms > 80, so the usable points are 40 and 80 tok/s/user (TPOT P99
    30 and 13 ms, TTFT P99 800 and 400 ms) and the peak is 2,000. The same when the claim quotes the limits
    (12.5 tok/s/user = 1000 / 80 ms, TTFT 2 s) without naming the scenario, or states P99 itself; a floor with no
    tail (no percentile, no scenario) is read on the mean as before."""
    s = TailSynth()
    named = chk.check(_peak({"point": "peak", "scenario": "Server"}), s)
    assert named["model"]["value"] == pytest.approx(2000.0)
    assert "TTFT P99 <= 2000 ms, TPOT P99 <= 80 ms" in named["at"] and "Server scenario" in named["at"]
    quoted = chk.check(_peak({"point": "peak", "min_tps_per_user": 12.5, "ttft_ms": 2000}), s)
    assert quoted["model"]["value"] == pytest.approx(2000.0)
    assert any("Server scenario's, read at its P99" in a for a in quoted["assumptions"])
    tail = _peak({"point": "peak", "min_tps_per_user": 12.5, "ttft_ms": 2000, "percentile": 99}, workload="agentx")
    assert chk.check(tail, s)["model"]["value"] == pytest.approx(2000.0)
    mean = _peak({"point": "peak", "min_tps_per_user": 12.5, "ttft_ms": 2000}, workload="agentx")
    assert chk.check(mean, s)["model"]["value"] == pytest.approx(3000.0)
    # P90: TTFT at P90 (1,000 ms at 20 tok/s/user <= 2,000) and the mean TPOT (no TPOT P90 column): 3,000
    p90 = _peak({"point": "peak", "min_tps_per_user": 12.5, "ttft_ms": 2000, "percentile": 90}, workload="agentx")
    assert chk.check(p90, s)["model"]["value"] == pytest.approx(3000.0)
    # the TTFT tail alone binds: TTFT P99 <= 1,000 ms leaves 40 and 80 tok/s/user (800, 400 ms)
    ttft = _peak({"point": "peak", "ttft_ms": 1000, "percentile": 99}, workload="agentx")
    assert chk.check(ttft, s)["model"]["value"] == pytest.approx(2000.0)


def test_a_scenario_limit_moves_with_the_speed_error_and_an_unknown_scenario_is_one_line():
    """Steps k = 2 times the modeled ones double every TPOT: the P99 limit 80 ms on the true TPOT is 40 ms on the
    modeled one (x = 40: 30 ms passes, x = 20: 90 ms fails either way)."""
    from perfmodel.claims.fields import scenario_limits, slo
    from perfmodel.errors import SpecError
    from perfmodel.specs.claim import OperatingPoint
    p = OperatingPoint(point="peak", scenario="Server")
    name, lim = scenario_limits(p, "mlperf-deepseek-r1")
    assert name == "Server" and (lim.ttft_ms, lim.tpot_ms, lim.percentile) == (2000, 80, 99)
    sl = slo(p, k=2.0, limits=lim)
    assert (sl.tpot_column, sl.tpot_limit_ms, sl.ttft_column, sl.ttft_ms) == ("tpot_p99_ms", 40.0, "ttft_p99_ms", 2000)
    assert list(sl.meets(TailSynth().envelope(type("S", (), {"hardware": A})(), "m", "w"))) == [
        False, False, True, True]
    with pytest.raises(SpecError, match="no scenario 'Sever'.*Offline, Server, Interactive"):
        scenario_limits(OperatingPoint(point="peak", scenario="Sever"), "mlperf-deepseek-r1")
    assert scenario_limits(OperatingPoint(point="peak", min_tps_per_user=20), "mlperf-deepseek-r1") is None


# ------------------------------------------------------------------ a 'not checkable' verdict says why
def test_a_not_checkable_verdict_says_why_and_its_conditions_are_not_the_verdicts():
    """A TTFT at 50 tok/s/user with no load stated is not checkable (the model's TTFT turns on a load and a prefill
    capacity the claim does not give): the verdict cell says so instead of a bare 'not checkable'. An E2E-axis
    comparison that inherits it names the TTFT claims, and the conditions solved without the TTFT check are printed
    as such, never as the verdict's condition."""
    from perfmodel.report.text import render_compact, verdict_cell
    ttft = _claim(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], metric={"quantity": "ttft_s"},
                  claimed=5.0)
    r = chk.check(ttft, Synth())
    assert r["verdict"] == "not checkable" and r["condition"] is None
    assert verdict_cell(r) == "not checkable (no load or prefill capacity stated, on which a TTFT turns)"
    e2e = {"id": "e2e", "kind": "ratio", "verdict": "not checkable", "condition": None, "metric": "total_tps_per_mw",
           "inherited_from": ["t1", "t2"], "source": "s", "claimed": 1.0, "qualifier": "at_most",
           "conditions": [{"kind": "steps", "allowed": True, "text": "B steps 1.9x faster"}]}
    assert verdict_cell(e2e) == "not checkable (its E2E speed includes TTFT, and t1, t2 are not checkable)"
    md = render_compact([e2e], [])
    assert "- Were the TTFT checkable, condition: B steps 1.9x faster." in md and "- Condition:" not in md


# ------------------------------------------------------------------ the shared unknowns: what the verdicts name
def test_a_shared_unknown_is_solved_from_the_conditions_the_verdicts_name():
    """Two claims of one source each allow A 1.8x faster (software headroom) and B 1.4x slower (the source's own
    claim); each verdict names B's (it ranks first). The shared unknowns are B's steps, 1.3-1.45x (the ranges'
    intersection), never A's: A's would be a shared value of a reading no verdict gives (the AA report's 'Rubin
    0.56-0.68x the modeled step serves all' beside verdicts and a story that read GB300 slower)."""
    from perfmodel.claims.shared import solve
    src = "as reported in seeds/x.txt"

    def res(i, b_rng, a_rng):
        b = {"kind": "steps", "key": "B steps on m (at speed)", "range_needed": b_rng, "allowed": True,
             "short": f"B steps {b_rng[1]}x slower [the source's own claim]", "system": "B"}
        a = {"kind": "steps", "key": "A steps on m (at speed)", "range_needed": a_rng, "allowed": True,
             "short": f"A steps {1 / a_rng[0]:.2f}x faster [software headroom]", "system": "A"}
        return {"id": i, "source": src, "condition": b["short"], "conditions": [a, b]}
    groups = solve([res("p", [1.2, 1.45], [0.5, 0.7]), res("q", [1.3, 1.5], [0.55, 0.75])])["x"]
    assert [g["key"] for g in groups] == ["B steps on m (at speed)"] and groups[0]["solved"] == [1.3, 1.45]
    # the verdicts naming A instead: A's unknown, 0.55-0.7x
    both = [res("p", [1.2, 1.45], [0.5, 0.7]), res("q", [1.3, 1.5], [0.55, 0.75])]
    for r in both:
        r["condition"] = r["conditions"][0]["short"]
    (g,) = solve(both)["x"]
    assert g["key"] == "A steps on m (at speed)" and g["solved"] == [0.55, 0.7]


def test_the_error_table_prints_the_rows_the_verdicts_read():
    """A ratio read on (agentic, rate-ratio, all) with a step condition on its region's speed band (agentic, speed,
    curve-end): the interval's row is printed (the condition prints its band in its own text); a row no interval
    reads stays in claims/accuracy.csv only."""
    import pandas as pd

    from perfmodel.report.text import error_rows_read, render_compact
    r = {"id": "c", "kind": "ratio", "verdict": "consistent", "condition": None, "source": "s", "claimed": 2.0,
         "qualifier": "about",
         "interval": {"model_error": [{"workload": "agentic", "quantity": "rate-ratio", "region": "all"}]},
         "conditions": [{"kind": "steps", "allowed": False, "short": "x", "band_quantity": "speed",
                         "band_region": "curve-end"}]}
    assert error_rows_read([r]) == {("agentic", "rate-ratio", "all")}     # a condition prints its own band
    acc = pd.DataFrame([(w, q, g, 10, -0.3, 0.3) for w, q, g in (
        ("agentic", "rate-ratio", "all"), ("agentic", "speed", "curve-end"), ("agentic", "rate", "saturation"))],
        columns=["workload", "quantity", "region", "rows", "ln_q10", "ln_q90"])
    md = render_compact([r], [], acc=acc)
    assert "| agentic | rate-ratio | all | 10 | 0.74x - 1.35x |" in md
    assert "saturation" not in md and "| agentic | speed | curve-end |" not in md


def test_a_claim_whose_pair_is_off_the_specs_says_so_beside_its_own_verdict():
    """12x per GPU and 5.7x per MW at one point imply an all-in power ratio of 12 / 5.7 = 2.1x, outside a same-basis
    range of 1.27-1.64x: each claim's section says that the pair cannot both hold, whatever its own verdict."""
    from perfmodel.report.text import render_compact
    x = {"claims": ["a", "b"], "verdict": "inconsistent with the published specs",
         "condition": "the all-in power ratio they imply, 2.11x, lies outside the catalog's same-basis range 1.27-1.64x"}
    r = {"id": "a", "kind": "ratio", "verdict": "consistent only if", "condition": "B steps 1.61x slower",
         "source": "s", "claimed": 12.0, "qualifier": "about", "cross_claims": [x]}
    md = render_compact([r], [])
    assert "- With `b`: inconsistent with the published specs (the source's arithmetic above): not both hold." in md
    ok = {**x, "verdict": "consistent only if"}
    assert "- With `b`" not in render_compact([{**r, "cross_claims": [ok]}], [])


def test_a_claims_section_lists_its_conditions_as_the_verdict_ranks_them():
    """The check's order is power, A's steps, B's steps, the pair; the verdict ranks B slower on the source's own
    claim before A faster on the software headroom. The section prints the first-ranked in full, the other allowed
    one short ('Or:'), then what is not allowed."""
    from perfmodel.report.text import render_compact
    conds = [{"kind": "all-in power", "allowed": False, "short": "power 0.4x", "text": "power long"},
             {"kind": "steps", "allowed": True, "tag": "software headroom", "short": "A 1.8x faster [software headroom]",
              "text": "A long"},
             {"kind": "steps", "allowed": True, "tag": "the source's own claim",
              "short": "B 1.42x slower [the source's own claim]", "text": "B long"}]
    r = {"id": "c", "kind": "ratio", "verdict": "consistent only if", "source": "s", "claimed": 5.0,
         "qualifier": "about", "condition": "B 1.42x slower [the source's own claim]", "conditions": conds}
    md = render_compact([r], [])
    sec = md.split("### `c`", 1)[1]
    assert sec.index("- Condition: B long.") < sec.index("- Or: A 1.8x faster [software headroom].")
    assert "A long" not in sec and "power 0.4x" not in sec      # not allowed, beside allowed ones: claims.json
    r2 = {**r, "verdict": "implausible", "condition": None, "conditions": [conds[0]]}
    assert "- Not allowed: power 0.4x." in render_compact([r2], [])


def test_a_step_the_sources_own_claim_needs_the_other_way_is_not_allowed(monkeypatch):
    """A/B claimed at 100 x 0.85^3 = 61.4 (0.614x the model's, beyond the ratio's error): B's steps 0.85x the
    modeled ones (1.18x faster) give it, inside B's fitted fast corner (1.5x), so on its own the software headroom.
    The same source states B's own figure 200 / k_s^3 with k_s = hi^0.95 > 1, which needs B slower: B faster
    contradicts the source's own claim, and the condition is not allowed. From another source it is allowed."""
    _, hi = _band()
    ratio = _claim(claimed=100 * 0.85 ** 3)
    for source, allowed in ((None, False), ("another note, as reported in seeds/other.txt", True)):
        monkeypatch.setattr(cond, "catalog", _Catalog(_sibling_on_b(hi ** 0.95, source)))
        b = _cond(chk.check(ratio, Synth(fast=1.5)), B)
        assert b["factor"] == pytest.approx(0.85, rel=2e-3)
        if allowed:
            assert b["allowed"] and b["tag"] == "software headroom"
        else:
            assert not b["allowed"] and b["tag"] == "contradicts the source's own claim"
            assert b["source_claim"]["contradicts"] and "`sibling-on-b`" in b["text"]


def test_a_scenario_the_workload_lacks_is_one_line_naming_the_file(tmp_path, capsys):
    """'Sever' for 'Server': perfmodel: error: FILE: at.scenario: ... (the scenarios listed), exit 2, before any
    curve is evaluated."""
    import yaml

    from perfmodel.cli.main import main
    c = {"id": "mine-server", "title": "B200 at MLPerf Server", "source": "my notes", "quote": "q",
         "kind": "absolute", "date": "2026-12-01", "systems": [{"hardware": "b200", "profile": "vllm"}],
         "model": "llama-3.3-70b", "workload": "mlperf-llama2-70b",
         "metric": {"quantity": "throughput", "tokens": "output", "per": "gpu"},
         "at": {"point": "peak", "scenario": "Sever"}, "claimed": 1000}
    f = tmp_path / "mine.yaml"
    f.write_text(yaml.safe_dump(c))
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perfmodel: error: ") and "mine.yaml: at.scenario: " in err[0]
    assert "no scenario 'Sever' (it has: Offline, Server, Interactive)" in err[0]
