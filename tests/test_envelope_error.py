"""The plan band's widening beyond the measured envelope, fitted on held-out error (analyses/envelope_error):
the distance of a held-out record against the other folds' records, the pinball slope of each band end through
its inside quantile, the evidence's reach, and the factors a plan applies. Worked by hand on small cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from perfmodel.analyses import envelope_error as ee
from perfmodel.analyses import measured_envelope as me

L = math.log(2.0)
INSIDE = np.linspace(-0.5, 0.5, 11)          # np.quantile: q10 -0.4, q50 0, q90 0.4
OUTSIDE = [(2.0, -1.0), (2.0, 0.1), (4.0, -0.6), (4.0, 0.2), (8.0, -2.0)]      # (distance ratio, e)


def _rows() -> pd.DataFrame:
    return pd.DataFrame({"ratio": [1.0] * len(INSIDE) + [r for r, _ in OUTSIDE],
                         "e": [*INSIDE, *(e for _, e in OUTSIDE)]})


def test_weighted_quantile_is_the_pinball_minimiser():
    u, w = np.array([3.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0])
    # sorted 1 (w 1), 2 (w 2), 3 (w 1): cumulative 1/4, 3/4, 1
    assert ee.weighted_quantile(u, w, 0.2) == 1.0 and ee.weighted_quantile(u, w, 0.25) == 1.0
    assert ee.weighted_quantile(u, w, 0.5) == 2.0 and ee.weighted_quantile(u, w, 0.9) == 3.0
    grid = np.linspace(0, 4, 401)
    loss = [(w * np.where(u >= b, 0.9 * (u - b), 0.1 * (b - u))).sum() for b in grid]
    assert grid[int(np.argmin(loss))] == pytest.approx(3.0)


def test_fit_by_hand():
    """d = ln 2 x (1, 1, 2, 2, 3), total weight 9 ln 2.
    q10 = -0.4: u = -0.6/L (w L), 0.5/L (L), -0.2/2L (2L), 0.6/2L (2L), -1.6/3L (3L); ascending -0.866 (1/9 of the
      weight), so b10 = -0.6 / ln 2 = -0.866.
    q90 = 0.4: u = -1.4/L, -0.3/L, -1.0/2L, -0.2/2L, -2.4/3L; ascending -2.02 (1/9), -1.15 (4/9), -0.72 (6/9),
      -0.43 (7/9), -0.14 (9/9): b90 = -0.1 / ln 2 = -0.144 < 0, so the pessimistic slope is 0 (no narrowing).
    q50 = 0: u = -1/L (1/9), -0.962 (4/9), -0.433 (6/9): b50 = -0.3 / ln 2.
    Reach at 3 rows: ratios 8, 4, 4, 2, 2 -> the third largest, 4."""
    f = ee.fit(_rows(), min_reach=3)
    assert (f["q10_inside"], f["q50_inside"], f["q90_inside"]) == pytest.approx((-0.4, 0.0, 0.4))
    assert f["slope_low_raw"] == pytest.approx(-0.6 / L) and f["slope_optimistic"] == pytest.approx(-0.6 / L)
    assert f["slope_high_raw"] == pytest.approx(-0.1 / L) and f["slope_pessimistic"] == 0.0
    assert f["median_slope"] == pytest.approx(-0.3 / L)
    assert f["reach"] == 4.0 and f["outside"] == 5 and f["rows"] == 16
    assert f["above_q90_outside"] == 0 and f["below_q10_outside"] == 3
    # widened band at d' = min(d, ln 4): low lines -1.0, -1.0, -1.6, -1.6, -1.6; e = -2.0 (ratio 8) falls out
    assert f["coverage_outside"] == pytest.approx(4 / 5)
    assert f["coverage_outside_unwidened"] == pytest.approx(2 / 5)
    assert f["coverage_outside_largest_ratio_rule"] == pytest.approx(2 / 5)
    assert ee.fit(_rows())["reach"] == 2.0                                  # 5 rows: the fifth largest


def test_widening_factors_by_hand():
    ev = ee.fit(_rows(), min_reach=3)
    # ratio 8 read at the reach 4: W_high = exp(0.6 / ln 2 x ln 4) = e^1.2; W_low = exp(0) = 1
    w_low, w_high, read = ee.widening(8.0, ev)
    assert (w_low, read) == (1.0, 4.0) and w_high == pytest.approx(math.exp(1.2))
    assert ee.widening(2.0, ev)[1] == pytest.approx(math.exp(0.6))           # exp(0.6 / L x L)
    assert ee.widening(1.0, ev)[:2] == (1.0, 1.0) and ee.widening(0.3, ev)[:2] == (1.0, 1.0)
    assert ee.widening(float("nan"), ev)[:2] == (1.0, 1.0)


def _frame() -> pd.DataFrame:
    cols = dict.fromkeys(me.QUANTITIES, np.nan)
    rec = [("x1", "vllm", 10.0), ("x2", "vllm", 40.0), ("x3", "sglang", 100.0)]
    return pd.DataFrame([{"id": i, "hardware": "h200-sxm", "hardware_family": "nvidia-scaleup8", "engine": e,
                          "engine_family": e, "agentic": False, "decode_gpus_used": 8.0,
                          **cols, "batch_per_gpu": b} for i, e, b in rec])


def test_held_out_distance_against_the_other_folds_only():
    """x2 (fold 1, batch 40/GPU) against fold 0's vLLM run x1 (10/GPU): 4x, on batch alone and jointly (x1's blank
    EP reads 1; quantities neither states are skipped). x1 against x2: 0.25, inside (1). x3 (SGLang) has no
    other-fold SGLang run: dropped."""
    cv = pd.DataFrame({"id": ["x1", "x2", "x3"], "fold": [0, 1, 1], "status": "ok",
                       "metric": ["output_tps_per_gpu", "output_tps_per_gpu", "tpot_ms"],
                       "measured": [100.0, 100.0, 10.0], "predicted": [100.0, 200.0, 20.0]})
    rows = ee.held_out_distances(cv, _frame()).set_index("id")
    assert list(rows.index) == ["x1", "x2"]
    assert rows.loc["x2", "ratio"] == pytest.approx(4.0) and rows.loc["x1", "ratio"] == 1.0
    assert rows.loc["x2", "e"] == pytest.approx(math.log(2.0))


def test_shipped_evidence_is_the_documented_rule():
    """On the shipped held-out rows: no row beyond the envelope reads higher than the inside q90 (the model does
    not over-read more with distance: the pessimistic end does not widen), and the widened band holds at least the
    80% it claims of the rows beyond the envelope, where the rule it replaced (low end / R) held half."""
    ev = ee.evidence()
    assert ev["outside"] >= 20 and ev["reach"] > 1.0
    assert ev["slope_pessimistic"] == max(ev["slope_high_raw"], 0.0)
    assert ev["slope_optimistic"] == min(ev["slope_low_raw"], 0.0) < 0
    assert ev["coverage_outside"] >= 0.8 > ev["coverage_outside_largest_ratio_rule"]
