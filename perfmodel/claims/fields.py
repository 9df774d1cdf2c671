"""The optional claim fields a check reads, narrowed: ``ClaimSpec`` requires them for the kinds that read them, so a
missing one is a claim built around its validation; it is a one-line SpecError naming the field."""

from __future__ import annotations

from typing import Literal

from ..errors import SpecError
from ..search import SLO
from ..specs.claim import ClaimSpec, Metric, OperatingPoint


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


def slo(p: OperatingPoint, speed_column: str = "tps_per_user", k: float = 1.0) -> SLO:
    """The ONE conversion of a claim's operating point (the YAML schema) into the search's SLO, in the speed form
    (search.SLO.speed_floor). Point 'speed' (an agents_per_gpu SLO): the floor ``tps_per_user`` (tokens/s per user)
    and the TTFT limit ``ttft_ms`` (ms), both at the point's ``percentile`` (default 50). Any other point (the usable
    points of a peak): the floor ``min_tps_per_user`` x ``k`` (k: the speed-error factor) on ``speed_column`` (the
    claim's per-user axis) and the TTFT limit on the P50 TTFT; each only where the claim states it."""
    if p.point == "speed":
        return SLO.speed_floor(p.tps_per_user, p.ttft_ms, p.percentile or 50.0, speed_column=speed_column)
    floor = p.min_tps_per_user * k if p.min_tps_per_user else None
    return SLO.speed_floor(floor, p.ttft_ms, 50.0, speed_column=speed_column)
