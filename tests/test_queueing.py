"""TTFT queueing: the M/D/c forms and the closed loop, checked by hand on cases with known answers."""

import numpy as np
import pytest

from perfmodel.serving.queueing import closed_loop, compiled_queue, open_loop


def test_md1_mean_wait_is_pollaczek_khinchine():
    """M/D/1: E[W] = rho t_s / (2 (1 - rho)) exactly (Sakasegawa is exact at c = 1)."""
    rho = np.array([0.1, 0.5, 0.9])
    w = compiled_queue()["mean_wait"](rho, 2.0, 1.0)
    np.testing.assert_allclose(w, rho * 2.0 / (2 * (1 - rho)), rtol=1e-12)


def test_quantiles_order_and_vanish_at_light_load():
    q = compiled_queue()["quantile_wait"]
    assert q(0.3, 1.0, 1.0, 0.5) == 0.0                      # P(W > 0) = rho < 0.5: the median wait is 0
    p50, p90 = q(0.8, 1.0, 1.0, 0.5), q(0.8, 1.0, 1.0, 0.9)
    assert 0 < p50 < p90
    # exponential tail with mean E[W] / rho above zero: P90 = E[W] / rho ln(rho / 0.1)
    assert p90 == pytest.approx(0.8 / (2 * 0.2) / 0.8 * np.log(8.0), rel=1e-12)


def test_lone_client_never_queues():
    """B = 1: TTFT = t_req + T_own, X = 1 / (TTFT + osl TPOT)."""
    r = closed_loop(np.nan, 1.0, 0.05, 0.01, 0.01, 0.0, 1.0, 100.0, 0.2, 0.2, 1.0)
    for k in ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s"):
        assert r[k] == pytest.approx(0.25, rel=1e-12)
    assert r["x_per_s"] == pytest.approx(1 / (0.25 + 100 * 0.01), rel=1e-12)
    assert r["clients_needed"] == pytest.approx(1.0, rel=1e-12)


def test_a_batch_the_prefill_servers_cannot_feed_is_saturated():
    """rho = X t_s / c >= 1: X is the servers' rate c / t_s."""
    c, t_s, osl, step = 2.0, 0.5, 10.0, 0.001
    r = closed_loop(np.nan, np.array([1.0, 200.0]), 0.0, step, step, 0.0, 1.0, osl, t_s, t_s, c)
    assert list(r["prefill_saturated"]) == [False, True]
    assert r["x_per_s"][1] == pytest.approx(c / t_s, rel=1e-12)


def test_closed_loop_obeys_littles_law_with_extra_clients():
    """C clients beyond the C_B the batch needs wait W_cap = (C - C_B) / X, and C = X (E[TTFT] + osl TPOT)."""
    clients = np.array([np.nan, 30.0, 300.0])
    r = closed_loop(clients, 10.0, 0.1, 0.02, 0.05, 0.3, 1.5, 50.0, 0.05, 0.01, 8.0)
    np.testing.assert_allclose(r["capacity_wait_s"], (r["concurrency"] - r["clients_needed"]) / r["x_per_s"])
    assert r["capacity_wait_s"][0] == 0 and r["capacity_wait_s"][2] > r["capacity_wait_s"][1] > 0
    np.testing.assert_allclose(r["x_per_s"] * (r["ttft_mean_s"] + 50 * r["tpot_s"]), r["concurrency"], rtol=1e-12)
    assert r["clients_needed"] > 10                         # t_req, R and W_pf are spent without a slot


def test_decode_share_is_consistent_with_the_slot_time():
    """The prefill mixed into a slot's steps is the share f = osl TPOT / S of its slot time."""
    r = closed_loop(np.nan, 64.0, 0.0, 0.02, 0.05, 0.5, 1.0, 200.0, 0.1, 0.05, 4.0)
    f = 200 * r["tpot_s"] / r["slot_s"]
    assert r["decode_share"] == pytest.approx(f, rel=1e-12)
    assert r["step_s"] == pytest.approx(0.02 + min(f * 0.5, 1.0) * 0.03, rel=1e-12)
    cycle = r["ttft_mean_s"] + 200 * r["tpot_s"]
    assert r["x_per_s"] == pytest.approx(1 / cycle + 63 / r["slot_s"], rel=1e-12)


def test_open_loop_is_unstable_past_the_servers_rate():
    r = open_loop(np.array([1.0, 3.9, 4.1]), 0.0, 0.01, 0.2, 0.5, 2.0)
    assert np.isfinite(r["ttft_mean_s"][:2]).all() and np.isinf(r["ttft_mean_s"][2])
    assert r["ttft_mean_s"][1] > r["ttft_mean_s"][0]


def test_synchronized_waves_wait_for_the_prefills_ahead():
    """phi = 1: a wave of C arrivals on c servers; the k-th waits k t_s / c, so the mean wait is
    (C - 1) t_s / (2 c) and the P90 0.9 (C - 1) t_s / c (uniform)."""
    q = compiled_queue()
    assert q["mean_prefill_wait"](0.5, 0.1, 2.0, 1.0, 41.0) == pytest.approx(40 * 0.1 / 4, rel=1e-12)
    p90 = q["ttft_quantile"](0.0, 0.0, 0.0, 0.0, 1e-12, 0.1, 2.0, 0.9, 1.0, 41.0)
    assert p90 == pytest.approx(0.9 * 40 * 0.1 / 2, rel=1e-9)
    # phi = 0 is the random-arrival queue alone
    assert q["mean_prefill_wait"](0.5, 0.1, 1.0, 0.0, 41.0) == pytest.approx(0.5 * 0.1 / (2 * 0.5), rel=1e-12)
