"""The verdict categories and the rule for the inside of an interval (pure functions, no model).

Categories (a spec ratio has its own wording, see ``arith.py``):

- ``consistent``: the claim lies within one half-width of the model's figure on the claim's own side (issue 32
  rule 3: the other side, bounded or not, does not decide; an interval wider than ``WIDE`` is a flag, "the model
  says little here", not a verdict);
- ``consistent only if <condition>``: outside it, and a single named unknown at a physically allowed value
  brings it inside (``conditions.py``: a power or price ratio, one system's decode steps faster or slower than
  modeled, the fastest speed an "up to" was tested at, the fixed part of a curve-end step), with its value
  and evidence;
- ``implausible``: no allowed value of any named condition brings it inside (faster than the speed-of-light
  profile; a system slowed until it cannot reach a speed the source says it was measured at);
- ``not decidable by this model``: no named condition moves the figure through the claim (left for the figures
  the conditions cannot move);
- ``not checkable``: the model cannot see what sets the figure (a TTFT with no load stated, outside its interval);
  ``not checkable (under-specified)``: the model is unstated and the candidates disagree (rule 6).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .fmt import fmt
from .interval import width

CONSISTENT_Z = 0.5
WIDE = 3.0
CATEGORIES = ("consistent", "consistent only if", "implausible", "not decidable by this model", "not checkable",
              "not checkable (under-specified)")
SPEC_INCONSISTENT = "inconsistent with the published specs"


def curve_end_text(ends: Mapping[str, Mapping[str, Any]], systems: list[str]) -> str:
    """'it turns on where gb300-nvl72's curve ends, which the model places at 402 tok/s/user (range 310-470)'."""
    parts = []
    for hw in systems:
        e = ends.get(hw)
        if not e:
            continue
        parts.append(f"where {hw}'s curve ends, which the model places at {fmt(e['end'])} tok/s/user (range "
                     f"{fmt(e['low'])}-{fmt(e['high'])} over the profile ranges and the model's speed error)")
    return "it turns on " + " and ".join(parts) if parts else "it turns on where a curve ends"


def grade(iv: dict, dist: dict, ends: Mapping[str, Mapping[str, Any]], unreached: dict[str, list[str]]) -> dict | None:
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
