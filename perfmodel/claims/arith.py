"""Checks that need no performance model: a claim's own arithmetic and datasheet (spec) ratios."""

from __future__ import annotations

import itertools
import math

from .. import catalog
from ..specs.claim import ClaimSpec, eval_arithmetic


def arithmetic_checks(claim: ClaimSpec) -> list[dict]:
    """Each ``arithmetic`` entry recomputed: expression -> value, against the stated (rounded) value."""
    out = []
    for a in claim.arithmetic:
        got = eval_arithmetic(a.expression)
        rel = abs(got - a.value) / max(abs(a.value), abs(got), 1e-300)
        out.append({"expression": a.expression, "computed": got, "stated": a.value, "rel_diff": rel,
                    "ok": rel <= a.rel_tol, "meaning": a.meaning, "by": a.by})
    return out


ROUNDING = 0.05   # a press ratio within 5% of a published pair is that pair, rounded


def decimals(x: float) -> int:
    """Decimal places of a published figure as written (2.4 -> 1, 2.75 -> 2, 2.0 -> 1)."""
    s = repr(float(x))
    return max(1, len(s.split(".")[1].rstrip("0"))) if "." in s and "e" not in s else 1


def hardware_variants(hw: str) -> list[str]:
    """The hardware id (default values) and each of its published variants (id@variant)."""
    base = hw.split("@")[0]
    spec = catalog.hardware(base)
    return [base] + [f"{base}@{v}" for v in spec.variants]


def spec_ratio_check(claim: ClaimSpec) -> dict:
    """A datasheet ratio A/B against every combination of the catalog's published values (variants included).

    Consistent when some combination rounds to the claimed figure (within half a unit of its last digit);
    consistent only if the press rounded a pair when the nearest pair lies within ``ROUNDING`` (5%) of it;
    else implausible, with the value A would need against B's published one.
    """
    f = claim.spec_field
    a_id, b_id = claim.system_ids
    tol = 0.5 * 10 ** -decimals(claim.claimed) + 1e-12
    rows, seen = [], set()
    for va, vb in itertools.product(hardware_variants(a_id), hardware_variants(b_id)):
        ha, hb = catalog.hardware(va), catalog.hardware(vb)
        xa, xb = ha.value(f), hb.value(f)
        if xa is None or xb is None or (xa, xb) in seen:
            continue
        seen.add((xa, xb))
        sa, sb = getattr(ha.specs, f), getattr(hb.specs, f)
        rows.append({"a": va, "b": vb, "a_value": xa, "b_value": xb, "ratio": xa / xb,
                     "a_status": sa.status, "b_status": sb.status, "matches": abs(xa / xb - claim.claimed) <= tol})
    b_default = catalog.hardware(b_id).value(f)
    need = claim.claimed * b_default if b_default else None
    match = [r for r in rows if r["matches"]]
    published = ", ".join(f"{r['a_value']:g}/{r['b_value']:g} = {r['ratio']:.3g}x" for r in rows)
    near = sorted(rows, key=lambda r: abs(math.log(r["ratio"] / claim.claimed)))
    off = abs(near[0]["ratio"] / claim.claimed - 1) if near else float("inf")
    if match:
        verdict, cond = "consistent", None
        reason = (f"{f}: the catalog gives {published}; {match[0]['a_value']:g}/{match[0]['b_value']:g} rounds to "
                  f"the claimed {claim.claimed:g}x")
    elif off <= ROUNDING:
        n = near[0]
        verdict = "consistent only if"
        cond = (f"the press figure stands for {n['a']} / {n['b']} = {n['a_value']:g}/{n['b_value']:g} = "
                f"{n['ratio']:.3g}x ({off:.1%} off, within the {ROUNDING:.0%} allowance for a rounded press figure)")
        reason = (f"{f}: the catalog gives {published}; none rounds to {claim.claimed:g}x at its last digit, but "
                  f"{n['ratio']:.3g}x ({n['a_status']}/{n['b_status']}) is {off:.1%} from it")
    else:
        verdict, cond = "implausible", None
        reason = (f"{f}: no published pair gives {claim.claimed:g}x (the catalog gives {published}); "
                  f"{claim.claimed:g}x would need {a_id} at {need:.3g} against {b_id}'s {b_default:g}, a value no "
                  f"source publishes. Treat {claim.claimed:g}x as a what-if scenario, not as the spec")
    return {"verdict": verdict, "condition": cond, "reason": reason, "field": f, "pairs": rows,
            "tolerance": tol, "needed_a_value": need}
