"""What would have to be true: the condition that reconciles a claim outside the model's interval.

Each condition is solved from the model's own curves or equations, never written with a number of its own:

- **power / price** (per-MW, per-dollar figures): the figure is throughput / P, so a claimed multiple c against
  the model's m needs A's power at P_A m / c (or B's at P_B c / m) with everything else as modeled (exact);
- **the other system's curve** (a ratio at a per-user speed x): the claim needs B at f_B* = f_A(x) / c. The
  speed x* where B's envelope reaches f_B* is found on the envelope (log-log interpolation); B's whole curve
  scaled in per-user speed by x / x* puts f_B* at x, and its end at end_B x / x*;
- **the fall along one curve** (a delta from x0 to x1): the speed x1* where f(x1*) / f(x0) = 1 + claimed;
- **kernels** (any figure): the decode-and-prefill speed-up found by search in ``software_needed``.

``needs_of`` gathers them for a check (check.py).
"""

from __future__ import annotations

import math

import numpy as np

from .. import catalog
from ..specs.claim import ClaimSpec
from .curves import AXES, Side, curve_end, end_deployment, read
from .fields import point
from .fmt import faster_slower
from .fmt import fmt as _fmt
from .fmt import number as _f
from .latency import is_latency
from .reading import Figure, env_metric
from .sides import ClaimSides, claim_column
from .values import Evaluation


def power_or_price(col: str, ha: str, hb: str | None, model_q: float, claimed: float) -> list[dict]:
    """The all-in power (per-MW) or price (per-dollar) per GPU that makes the model's multiple the claimed one."""
    if col.endswith("_per_mw"):
        field, what, unit = "allin_power_w", "all-in power per GPU", " W"
    elif col.endswith("_per_usd"):
        field, what, unit = "price_usd_per_gpu_hour", "price per GPU-hour", " USD"
    else:
        return []
    if not (model_q and claimed and math.isfinite(model_q)):
        return []
    out = []
    for hw, k in ((ha, model_q / claimed), (hb, claimed / model_q)):
        if hw is None:
            continue
        sv = getattr(catalog.hardware(hw).specs, field)
        if sv is None:
            continue
        need = sv.value * k
        lo, hi = sv.bounds()
        rng = (f"stated range {lo:,.4g}-{hi:,.4g}{unit}, so the need lies {'inside' if lo <= need <= hi else 'outside'}"
               f" it") if hi > lo else "no range stated"
        out.append({"kind": field, "hardware": hw, "needed": need, "catalog": sv.value, "status": sv.status,
                    "text": f"{_fmt(claimed)}x needs {hw}'s {what} at {need:,.4g}{unit} (catalog {sv.value:,.4g}"
                            f"{unit}, {sv.status}; {rng}), everything else as modeled"})
    return out


def speed_for(env, axis: str, metric: str, target: float) -> float:
    """The per-user speed at which the envelope's ``metric`` falls to ``target`` (nan: never on the curve,
    inf: already below at its start)."""
    col = AXES[axis]
    e = env.sort_values(col)
    x, y = e[col].to_numpy(float), e[metric].to_numpy(float)
    if not len(x):
        return float("nan")
    if target > y.max() * (1 + 1e-9) or target < y.min():
        return float("nan")
    g = np.geomspace(x[0], x[-1], 400)
    v = read(e, g, axis, metric)
    i = int(np.argmax(v <= target))
    return float(g[i])


def other_curve(store, B, model, wl, axis, col, x: float, fa: float, claimed: float, hb: str,
                env_metric: str) -> dict | None:
    """B's curve as the claim needs it: B's figure fa / claimed at x; where the model's B reaches it."""
    if x is None or not (fa and math.isfinite(fa)):
        return None
    env = store.envelope(B, model, wl, axis, env_metric)
    need = fa / claimed
    end = curve_end(env, axis)
    xs = speed_for(env, axis, col, need)
    d = end_deployment(env, axis)
    lay = (f"{d.get('serving', '')}, {d.get('gpus', 0):g} GPUs TP{d.get('tp', 0):g} EP{d.get('ep', 0):g}, "
           f"{d.get('spec_tokens', 0):g} drafts, batch {d.get('batch', 0):g}, bound by {d.get('bound', '?')}")
    if math.isnan(xs) and need > float(env[col].max()):
        text = (f"{_fmt(claimed)}x needs {hb} at {_fmt(need)} {col} at {_fmt(x)} tok/s/user, above the model's {hb} "
                f"peak of {_fmt(float(env[col].max()))} anywhere on its curve")
        return {"kind": "other_curve", "needed": need, "speed_found": None, "curve_end": end, "text": text}
    if math.isnan(xs):
        f_end = float(env.sort_values(AXES[axis])[col].iloc[-1])
        k = x / end
        text = (f"{_fmt(claimed)}x needs {hb} at {_fmt(need)} {col} at {_fmt(x)} tok/s/user, below the model's {hb} "
                f"figure anywhere on its curve (at its end, {_fmt(end)} tok/s/user, {_fmt(f_end)}: {lay}); it needs "
                + (f"{hb}'s curve to end at ~{_fmt(x)} tok/s/user (every per-user speed {k:.2f}x the model's) and "
                   if abs(k - 1) > 0.01 else "")
                + f"{hb}'s figure at its end point {f_end / need:.1f}x below the model's")
        return {"kind": "other_curve", "needed": need, "speed_found": None, "speed_scale": k,
                "curve_end_needed": x, "curve_end": end, "end_figure": f_end, "text": text}
    k = x / xs
    text = (f"{_fmt(claimed)}x needs {hb} at {_fmt(need)} {col} at {_fmt(x)} tok/s/user; the model's {hb} falls that "
            f"low only at ~{_fmt(xs)} tok/s/user, so every {hb} per-user speed would have to be {k:.2f}x the "
            f"model's: its curve ending near ~{_fmt(end * k)} tok/s/user; the model's ends at {_fmt(end)} ({lay})")
    return {"kind": "other_curve", "needed": need, "speed_found": xs, "speed_scale": k, "curve_end_needed": end * k,
            "curve_end": end, "text": text}


def delta_speed(store, S, model, wl, axis, col, env_metric, x0: float, x1: float, claimed: float, hw: str) -> dict:
    """The speed x1* at which the curve has fallen (or risen) by the claimed share from x0."""
    env = store.envelope(S, model, wl, axis, env_metric)
    f0 = float(read(env, x0, axis, col)[0])
    target = f0 * (1 + claimed)
    xs = speed_for(env, axis, col, target)
    end = curve_end(env, axis)
    if math.isnan(xs):
        text = (f"{claimed * 100:+.0f}% from {_fmt(x0)} needs {hw} at {_fmt(target)} {col}; the model's curve stays "
                f"above that to its end at {_fmt(end)} tok/s/user, so it would have to end before {_fmt(x1)}")
    else:
        text = (f"{claimed * 100:+.0f}% from {_fmt(x0)} needs {hw} at {_fmt(target)} {col}; the model's curve "
                f"reaches that at ~{_fmt(xs)} tok/s/user, not at {_fmt(x1)} (its end: {_fmt(end)})")
    return {"kind": "delta_speed", "needed": target, "speed_found": None if math.isnan(xs) else xs, "text": text}


def ttft_wait(row, claimed_s: float, hw: str) -> dict | None:
    """The queue wait a claimed TTFT needs on the model's deployment at that speed: the model's TTFT less its
    waits (prefill queue and capacity wait) is the service part, so the claim needs waits of
    claimed - (TTFT - waits); reported beside the model's waits and prefill utilisation."""
    if row is None:
        return None
    ttft = float(row["ttft_ms"]) / 1e3
    wait = (float(row.get("prefill_queue_ms", 0.0)) + float(row.get("capacity_wait_ms", 0.0))) / 1e3
    service = ttft - wait
    need = claimed_s - service
    rho = float(row.get("prefill_utilization", float("nan")))
    if need <= 0:
        text = (f"{claimed_s:g} s needs {hw}'s service part of TTFT (prefill of the uncached tokens, the first step, "
                f"request overhead) below the model's {service:.3g} s with no wait at all")
    else:
        text = (f"{claimed_s:g} s needs {hw}'s requests to wait ~{need:.3g} s for prefill or a slot (the model's: "
                f"{wait:.3g} s at prefill utilisation {rho:.2f}, on top of {service:.3g} s of service), i.e. a busier "
                f"prefill server or a load above the throughput-optimal one, or uncached inputs longer than the "
                f"workload's median")
    return {"kind": "ttft_wait", "needed_wait_s": need, "model_wait_s": wait, "service_s": service,
            "prefill_utilization": rho, "text": text}


NEED_SPEEDUPS = (1.0, 1.25, 2.0, 5.0)  # kernel speed-ups searched for the 'what would have to be true' text


def _faster(side: Side, s: float) -> Side:
    """The side with decode and prefill kernels s times faster than it already has."""
    pf = side.speedup if side.prefill_speedup is None else side.prefill_speedup
    return side.but(speedup=side.speedup * s, prefill_speedup=pf * s)


def software_needed(C: ClaimSides, fig: Figure, claimed: float, q: float) -> dict:
    """Kernel speed-up s on the first system (decode and prefill together) that gives the claimed figure, searched
    over NEED_SPEEDUPS (log interpolation between them); for the 'what would have to be true' text."""
    if is_latency(C.col) or C.claim.kind == "delta" or not (q and math.isfinite(q)):
        return {"speedup": None, "text": "not searched for this figure"}
    A = C.sides[0]
    rs = []
    for s in NEED_SPEEDUPS:
        sides = [_faster(A, s), *C.sides[1:]]
        rs.append(C.figure(sides=sides).read()["q"] if s != 1.0 else q)
    table = [[s, _f(r)] for s, r in zip(NEED_SPEEDUPS, rs)]
    pts = [(s, r) for s, r in zip(NEED_SPEEDUPS, rs) if r is not None and math.isfinite(r) and r > 0]
    feats = " with the KV host tier on" if A.host_tier else ""
    if not pts:
        return {"speedup": None, "ratios": table, "text": "the model's figure is undefined at this point"}
    if pts[0][1] >= claimed:
        return {"speedup": 1.0, "ratios": table,
                "text": f"no kernel change: {A.hardware} as published ({A.profile}{feats}) already gives "
                        f"{_fmt(pts[0][1])}"}
    for (s0, r0), (s1, r1) in zip(pts, pts[1:]):
        if r0 < claimed <= r1:
            t = math.log(claimed / r0) / math.log(r1 / r0)
            s = math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
            return {"speedup": s, "ratios": table,
                    "text": f"{A.hardware}'s decode and prefill kernels {s:.2f}x as fast as the {A.profile} "
                            f"profile's ({(s - 1) * 100:.0f}% faster){feats}"}
    return {"speedup": None, "ratios": table,
            "text": f"even kernels {NEED_SPEEDUPS[-1]:g}x faster give only {_fmt(pts[-1][1])}"}


def _curve_end_need(C: ClaimSides, model_speed: float, claimed: float) -> dict | None:
    """A claimed curve-end speed (tokens/s per user) needs the end's decode step to take model / claimed of the
    modeled step: the step and the three parts that set it (curves.step_contributors) at the model's curve end."""
    env = C.store.envelope(C.sides[0], C.model, C.wl, C.axis, env_metric(C.col))
    end = end_deployment(env, C.axis)
    step = end.get("step_ms")
    if not step:
        return None
    need = step * model_speed / claimed
    parts = ", ".join(f"{p['part']} {p['ms']:.3g} ms" for p in end.get("contributors") or [])
    return {"kind": "curve_end", "needed_step_ms": need,
            "text": f"{_fmt(claimed)} tok/s/user needs {C.sides[0].hardware}'s curve-end step to take {need:.3g} ms "
                    f"instead of the modeled {step:.3g} ms ({faster_slower(step / need)}; the modeled step is set by "
                    f"{parts})"}


def needs_of(C: ClaimSides, fig: Figure, ev: Evaluation, sw: dict) -> list[dict]:
    """What would have to be true (needs.py): the power or price, the second system's curve (from the model's
    first system and from the seed's own figure for it), the fall along one curve, the kernels."""
    claim, q, c_eff, nom = C.claim, ev["q"], ev["c"], ev["nom"]
    em, needs = env_metric(C.col), []
    finite = q is not None and math.isfinite(q) and q > 0
    if claim.kind != "delta":
        needs += power_or_price(C.col, C.sides[0].hardware, C.sides[1].hardware if claim.kind == "ratio" else None,
                                q, c_eff)
    x = nom.get("x") if claim.kind == "ratio" and not fig.grid_point and finite else None
    if x is not None:
        oc = other_curve(C.store, C.sides[1], C.model, C.wl, C.axis, C.col, x, nom["values"][0], c_eff,
                         C.sides[1].hardware, em)
        needs += [oc] if oc else []
    anchor = _seed_anchor(claim, C.col)
    if anchor and finite:
        sid, fa = anchor
        ha, hb = C.sides[0].hardware, C.sides[1].hardware
        if x is not None:
            oc = other_curve(C.store, C.sides[1], C.model, C.wl, C.axis, C.col, x, fa, c_eff, hb, em)
            if oc:
                needs.append({**oc, "kind": "anchored", "anchor": sid,
                              "text": f"with {ha} at the seed's own {_fmt(fa)} ({sid}): " + oc["text"]})
        elif point(claim, "at").point == "peak" and nom["values"][1]:
            need_b = fa / c_eff
            needs.append({"kind": "anchored", "anchor": sid, "needed": need_b,
                          "text": f"with {ha} at the seed's own {_fmt(fa)} ({sid}), {_fmt(c_eff)}x needs {hb}'s peak "
                                  f"at {_fmt(need_b)} {C.col}; the model's is {_fmt(nom['values'][1])} "
                                  f"({nom['values'][1] / need_b:.2f}x that)"})
    if claim.kind == "delta":
        x0, x1 = point(claim, "from").tps_per_user, point(claim, "to").tps_per_user
        if x0 is not None and x1 is not None:    # the fall between two stated speeds (none from a peak or curve end)
            needs.append(delta_speed(C.store, C.sides[0], C.model, C.wl, C.axis, C.col, em, x0, x1, claim.claimed,
                                     C.sides[0].hardware))
    if claim.kind in ("absolute", "max_interactivity") and C.col == "tps_per_user" and finite:
        needs += [n for n in [_curve_end_need(C, q, claim.claimed)] if n]
    if sw.get("speedup") is not None and sw["speedup"] > 1:
        needs.append({"kind": "kernels", "speedup": sw["speedup"],
                      "text": f"{_fmt(claim.claimed)}{'x' if claim.kind == 'ratio' else ''} needs {sw['text']}"})
    elif not needs and claim.kind == "ratio" and sw.get("ratios"):     # the kernel search, even where it fails
        needs.append({"kind": "kernels", "speedup": sw.get("speedup"), "text": f"{_fmt(claim.claimed)}x: {sw['text']}"})
    return needs


def _seed_anchor(claim: ClaimSpec, col: str) -> tuple[str, float] | None:
    """The seed's own figure for the first system of a ratio claim at the same point: a catalog absolute claim on
    that system, model, workload and metric at an equal operating point (e.g. Rubin's 1.7M at 387 tok/s/user
    beside the 58x there)."""
    if claim.kind != "ratio":
        return None
    for cid in catalog.ids("claims"):
        c = catalog.claim(cid)
        if (c.kind == "absolute" and c.system_ids[0] == claim.system_ids[0] and c.model == claim.model
                and c.workload == claim.workload and c.metric is not None and claim_column(c)[0] == col
                and c.at == claim.at):
            return cid, c.claimed
    return None
