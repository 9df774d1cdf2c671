"""serving/roots.illinois: the one bracketed root finder, checked on cases with known answers."""

import numpy as np

from perfmodel.serving.roots import illinois


def test_finds_known_roots_and_keeps_the_feasible_side():
    # g(x) = c - x^3 (decreasing), roots c^(1/3); one point per c
    c = np.array([1.0, 8.0, 27.0, 1000.0])
    g = lambda x, idx: c[idx] - x ** 3                                  # noqa: E731
    lo, hi = np.zeros(4), np.full(4, 20.0)
    br = illinois(g, lo, hi, g(lo, np.arange(4)), g(hi, np.arange(4)), iterations=60, tol=1e-12)
    assert br.converged.all()
    np.testing.assert_allclose(br.lo, np.cbrt(c), rtol=1e-9)
    assert np.all(c - br.lo ** 3 >= -1e-9)                               # lo stays on the g >= 0 side


def test_a_jump_without_a_root_ends_on_the_sign_change():
    # g jumps from +1 to -1 at x = 3.3 (a GEMM row tile crossed): the bracket closes on 3.3 from both sides
    g = lambda x, idx: np.where(x < 3.3, 1.0, -1.0)                      # noqa: E731
    br = illinois(g, np.array([0.0]), np.array([10.0]), np.array([1.0]), np.array([-1.0]), iterations=80,
                  xtol=1e-9)
    assert br.lo[0] < 3.3 <= br.hi[0] and br.hi[0] - br.lo[0] < 1e-6


def test_points_without_a_bracket_are_returned_as_given():
    calls = []
    g = lambda x, idx: (calls.append(idx.copy()), -x)[1]                # noqa: E731
    br = illinois(g, np.array([1.0, 0.0]), np.array([2.0, 4.0]), np.array([-1.0, 1.0]), np.array([-2.0, -4.0]))
    assert br.lo[0] == 1.0 and not br.converged[0]
    assert all(0 not in idx for idx in calls)                            # only the open point is evaluated
