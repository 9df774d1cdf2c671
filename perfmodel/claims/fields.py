"""The optional claim fields a check reads, narrowed: ``ClaimSpec`` requires them for the kinds that read them, so a
missing one is a claim built around its validation; it is a one-line SpecError naming the field."""

from __future__ import annotations

from typing import Literal

from ..errors import SpecError
from ..search import SLO
from ..specs.claim import ClaimSpec, Metric, OperatingPoint
from ..specs.workload import LatencyLimits


def metric(claim: ClaimSpec) -> Metric:
    """The claim's metric (every kind but spec_ratio has one)."""
    if claim.metric is None:
        raise SpecError(f"claim {claim.id!r}: a {claim.kind} claim needs a metric", field="metric")
    return claim.metric


def point(claim: ClaimSpec, name: Literal["at", "from", "to"]) -> OperatingPoint:
    """The claim's operating point ``at`` (ratio, absolute, max_interactivity) or ``from`` / ``to`` (delta)."""
    p = {"at": claim.at, "from": claim.from_, "to": claim.to}[name]
    if p is None:
        raise SpecError(f"claim {claim.id!r}: a {claim.kind} claim has no operating point {name!r}", field=name)
    return p


def speed(p: OperatingPoint, field: str) -> float:
    """The per-user speed a point states (point 'speed' has one); ``field`` names it in the error."""
    if p.tps_per_user is None:
        raise SpecError(f"point {p.point!r} states no per-user speed; this reading needs one",
                        field=f"{field}.tps_per_user")
    return p.tps_per_user


TAIL_PERCENTILES = (90.0, 99.0)
"""Percentiles a benchmark's latency limits are read at on the modeled tail columns (search.SLO.from_limits)."""


def scenario_limits(p: OperatingPoint, workload: str | None) -> tuple[str, LatencyLimits] | None:
    """The benchmark scenario whose latency limits a peak's usable points meet: the one the point names
    (``scenario``; one not in the workload's ``scenarios`` is a one-line SpecError), else the workload's scenario
    under Poisson arrivals whose TPOT limit (1000 / ``min_tps_per_user``) and TTFT limit the point quotes (each
    within 1%: 'at MLPerf Server's 80 ms TPOT and 2 s TTFT' are that scenario's P99 limits); None otherwise."""
    if p.point != "peak" or workload is None or not (p.scenario or p.min_tps_per_user or p.ttft_ms):
        return None
    from .. import catalog
    if p.scenario is None and workload not in catalog.ids("workloads"):
        return None         # a workload the catalog does not hold has no scenarios to match
    scen = catalog.workload(workload).scenarios
    if p.scenario is not None:
        if p.scenario not in scen:
            raise SpecError(f"workload {workload!r} has no scenario {p.scenario!r} (it has: "
                            f"{', '.join(scen) or 'none'})", field="at.scenario")
        return p.scenario, scen[p.scenario]

    def near(a: float | None, b: float | None) -> bool:
        return a is not None and b is not None and abs(a / b - 1) <= 0.01
    for name, lim in scen.items():
        if lim.arrivals != "poisson" or not (p.min_tps_per_user or p.ttft_ms):
            continue
        tpot = 1000.0 / p.min_tps_per_user if p.min_tps_per_user else None
        if (tpot is None or near(tpot, lim.tpot_ms)) and (p.ttft_ms is None or near(p.ttft_ms, lim.ttft_ms)):
            return name, lim
    return None


def slo(p: OperatingPoint, speed_column: str = "tps_per_user", k: float = 1.0,
        limits: LatencyLimits | None = None) -> SLO:
    """The ONE conversion of a claim's operating point (the YAML schema) into the search's SLO. Point 'speed' (an
    agents_per_gpu SLO): the speed form, the floor ``tps_per_user`` (tokens/s per user) and the TTFT limit
    ``ttft_ms`` (ms), both at the point's ``percentile`` (default 50). Any other point (the usable points of a
    peak): the floor ``min_tps_per_user`` x ``k`` (k: the speed-error factor) on ``speed_column`` (the claim's
    per-user axis) and the TTFT limit on the P50 TTFT; each only where the claim states it.

    A tail limit on the decode axis (``limits``: a benchmark scenario's, ``scenario_limits``; or the point's own
    ``percentile`` of 90 or 99) is read as the benchmark reads it, on the tail columns (SLO.from_limits): at P99
    TPOT_p99 <= 1000 / (floor k) ms and TTFT_p99 <= ttft_ms (MLPerf Server / Interactive), never the mean TPOT.
    The scenario's limits fill those the point leaves out. k scales the TPOT only (the steps k times the modeled
    ones: true TPOT_q = k x modeled TPOT_q)."""
    if p.point == "speed":
        return SLO.speed_floor(p.tps_per_user, p.ttft_ms, p.percentile or 50.0, speed_column=speed_column)
    q = limits.percentile if limits is not None else p.percentile
    if speed_column == "tps_per_user" and q in TAIL_PERCENTILES:
        tpot = 1000.0 / p.min_tps_per_user if p.min_tps_per_user else limits.tpot_ms if limits else None
        ttft = p.ttft_ms if p.ttft_ms else limits.ttft_ms if limits else None
        return SLO.from_limits(ttft, tpot / k if tpot else None, q)
    floor = p.min_tps_per_user * k if p.min_tps_per_user else None
    return SLO.speed_floor(floor, p.ttft_ms, 50.0, speed_column=speed_column)


def scenario_note(claim: ClaimSpec, wl: str, out: dict) -> None:
    """A peak read at a benchmark scenario's limits (``fields.scenario_limits``): the limits as the benchmark
    reads them (MLPerf Server / Interactive: P99 TTFT and P99 TPOT) appended to the point's words."""
    lim = scenario_limits(claim.at, wl) if claim.at is not None else None
    tail = claim.at is not None and claim.at.point == "peak" and claim.at.percentile in TAIL_PERCENTILES
    if lim is None and not tail:
        return
    assert claim.at is not None
    axis = claim.at.interactivity or "itl"
    text = slo(claim.at, limits=lim[1] if lim else None).text() if axis == "itl" else "the E2E axis"
    out["at"] += f"; {text}" + (f" (the {lim[0]} scenario of {wl})" if lim else "")
    if lim and claim.at.scenario is None:
        out["assumptions"].append(f"the point's limits are {wl}'s {lim[0]} scenario's, read at its "
                                  f"P{lim[1].percentile:g} (the benchmark's), not on the mean TPOT")
