"""Issue 56 item 5: absolute latency claims (TTFT, TPOT = ITL, E2E) read on the latency quantity at the load the
claim states, each named with its percentile (data/shared/README.md: P50 unless stated), with hand-worked cases.

Synthetic envelope of A (tests/test_verdicts_readback.Synth, extended): per-user speed x on [10, 400], concurrency
1e4 / x, TPOT 1000 / x ms, TTFT P50 = concurrency ms (P90 3x that), OSL 1,000 tokens, so E2E_q = TTFT_q +
1,000 x TPOT. At the curve end (x = 400, 25 requests): TPOT 2.5 ms, TTFT 25 ms, E2E P50 0.025 + 2.5 = 2.525 s,
E2E P90 0.075 + 2.5 = 2.575 s. At 100 requests in flight (x = 100): TPOT 10 ms, TTFT 0.1 s (both linear in
log-log, so the interpolation is exact)."""

import importlib
import math

import pytest

from perfmodel.claims import latency

chk = importlib.import_module("perfmodel.claims.check")
rb = importlib.import_module("tests.test_verdicts_readback")
A, Synth, _claim = rb.A, rb.Synth, rb._claim
OSL = 1000.0


class LatSynth(Synth):
    @staticmethod
    def _env(x, y):
        d = Synth._env(x, y)
        conc = 1e4 / x
        d["concurrency"], d["tpot_ms"], d["osl"] = conc, 1e3 / x, OSL
        d["ttft_ms"], d["ttft_p90_ms"] = conc, 3 * conc
        d["tps_per_user_e2e_p50"] = OSL / (conc / 1e3 + OSL / x)
        d["tps_per_user_e2e_p90"] = OSL / (3 * conc / 1e3 + OSL / x)
        return d


def _latency(quantity, claimed, pct=50, **kw):
    m = {"quantity": quantity, **({"percentile": pct} if pct else {})}
    at = kw.pop("at", {"point": "max_speed", "interactivity": "itl", "percentile": 50})
    return _claim(kind="absolute", systems=[{"hardware": A, "profile": "vllm"}], metric=m, at=at, claimed=claimed,
                  **kw)


@pytest.mark.parametrize("quantity, pct, value", [("tpot_ms", 50, 2.5), ("ttft_s", 50, 0.025),
                                                  ("ttft_s", 90, 0.075), ("e2e_s", 50, 2.525),
                                                  ("e2e_s", 90, 2.575)])
def test_one_request_reads_the_curve_ends_latency(quantity, pct, value):
    r = chk.check(_latency(quantity, value, pct), LatSynth())
    assert r["model"]["value"] == pytest.approx(value, rel=1e-9) and r["verdict"] == "consistent"
    assert r["metric"] == quantity and r["statistic"] == latency.name(quantity, pct)
    # ten times the model's figure is outside every latency band (the widest, TTFT's, is about x6 up): never
    # consistent
    assert chk.check(_latency(quantity, 10 * value, pct), LatSynth())["verdict"] != "consistent"


def test_a_stated_load_reads_the_envelope_at_that_many_requests():
    """A claim at 50 tok/s/user with 100 requests in flight stated: read at the load (x = 100: TPOT 10 ms, TTFT
    0.1 s), not at the speed (200 requests there: TTFT 0.2 s)."""
    at = {"point": "speed", "tps_per_user": 50, "interactivity": "itl", "percentile": 50}
    hint = [{"concurrency": 100}]
    r = chk.check(_latency("tpot_ms", 10.0, at=at, deployment_hints=hint), LatSynth())
    assert r["model"]["value"] == pytest.approx(10.0, rel=1e-9) and r["verdict"] == "consistent"
    r = chk.check(_latency("ttft_s", 0.1, at=at, deployment_hints=hint), LatSynth())
    assert r["model"]["value"] == pytest.approx(0.1, rel=1e-9) and r["verdict"] == "consistent"
    # beyond the envelope's highest load (1e4 / 10 = 1,000 requests) the model has no point: never consistent
    r = chk.check(_latency("ttft_s", 0.1, at=at, deployment_hints=[{"concurrency": 5000}]), LatSynth())
    assert r["verdict"] != "consistent"


def test_a_ttft_or_e2e_with_no_load_stated_is_not_checkable():
    at = {"point": "speed", "tps_per_user": 50, "interactivity": "itl", "percentile": 50}
    for q in ("ttft_s", "e2e_s"):
        assert chk.check(_latency(q, 9.0, at=at), LatSynth())["verdict"] == "not checkable"


def test_the_percentile_is_named_and_an_unstated_one_is_p50():
    r = chk.check(_latency("e2e_s", 2.525, pct=None), LatSynth())
    assert r["model"]["value"] == pytest.approx(2.525) and r["statistic"] == "E2E latency P50, s"
    assert any("percentile unstated, P50" in a for a in r["assumptions"])
    r = chk.check(_latency("ttft_s", 0.075, pct=95), LatSynth())     # P95 is not modeled: read at P99 (nearest)
    assert any("P95 is not modeled; read at P99" in a for a in r["assumptions"])
    assert latency.name("tpot_ms", 50) == "TPOT (ITL) P50, ms"


def test_the_error_of_a_latency_by_hand():
    """TTFT band x2 down / x3 up, speed band x1.5 down / x1.2 up: TPOT (1 / speed) is x1.2 down / x1.5 up. An
    E2E of 2.6 s = TTFT 0.1 s + decode 2.5 s lies in [0.1 / 2 + 2.5 / 1.2, 0.1 x 3 + 2.5 x 1.5] = [2.1333, 4.05] s."""
    band = {"ttft": (math.log(2), math.log(3)), "speed": (math.log(1.5), math.log(1.2))}.get
    row = LatSynth._env(*[__import__("numpy").array([400.0])] * 2).iloc[0].copy()
    row["ttft_ms"], row["tps_per_user_e2e_p50"] = 100.0, OSL / 2.6
    t = latency.error_part("ttft_s", row, 50, band)
    assert (t["down"], t["up"]) == pytest.approx((math.log(2), math.log(3)))
    p = latency.error_part("tpot_ms", row, 50, band)
    assert (p["down"], p["up"]) == pytest.approx((math.log(1.2), math.log(1.5)))
    e = latency.error_part("e2e_s", row, 50, band)
    assert 2.6 * math.exp(-e["down"]) == pytest.approx(0.05 + 2.5 / 1.2)
    assert 2.6 * math.exp(e["up"]) == pytest.approx(4.05)
    assert e["quantity"] == "e2e (ttft 4% + decode 96%)"
