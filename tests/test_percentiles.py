"""Latency percentiles validated (validation/percentiles.py): the P99s MLPerf runs quote become rows predicted from
the queue's P99 at the submitted load, and validate reports TTFT / TPOT by percentile."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from perfmodel.specs.records import read_records
from perfmodel.validation.percentiles import by_percentile, p99_records, percentile_of, quoted_p99
from perfmodel.validation.predict_rows import predict_rows

DATA = Path(__file__).resolve().parent.parent / "data/shared/mlperf.csv"


@pytest.fixture(scope="module")
def records():
    return {r.id: r for r in read_records(DATA)}


def test_quoted_p99s_are_read(records):
    assert quoted_p99(records["mp004"]) == 1210.2 and quoted_p99(records["mp003"]) == 67.34
    assert quoted_p99(records["mp001"]) is None                  # Offline throughput row
    derived = {r.id: r for r in p99_records(list(records.values()))}
    assert derived["mp004.p99"].value == 1210.2 and percentile_of(derived["mp004.p99"]) == "p99"
    assert percentile_of(records["mp004"]) == "p50"
    assert len(derived) == sum(r.kind == "point" and quoted_p99(r) is not None for r in records.values())


def test_the_p99_row_reads_the_queue_tail_at_the_same_rate(records):
    rows = [records["mp052"], *[r for r in p99_records([records["mp052"]])]]
    df = predict_rows(rows, n_samples=2).set_index("id")
    assert df.loc["mp052.p99", "predicted"] > df.loc["mp052", "predicted"] * 1.2


def test_by_percentile_hand_checked(records):
    recs = [records["mp004"], records["mp008"], *p99_records([records["mp004"]])]
    pred = pd.DataFrame({"id": ["mp004", "mp008", "mp004.p99"], "metric": ["ttft_ms"] * 3,
                         "status": ["ok"] * 3, "error_pct": [-10.0, 30.0, 50.0]})
    t = by_percentile(recs, pred).set_index("percentile")
    assert t.loc["p50", "rows"] == 2 and t.loc["p50", "median_error_pct"] == 10.0
    assert t.loc["p50", "median_abs_error_pct"] == 20.0 and t.loc["p99", "median_error_pct"] == 50.0
