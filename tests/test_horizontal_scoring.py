"""Frontier reads scored vertically and horizontally (issue 37, item 3): validation/horizontal.py."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.validation.horizontal import horizontal_error_pct, speed_at_value, step_time_error_pct


def cliff(s: float) -> float:
    """A frontier with a cliff: 1000 tok/s/GPU up to 100 tok/s/user, then linearly down to 0 at 120 tok/s/user;
    nothing beyond (NaN: the frontier ends)."""
    if s > 120:
        return float("nan")
    return 1000.0 if s <= 100 else 1000.0 * (120 - s) / 20


def test_speed_at_value_inverts_a_known_frontier():
    """F(s) = 1e4 / s: the speed at throughput 100 is 100 tok/s/user, found from either side of the published
    speed to the bisection's 0.5%."""
    f = lambda s: 1e4 / s                                    # noqa: E731
    for s0 in (20.0, 100.0, 700.0):
        assert speed_at_value(f, s0, 100.0) == pytest.approx(100.0, rel=0.005)
    # the vertical error at s0 = 50 is +100% (F = 200 against 100); the horizontal one at V = 100 is +100% as well
    assert horizontal_error_pct(f, 50.0, 100.0) == pytest.approx(100.0, rel=0.01)


def test_at_a_cliff_the_horizontal_error_is_small_where_the_vertical_one_is_large():
    """Measured: 200 tok/s/GPU at 116 tok/s/user. The model's cliff gives F(116) = 200: both reads exact. Read the
    same measurement at 119 tok/s/user (a 2.5% speed error): vertically F(119) = 50, -75%; horizontally the model
    reaches 200 at 116, -2.5%: a 2.6% step-time error."""
    assert cliff(116) == pytest.approx(200.0)
    assert cliff(119) / 200 - 1 == pytest.approx(-0.75)
    h = horizontal_error_pct(cliff, 119.0, 200.0)
    assert h == pytest.approx(100 * (116 / 119 - 1), abs=0.5)
    assert step_time_error_pct(h) == pytest.approx(100 * (119 / 116 - 1), abs=0.6)


def test_a_frontier_that_never_reaches_the_throughput_has_no_horizontal_read():
    assert np.isnan(horizontal_error_pct(cliff, 100.0, 5000.0))
    assert speed_at_value(lambda s: 1e9, 10.0, 1.0) == 10.0 * 2 ** 8          # capped 256x above
