"""Hand checks of the collective-latency regimes (equations/collectives.py)."""

import pytest
import sympy as sp

from perfmodel.equations.collectives import allreduce_latency, alltoall_latency, bind_fabric, default_custom_latencies
from perfmodel.equations.symbols import S

US = 1e-6
BASE = {"lat_link": 1.5 * US, "BW_link": 900e9, "e_ln": 1.0, "n_cus": 8, "D_dom": 72, **bind_fabric(),
        **default_custom_latencies(1.5 * US)}   # no kernel fit: one-shot 2 lat_link, two-shot 3 lat_link


def ar(n, m, **over):
    n_, m_ = sp.Symbol("n", positive=True), sp.Symbol("m", positive=True)
    vals = {S[k]: v for k, v in {**BASE, **over}.items()}
    return float(allreduce_latency(n_, m_).subs(vals).subs({n_: n, m_: m}))


def test_one_gpu_has_no_all_reduce():
    assert ar(1, 1e6) == 0.0


def test_small_message_inside_the_custom_group_is_one_shot():
    # two barriers of 1.5 us; 14 KB x 7 x (1 - 2/8) / 900 GB/s = 0.08 us of extra bytes
    assert ar(8, 14336) == pytest.approx(3 * US + 7 * 0.75 * 14336 / 900e9, rel=1e-12)


def test_large_message_inside_the_custom_group_is_two_shot():
    assert ar(8, 64e6) == pytest.approx(4.5 * US, rel=1e-12)


def test_beyond_the_custom_group_nccl_picks_ring_or_nvls():
    assert ar(4, 1e3, n_cus=1) == pytest.approx((6.6 + 2 * 3 * 0.6) * US, rel=1e-12)   # ring 10.2 us
    assert ar(16, 1e3) == pytest.approx(23 * US, rel=1e-12)                             # NVLS < ring 24.6 us
    assert ar(64, 1e3) == pytest.approx(23 * US, rel=1e-12)


def test_ring_across_domains_pays_network_steps():
    # 16 GPUs over two 8-GPU domains: 2 x 2 steps cross the NIC, 2 x (15 - 2) stay on NVLink; no NVLS
    assert ar(16, 1e3, D_dom=8) == pytest.approx((6.6 + 26 * 0.6 + 4 * 2.7) * US, rel=1e-12)


def test_alltoall_adds_a_nic_hop_across_domains():
    vals = {S[k]: v for k, v in BASE.items()}
    inside = float(alltoall_latency().subs({**vals, S["G"]: 8, S["D_dom"]: 8}))
    across = float(alltoall_latency().subs({**vals, S["G"]: 16, S["D_dom"]: 8}))
    assert inside == pytest.approx(1.5 * US)
    assert across == pytest.approx((1.5 + 2.7) * US)
