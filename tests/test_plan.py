"""perfmodel plan (analyses/plan.py): the plan covers the demand with whole units, meets the SLO at the named
percentiles, agrees with the frontier at its chosen points, and refuses bad input in one line."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.frontier import frontier
from perfmodel.analyses.plan import PLAN_COLUMNS, Demand, Limits, plan
from perfmodel.analyses.systems import System
from perfmodel.cli.main import main
from perfmodel.errors import SpecError
from perfmodel.search import SLO

SPACE = DeploymentSpace(spec_tokens=(0,), batch_points=12, max_gpus=8, disaggregation=False)
MODEL, WL = "llama-3.3-70b", "fixed-1k1k"
SYSTEMS = ("h100-sxm:vllm", "b200:vllm")
CHAT_SLO = SLO(ttft_ms=1500, ttft_percentile=99, tps_per_user=20)


@pytest.fixture(scope="module")
def chat():
    return plan(MODEL, WL, SYSTEMS, Demand("requests_per_s", 30), CHAT_SLO, scales=(1, 4), space=SPACE)


def test_columns_are_the_documented_set(chat):
    assert list(chat.columns) == PLAN_COLUMNS
    assert len(chat) == 4 and set(chat["status"]) == {"ok"}


def test_gpus_times_per_gpu_throughput_cover_the_demand(chat):
    cover = chat["gpus"] * chat["output_tps_per_gpu"]
    assert (cover >= chat["demand_output_tps"] * (1 - 1e-9)).all()
    # whole units: one unit fewer would not cover it
    less = (chat["units"] - 1) * chat["unit_gpus"] * chat["output_tps_per_gpu"]
    assert (less < chat["demand_output_tps"]).all()
    assert np.allclose(chat["demand_output_tps"], [30 * 1024, 120 * 1024] * 2)
    assert np.allclose(chat["utilization"], chat["demand_output_tps"] / cover)


def test_slo_is_met_at_the_named_percentiles(chat):
    assert (chat["ttft_p99_ms"] <= 1500).all() and (chat["tps_per_user"] >= 20 * (1 - 1e-9)).all()
    assert (chat["ttft_p99_ms"] >= chat["ttft_p90_ms"]).all() and (chat["ttft_p90_ms"] >= chat["ttft_p50_ms"]).all()
    assert (chat["tpot_p99_ms"] >= chat["tpot_mean_ms"] * (1 - 1e-12)).all()


def test_plan_agrees_with_frontier_at_the_chosen_points(chat):
    """The SLO is inside the one search: the frontier under the same SLO holds each chosen point; the plan's
    per-user speed is the point's under Poisson arrivals (1000 / its TPOT), the one the SLO judged."""
    space = DeploymentSpace(**{**SPACE.__dict__, "slo": CHAT_SLO})
    for name, rows in chat.groupby("system"):
        front = frontier(System.parse(name), MODEL, WL, space=space, metric="output_tps_per_gpu")
        for _, r in rows.iterrows():
            same = front[np.isclose(front["output_tps_per_gpu"], r["output_tps_per_gpu"], rtol=1e-9)
                         & (front["batch"] == r["batch"]) & (front["gpus"] == r["gpus_per_instance"])]
            assert len(same) == 1, name
            assert np.isclose(r["tps_per_user"], 1000 / r["tpot_mean_ms"], rtol=1e-9)
            assert r["output_tps_per_gpu"] == front["output_tps_per_gpu"].max() or \
                "granularity" in r["binding"], name


def test_a_p99_limit_is_not_lost_to_a_p50_cut():
    """The README tour's question: where the P50 plan's P99 TTFT already meets the limit, the P99 plan needs
    no more than 20% more GPUs (before the SLO moved inside the search it asked for 600 H100s against 36)."""
    kw = dict(space=DeploymentSpace(spec_tokens=(0, 1, 2), batch_points=16, max_gpus=8, disaggregation=False))
    p50 = plan(MODEL, WL, SYSTEMS[:1], Demand("requests_per_s", 50), SLO(1000, 50, 20), **kw).iloc[0]
    p99 = plan(MODEL, WL, SYSTEMS[:1], Demand("requests_per_s", 50), SLO(1000, 99, 20), **kw).iloc[0]
    assert p50["ttft_p99_ms"] <= 1000
    assert p99["gpus"] <= 1.2 * p50["gpus"], (p50["gpus"], p99["gpus"])
    assert p99["ttft_p99_ms"] <= 1000 and p99["tpot_mean_ms"] <= 50


def test_the_search_keeps_only_points_meeting_the_slo():
    from perfmodel.analyses.plan import serve_points
    from perfmodel.analyses.systems import as_model, as_system
    sysm, m = as_system("h100-sxm:vllm"), as_model(MODEL)
    front = frontier(sysm, m, WL, space=DeploymentSpace(**{**SPACE.__dict__, "slo": CHAT_SLO}),
                     metric="output_tps_per_gpu")
    served = serve_points(sysm, m, WL, front, "fp8")
    ok, terms = CHAT_SLO.mask(served, 1024)
    assert ok.all() and set(terms) == {"ttft_p99", "tpot_p50"}
    free = frontier(sysm, m, WL, space=SPACE, metric="output_tps_per_gpu")
    assert front["output_tps_per_gpu"].max() <= free["output_tps_per_gpu"].max()
    assert set(front.attrs["slo_stats"]) >= {"ttft_p99", "tpot_p50"}


def test_power_and_price_follow_the_domains_bought(chat):
    """MW and $ count the GPUs of the whole domains bought (8-GPU nodes here), not the GPUs the units use."""
    r = chat.iloc[0]
    sysm = System.parse(r["system"])
    assert r["gpus_bought"] == r["scaleup_domains"] * r["scaleup_domain_gpus"] >= r["gpus"]
    assert np.isclose(r["mw"], r["gpus_bought"] * sysm.power_w() / 1e6)
    assert np.isclose(r["usd_per_month"], r["gpus_bought"] * sysm.price() * 730)
    assert r["mw_low"] <= r["mw"] <= r["mw_high"] and "allin_power_w" in r["power_basis"]
    per_node = 8 // r["unit_gpus"]                           # instances of 1, 2, 4 or 8 GPUs pack a node whole
    assert r["scaleup_domains"] == np.ceil(r["units"] / per_node)


def test_cost_and_energy_per_token_hand_checked(chat):
    r = chat.iloc[0]
    # USD/h over output tokens per hour; 1k in / 1k out: half of it per token counted both ways; J = W / (tok/s)
    assert np.isclose(r["usd_per_m_output_tokens"], r["usd_per_hour"] / (3600 * r["demand_output_tps"]) * 1e6)
    assert np.isclose(r["usd_per_m_tokens"], r["usd_per_m_output_tokens"] / 2)
    assert np.isclose(r["joules_per_output_token"], r["mw"] * 1e6 / r["demand_output_tps"])


def test_demand_kinds_agree():
    kw = dict(scales=(1,), space=SPACE)
    a = plan(MODEL, WL, SYSTEMS[:1], Demand("requests_per_s", 10), CHAT_SLO, **kw)
    b = plan(MODEL, WL, SYSTEMS[:1], Demand("output_tps", 10 * 1024), CHAT_SLO, **kw)
    c = plan(MODEL, WL, SYSTEMS[:1], Demand("tokens_per_day", 10 * 1024 * 86400), CHAT_SLO, **kw)
    assert a["gpus"].iloc[0] == b["gpus"].iloc[0] == c["gpus"].iloc[0]
    h = plan(MODEL, WL, SYSTEMS[:1], Demand("requests_per_s", 10), CHAT_SLO, limits=Limits(headroom=0.5), **kw)
    assert h["gpus"].iloc[0] >= 2 * a["gpus"].iloc[0] - a["unit_gpus"].iloc[0]
    assert (h["utilization"] <= 0.5 + 1e-9).all()


def test_a_power_limit_fills_the_hall():
    df = plan(MODEL, WL, SYSTEMS, None, CHAT_SLO, limits=Limits(mw=1.0), space=SPACE)
    assert (df["mw"] <= 1.0 + 1e-12).all()
    # one domain (8-GPU node) more would not fit under the MW limit, and the nodes bought are full
    for _, r in df.iterrows():
        assert (r["gpus_bought"] + 8) * r["mw"] / r["gpus_bought"] > 1.0 and r["gpus"] == r["gpus_bought"]
    assert np.allclose(df["capacity_output_tps"], df["gpus"] * df["output_tps_per_gpu"])


def test_an_infeasible_slo_names_it_and_the_best_value():
    with pytest.raises(SpecError, match=r"TTFT P99 <= 1 ms.*ttft_p99 best [0-9.]+ ms"):
        plan(MODEL, WL, SYSTEMS[:1], Demand("requests_per_s", 1), SLO(ttft_ms=1, ttft_percentile=99),
             space=SPACE)


@pytest.mark.parametrize("argv, field", [
    (["--rate", "1", "--users", "2"], "demand"),
    (["--rate", "-1"], "--rate"),
    (["--rate", "1", "--ttft-ms", "100", "--ttft-percentile", "95"], "slo.ttft_percentile"),
    (["--rate", "1", "--demand-scale", "1,x"], "--demand-scale"),
    (["--rate", "1", "--headroom", "1.5"], "headroom"),
    (["--sessions", "10"], "demand.sessions"),
    ([], "demand"),
])
def test_bad_input_is_one_line(argv, field, capsys):
    code = main(["plan", "--model", MODEL, "--system", "h100-sxm", "--spec-tokens", "0", "--batch-points", "8",
                 *argv])
    err = capsys.readouterr().err
    assert code == 2 and field in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_writes_csv_and_png(tmp_path, capsys):
    csv, png = tmp_path / "plan.csv", tmp_path / "plan.png"
    code = main(["plan", "--model", MODEL, "--system", "b200:vllm", "--rate", "20", "--demand-scale", "1,2",
                 "--ttft-ms", "1500", "--ttft-percentile", "99", "--spec-tokens", "0", "--batch-points", "12",
                 "--max-gpus", "8", "--no-disaggregation", "--csv", str(csv), "--plot", str(png)])
    assert code == 0, capsys.readouterr().err
    import pandas as pd
    df = pd.read_csv(csv)
    assert list(df.columns) == PLAN_COLUMNS and len(df) == 2 and png.stat().st_size > 1000


def test_what_has_no_measured_record_is_named(capsys):
    from perfmodel.cli.plan_cmd import unmeasured
    base = {"hardware": ["h100-sxm"], "profile": ["vllm"], "model": ["llama-3.3-70b"]}
    import pandas as pd
    assert unmeasured(pd.DataFrame(base)) is None
    line = unmeasured(pd.DataFrame({**base, "hardware": ["mi355x"]}))
    assert line is not None and "hardware mi355x" in line and "\n" not in line


def test_queue_tail_by_hand_m_d_1_and_m_g_c():
    """The prefill queue's tail the P99 SLO reads (equations/queueing.py), by hand. M/D/1 (c = 1, c_s^2 = 0) at
    rho = 0.5, t_s = 0.2 s: E[W] = rho t_s / (2 (1 - rho)) = 0.1 s (Pollaczek-Khinchine); the wait is positive with
    probability rho and exponential beyond, mean E[W] / rho = 0.2 s, so W_0.99 = 0.2 ln(0.5 / 0.01) = 0.782 s.
    M/D/4 at rho = 0.5 (Sakasegawa): E[W] = rho^(sqrt(10) - 1) / (4 x 0.5) x 0.1 = 0.01119 s."""
    from perfmodel.serving.queueing import compiled_queue
    q = compiled_queue()
    assert q["quantile_wait"](0.5, 0.2, 1, 0.99) == pytest.approx(0.2 * np.log(50), rel=1e-9)
    assert q["mean_prefill_wait"](0.5, 0.2, 1, 0.0, 1.0) == pytest.approx(0.1, rel=1e-9)
    assert q["mean_prefill_wait"](0.5, 0.2, 4, 0.0, 1.0) == pytest.approx(0.5 ** (10 ** 0.5 - 1) / 2 * 0.1, rel=1e-9)
    # the tail below P(W > 0) is zero: the P40 wait of a queue busy half the time
    assert q["quantile_wait"](0.5, 0.2, 1, 0.40) == 0.0


def test_p99_plan_is_no_larger_than_the_queue_tail_needs():
    """Every frontier point served under Poisson arrivals at its own rate (the plan's reading) whose queue tail
    meets TTFT P99 <= 1000 ms and whose TPOT meets 50 ms carries 50 requests/s on ceil(50 / r_j) units of u_j GPUs
    (r_j = its output tokens/s per GPU x u_j / osl); the P99 plan asks for no more GPUs than the fewest of those
    (the SLO inside the search may find a point off the free frontier that needs fewer, never more)."""
    from perfmodel.analyses.plan import serve_points
    from perfmodel.analyses.systems import as_model, as_system
    space = DeploymentSpace(spec_tokens=(0,), batch_points=16, max_gpus=8, disaggregation=False)
    sysm, m = as_system("h100-sxm:vllm"), as_model(MODEL)
    free = frontier(sysm, m, WL, space=space, metric="output_tps_per_gpu")
    served = serve_points(sysm, m, WL, free, "fp8")
    ok = (served["ttft_p99_ms"] <= 1000).to_numpy() & (served["tpot_ms"] <= 50).to_numpy()
    assert ok.any()
    u = free["gpus"].to_numpy(float)
    rate = free["output_tps_per_gpu"].to_numpy(float) * u / 1024       # requests/s per unit, osl 1024
    needed = np.min(np.ceil(50 / rate[ok] - 1e-9) * u[ok])
    p99 = plan(MODEL, WL, SYSTEMS[:1], Demand("requests_per_s", 50), SLO(1000, 99, 20), space=space).iloc[0]
    assert p99["status"] == "ok" and p99["gpus"] <= needed, (p99["gpus"], needed)
    assert p99["ttft_p99_ms"] <= 1000
