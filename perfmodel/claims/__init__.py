"""Claim checks: a verdict (consistent / consistent only if <condition> / implausible / not decidable by this model
/ not checkable / not checkable (under-specified); a spec ratio: consistent / inconsistent with the published
specs) with its reasons and, outside the model's error, the named conditions solved (power or price ratio, a
system's steps, the fastest speed tested), shared ones solved once per source (``shared.solve``).

``check(claim)`` returns a dict; ``check_all()`` checks the whole catalog. ``CurveStore`` caches the evaluated
operating points so that many claims share one evaluation per system.
"""

from .arith import arithmetic_checks, spec_ratio_check
from .check import TOL, check, check_all, load_claim
from .curves import CurveStore, Side
from .pairs import cross_checks

__all__ = ["CurveStore", "Side", "TOL", "arithmetic_checks", "check", "check_all", "cross_checks", "load_claim",
           "spec_ratio_check"]
