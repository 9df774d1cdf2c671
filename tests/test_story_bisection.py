"""Issue 56 item 3: the story solved by bisection. Hand-worked case on the synthetic envelopes of
tests/test_verdicts_readback (A f = 1e6 / x, B f = 5e5 / x^2, read at 50 tok/s/user with each system's steps k times
the modeled ones, the throughput moving with the speed): A's figure 1e6 / (50 k_A) / k_A = 2e4 / k_A^2, B's
5e5 / (50 k_B)^2 / k_B = 200 / k_B^3, so an absolute claim on A reads 2e4 / k_A^2 and the ratio A/B
100 k_B^3 / k_A^2. With A 1.81x faster (k_A = 1 / 1.81) and B 1.23x slower (k_B = 1.23) the two claims are
2e4 x 1.81^2 = 65,522 and 100 x 1.23^3 x 1.81^2 = 609.6: one story explains both, but no cell of the old 41-point
grid (4.7% apart) does, since the ratio's window is 3.3% wide in k_B once k_A is fixed by the absolute claim."""

import math

import numpy as np

from perfmodel.claims.story import KF, KS, MARGIN, TOL, solve

A, B = "vr200-nvl72", "gb300-nvl72"
KA, KB = 1 / 1.81, 1.23
C1, C2 = 2e4 / KA ** 2, 100 * KB ** 3 / KA ** 2
SRC = "as reported in seeds/s.txt"


def _g(systems, lnf, c):
    slots = {h: f"{h}:speed" for h in systems}
    return {"systems": systems, "slots": slots, "model": "m", "c": c, "c_range": [c, c], "qualifier": "about",
            "per_mw": False, "r0": None, "kf": KF.tolist(), "lnf": {h: lnf[h].tolist() for h in systems},
            "bands": {s: [0.4, 2.5] for s in slots.values()}, "bounds": {s: [0.0, 99.0] for s in slots.values()}}


def test_the_hand_worked_story_the_grid_missed_is_found_by_bisection():
    assert abs(C1 - 65522.0) < 0.01 and abs(C2 - 609.64) < 0.01
    # the old grid: no cell of KS x KS reads both claims back within TOL
    ka, kb = KS[:, None], KS[None, :]
    both = (np.abs(np.log(2e4 / ka ** 2 / C1)) <= TOL) & (np.abs(np.log(100 * kb ** 3 / ka ** 2 / C2)) <= TOL)
    assert not both.any()
    lnA = math.log(2e4) - 2 * np.log(KF)
    lnB = -math.log(200) + 3 * np.log(KF)
    res = [{"id": "abs", "source": SRC, "verdict": "consistent only if", "story_grid": _g([A], {A: lnA}, C1)},
           {"id": "ratio", "source": SRC, "verdict": "consistent only if",
            "story_grid": _g([A, B], {A: lnA, B: lnB}, C2)}]
    st = solve(res)["s"]
    assert sorted(st["explained"]) == ["abs", "ratio"] and st["left"] == []
    # its factors are held to each system's own error band, looser than a ratio verdict's: said in its text
    assert "(a system's, not a ratio's)" in st["text"]
    f = st["per_model"]["m"]["factors"]
    ka_s, kb_s = f[f"{A}:speed"], f[f"{B}:speed"]
    # by hand, through the formulas (not the solver's tables): both read back within TOL - MARGIN
    assert abs(math.log(2e4 / ka_s ** 2 / C1)) <= TOL - MARGIN + 1e-9
    assert abs(math.log(100 * kb_s ** 3 / ka_s ** 2 / C2)) <= TOL - MARGIN + 1e-9
    # near the story that made the claims: A about 1.81x faster, B about 1.23x slower
    assert abs(math.log(ka_s / KA)) <= (TOL - MARGIN) / 2 + 1e-9 and abs(math.log(kb_s / KB)) < 0.04
    assert st["readback"]["ratio"]["q"] == np.float64(100 * kb_s ** 3 / ka_s ** 2).item() or \
        abs(st["readback"]["ratio"]["q"] / (100 * kb_s ** 3 / ka_s ** 2) - 1) < 1e-9


def test_a_window_narrower_than_a_node_spacing_is_found():
    """A ratio ~ k_B^40 (a cliff): its window in k_B is 2 x 0.045 / 40 = 0.2% wide, under the 1.15% node spacing;
    each side of it is a monotone condition, bisected alone, so the solver still lands inside."""
    lnB = 40 * np.log(KF)
    c = math.exp(40 * math.log(1.1037))
    res = [{"id": "cliff", "source": SRC, "verdict": "x",
            "story_grid": _g([A, B], {A: np.zeros(len(KF)), B: lnB}, c)}]
    st = solve(res)["s"]
    assert st["explained"] == ["cliff"]
    kb = st["per_model"]["m"]["factors"][f"{B}:speed"]
    assert abs(40 * math.log(kb) - math.log(c)) <= TOL - MARGIN + 1e-9
