"""Issue 53 item 4 / issue 57 item 3: a plan whose chosen deployment lies outside the measured envelope says which
quantity and by how much, and its 80% interval widens by the held-out error's growth with distance
(analyses/envelope_error: true/model in [lo / W_low, hi W_high]); the central count does not move. Checked by hand
against envelopes built here, with the growth held at known slopes (EV)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from perfmodel.analyses import envelope_error as ee
from perfmodel.analyses import measured_envelope as me
from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.plan import Demand, plan
from perfmodel.analyses.plan_error import band
from perfmodel.search import SLO

SPACE = DeploymentSpace(spec_tokens=(0,), batch_points=8, max_gpus=8, disaggregation=False)
ARGS = ("llama-3.3-70b", "fixed-1k1k", ["h200-sxm:vllm"], Demand("requests_per_s", 30),
        SLO(ttft_ms=1500, ttft_percentile=99, tps_per_user=20))
EV = {"slope_pessimistic": 0.5, "slope_optimistic": -1.0, "reach": 10.0}
"""Growth per unit ln(distance) of the band's ends: at twice the envelope W_low = 2^0.5, W_high = 2."""
COLUMNS = ["id", "hardware", "hardware_family", "engine", "engine_family", "agentic", "decode_gpus_used",
           *me.QUANTITIES]


def _envelope(quantities: dict | None) -> pd.DataFrame:
    """A record frame of one h200-sxm vLLM run with these quantities (None: no record at all)."""
    if quantities is None:
        return pd.DataFrame(columns=COLUMNS)
    return pd.DataFrame([{"id": "x1", "hardware": "h200-sxm", "hardware_family": me.hardware_family("h200-sxm"),
                          "engine": "vllm", "engine_family": "vllm", "agentic": False, "decode_gpus_used": 8.0,
                          **quantities}])


@pytest.fixture(scope="module")
def runs():
    """The same plan against three envelopes: none, one run at exactly the chosen point, and one at half its
    batch per GPU (everything else equal). The first run's point quantities (spied) build the other two."""
    mp = pytest.MonkeyPatch()
    mp.setattr(ee, "evidence", lambda: EV)
    seen: list[dict] = []
    real = me.point_quantities

    def spy(row):
        seen.append(real(row))
        return seen[-1]

    mp.setattr(me, "point_quantities", spy)
    mp.setattr(me, "shipped_frame", lambda: _envelope(None))
    out = {"none": plan(*ARGS, space=SPACE).iloc[0]}
    q = seen[-1]
    assert math.isfinite(q["batch_per_gpu"]) and q["batch_per_gpu"] > 0
    mp.setattr(me, "shipped_frame", lambda: _envelope(q))
    out["inside"] = plan(*ARGS, space=SPACE).iloc[0]
    mp.setattr(me, "shipped_frame", lambda: _envelope({**q, "batch_per_gpu": q["batch_per_gpu"] / 2}))
    out["twice"] = plan(*ARGS, space=SPACE).iloc[0]
    mp.undo()
    return out, q


def test_inside_the_envelope_no_widening(runs):
    r, _ = runs
    for k in ("inside", "none"):
        assert r[k]["envelope_distance"] == 1.0
        assert r[k]["envelope_widening_low"] == 1.0 and r[k]["envelope_widening_high"] == 1.0
    assert r["inside"]["envelope"].startswith("inside the measured envelope (nvidia-scaleup8, vllm records)")
    assert r["none"]["envelope"].startswith("nothing measured")
    for c in ("gpus", "gpus_low", "gpus_high", "gpus_bias_corrected", "capacity_output_tps_low", "mw_high"):
        assert r["inside"][c] == r["none"][c]


def test_twice_outside_on_batch_widens_both_ends_by_the_growth_by_hand(runs):
    r, q = runs
    inside, twice = r["inside"], r["twice"]
    assert twice["envelope_distance"] == pytest.approx(2.0)
    assert twice["envelope_widening_low"] == pytest.approx(2 ** 0.5)      # exp(0.5 ln 2)
    assert twice["envelope_widening_high"] == pytest.approx(2.0)          # exp(1.0 ln 2)
    # the text names the quantity, the factor and the record that sets the maximum
    assert f"batch_per_gpu 2x (largest measured {q['batch_per_gpu'] / 2:.4g} sequences/GPU: x1)" in twice["envelope"]
    assert twice["envelope"].startswith("outside the measured envelope")
    assert "distance 2x; 80% band: low end / 1.41, high end x 2" in twice["envelope"]
    # the central count and the count to sign do not move
    for c in ("gpus", "units", "gpus_bias_corrected", "output_tps_per_gpu", "capacity_output_tps", "mw"):
        assert twice[c] == inside[c], c
    # by hand: true/model at the ends is band lo / 2^0.5 and hi x 2, the units re-sized for the same request rate
    b = band(float(twice["batch"]), False)
    r_unit = twice["output_tps_per_gpu"] * twice["unit_gpus"] / 1024          # requests/s per unit, osl 1024
    d, u = twice["demand_requests_per_s"], twice["unit_gpus"]
    assert twice["gpus_high"] == math.ceil(d / (r_unit * b["lo"] / 2 ** 0.5) - 1e-9) * u
    assert twice["gpus_low"] == math.ceil(d / (r_unit * b["hi"] * 2) - 1e-9) * u
    assert inside["gpus_high"] == math.ceil(d / (r_unit * b["lo"]) - 1e-9) * u
    assert inside["gpus_low"] == math.ceil(d / (r_unit * b["hi"]) - 1e-9) * u
    assert twice["gpus_high"] > inside["gpus_high"] and twice["gpus_low"] <= inside["gpus_low"]
    assert twice["capacity_output_tps_low"] == pytest.approx(inside["capacity_output_tps_low"] / 2 ** 0.5)
    assert twice["capacity_output_tps_high"] == pytest.approx(inside["capacity_output_tps_high"] * 2)
    assert twice["mw_high"] >= inside["mw_high"]
