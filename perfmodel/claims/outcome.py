"""The outcome of a check: the verdict on the claim's side of the interval (graded), or, outside it, the named
condition that brings it inside, or one of the four outcomes for a figure the model cannot produce (``cannot``);
the sentence that prints the interval; candidates of an unstated model or axis reported as one
(``under_specified``)."""

from __future__ import annotations

import math

from .curves import AXES
from .fmt import fmt as _fmt
from .interval import distance, width
from .latency import is_latency
from .reading import Figure, env_metric
from .sides import ClaimSides
from .values import Band, Evaluation, magnitude
from .verdict import grade


def graded(C: ClaimSides, ev: Evaluation) -> tuple[dict, dict | None]:
    dist = distance(ev["c"], ev["iv"], C.claim.qualifier if C.claim.kind != "delta" else "about")
    return dist, grade(ev["iv"], dist, ev["ends"], ev["unreached"])


def unit_of(col: str, kind: str) -> str:
    if kind == "delta":
        return " (retained share)"
    if kind in ("ratio",):
        return "x"
    return {"tps_per_user": " tok/s/user", "ttft_s": " s", "e2e_s": " s", "tpot_ms": " ms",
            "agents_per_gpu": " sessions/GPU"}.get(col, "")


def interval_text(iv: dict, dist: dict, claimed: float, unit: str) -> str:
    """'model 3.35x (interval 2.1-5.0x, 2.4x wide; ...) vs claimed 58x: 17.3x the model's figure, 6.2 half-widths'."""
    b = iv["by_source"]
    me = iv["model_error"][0] if iv["model_error"] else {}
    parts = (f"model error x{math.exp(b['model']['down']):.2f}/x{math.exp(b['model']['up']):.2f} "
             f"({me.get('quantity', '?')}, {me.get('workload', 'all')} records, {me.get('region', '?')}, "
             f"{me.get('rows', 0)} held-out rows{'; ' + me['stand_in'] if me.get('stand_in') else ''})")
    z = dist.get("z")
    zt = "n/a" if z is None or math.isnan(z) else f"{z:.2f}"
    w = width(iv)
    hi = "unbounded" if math.isinf(iv["high"]) else f"{_fmt(iv['high'])}{unit}"
    lo = "0" if iv["low"] == 0 else _fmt(iv["low"])
    return (f"model {_fmt(iv['value'])}{unit} (interval {lo} to {hi}, "
            f"{'unbounded' if math.isinf(w) else f'{w:.2g}x'} wide; {parts}) vs claimed "
            f"{_fmt(claimed)}{unit}: {_fmt(dist.get('multiple'))}x the model's figure, {zt} half-widths from it")


def set_verdict(out: dict, verdict: str, condition: str | None, reason: str) -> dict:
    out.update(verdict=verdict, condition=condition, reason=reason)
    return out


def needs_text(needs: list[dict]) -> str:
    return "".join(f". What would have to be true: {n['text']}" for n in needs[:3])


ENGINES = ("vllm", "sglang", "trtllm")      # the engine profiles a baseline may be read on


def name_engine(out: dict, C: ClaimSides, ev: Evaluation) -> None:
    """A consistent ratio claim that holds only against the engine the baseline is read on names it (flag)."""
    turn = _engine_turn(C, ev) if C.claim.kind == "ratio" and not C.software_only and not is_latency(C.col) else None
    if turn:
        out["engine_turn"] = turn
        out["flag"] = "; ".join(t for t in (out.get("flag"), turn["text"]) if t)


def _engine_turn(C: ClaimSides, ev: Evaluation) -> dict | None:
    """A consistent ratio claim that holds only against the engine the baseline (B) is read on: B read on each
    other engine profile; where the claim then leaves the interval (ln(c / q') outside [-down, up], the same
    half-widths), the verdict turns on B's engine and says so. None when every engine gives it."""
    A, B = C.sides
    iv, c = ev["iv"], ev["c"]
    prof, assumed = C.profiles[1]
    off = []
    for e in ENGINES:
        if e == B.profile:
            continue
        q2 = C.figure(sides=[A, B.but(profile=e)]).read()
        q = q2["q"] if not q2["unreached"] else math.nan
        if q and math.isfinite(q) and q > 0 and not -iv["down"] <= math.log(c / q) <= iv["up"]:
            off.append((e, q))
    if not off:
        return None
    how = "assumed: the source names none" if assumed else "as published"
    return {"engine": B.profile, "others": {e: q for e, q in off},
            "text": f"it turns on {B.hardware}'s engine: consistent against {B.profile} ({how}); against "
                    + ", ".join(f"{e} the model reads {_fmt(q)}x, outside its error" for e, q in off)}


def software_gap(C: ClaimSides, ev: Evaluation) -> dict:
    """The condition of a software-only multiple (two builds on the same hardware): A's build m = c / q times
    faster relative to B's than the model's profiles make it (q: their modeled ratio, 1 where the profiles are
    the same), the software gap. No hardware bound applies (the older build may be far from the hardware's
    limits), so it is never beyond physics: unknown but checkable by measuring both builds."""
    q, c = ev["q"], ev["c"]
    names = [(ref.engine or s.name) for ref, s in zip(C.claim.systems, C.sides)]
    m = c / q if q and math.isfinite(q) and q > 0 else math.nan
    modeled = ("the model's profiles do not tell the two builds apart (1x)" if C.sides[0] == C.sides[1]
               or not math.isfinite(m) or abs(math.log(q)) < 1e-9 else f"the model's profiles give {_fmt(q)}x")
    word = "faster" if m >= 1 else "slower"
    mm = m if m >= 1 else 1 / m
    short = (f"the software gap: {names[0]} {mm:.3g}x {word} than {names[1]} beyond what the model has, on the same "
             f"{C.sides[0].hardware} [software gap]")
    text = (f"{short[:-15]}: {_fmt(c)}x claimed, {modeled}; a software-only multiple (one hardware, two builds), so "
            "no hardware bound applies (the older build may sit far from the hardware's limits) [software gap: "
            "unknown but checkable, both builds measured on the same workload]")
    return {"kind": "software", "system": C.sides[0].hardware, "key": f"{C.sides[0].hardware} software gap",
            "needed": m, "allowed": True, "tag": "software gap", "within_model_error": False,
            "evidence": "unknown but checkable", "short": short, "text": text}


def on_jump(C: ClaimSides, ev: Evaluation) -> list[str]:
    """The systems whose curve ends within the model's curve-end speed error of the claim's speed (the figure
    changes regime there: finite on one side of the end, unbounded or zero on the other)."""
    x = ev["nom"].get("x")
    p = C.point
    if x is None or p is None or p.point != "speed":
        return []
    return [hw for hw, e in ev["ends"].items()
            if math.isfinite(e.get("end", math.inf)) and e["low"] <= x <= e["high"]]


def _bound_text(c: dict) -> str:
    """The bound a condition passes: the speed-of-light factor, the error band, the same-basis spec range."""
    w = why_not_kind(c)
    if w == "beyond physics":
        s = c.get("sol_factor")
        return f"speed of light allows {magnitude(1 / s)}x faster" if s else str(c.get("bound", ""))
    if w == "specs":
        lo, hi = c["catalog_range"]
        return f"the same-basis range is {lo:.2f}-{hi:.2f}x"
    rs = c.get("ratio_shift")
    if rs and not rs["inside"]:
        lo, hi = rs["band"]
        return (f"the ratio's held-out error allows {1 / lo:.3g}x down to {hi:.3g}x up; the claim is "
                f"{rs['multiple']:.3g}x the model's ratio")
    if c.get("band"):
        lo, hi = c["band"]
        sol = f"; speed of light {magnitude(1 / c['sol_factor'])}x faster" if c.get("sol_factor") else ""
        return (f"the model's cross-validated {c.get('band_quantity', 'speed')} error ({c.get('band_region', '')}) "
                f"allows {Band(lo, hi).words()}{sol}")
    if c.get("bands"):
        return "the two factors spent in quadrature: " + f"{c.get('z', math.nan):.2f} of the model's error"
    return str(c.get("bound", ""))


def why_not_kind(c: dict) -> str:
    from .conditions import why_not
    if c["kind"] == "joint_steps" and not c.get("allowed"):
        return "on the evidence"
    return why_not(c)


def cannot(out: dict, C: ClaimSides, ev: Evaluation, conds: list[dict], text: str, needs: list[dict]) -> dict:
    """No named condition is allowed: one of the four outcomes for a figure the model cannot produce.

    - *on a jump*: a system's curve ends within the model's speed error of the claimed speed, or a step factor
      alone makes the figure jump past the claim, and no pair of step factors gives it: ``not decidable by this
      model``, naming the curve end it turns on;
    - *beyond physics*: every condition is past the speed-of-light bound (printed);
    - *implausible on the evidence*: physics allows it; the model's cross-validated error band (printed), the
      records of that hardware and model, or the source's own stated speeds do not;
    - *inconsistent with the published specs*: the source's own per-GPU multiple at the same point and this per-MW
      (per-dollar) one imply a power (price) ratio outside the catalog's range (``pairs.py``: the steps cannot
      close a gap the source's own figures fix), or power or price ratios outside the same-basis range with no
      step condition."""
    from .verdict import SPEC_INCONSISTENT, curve_end_text
    kinds = [why_not_kind(c) for c in conds]
    jump_at = on_jump(C, ev)
    if "on a jump" in kinds or jump_at:
        hws = jump_at or [h for c in conds if c.get("jump") for h in c.get("jump_systems", [c["system"]])]
        out["implausible"] = "on a jump"
        ridge = next((c["ridge"]["text"] for c in conds if c.get("jump") and c.get("ridge", {}).get("text")), "")
        cond = ("on a jump: the figure changes regime within the model's speed error of the claimed speed; "
                + curve_end_text(ev["ends"], list(dict.fromkeys(hws))) + (f"; {ridge}" if ridge else ""))
        return set_verdict(out, "not decidable by this model", cond,
                        text + "; " + cond + "; " + "; ".join(c["text"] for c in conds[:2]))
    spec = next((x for x in out.get("cross_claims") or [] if x["verdict"] == SPEC_INCONSISTENT
                 and x["claims"][1] == C.claim.id), None)
    if spec is not None:       # the source's own per-GPU figure fixes the rest: only the basis is left, off the specs
        out["implausible"] = "specs"
        cond = f"{spec['text'].split('; ')[0]}: {spec['condition']}"
        return set_verdict(out, SPEC_INCONSISTENT, cond, text + "; " + cond + ". Conditions: "
                        + "; ".join(c["text"] for c in conds[:3]))
    steps_ = [(c, k) for c, k in zip(conds, kinds) if c["kind"] in ("steps", "joint_steps")]
    if steps_ and all(k == "beyond physics" for _, k in steps_):
        kind = "beyond physics"
    elif steps_:
        kind = "on the evidence"
    else:
        out["implausible"] = "specs"
        cond = "; ".join(f"{c['short']}: {_bound_text(c)}" for c in conds[:2])
        return set_verdict(out, SPEC_INCONSISTENT, cond, text + "; " + cond)
    out["implausible"] = kind
    pick = [c for c, k in zip(conds, kinds) if k == kind] or conds
    cond = f"{kind}: " + "; ".join(f"{c['short']} ({_bound_text(c)})" for c in pick[:2])
    return set_verdict(out, "implausible", cond, text + "; " + cond + ". Conditions: "
                    + "; ".join(c["text"] for c in conds[:3]) + needs_text(needs))


TAG_RANK = ("within error", "supported by records", "software headroom", "beyond the fitted ranges",
            "beyond error, records allow",
            "vendor's word", "beyond error", "contradicts records")


def rank(c: dict) -> int:
    """Order of the allowed conditions a verdict names: a power or price ratio (a basis, checkable) first, then
    step conditions from the best evidenced (within the model's error) to the least (contradicted by records)."""
    if c["kind"] not in ("steps", "joint_steps"):
        return -1
    return TAG_RANK.index(c["tag"]) if c.get("tag") in TAG_RANK else len(TAG_RANK)


def up_to_cliff(C: ClaimSides, fig: Figure, ev: Evaluation) -> dict | None:
    """Rule 7: an 'up to' claim below the model's maximum over the speeds both reach, where that maximum sits on a
    system's cliff: the speed at which the model reaches the claimed multiple (the condition: the fastest speed
    the source tested was about there)."""
    nom, c = ev["nom"], ev["c"]
    if C.claim.qualifier != "up_to" or "xs" not in nom or not (ev["q"] and math.isfinite(ev["q"])):
        return None
    xs, qs = nom["xs"], nom["qs"]
    if not c < ev["q"]:
        return None
    hit = [i for i in range(len(xs)) if qs[i] >= c]
    if not hit:
        return None
    i = hit[0]
    x_c = float(xs[i])
    ends = {hw: e["end"] for hw, e in ev["ends"].items()}
    short = min(ends, key=lambda h: ends[h])
    return {"kind": "tested_speed", "key": f"fastest tested speed on {C.model}", "speed": x_c, "allowed": True,
            "short": f"fastest tested speed ~{_fmt(x_c)} tok/s/user (model max {_fmt(ev['q'])}x on {short}'s cliff)",
            "evidence": "unknown but checkable (the source's published configurations)",
            "text": f"the fastest speed tested was ~{_fmt(x_c)} tok/s/user: the model reaches {_fmt(c)}x there; its "
                    f"maximum {_fmt(ev['q'])}x at {_fmt(nom['x'])} sits on {short}'s cliff (curve end "
                    f"{_fmt(ends[short])}) [unknown but checkable: the source's published configurations]"}


FIXED_PARTS = ("t_collective_latency_ms", "t_launch_ms", "t_layer_floor_ms", "t_overhead_ms")


def fixed_step(C: ClaimSides, fig: Figure, st: dict) -> dict | None:
    """Rule 5 for a curve-end speed: the curve-end step the claimed speed needs (modeled step x the factor at the
    claim: step_need = step x model speed / claimed speed, ms) and the fixed part of it (latencies, launches,
    floors, scheduler) that leaves, against the modeled one and the speed-of-light step."""
    kf = st.get("factor") or st.get("edge")
    if kf is None or kf >= 1:
        return None
    env = C.store.envelope(C.sides[0], C.model, C.wl, C.axis, env_metric(C.col))
    if not len(env):
        return None
    row = env.loc[env[AXES[C.axis]].idxmax()]
    step = float(row.get("step_ms", float("nan")))
    fixed = sum(float(row[p]) for p in FIXED_PARTS if p in row and math.isfinite(float(row[p])))
    if not (step > 0):
        return None
    need = step * kf
    fixed_need = fixed - (step - need)
    sol = C.sides[0].but(profile="speed-of-light", corner="value", speedup=1.0, prefill_speedup=None)
    es = C.store.envelope(sol, C.model, C.wl, C.axis, env_metric(C.col))
    sol_step = float(es.loc[es[AXES[C.axis]].idxmax()].get("step_ms", float("nan"))) if len(es) else float("nan")
    hw, tag = C.sides[0].hardware, st.get("tag", "")
    head = f"{_fmt(C.claim.claimed)} tok/s/user needs a {need:.2g} ms curve-end step on {hw} (modeled {step:.2g} ms)"
    part = (f"its fixed part <= {fixed_need:.2g} ms (modeled {fixed:.2g} ms)" if fixed_need > 0 else
            f"no fixed part left (modeled {fixed:.2g} ms fixed)")
    txt = f"{head}: {part}; speed of light: a {sol_step:.2g} ms step [{tag}: {st['evidence']}]"
    short = f"{head}: {part}; speed of light {sol_step:.2g} ms"
    return {"fixed_needed_ms": fixed_need, "fixed_ms": fixed, "step_ms": step, "step_needed_ms": need,
            "sol_step_ms": sol_step, "text": txt, "short": short}


CANDIDATE_KEYS = ("verdict", "condition", "reason", "model", "systems", "hardware_only", "as_measured", "interval",
                  "distance", "needs", "ends", "implausible")


def under_specified(out: dict, per: dict[str, dict], what: str) -> dict:
    """Rule 6: candidates of an unstated model or axis reported as one: their common verdict when every candidate
    gives the same unconditional one, else ``not checkable (under-specified)`` with the range over them (never the
    candidate that fits)."""
    out["per_model" if what == "model" else "per_candidate"] = per
    raw = [(r["model"] or {}).get("value") for r in per.values()]
    vals: list[float] = [v for v in raw if v is not None and math.isfinite(v)]
    verdicts = {r["verdict"] for r in per.values()}
    summ = "; ".join(f"{m}: {_fmt((r['model'] or {}).get('value'))} {r['verdict']}" for m, r in per.items())
    first = next(iter(per.values()))
    out.update({k: first[k] for k in CANDIDATE_KEYS[3:] if first.get(k) is not None})
    if len(verdicts) == 1 and verdicts <= {"consistent", "implausible", "not checkable"}:
        return set_verdict(out, first["verdict"], first["condition"],
                        f"the same for every candidate {what} (the claim names none): " + summ)
    if verdicts == {"consistent only if"}:      # one verdict, a condition per candidate: all of them, none picked
        out["candidate_range"] = [min(vals), max(vals)] if vals else None
        return set_verdict(out, "consistent only if", f"for every candidate {what} (none stated), each with its own "
                        "condition: " + "; ".join(f"{m}: {r['condition']}" for m, r in per.items()), summ)
    out["candidate_range"] = [min(vals), max(vals)] if vals else None
    rng = f"{_fmt(min(vals))}-{_fmt(max(vals))}" if vals else "undefined"
    return set_verdict(out, "not checkable (under-specified)", f"the {what} is unstated and the {len(per)} candidates "
                    f"disagree (verdicts or the conditions they need): the model's figure ranges {rng} over them",
                    summ)
