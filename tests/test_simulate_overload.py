"""`simulate` on an open loop offered more than the instance serves: one line says so, the throughput is the
saturated one and no TTFT is reported (it would grow with --requests, where `predict` refuses the set-up)."""

from __future__ import annotations

import math

import pytest

from perfmodel import api
from perfmodel.cli.main import main

SCENARIO = """hardware: h100-sxm
model: llama-3.1-70b
profile: vllm
deployment: {{gpus: 2, tp: 2, ep: 1, weights: fp8, kv_cache: fp8, spec_tokens: 0, serving: aggregated,
             arrival_rate: {rate}}}
workload: fixed-1k1k
"""


@pytest.fixture
def scenario(tmp_path):
    def make(rate):
        p = tmp_path / f"open-{rate}.yaml"
        p.write_text(SCENARIO.format(rate=rate))
        return p
    return make


def test_an_overloaded_open_loop_says_so_in_one_line(scenario, capsys):
    code = main(["simulate", str(scenario(5)), "--requests", "300"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[0].startswith("overloaded: 5 requests/s offered")
    assert sum("overloaded" in line for line in out) == 1
    summary, _ = api.simulate(api.load_scenario(str(scenario(5))), requests=300)
    assert summary["overloaded"] and math.isnan(summary["ttft_p99_ms"]) and math.isnan(summary["e2e_ms"])
    # the saturated throughput, well below the offered rate, and the same as a longer run's within 10%
    longer, _ = api.simulate(api.load_scenario(str(scenario(5))), requests=600)
    assert summary["saturated_rate_per_s"] < 0.8 * 5
    assert abs(longer["request_rate_per_s"] / summary["request_rate_per_s"] - 1) < 0.1


def test_a_stable_open_loop_is_not_flagged(scenario):
    summary, _ = api.simulate(api.load_scenario(str(scenario(1))), requests=1000)
    assert not summary["overloaded"] and math.isfinite(summary["ttft_p99_ms"])
    assert abs(summary["request_rate_per_s"] - 1) < 0.1
