"""Latency percentiles validated, not only computed: the model's TTFT and TPOT at each percentile a record file
quotes, against the measured ones.

Sources of percentiles:
  * a row's own statistic (``workload_versions.record_statistic``: P50, P90 of AgentX / InferenceX, mean);
  * MLPerf Server / Interactive point rows, whose notes quote the run's "measured p50/p99 TTFT a/b ms, p50/p99 TPOT
    c/d ms" at the submitted load: ``p99_records`` derives one P99 row per quoted P99 (a copy of the TTFT or TPOT
    row with the P99 as its value and notes beginning "P99 ", which the predictor reads from the queue's P99 at
    the same Poisson rate: ``ttft_p99_ms`` / ``tpot_p99_ms``, serving/queueing.py).

``by_percentile`` groups the predictions by (metric, percentile): rows, median signed error and median |error|
(error = predicted / measured - 1, %).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..specs.records import Record
from .benchmark_runs import record_arrival_rate, record_percentile
from .workload_versions import record_statistic

_QUOTED = re.compile(r"\bp50/p99 (TTFT|TPOT) ([0-9.]+)/([0-9.]+) ms", re.IGNORECASE)
LATENCY_METRICS = ("ttft_ms", "tpot_ms")


def quoted_p99(rec: Record) -> float | None:
    """The measured P99 (ms) of the row's metric that its notes quote ("measured p50/p99 TTFT a/b ms"), else None."""
    if rec.metric not in LATENCY_METRICS:
        return None
    word = rec.metric.split("_")[0].upper()
    for name, _p50, p99 in _QUOTED.findall(rec.notes or ""):
        if name.upper() == word:
            return float(p99)
    return None


def p99_records(records: list[Record]) -> list[Record]:
    """One derived P99 row per TTFT / TPOT point row at a Poisson rate whose notes quote the run's P99."""
    out = []
    for r in records:
        v = quoted_p99(r)
        if r.kind != "point" or v is None or record_arrival_rate(r) is None:
            continue
        out.append(r.model_copy(update={"id": f"{r.id}.p99", "value": v,
                                        "notes": f"P99 of {r.id} at the submitted load, measured {v:g} ms. "
                                                 f"{r.notes}"}))
    return out


def percentile_of(rec: Record) -> str:
    """'p50', 'p90', 'p95', 'p99' or 'mean': the statistic a latency row's value is."""
    q = record_percentile(rec)
    return f"p{q:g}" if q is not None else record_statistic(rec)


def by_percentile(records: list[Record], predicted: pd.DataFrame) -> pd.DataFrame:
    """TTFT / TPOT predictions grouped by (metric, percentile): rows, median signed and median |error| (%)."""
    stat = {r.id: percentile_of(r) for r in records if r.metric in LATENCY_METRICS}
    ok = predicted[(predicted["status"] == "ok") & predicted["id"].isin(list(stat))]
    if ok.empty:
        return pd.DataFrame(columns=["metric", "percentile", "rows", "median_error_pct", "median_abs_error_pct"])
    ok = ok.assign(percentile=ok["id"].map(stat))
    g = ok.groupby(["metric", "percentile"])["error_pct"]
    out = pd.DataFrame({"rows": g.size(), "median_error_pct": g.median(),
                        "median_abs_error_pct": g.apply(lambda e: float(np.median(np.abs(e))))})
    return out.reset_index()
