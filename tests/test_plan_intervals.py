"""Issue 48: plan intervals from the cross-validated error (coverage checked on held-out configurations), a demand
over time (--demand-file) and the power basis (--power-basis)."""

from __future__ import annotations

import contextlib
import io
import math

import pandas as pd
import pytest

from perfmodel import catalog
from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.plan import Demand, plan
from perfmodel.analyses.plan_error import band
from perfmodel.cli.main import main
from perfmodel.search import SLO
from perfmodel.validation.plan_coverage import coverage

SPACE = DeploymentSpace(spec_tokens=(0,), batch_points=8, max_gpus=8, disaggregation=False)
MODEL, WL = "llama-3.3-70b", "fixed-1k1k"
SLO_ = SLO(ttft_ms=1500, ttft_percentile=99, tps_per_user=20)


@pytest.fixture(scope="module")
def rows():
    return plan(MODEL, WL, ["h200-sxm:vllm"], Demand("requests_per_s", 30), SLO_, scales=(1, 3), space=SPACE)


def test_the_80pct_band_covers_75_to_85pct_of_held_out_configurations():
    cov = coverage()
    assert cov["rows"] > 500 and cov["configs"] > 100
    assert 0.75 <= cov["share"] <= 0.85, cov


def test_gpu_interval_is_the_demand_resized_at_the_bands_ends_by_hand(rows):
    for _, r in rows.iterrows():
        b = band(float(r["batch"]), False)
        # the true throughput y exp(-q90) .. y exp(-q10): units at each end re-sized for the same demand
        r_unit = r["output_tps_per_gpu"] * r["unit_gpus"] / 1024          # requests/s per unit, osl 1024
        hi = math.ceil(r["demand_requests_per_s"] / (r_unit * b["lo"]) - 1e-9) * r["unit_gpus"]
        lo = math.ceil(r["demand_requests_per_s"] / (r_unit * b["hi"]) - 1e-9) * r["unit_gpus"]
        assert (r["gpus_low"], r["gpus_high"]) == (lo, hi)
        assert r["gpus_low"] <= r["gpus"] <= r["gpus_high"]
        assert r["mw_low"] <= r["mw"] <= r["mw_high"]
        assert r["usd_per_m_output_tokens_low"] <= r["usd_per_m_output_tokens"] <= r["usd_per_m_output_tokens_high"]
        assert "80%" in r["error_basis"]


def test_power_basis_tdp_and_measured(rows):
    tdp = plan(MODEL, WL, ["h200-sxm:vllm"], Demand("requests_per_s", 30), SLO_, space=SPACE, power_basis="tdp")
    w = catalog.hardware("h200-sxm").value("gpu_tdp_w")
    assert tdp["mw"].iloc[0] == pytest.approx(tdp["gpus_bought"].iloc[0] * w / 1e6)       # the nodes bought
    assert tdp["power_basis"].iloc[0].startswith("gpu_tdp_w")
    meas = plan(MODEL, WL, ["h200-sxm:vllm"], Demand("requests_per_s", 30), SLO_, space=SPACE,
                power_basis="measured")
    assert meas["mw"].iloc[0] == pytest.approx(meas["gpus_bought"].iloc[0] * 540 / 1e6)
    assert rows["power_basis"].iloc[0].startswith("allin_power_w")               # board: the default


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


BASE = ["plan", "--model", MODEL, "--workload", WL, "--system", "h200-sxm:vllm", "--ttft-ms", "1500",
        "--ttft-percentile", "99", "--min-tps-per-user", "20", "--spec-tokens", "0", "--batch-points", "8",
        "--max-gpus", "8", "--no-disaggregation"]


def test_demand_file_plans_every_period_and_names_the_peak(tmp_path):
    f = tmp_path / "demand.csv"
    f.write_text("period,requests_per_s\n2027-01,10\n2027-02,40\n2027-03,25\n")
    csv = tmp_path / "plan.csv"
    code, out, err = _cli([*BASE, "--demand-file", str(f), "--csv", str(csv)])
    assert code == 0, err
    df = pd.read_csv(csv)
    assert list(df["period"]) == ["2027-01", "2027-02", "2027-03"]
    assert list(df["demand_value"]) == [10, 40, 25] and df["gpus"].idxmax() == 1
    assert "at the peak period 2027-02" in out and f"{df['gpus'].max():,.0f} GPUs" in out


def test_bad_demand_file_and_power_basis_are_one_line_errors(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("period,requests_per_s\nA,10\nB,-2\n")
    code, _, err = _cli([*BASE, "--demand-file", str(f)])
    assert code == 2 and err.strip().count("\n") == 0 and "requests_per_s" in err and "row 3" in err
    f.write_text("period,qps\nA,10\n")
    code, _, err = _cli([*BASE, "--demand-file", str(f)])
    assert code == 2 and "demand column" in err and "Traceback" not in err
    f.write_text("quarter,requests_per_s\nQ1,10\nQ2,20\n")        # not silently relabelled 1, 2
    code, _, err = _cli([*BASE, "--demand-file", str(f)])
    assert code == 2 and "unknown column 'quarter'" in err and err.strip().count("\n") == 0


def _bands(monkeypatch, lo: float, hi: float):
    """plan_error.band with true/model throughput lo .. hi (the model's error band, widened or narrowed); the
    measured envelope's own widening held at 1 (tests/test_plan_envelope.py checks it)."""
    from perfmodel.analyses import envelope_error, plan_error
    monkeypatch.setattr(envelope_error, "band_widening", lambda row, *a, **k: (1.0, 1.0, 1.0, "held at 1"))
    monkeypatch.setattr(plan_error, "band", lambda conc, agentic, measured_hardware=True: {
        "lo": lo, "hi": hi, "mid": 1.0, "text": f"80% {lo}-{hi}"})


@pytest.mark.parametrize("demand, model, wl, system", [
    (Demand("users", 5000), MODEL, WL, "h200-sxm:vllm"),
    (Demand("sessions", 5000), "gpt-oss-120b", "agentx", "b200:vllm")])
def test_users_and_sessions_intervals_contain_the_plan_and_widen_with_the_error(monkeypatch, demand, model, wl,
                                                                                  system):
    """The same re-sizing for a demand in users (requests in flight) or live sessions: GPUs at each end of the
    band hold the central plan, equal it at a band of zero width, and move outwards as the band widens."""
    slo = SLO_ if demand.kind == "users" else SLO(tps_per_user=20)
    got = {}
    for lo, hi in ((1.0, 1.0), (0.8, 1.25), (0.5, 2.0)):
        _bands(monkeypatch, lo, hi)
        got[lo] = plan(model, wl, [system], demand, slo, space=SPACE).iloc[0]
    for r in got.values():
        assert r["demand_kind"] == demand.kind and r["gpus_low"] <= r["gpus"] <= r["gpus_high"]
        assert r["mw_low"] <= r["mw"] <= r["mw_high"]
    zero, mid, wide = got[1.0], got[0.8], got[0.5]
    assert zero["gpus_low"] == zero["gpus"] == zero["gpus_high"]
    assert mid["gpus"] == wide["gpus"] == zero["gpus"]              # the central plan does not read the band
    assert wide["gpus_low"] < mid["gpus_low"] < mid["gpus"] < mid["gpus_high"] < wide["gpus_high"]
    # by hand: units scale as 1 / (true throughput share), whole units of unit_gpus
    u = wide["unit_gpus"]
    units = wide["gpus"] / u
    assert wide["gpus_high"] == pytest.approx(math.ceil(units / 0.5 - 1e-6) * u, abs=u)
    assert wide["gpus_low"] == pytest.approx(math.ceil(units / 2.0 - 1e-6) * u, abs=u)


def test_the_count_to_sign_is_the_demand_at_the_median_held_out_error_by_hand(rows):
    """gpus_bias_corrected re-sizes the units at the median of the held-out error, true / model = exp(-q50) of the
    row's band (model_over_true = exp(q50)); the SLO margin is (limit - value) / limit per term."""
    from perfmodel.analyses.model_error import half_widths, region_of
    for _, r in rows.iterrows():
        h = half_widths("rate", region_of(float(r["batch"])), "all")
        assert r["model_over_true"] == pytest.approx(math.exp(h["bias"]))
        r_unit = r["output_tps_per_gpu"] * r["unit_gpus"] / 1024
        mid = math.ceil(r["demand_requests_per_s"] / (r_unit * math.exp(-h["bias"])) - 1e-9) * r["unit_gpus"]
        assert r["gpus_bias_corrected"] == mid and r["gpus_low"] <= mid <= r["gpus_high"]
        ttft = (1500 - r["ttft_p99_ms"]) / 1500
        tpot = (50 - r["tpot_mean_ms"]) / 50                                   # the 20 tok/s/user floor: 50 ms mean TPOT
        assert r["slo_margin"] == f"ttft_p99 {ttft:.1%}, tpot_p50 {tpot:.1%}"
        assert r["slo_margin_min"] == pytest.approx(min(ttft, tpot)) and r["slo_margin_min"] >= 0


def test_the_band_widens_where_the_hardware_has_no_measured_record_by_hand():
    """Without a measured record the half-widths about the median take z_0.9 x the between-hardware bias sd in
    quadrature: q90' = q50 + sqrt((q90 - q50)^2 + (1.2816 sd)^2), likewise below; the median stays."""
    from perfmodel.analyses.model_error import half_widths, region_of
    from perfmodel.analyses.plan_error import hardware_spread, measured_hardware
    assert "vr200-nvl72" not in measured_hardware() and "gb300-nvl72" in measured_hardware()
    hs = hardware_spread()
    assert hs["hardware"] >= 5 and 0.02 < hs["sd"] < 0.3
    h = half_widths("rate", region_of(64.0), "agentic")
    s = 1.2815515655446004 * hs["sd"]
    wide, plain = band(64.0, True, measured_hardware=False), band(64.0, True)
    assert wide["lo"] == pytest.approx(math.exp(-(h["bias"] + math.hypot(h["q90"] - h["bias"], s))))
    assert wide["hi"] == pytest.approx(math.exp(-(h["bias"] - math.hypot(h["bias"] - h["q10"], s))))
    assert wide["mid"] == plain["mid"] and wide["lo"] < plain["lo"] and wide["hi"] > plain["hi"]
    assert "no measured record" in wide["text"] and "no measured record" not in plain["text"]
