"""Checks that need no performance model: a claim's own arithmetic and datasheet (spec) ratios."""

from __future__ import annotations

import itertools
import math

from .. import catalog
from ..errors import SpecError
from ..specs.claim import ClaimSpec, eval_arithmetic
from .verdict import SPEC_INCONSISTENT


def arithmetic_checks(claim: ClaimSpec) -> list[dict]:
    """Each ``arithmetic`` entry recomputed: expression -> value, against the stated (rounded) value."""
    out = []
    for a in claim.arithmetic:
        got = eval_arithmetic(a.expression)
        rel = abs(got - a.value) / max(abs(a.value), abs(got), 1e-300)
        out.append({"expression": a.expression, "computed": got, "stated": a.value, "rel_diff": rel,
                    "ok": rel <= a.rel_tol, "meaning": a.meaning, "by": a.by})
    return out


def decimals(x: float) -> int:
    """Decimal places of a published figure as written (2.4 -> 1, 2.75 -> 2, 2.0 -> 1)."""
    s = repr(float(x))
    return max(1, len(s.split(".")[1].rstrip("0"))) if "." in s and "e" not in s else 1


def round_half_up(x: float, d: int) -> float:
    """x rounded to d decimals, halves away from zero (2.25 -> 2.3; 2.333 -> 2.3; 2.5 -> 2.5)."""
    f = 10 ** d
    return math.floor(abs(x) * f + 0.5 + 1e-9) / f * (1 if x >= 0 else -1)


def hardware_variants(hw: str) -> list[str]:
    """The hardware id (default values) and each of its published variants (id@variant)."""
    base = hw.split("@")[0]
    spec = catalog.hardware(base)
    return [base] + [f"{base}@{v}" for v in spec.variants]


STATED = ("datasheet", "announced")


def stated_spec(hw: str, field: str) -> bool:
    """Whether a source states ``hw``'s value of ``field`` as the spec: its status is datasheet or announced, or
    it is an end of the stated range of a datasheet / announced value (e.g. the 20 TB/s reported for first
    shipments beside the 22 TB/s announced), or arithmetic on a stated figure (``derived.py``: NVLink-C2C
    1.8 TB/s per Vera CPU / 2 directions / 2 GPUs = 450 GB/s per GPU, announced); any other estimate is not."""
    sv = getattr(catalog.hardware(hw).specs, field)
    if sv is None:
        return False
    if sv.status in STATED:
        return True
    from .derived import derived
    d = derived(hw, field)
    if d is not None and d["status"] in STATED:      # arithmetic on a stated figure keeps its status
        return True
    base = getattr(catalog.hardware(hw.split("@")[0]).specs, field)
    return (base is not None and base.status in STATED and base.low is not None
            and any(abs(sv.value - b) <= 1e-9 * max(1.0, abs(b)) for b in base.bounds()))


def spec_ratio_check(claim: ClaimSpec) -> dict:
    """A datasheet ratio A/B against every combination of the catalog's published values (variants included).

    A press ratio is a rounding of a published pair only if rounding that pair's ratio to the claim's precision
    (its decimals as written, halves up) gives the claim: 35/15 = 2.33 -> 2.3 matches 2.3; 20/8 = 2.5 does not
    round to 2.4. ``consistent`` when a pair of *stated* specs matches (``stated_spec``: datasheet, announced, or
    the stated range of one, e.g. reported for shipments); a match only through an estimate gives ``consistent
    only if`` the spec is that estimate (named, with what every stated spec gives); no match: ``inconsistent with
    the published specs``, the nearest pair named (by ln distance), with the value A would need against B's
    published one.
    """
    f = claim.spec_field
    if f is None:
        raise SpecError(f"claim {claim.id!r}: a spec_ratio claim names the hardware field it compares",
                        field="spec_field")
    a_id, b_id = claim.system_ids
    d = decimals(claim.claimed)
    target = round_half_up(claim.claimed, d)
    rows, seen = [], set()
    for va, vb in itertools.product(hardware_variants(a_id), hardware_variants(b_id)):
        ha, hb = catalog.hardware(va), catalog.hardware(vb)
        xa, xb = ha.value(f), hb.value(f)
        if xa is None or xb is None or (xa, xb) in seen:
            continue
        seen.add((xa, xb))
        from .derived import derived, effective_status
        rounded = round_half_up(xa / xb, d)
        da, db = derived(va, f), derived(vb, f)
        rows.append({"a": va, "b": vb, "a_value": xa, "b_value": xb, "ratio": xa / xb, "rounded": rounded,
                     "a_status": effective_status(va, f), "b_status": effective_status(vb, f),
                     "a_derived": da["text"] if da else None, "b_derived": db["text"] if db else None,
                     "matches": abs(rounded - target) < 1e-9,
                     "stated": stated_spec(va, f) and stated_spec(vb, f)})
    b_default = catalog.hardware(b_id).value(f)
    need = claim.claimed * b_default if b_default else None
    match = [r for r in rows if r["matches"] and r["stated"]]
    est = [r for r in rows if r["matches"] and not r["stated"]]
    published = ", ".join(f"{r['a_value']:g}/{r['b_value']:g} = {r['ratio']:.3g}x" for r in rows)
    stated = sorted({f"{r['ratio']:.3g}x" for r in rows if r["stated"]})
    near = sorted(rows, key=lambda r: abs(math.log(r["ratio"] / claim.claimed)))
    n = near[0] if near else None
    if match:
        m = match[0]
        verdict, cond = "consistent", None
        reason = (f"{f}: the catalog gives {published}; {m['a_value']:g}/{m['b_value']:g} = {m['ratio']:.4g} rounds "
                  f"to {m['rounded']:.{d}f} at the claim's {d} decimal(s), the claimed {claim.claimed:g}x, both "
                  f"values stated specs ({m['a_status']}/{m['b_status']})")
        arith = [f"{h}: {t}" for h, t in ((m["a"], m["a_derived"]), (m["b"], m["b_derived"])) if t]
        if arith:
            reason += "; derived by arithmetic from stated figures, which keeps their status (" + "; ".join(arith) + ")"
    elif est:
        m, n = est[0], est[0]
        who = " and ".join(h for h, ok in ((m["a"], stated_spec(m["a"], f)), (m["b"], stated_spec(m["b"], f)))
                           if not ok)
        verdict = "consistent only if"
        cond = (f"the spec is {m['a_value']:g}/{m['b_value']:g} = {m['ratio']:.3g}x, an estimate ({who}); "
                + (f"every stated spec gives {', '.join(stated)}" if stated else "no source states it as the spec"))
        reason = (f"{f}: the catalog gives {published}; {claim.claimed:g}x is a rounding only of "
                  f"{m['a_value']:g}/{m['b_value']:g}, and {who}'s value there is an estimate, not a stated spec")
    else:
        verdict, cond = SPEC_INCONSISTENT, (f"nearest pair {n['a']} / {n['b']} = {n['a_value']:g}/{n['b_value']:g} = "
                                            f"{n['ratio']:.3g}x, which rounds to {n['rounded']:.{d}f}, not "
                                            f"{claim.claimed:.{d}f}") if n else "no published pair"
        reason = (f"{f}: no published pair rounds to {claim.claimed:g}x at {d} decimal(s) (the catalog gives "
                  f"{published}); {claim.claimed:g}x would need {a_id} at {need:.3g} against {b_id}'s "
                  f"{b_default:g}, a value no source publishes. Treat {claim.claimed:g}x as a what-if scenario, not "
                  f"as the spec")
    return {"verdict": verdict, "condition": cond, "reason": reason, "field": f, "pairs": rows, "decimals": d,
            "nearest": n, "needed_a_value": need}
