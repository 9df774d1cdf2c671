"""Open-loop serving (an arrival rate) and the P50/P90 E2E axes: hand checks against Little's law."""

import numpy as np
import pytest

from perfmodel import api
from perfmodel.cli.main import main
from perfmodel.specs.deployment import Scenario

BASE = {"hardware": "h200-sxm", "model": "llama-3.1-70b", "profile": "vllm", "workload": {"isl": 1024, "osl": 256},
        "deployment": {"gpus": 4, "tp": 4, "weights": "fp8"}}


def _at(**dep):
    return api.predict(Scenario.model_validate({**BASE, "deployment": {**BASE["deployment"], **dep}})).iloc[0]


@pytest.mark.parametrize("rate", [0.5, 4.0, 7.0])
def test_open_loop_obeys_littles_law_on_slots_and_in_the_system(rate):
    r = _at(arrival_rate=rate)
    assert r["request_rate_per_s"] == pytest.approx(rate)
    # a request holds a KV slot for its own prefill phase plus osl TPOT: B = lambda S
    slot_s = (r["ttft_mean_ms"] - r["prefill_queue_ms"]) / 1e3 + 256 * r["tpot_ms"] / 1e3
    assert r["batch"] == pytest.approx(rate * slot_s, rel=0.05)
    # requests in the system (queued + running) = lambda (E[TTFT] + osl TPOT)
    assert r["concurrency"] == pytest.approx(rate * (r["ttft_mean_ms"] + 256 * r["tpot_ms"]) / 1e3, rel=1e-9)
    assert r["output_tps_per_gpu"] == pytest.approx(rate * 256 / 4, rel=1e-9)
    assert r["ttft_p90_ms"] >= r["ttft_ms"] > 0


def test_ttft_and_its_tail_grow_with_the_arrival_rate():
    rows = [_at(arrival_rate=x) for x in (1.0, 4.0, 7.0)]
    p50 = [r["ttft_ms"] for r in rows]
    p90 = [r["ttft_p90_ms"] for r in rows]
    assert p50 == sorted(p50) and p90 == sorted(p90)
    assert rows[-1]["ttft_p90_ms"] - rows[-1]["ttft_ms"] > rows[0]["ttft_p90_ms"] - rows[0]["ttft_ms"]
    # the P90 E2E axis reads the P90 TTFT
    r = rows[-1]
    assert r["tps_per_user_e2e_p90"] == pytest.approx(256 / ((r["ttft_p90_ms"] + 256 * r["tpot_ms"]) / 1e3))
    assert r["tps_per_user_e2e_p90"] <= r["tps_per_user_e2e_p50"]


def test_a_rate_above_capacity_is_a_one_line_error_naming_the_field(capsys):
    code = main(["predict", "--hardware", "h200-sxm", "--model", "llama-3.1-70b", "--profile", "vllm", "--gpus", "4",
                 "--tp", "4", "--isl", "1024", "--osl", "256", "--rate", "500"])
    err = capsys.readouterr().err
    assert code == 2 and "deployment.arrival_rate" in err and "grows without bound" in err
    assert len(err.strip().splitlines()) == 1 and "nan" not in err.lower()


def test_rate_and_batch_together_are_refused():
    with pytest.raises(Exception, match="arrival_rate"):
        Scenario.model_validate({**BASE, "deployment": {**BASE["deployment"], "arrival_rate": 2.0, "batch": 8}})


def test_closed_loop_concurrency_for_a_fixed_workload_sets_the_batch():
    r = _at(concurrency=32)
    assert 1 <= r["batch"] <= 32
    assert r["concurrency"] == pytest.approx(32)
    # Little: C = X (E[TTFT] + osl TPOT)
    x = r["request_rate_per_s"]
    assert 32 == pytest.approx(x * (r["ttft_mean_ms"] + 256 * r["tpot_ms"]) / 1e3, rel=0.02)
    assert np.isfinite(r["ttft_p90_ms"])


def test_open_loop_settles_at_a_jump_of_the_slot_time():
    """S(B) jumps where the batch crosses a GEMM row tile: lambda S(B) - B changes sign with no root. The queue
    settles at the jump (bisection), not at the capacity and not 'unstable'."""
    import numpy as np

    from perfmodel.serving.aggregated import bisect_unconverged
    lam = np.array([10.0, 10.0])
    slot_at = lambda x, sel: np.where(np.asarray(x) < 128.0, 13.0, 12.5)   # noqa: E731  seconds per slot
    # 10 x 13 = 130 > B below 128, 10 x 12.5 = 125 < B above: no fixed point, the sign change is at 128
    out = bisect_unconverged(slot_at, lam, np.array([125.0, 1.0]), np.array([4096.0, 4096.0]))
    assert out[0] == pytest.approx(128.0, abs=0.5)
    assert out[1] == 1.0                          # a converged / one-slot point is left alone
    slow = lambda x, sel: np.full(np.shape(x), 1e3)                         # noqa: E731  never keeps up
    assert bisect_unconverged(slow, lam[:1], np.array([200.0]), np.array([4096.0]))[0] == 4096.0
