"""Two step unknowns of a ratio claim solved jointly: both systems' decode steps off the model at once.

Where no single system's steps bring a ratio claim A/B to its claimed value within the model's own error (one
unknown at a time), both may: A's steps k_A and B's steps k_B times the modeled ones, the figure read with both
shifts (``Figure.read(shifts={A: k_A, B: k_B}, diagonal=True)``). The error is spent once, in quadrature: each
factor in units of its own region's band (``conditions.region_band``: ln k / ln(band end on k's side)),

    z = sqrt((ln k_A / ln b_A)^2 + (ln k_B / ln b_B)^2),

and the pair with the least z on the curve Q(k_A, k_B) = claimed is reported (k_A on a grid toward the side that
moves Q toward the claim, k_B solved for each by bisection and read back: the figure at the pair must land the
claim inside the model's interval, never on a jump). ``within error`` when z <= 1. Bounds as for one system:
speed of light for a faster system, the speeds the source says a slower one reached; beyond the band and the
fitted fast corner with no record for it, *implausible on the evidence*.
"""

from __future__ import annotations

import math

import numpy as np

from .conditions import (
    NOOP,
    dir_down,
    fast_corner,
    itl_end,
    lands,
    measured_speed,
    ratio_shift,
    rec_scope,
    region_band,
    sol_factor,
    solve_factor,
)
from .evidence import on_steps
from .fmt import fmt
from .latency import is_latency
from .values import Band, Evaluation, StepFactor, end_of, factor_range

STEPS_A = 10          # grid points of k_A between 1 and its bound


def _z(k: float, band: dict) -> float:
    """|ln k| in units of the band's end on k's side (k < 1: faster, the band's low end)."""
    end = band["lo"] if k < 1 else band["hi"]
    le = abs(math.log(end))
    return abs(math.log(k)) / le if le > 0 else math.inf


def joint_steps(C, fig, ev: Evaluation) -> dict | None:
    """The least-z pair (k_A, k_B) that gives a ratio claim its claimed value (module docstring), or None."""
    if C.claim.kind != "ratio" or len(C.sides) != 2 or is_latency(C.col):
        return None
    ha, hb = C.sides[0].hardware, C.sides[1].hardware
    iv, q0, c = ev["iv"], ev["q"], ev["c"]
    if ha == hb or q0 is None or math.isnan(q0) or not (c and c > 0):
        return None     # an unreached system (Q = 0 or infinity) is solved too: the claim may sit on a jump
    up = c > q0
    a_fast = up == dir_down(fig, ha)          # A faster raises Q when A is a numerator
    ba, bb = region_band(C, fig, ev, ha), region_band(C, fig, ev, hb)
    ends = {h: end_of(ev, h) for h in (ha, hb)}

    def limits(h: str, faster: bool) -> float:
        if faster:
            s = sol_factor(C, fig, h)
            return max(s, 1 / 20) if s else 1 / 20
        v, e = measured_speed(C, h), ends[h]
        return max(1.0, min(e / v * 1.01, 20.0)) if v and e and math.isfinite(e) else 20.0
    lim_a = limits(ha, a_fast)
    b_fast = not a_fast                         # B moves the same way on Q: slower when A is faster
    lim_b = limits(hb, b_fast)

    def q_of(ka: float, kb: float) -> float:
        r = fig.read(shifts={ha: ka, hb: kb}, diagonal=True)
        if r["unreached"]:
            return 0.0 if all(dir_down(fig, h) for h in r["unreached"]) else math.inf
        return r["q"]
    best = None
    ridge: list[tuple[float, float]] = []       # every landing pair of the grid: the claim's ridge
    # k_A: a grid out to its bound, a finer one out to its band's end, and the fitted fast corner itself
    opt_a = fast_corner(ev, fig, ha) if a_fast else None
    opt_b = fast_corner(ev, fig, hb) if b_fast else None
    end_a = ba["lo"] if a_fast else ba["hi"]
    grid = {*np.geomspace(1.0, lim_a, STEPS_A + 1)[1:], *np.geomspace(1.0, end_a, STEPS_A // 2 + 1)[1:]}
    grid |= {opt_a} if opt_a and lim_a <= opt_a < 1 else set()
    for ka in sorted(float(v) for v in grid):
        qa = q_of(ka, 1.0)
        kb: float | None = (1.0 if lands(qa, c, iv) and abs(math.log(c / qa)) < 1e-9 else
                            solve_factor(lambda k, ka=ka: q_of(ka, k), qa, c))
        if kb is None or not ((kb >= lim_b * (1 - 1e-9)) if b_fast else (kb <= lim_b)):
            continue
        if not lands(q_of(ka, kb), c, iv):
            continue
        ridge.append((ka, kb))
        z = math.hypot(_z(ka, ba), _z(kb, bb))
        fit = (a_fast and opt_a is not None and ka < opt_a) or (b_fast and opt_b is not None and kb < opt_b)
        if best is None or (fit, z) < best[:2]:            # inside the fitted ranges first, then the least z
            best = (fit, z, ka, kb)
    if best is None:
        return None
    _, z, ka, kb = best
    recs = {h: on_steps(h, C.model, k, itl_end(C, h), **rec_scope(C, h)) for h, k in ((ha, ka), (hb, kb))}
    rs = ratio_shift(C, ev)
    ratio_out = rs is not None and not rs["inside"]
    allowed, within, tag = _judge({ha: ka, hb: kb}, z, recs, {h: fast_corner(ev, fig, h) for h in (ha, hb)},
                                  {ha: ba, hb: bb}, ratio_out)
    jump = _on_jump(q_of, {ha: ka, hb: kb}, iv)

    def part(h: str, k: float) -> str:
        e = ends[h]
        s = StepFactor(h, k).words()        # values.PRECISION digits: the factor reads back at the claim
        return s + (f" (end {fmt(e / k)}, modeled {fmt(e)})" if e and math.isfinite(e) else "")
    both = f"{part(ha, ka)} and {part(hb, kb)}"
    ev_text = (f"the two spent in quadrature: {z:.2f} of the model's error (its regions: {ha} {ba['region']} "
               f"{Band(ba['lo'], ba['hi']).words()}, {hb} {bb['region']} {Band(bb['lo'], bb['hi']).words()}); "
               f"{ha}: {recs[ha]['text']}; {hb}: {recs[hb]['text']}")
    if ratio_out and rs is not None:
        ev_text = rs["text"] + "; " + ev_text
    ridge_ = _ridge(_in_bands(ridge, ba, bb), ha, hb, ends, jump)
    out: dict = {"kind": "joint_steps", "system": f"{ha}+{hb}", "key": f"{ha}+{hb} steps on {C.model}",
           "factors": {ha: ka, hb: kb}, "z": z, "allowed": bool(allowed), "within_model_error": bool(within),
           "ratio_shift": rs, "ridge": ridge_}
    if jump:
        out.update(allowed=False, within_model_error=False, jump=True, jump_systems=jump, tag="on a jump")
        tag = "on a jump"
        ev_text = ridge_["text"] + "; " + ev_text
    return {**out,
            "tag": tag, "bands": {ha: [ba["lo"], ba["hi"]], hb: [bb["lo"], bb["hi"]]}, "records": recs,
            "evidence": ev_text, "short": f"{both} [{tag}]", "text": f"{both}, together, at the claim [{tag}: {ev_text}]"}


def _judge(ks: dict[str, float], z: float, recs: dict, opt: dict, bands: dict,
           ratio_out: bool) -> tuple[bool, bool, str]:
    """(allowed, within error, tag) of a pair of step factors ``ks`` at quadrature distance z, from the records
    ``recs``, the fitted fast corners ``opt`` and each system's band. Within error: z <= 1, inside the fitted
    ranges, and (a ratio claim) the ratio it implies inside the ratio's held-out error (``ratio_out`` False).
    Beyond the error, every moved factor that is not inside it needs its system's records behind it (a faster
    one, beyond the ratio's error: or the profile's fitted fast corner, the software headroom)."""
    beyond_fit = any(k < 1 and (o := opt[h]) is not None and k < o and recs[h]["tag"] != "supported by records"
                     for h, k in ks.items())
    within = z <= 1 and not beyond_fit and not ratio_out     # the ratio's own error, not two systems' bands
    contradicted = any(r["tag"] == "contradicts records" for r in recs.values())

    def backed(h: str, k: float) -> bool:
        return (recs[h]["tag"] == "supported by records" or (k > 1 and recs[h]["tag"] == "consistent with records")
                or (ratio_out and k < 1 and opt[h] is not None and k >= opt[h]))
    unbacked = [h for h, k in ks.items() if abs(math.log(k)) > 1e-9 and not backed(h, k)
                and (ratio_out or not bands[h]["lo"] <= k <= bands[h]["hi"])]
    allowed = not contradicted and ((z <= 1 and not ratio_out) or (not beyond_fit and not unbacked))
    tag = ("contradicts records" if contradicted else "within error" if within else
           "beyond the fitted ranges" if z <= 1 and not ratio_out else
           "implausible on the evidence" if not allowed else "beyond error, records allow")
    return allowed, within, tag


def _on_jump(q_of, ks: dict[str, float], iv: dict) -> list[str]:
    """The systems at whose factor the pair sits on a jump of the figure: a change of that factor by
    ``conditions.NOOP`` (2%, far inside any speed error) either way moves the figure by more than the interval's
    whole width (ln(q+ / q-) > down + up), or past a curve's end (0 or infinity). The pair then puts that system's
    curve end at the claimed speed: the verdict turns on where it ends, not on a factor."""
    out = []
    for h, k in ks.items():
        qs = [q_of(*(v * (f if hh == h else 1.0) for hh, v in ks.items())) for f in (1 + NOOP, 1 / (1 + NOOP))]
        if not all(math.isfinite(q) and q > 0 for q in qs) or abs(math.log(qs[0] / qs[1])) > iv["down"] + iv["up"]:
            out.append(h)
    return out


def _in_bands(pairs: list[tuple[float, float]], ba: dict, bb: dict) -> list[tuple[float, float]]:
    """The pairs with each factor inside its own system's speed band (the model's error allows each), or every
    pair where none is."""
    inside = [(a, b) for a, b in pairs if ba["lo"] <= a <= ba["hi"] and bb["lo"] <= b <= bb["hi"]]
    return inside or pairs


def _ridge(pairs: list[tuple[float, float]], ha: str, hb: str, ends: dict, jump: list[str]) -> dict:
    """The pairs (k_A, k_B) of the grid that give the claim, as ranges: each factor's, and the curve end it leaves
    a system on a jump ('gb300-nvl72's end 387-432 with vr200-nvl72 1.44-1.81x faster')."""
    if not pairs:
        return {"pairs": [], "text": ""}
    ka = [p[0] for p in pairs]
    kb = [p[1] for p in pairs]

    def rng(h: str, ks: list[float]) -> str:
        lo, hi = min(ks), max(ks)
        if max(hi, 1 / lo) <= 1 + 1e-9:
            return f"{h} as modeled"
        if lo >= 1:
            return f"{h} {factor_range(lo, hi)}x slower"
        if hi <= 1:
            return f"{h} {factor_range(1 / hi, 1 / lo)}x faster"
        return f"{h} {Band(lo, hi).words()}"

    parts = []
    for h, ks, other, oks in ((ha, ka, hb, kb), (hb, kb, ha, ka)):
        e = ends.get(h)
        if h in jump and e and math.isfinite(e):
            parts.append(f"{h}'s end at {fmt(e / max(ks))}-{fmt(e / min(ks))} tok/s/user with {rng(other, oks)}")
    text = ("the pairs of step factors that give the claim (each inside its system's speed error) put "
            + " and ".join(parts) if parts else
            f"the pairs that give the claim: {rng(ha, ka)} with {rng(hb, kb)}")
    return {"pairs": [[a, b] for a, b in pairs], "text": text}


