"""The optional claim fields a check reads, narrowed: ``ClaimSpec`` requires them for the kinds that read them, so a
missing one is a claim built around its validation; it is a one-line SpecError naming the field."""

from __future__ import annotations

from typing import Literal

from ..errors import SpecError
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
