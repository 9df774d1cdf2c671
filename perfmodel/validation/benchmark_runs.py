"""What a record's notes say about a load-generator run (MLPerf Inference LoadGen and the like): the instances the
system ran, the Poisson arrival rate of the run, and the latency limits it had to meet.

  * ``record_instance_gpus``  "N instance(s) on G GPUs" -> G / N GPUs per instance (the measured system runs N
                              identical instances; per-GPU figures and the arrival rate split evenly over them),
                              and "PP2" -> 2 pipeline stages per instance
  * ``record_arrival_rate``   "Poisson arrivals at target_qps X (completed Y samples/s)" -> Y requests/s for the
                              whole system: the rate the run actually served (LoadGen's completed samples/s)
  * ``record_latency_limits`` "Scenario constraints (p99): TTFT <= A ms, TPOT <= B ms" -> search.SLO: TTFT A and
                              TPOT B at P99; else the scenario the notes name ("<benchmark> Server, result VALID")
                              in the workload's catalog ``scenarios``; None for Offline runs (every sample queued at once: the peak)
  * ``record_percentile``     a row whose notes begin "P99 " (validation/percentiles.py derives such rows from
                              "measured p50/p99 TTFT a/b ms, p50/p99 TPOT c/d ms") -> 99: its value is that percentile
Units: GPUs, requests/s, milliseconds.
"""

from __future__ import annotations

import re

from ..search import SLO

_INSTANCES = re.compile(r"\b([0-9]+) instance\(s\) on ([0-9]+) GPUs", re.IGNORECASE)
_PP = re.compile(r"\bPP([0-9]+)\b")
_POISSON = re.compile(r"Poisson arrivals at target_qps [0-9.]+ \(completed ([0-9.]+) samples/s\)", re.IGNORECASE)
_LIMITS = re.compile(r"constraints \(p([0-9]+)\): TTFT <= ([0-9.]+) ms, TPOT <= ([0-9.]+) ms", re.IGNORECASE)
_PERCENTILE = re.compile(r"^P(90|95|99) ")
_SCENARIO = re.compile(r"\b(Offline|Server|Interactive), result VALID")


def record_instance_gpus(rec) -> tuple[int, int] | None:
    """(GPUs per instance, pipeline stages) when the notes name the instances; None otherwise."""
    n = rec.notes or ""
    m = _INSTANCES.search(n)
    if m is None:
        return None
    count, gpus = int(m.group(1)), int(m.group(2))
    if count < 1 or gpus % count:
        return None
    pp = _PP.search(n)
    return gpus // count, int(pp.group(1)) if pp else 1


def record_arrival_rate(rec) -> float | None:
    """Requests/s the whole system served under Poisson arrivals (None: not a Poisson run)."""
    m = _POISSON.search(rec.notes or "")
    return float(m.group(1)) if m else None


def record_scenario(rec) -> str | None:
    """The LoadGen scenario the notes name (Offline, Server, Interactive), else None."""
    m = _SCENARIO.search(rec.notes or "")
    return m.group(1) if m else None


def record_latency_limits(rec) -> SLO | None:
    """The run's latency limits as an SLO (search.SLO.from_limits): from the notes, else from the workload catalog's
    scenario of that name."""
    m = _LIMITS.search(rec.notes or "")
    if m:
        return SLO.from_limits(float(m.group(2)), float(m.group(3)), float(m.group(1)))
    scen = record_scenario(rec)
    if scen is None or not rec.workload:
        return None
    from .. import catalog
    try:
        lim = catalog.workload(rec.workload).scenarios.get(scen)
    except Exception:            # an unknown workload is reported by the predictor
        return None
    if lim is None or lim.arrivals == "offline":
        return None
    return SLO.from_limits(lim.ttft_ms, lim.tpot_ms, lim.percentile)


def record_percentile(rec) -> float | None:
    """The percentile a derived latency row quotes (its notes begin "P99 "), else None (the record's own
    statistic, validation/workload_versions.record_statistic)."""
    m = _PERCENTILE.match(rec.notes or "")
    return float(m.group(1)) if m else None
