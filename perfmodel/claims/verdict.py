"""The verdict rules: from a claim's interval and distance to one of five verdicts (pure functions, no model).

Categories (exactly these; a spec ratio has its own sixth wording, see ``arith.py``):

- ``consistent``: the claim lies within ``CONSISTENT_Z`` (0.5) half-widths of the model's central figure, on an
  interval at most ``WIDE`` (3x, high / low) wide;
- ``consistent only if <condition>``: within the interval (z <= 1) but beyond 0.5 half-widths, the condition
  naming the largest contributors on the claim's side; or outside it with one named condition (the unstated axis
  or model, faster kernels up to 2x, ...) under which the claim lies inside the interval recomputed with it
  (``check.py``). A condition found by trying alternatives says how many were tried;
- ``implausible``: outside the interval and no condition brings it inside (``needs`` says what would have to be
  true);
- ``not decidable by this model``: the interval spans more than ``WIDE`` (the two largest contributors named),
  or a system's curve ends near the point, so that at some setting the system cannot reach it (an unbounded
  side): "it turns on where <system>'s curve ends, which the model places at X (range Y-Z)";
- ``not checkable``: the model cannot see what sets the figure (a TTFT with no load stated; an E2E-axis
  comparison whose TTFT the model cannot check).

A claim outside an interval that is wide but bounded on the claim's side is still ``implausible``: even the
widest reading the model allows does not reach it.
"""

from __future__ import annotations

import math

from .fmt import fmt
from .interval import width

CONSISTENT_Z = 0.5
WIDE = 3.0
CATEGORIES = ("consistent", "consistent only if", "implausible", "not decidable by this model", "not checkable",
              "not checkable (under-specified)")
SPEC_INCONSISTENT = "inconsistent with the published specs"


def curve_end_text(ends: dict[str, dict], systems: list[str]) -> str:
    """'it turns on where gb300-nvl72's curve ends, which the model places at 402 tok/s/user (range 310-470)'."""
    parts = []
    for hw in systems:
        e = ends.get(hw)
        if not e:
            continue
        parts.append(f"where {hw}'s curve ends, which the model places at {fmt(e['end'])} tok/s/user (range "
                     f"{fmt(e['low'])}-{fmt(e['high'])} over the profile ranges and the model's speed error)")
    return "it turns on " + " and ".join(parts) if parts else "it turns on where a curve ends"


def grade(iv: dict, dist: dict, ends: dict[str, dict], unreached: dict[str, list[str]]) -> dict | None:
    """``consistent`` when the claim lies within one half-width of the model's figure on the claim's own side
    (rule 3: the other side, bounded or not, does not decide), else None: the caller solves the named conditions.
    The interval's width is no rule; wider than ``WIDE`` it is a flag (``wide``) in the verdict."""
    q = iv["value"]
    if q is None or math.isnan(q) or math.isinf(q) or q <= 0 or unreached.get("nominal"):
        return None
    z = dist.get("z")
    if z is None or math.isnan(z) or z > 1 or dist.get("unbounded"):
        return None
    w = width(iv)
    flag = (f"the model says little here: its interval spans {w:.1f}x" if w > WIDE else None)
    return {"verdict": "consistent", "condition": None, "rule": "inside", "flag": flag}


def holds(iv: dict, dist: dict) -> bool:
    """Whether a condition brings the claim inside the interval recomputed under it (z <= 1 on a bounded side of
    an interval at most WIDE wide): a condition that does not is not a condition."""
    z = dist.get("z")
    return (z is not None and not math.isnan(z) and z <= 1 and not dist.get("unbounded")
            and width(iv) <= WIDE and iv["value"] is not None and 0 < iv["value"] < math.inf)


def searched(what: str, n: int, unit: str = "alternatives") -> str:
    """'(not stated; chosen from 4 tried)' style suffix of a condition found by search."""
    return f"({what}; chosen from {n} {unit} tried)"
