"""MLPerf Inference records (data/shared/mlperf.csv): every row is supported, the runs' instances, Poisson rates
and P99 limits are read from the notes, and the MLPerf workloads carry their scenarios."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.specs.records import read_records
from perfmodel.validation.benchmark_runs import (
    record_arrival_rate,
    record_instance_gpus,
    record_latency_limits,
    record_scenario,
)
from perfmodel.validation.predict_rows import predict_rows

DATA = Path(__file__).resolve().parent.parent / "data/shared/mlperf.csv"
WORKLOADS = ("mlperf-deepseek-r1", "mlperf-llama2-70b", "mlperf-llama3.1-405b", "mlperf-llama3.1-8b",
             "mlperf-gpt-oss-120b")


@pytest.fixture(scope="module")
def records():
    return {r.id: r for r in read_records(DATA)}


def test_workloads_exist_with_scenarios():
    for wid in WORKLOADS:
        w = catalog.workload(wid)
        assert w.kind == "fixed" and w.throughput_counts == "output" and "Offline" in w.scenarios
        assert all(s.startswith(("http", "\"http")) or "inference_results" in s for s in w.sources)
    s = catalog.workload("mlperf-llama2-70b").scenarios
    assert (s["Server"].ttft_ms, s["Server"].tpot_ms, s["Interactive"].tpot_ms) == (2000, 200, 40)
    # the sourced dataset means (../shared/data/README.md, audit of 2026-12-05) and the 20k-cap DeepSeek-R1 reference
    means = {w: (catalog.workload(w).isl, catalog.workload(w).osl) for w in WORKLOADS}
    assert means["mlperf-llama2-70b"] == (222.3, 294.45) and means["mlperf-llama3.1-8b"][0] == 870.7
    assert means["mlperf-deepseek-r1"] == (803.8, 3886.23) and means["mlperf-llama3.1-405b"][0] == 9428.6
    limits = {(w, k): (v.ttft_ms, v.tpot_ms) for w in WORKLOADS for k, v in catalog.workload(w).scenarios.items()}
    assert limits[("mlperf-deepseek-r1", "Interactive")] == (1500, 15)
    assert limits[("mlperf-gpt-oss-120b", "Server")] == (3000, 80)
    assert limits[("mlperf-gpt-oss-120b", "Interactive")] == (2000, 15)


def test_notes_are_read(records):
    assert record_instance_gpus(records["mp045"]) == (8, 1)             # 9 instances on 72 GPUs
    assert record_instance_gpus(records["mp041"]) == (4, 2)             # TP2 PP2, 18 instances on 72 GPUs
    assert record_arrival_rate(records["mp003"]) == pytest.approx(6.13)
    assert record_arrival_rate(records["mp001"]) is None                 # Offline
    lim = record_latency_limits(records["mp002"])
    assert (lim.ttft_ms, lim.tpot_ms, lim.ttft_percentile, lim.tpot_percentile) == (2000, 80, 99, 99)
    assert lim.tpot_limit_ms == 80 and lim.text().startswith("TTFT P99 <= 2000 ms, TPOT P99 <= 80 ms")
    assert record_scenario(records["mp009"]) == "Interactive" and record_latency_limits(records["mp001"]) is None


def test_every_row_is_supported(records):
    df = predict_rows(list(records.values()), n_samples=2)
    assert (df["status"] == "ok").all(), df.loc[df["status"] != "ok", ["id", "status"]].to_string()
    assert np.isfinite(df["predicted"]).all() and (df["predicted"] > 0).all()


def test_a_server_row_meets_its_p99_limits_and_stays_below_offline(records):
    """The Server frontier read under P99 TTFT/TPOT limits is at most the Offline peak of the same system."""
    df = predict_rows([records["mp049"], records["mp050"]], n_samples=2).set_index("id")
    assert df.loc["mp050", "predicted"] <= df.loc["mp049", "predicted"] * (1 + 1e-9)
