"""Check one published claim against the model: one pipeline for every kind of figure (issue 32's rules).

A claim's figure Q is a product of system figures (``reading.Figure``: a ratio A/B, one system's figure, or the
retained share to/from of a change). One pipeline (``_check_model``):

1. the reading at the claim's point (``reading.py``), with the settings the source states (GPUs, draft tokens,
   serving mode: rule 2) and the tested speeds both systems reach;
2. the interval (``interval.py``): the model's cross-validated error of the claim's kind only (rule 1); the
   profile's fast corner is reported as software headroom;
3. graded on the claim's side (``verdict.grade``, rule 3); outside, an "up to" below the model's maximum on a
   cliff names the speed at which the model reaches it (rule 7); else every named condition is solved
   (``conditions.py``: power or price ratio, each system's steps bounded by speed of light and by the speeds the
   source measured; for a curve-end speed the fixed part of the step, rule 5) and the first allowed one is the
   condition; none allowed: ``implausible``;
4. an unstated model is read for every candidate; candidates that disagree make the claim ``not checkable
   (under-specified)`` with the range over them (rule 6). Shared unknowns are solved once per source from the
   results (``shared.py``, rule 4).

Every check returns a plain dict (JSON-ready); the CLI and the report only format it. Nothing here tunes a
parameter toward a claim.

The pipeline's rooms: the sides and the figure (sides.py), the reading and what is recorded of it (findings.py),
the verdict and the outcomes outside the interval (outcome.py), what would have to be true (needs.py).
"""

from __future__ import annotations

import math
from pathlib import Path

from .. import catalog
from ..analyses.model_error import half_widths
from ..errors import SpecError
from ..specs.claim import ClaimSpec, OperatingPoint
from .arith import arithmetic_checks, spec_ratio_check
from .basis import basis
from .conditions import conditions
from .curves import CurveStore
from .fields import point, scenario_note, speed
from .fields import slo as claim_slo
from .findings import basis_need, compare_software, evaluate, headroom, record_reading, with_precedent
from .fmt import fmt as _fmt
from .fmt import number as _f
from .interval import distance, interval, spread_part, summary
from .latency import carried as latency_carried
from .latency import is_latency
from .latency import name as latency_name
from .needs import needs_of, software_needed, ttft_wait
from .outcome import (
    CANDIDATE_KEYS,
    cannot,
    fixed_step,
    graded,
    interval_text,
    name_engine,
    needs_text,
    rank,
    set_verdict,
    software_gap,
    under_specified,
    unit_of,
    up_to_cliff,
)
from .sides import ClaimSides, claim_column, point_axis, single_request
from .verdict import CONSISTENT_Z, WIDE, grade

TOL = 0.15               # relative slack of a claim's own rounded arithmetic (kept for the report's text)
DEFAULT_MODELS = ("deepseek-v4.1-flash", "deepseek-v4-pro", "glm-5.2", "kimi-k3")
DEFAULT_WORKLOAD = "agentx"
__all__ = ["CONSISTENT_Z", "WIDE", "check", "check_all", "load_claim", "json_safe"]

METRIC_TEXT = {
    "total_tps_per_gpu": "total tokens/s per GPU (input incl. cached prefix + output)",
    "output_tps_per_gpu": "output (generated) tokens/s per GPU",
    "total_tps_per_mw": "total tokens/s per MW of all-in power",
    "output_tps_per_mw": "output tokens/s per MW of all-in power",
    "total_tokens_per_usd": "total tokens per US dollar (GPU-hour price estimate)",
    "output_tokens_per_usd": "output tokens per US dollar",
    "tps_per_user": "tokens/s per user",
    "ttft_s": "time to first token, s",
    "tpot_ms": "time per output token (inter-token latency), ms",
    "e2e_s": "end-to-end latency of one request, s",
}


# ------------------------------------------------------------------ loading and claim fields
def load_claim(name: str | Path | ClaimSpec) -> ClaimSpec:
    """A claim by catalog id or YAML path (one-line SpecError on bad input), every catalog id it names known."""
    claim = name if isinstance(name, ClaimSpec) else catalog.claim(str(name))
    unknown_ids(claim)
    return claim


def unknown_ids(claim: ClaimSpec) -> None:
    """Raise one SpecError naming every unknown catalog id of a claim at once (each system's hardware and profile,
    the model, the workload), each with the catalog's suggestion, instead of the first one met."""
    from ..errors import SpecError
    refs = [(f"systems[{i}].hardware", catalog.hardware, s.hardware) for i, s in enumerate(claim.systems)]
    refs += [(f"systems[{i}].profile", catalog.profile, s.profile) for i, s in enumerate(claim.systems) if s.profile]
    refs += [(f, get, v) for f, get, v in (("model", catalog.model, claim.model),
                                           ("workload", catalog.workload, claim.workload)) if v]
    bad = []
    for field, get, v in refs:
        try:
            get(v)
        except SpecError as e:
            bad.append((field, e.problem))
    if len(bad) == 1:
        raise SpecError(bad[0][1], field=bad[0][0])
    if bad:
        raise SpecError(f"{len(bad)} unknown ids: " + "; ".join(f"{f}: {p}" for f, p in bad), field="claim")


def _describe_point(p: OperatingPoint | None, floor_assumed: bool = False) -> str:
    """The point in words; ``floor_assumed``: the speed floor is the catalog's default, not the source's."""
    if p is None:
        return ""
    if p.point == "speed":
        s = f"{'~' if p.approx else ''}{p.tps_per_user:g} tok/s/user"
    else:
        s = {"peak": "each system's peak", "fastest_common": "the fastest speed both reach",
             "max_speed": "the end of the curve", "matched": "matched interactivity (speed not given)"}[p.point]
    if p.min_tps_per_user:
        s += f" at >= {p.min_tps_per_user:g} tok/s/user" + (" (assumed)" if floor_assumed else "")
    if p.tested_range:
        s += f" over the tested {p.tested_range[0]:g}-{p.tested_range[1]:g} tok/s/user"
    if p.percentile:
        s += f", P{p.percentile:g}"
    if p.interactivity:
        s += f", {p.interactivity} axis"
    if p.ttft_ms:
        s += f", TTFT <= {p.ttft_ms:g} ms"
    return s


def sides_of(store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict) -> ClaimSides:
    """The claim's sides (sides.ClaimSides) with the check as their judge: another claim's check result, read
    from the same store (conditions.judged: whether a source's fastest run is implausible, what the source's own
    claim on one system needs of its steps)."""
    return ClaimSides(store, claim, model, wl, out, judge=lambda other: check(other, store))


def _check_model(store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict) -> dict:
    """The one pipeline for one model: reading and interval, verdict, what would have to be true, conditions."""
    C = sides_of(store, claim, model, wl, out)
    if C.col == "agents_per_gpu":
        return _check_agents(C, out)
    fig = C.figure()
    ev = evaluate(C, fig)
    from .story import grid
    out["story_grid"] = grid(C, fig, ev)       # the figure over both systems' step factors (story.py)
    dist, g = graded(C, ev)
    record_reading(out, C, fig, ev, dist)
    sw = ({"speedup": None, "text": f"not searched: {g['verdict']}"} if g is not None else
          software_needed(C, fig, claim.claimed, ev["q"]))
    compare_software(out, C, ev["q"], sw)
    out["needs"] = needs = needs_of(C, fig, ev, sw)
    out["headroom"] = headroom(C, ev)
    text = interval_text(ev["iv"], dist, ev["c"], unit_of(C.col, claim.kind))
    ttft_blind = C.col in ("ttft_s", "e2e_s") and not _load_stated(C)   # a TTFT (or E2E) needs its load
    shared_basis = basis_need(C, ev)
    if shared_basis and not (claim.qualifier == "up_to" and "xs" in ev["nom"] and ev["c"] < ev["q"]):
        out["shared_terms"] = [shared_basis]      # what every per-MW / per-$ ratio needs of the source's power/price
    if ttft_blind:      # both sides of the interval: a TTFT with no load stated is never graded (symmetric rule)
        hw = C.sides[0].hardware
        tw = ttft_wait(ev["nom"]["rows"][0], ev["c"], hw)
        needs += [tw] if tw else []
        return set_verdict(out, "not checkable", None,
                        text + f". The claim states no load (concurrency or request rate) and no prefill capacity for "
                        f"{hw}: the model's TTFT is its queue's P50 on the throughput-optimal deployment at that "
                        f"speed, and a TTFT inside or outside that interval can come from a load or a prefill:decode "
                        f"split the model is not told" + needs_text(needs))
    if g:
        out["flag"] = g.get("flag")
        name_engine(out, C, ev)
        if not is_latency(C.col):    # what this agreeing claim allows of each system's steps (shared.py)
            from .conditions import steps_range
            out.setdefault("shared_terms", []).extend(
                r for hw in dict.fromkeys(t.side.hardware for t in fig.terms)
                if (r := steps_range(C, fig, ev, hw)) is not None)
        return set_verdict(out, g["verdict"], g["condition"], text)
    if C.software_only:         # two builds on one hardware: the condition is the software gap, no physics bound
        gap = software_gap(C, ev)
        out["conditions"] = [gap]
        return set_verdict(out, "consistent only if", gap["short"], text + "; " + gap["text"])
    cliff = up_to_cliff(C, fig, ev)
    if cliff:
        out["conditions"] = [cliff]
        return set_verdict(out, "consistent only if", cliff["short"], text + "; " + cliff["text"])
    conds = conditions(C, fig, ev)
    out["conditions"] = conds
    noop = next((c for c in conds if c.get("noop")), None)
    if noop:        # a step change under 2% moves the figure through the claim: a jump of the modeled curve
        out["flag"] = (f"the claim sits on a jump of the modeled curve: {noop['system']}'s steps "
                       f"{abs(noop['factor'] - 1) * 100:.1f}% {'faster' if noop['factor'] < 1 else 'slower'} than "
                       "modeled reach it, far inside the model's speed error")
        return set_verdict(out, "consistent", None, text + "; " + out["flag"])
    if not any(c["allowed"] and c.get("tag") in ("within error", "supported by records") for c in conds):
        from .joint import joint_steps  # one unknown at a time does not do it: both systems' steps
        j = joint_steps(C, fig, ev)
        conds += [j] if j else []
    ok = sorted((c for c in conds if c["allowed"]), key=rank)
    if C.col == "tps_per_user" and conds:
        st = next((c for c in conds if c["kind"] == "steps"), None)
        fixed = fixed_step(C, fig, st) if st else None
        if st and fixed:
            st["text"], st["short"] = fixed["text"], fixed["short"] + " [" + st["short"].rsplit("[", 1)[-1]
        elif st and st.get("edge") is None and st.get("sol_factor"):
            sol_end = ev["q"] / st["sol_factor"]
            st["text"] = st["short"] = (f"the claimed speed is above the speed-of-light profile's curve end "
                                        f"({_fmt(sol_end)} tok/s/user)")
            st["fixed_step"] = fixed
    if ok:
        return set_verdict(out, "consistent only if", " or ".join(c["short"] for c in ok[:2]),
                        text + "; " + " or ".join(c["text"] for c in ok))
    if conds:
        return cannot(out, C, ev, conds, text, needs)
    un = ev["nom"]["unreached"]
    ends_t = ", ".join(f"{h} {_fmt(ev['ends'][h]['end'])}" for h in un)
    why = (f"{' and '.join(un)} cannot reach the claim's point in the model: more than one named condition is "
           f"needed (each curve's end: {ends_t} tok/s/user)"
           if len(un) > 1 else "no single named condition moves the figure to the claim")
    return set_verdict(out, "not decidable by this model", why, text)


def _load_stated(C: ClaimSides) -> bool:
    return single_request(C.claim) or any(h.concurrency for s in C.sides for h in C.claim.hints_for(s.hardware))


def _check_agents(C: ClaimSides, out: dict) -> dict:
    """agents_per_gpu: the most sessions per GPU within the SLO (analyses/agents.py) at each profile corner, with
    the rate error; graded by the same rules."""
    from ..analyses.agents import agents_per_gpu
    at, S = point(C.claim, "at"), C.sides[0]
    speed(at, "at")                                       # the SLO's floor: a point 'speed' states it
    slo = claim_slo(at)
    vals = {c: agents_per_gpu(C.store.points(S.but(corner=c), C.model, C.wl), slo) for c in ("value", "pess", "opt")}
    res = vals["value"]
    out["systems"] = [{"name": S.name, "hardware": S.hardware, "profile": S.profile,
                       "profile_assumed": C.profiles[0][1], "max_tps_per_user": None}]
    if res.value is None:
        out["model"] = {"value": None, "band": [None, None]}
        return set_verdict(out, "implausible", None, f"no modeled deployment meets the SLO {res.slo.text()}: "
                                                  f"{res.reason}")
    band = [vals[c].value if vals[c].value is not None else 0.0 for c in ("pess", "opt")]
    h = half_widths("rate", "all")
    iv = interval(res.value, tuple(band), [], [spread_part(res.value, [res.value * math.exp(-h["down"]),
                                                                       res.value * math.exp(h["up"])],
                                                           label="the model's own error (rate, all)")])
    dist = distance(C.claim.claimed, iv, C.claim.qualifier)
    out["model"] = {"value": res.value, "band": band, "interval": [_f(iv["low"]), _f(iv["high"])]}
    out["interval"], out["distance"] = summary(iv), dist
    g = grade(iv, dist, {}, {})
    text = interval_text(iv, dist, C.claim.claimed, " sessions/GPU")
    if g:
        return set_verdict(out, g["verdict"], g["condition"], text)
    return set_verdict(out, "implausible", None, text)


# ------------------------------------------------------------------ entry points
def _ttft_siblings(claim: ClaimSpec) -> list[str]:
    """The catalog's TTFT claims on one of this claim's systems, for the same model and workload."""
    out = []
    for cid in catalog.ids("claims"):
        c = catalog.claim(cid)
        if (c.id != claim.id and c.metric is not None and c.metric.quantity == "ttft_s" and c.model == claim.model
                and c.workload == claim.workload and set(c.system_ids) <= set(claim.system_ids)):
            out.append(cid)
    return out


def _inherit_ttft(claim: ClaimSpec, out: dict, store: CurveStore) -> dict:
    """An E2E-axis comparison that is not consistent inherits 'not checkable' from TTFT claims on its systems that
    the model cannot check: its E2E gap is set by TTFT (rule: one operating point, one meaning)."""
    p = claim.at
    if claim.kind != "ratio" or p is None or p.interactivity != "e2e" or out["verdict"] == "consistent":
        return out
    sib = [i for i in _ttft_siblings(claim) if check(i, store)["verdict"] == "not checkable"]
    if not sib:
        return out
    out["inherited_from"] = sib
    return set_verdict(out, "not checkable", None,
                    f"an E2E-axis comparison (the per-user speed includes TTFT) whose TTFT the model cannot check: "
                    f"{', '.join(sib)} {'is' if len(sib) == 1 else 'are'} not checkable (no load or prefill capacity "
                    f"stated). Without the TTFT check: {out['verdict']}"
                    + (f" {out['condition']}" if out.get("condition") else "") + f"; {out['reason']}")


def read_on(claim: ClaimSpec, wl: str) -> str:
    """The workload version and the statistic a claim is read on, e.g. 'agentx (AgentX as the seed articles
    describe it), P90 E2E-normalised per-user speed': the claim's own percentile and axis where it states them,
    else the workload's published convention (workloads/*.yaml ``interactivity_percentile``, ``interactivity``)."""
    w = catalog.workload(wl)
    p = claim.at or claim.to
    e2e = (p.interactivity == "e2e") if (p and p.interactivity) else getattr(w, "interactivity", "itl") == "e2e"
    q = p.percentile if (p and p.percentile) else w.interactivity_percentile
    kind = "E2E-normalised" if e2e else "decode (1/TPOT)"
    src = "claim" if (p and p.percentile) else "workload convention"
    return f"{w.id}, P{q:g} {kind} per-user speed ({src}); throughput counts {w.throughput_counts} tokens"


def check(claim, store: CurveStore | None = None, models=DEFAULT_MODELS) -> dict:
    """Check one claim (id, path or ClaimSpec). Returns a JSON-ready dict with ``verdict``, ``condition``,
    ``reason``, the model's value, interval and band, each system's curve end (and its range), sensitivity, the
    hardware-only and as-measured ratios, what would have to be true, and the assumptions the verdict rests on.

    Units: ``claimed`` and ``model.value`` / ``band`` / ``interval`` are in the claim's metric (a ratio claim:
    dimensionless A/B; an absolute one: the metric's unit, e.g. total tokens/s per GPU, or tokens/s per user
    for a max-interactivity claim); ``distance.multiple`` = claimed / model (dimensionless), ``distance.z`` in
    half-widths of the interval; each ``systems`` entry's ``max_tps_per_user`` in tokens/s per user."""
    given, claim = claim, load_claim(claim)
    store = _store_for(store or CurveStore(), claim.weights)
    out = {"id": claim.id, "title": claim.title, "kind": claim.kind, "claimed": claim.claimed,
           "claimed_range": list(claim.claimed_range) if claim.claimed_range else None,
           "qualifier": claim.qualifier, "source": claim.source, "quote": claim.quote,
           "systems_claimed": claim.system_ids, "model_id": claim.model, "workload": claim.workload,
           "unstated": list(claim.unstated), "assumed_fields": claim.assumed,
           "arithmetic": arithmetic_checks(claim), "assumptions": [], "alternatives": []}
    if claim.kind == "spec_ratio":
        r = spec_ratio_check(claim)
        out["spec"] = r
        out["metric"] = claim.spec_field
        near = r.get("nearest")
        out["distance"] = {"multiple": claim.claimed / near["ratio"] if near else None, "z": None, "side": None,
                           "nearest_pair": near["ratio"] if near else None}
        return set_verdict(out, r["verdict"], r["condition"], r["reason"])
    from .pairs import cross_checks
    out["cross_claims"] = [x for x in cross_checks([catalog.claim(i) for i in catalog.ids("claims")])
                           if claim.id in x["claims"]]
    col, _ = claim_column(claim)
    out["metric"] = col
    out["metric_text"] = METRIC_TEXT.get(col, col)
    if is_latency(col):      # the quantity named with its percentile (the record format: P50 unless stated)
        q = claim.metric.percentile if claim.metric else None
        out["statistic"] = latency_name(col, q)
        out["metric_text"] = f"{out['statistic']} ({out['metric_text']})"
        if q is None:
            out["assumptions"].append(f"{col}: percentile unstated, P50 (the record format's default)")
        elif latency_carried(col, q) != q:
            out["assumptions"].append(f"{col}: P{q:g} is not modeled; read at P{latency_carried(col, q):g}")
    b = basis(claim, col)
    if b:
        out["basis"] = b
        out["assumptions"].append("basis: " + b["text"])
    p = claim.at or claim.to
    out["axis"] = point_axis(p)
    out["at"] = _describe_point(claim.at, "at.min_tps_per_user" in claim.unstated) if claim.at else f"{_describe_point(claim.from_)} -> {_describe_point(claim.to)}"
    per_system = [f"{ref.hardware} {ref.weights}" for ref in claim.systems if ref.weights is not None]
    out["weights"] = store.weights if not per_system else ", ".join(per_system)
    out["weights_stated"] = claim.weights is not None or bool(per_system)
    wl = claim.workload or DEFAULT_WORKLOAD
    if claim.workload is None:
        out["assumptions"].append(f"workload unstated: {wl} assumed")
    out["read_on"] = read_on(claim, wl)
    try:
        scenario_note(claim, wl, out)
    except SpecError as exc:        # a scenario the workload lacks: one line naming the claim's file
        raise exc.in_file(str(given)) if str(given).endswith((".yaml", ".yml")) else exc
    if p and p.interactivity == "e2e" and p.percentile in (50, 90):
        out["assumptions"].append(f"P{p.percentile:.0f} E2E axis: the queue's P{p.percentile:.0f} TTFT for "
                                  "requests of the workload's median lengths (the catalog publishes no spread of "
                                  "request lengths)")
    if p and p.point == "peak" and not (p.min_tps_per_user or p.ttft_ms):
        out["assumptions"].append("peak: the source states no speed floor or TTFT limit, so each system's highest "
                                  "figure anywhere on its curve")
    if claim.model and _axis_unstated(claim):
        # the axis is unstated: read on each candidate axis, reported as one (rule 6)
        axes = ("itl", "e2e")
        per = {}
        for ax in axes:
            c2 = claim.model_copy(update={"at": p.model_copy(update={"interactivity": ax})})
            per[f"{ax} axis"] = _candidate(_check_model(store, c2, claim.model, wl, _fresh(out)))
        return with_precedent(under_specified(out, per, "per-user axis"), store, claim, wl)
    if claim.model:
        return with_precedent(_inherit_ttft(claim, _check_model(store, claim, claim.model, wl, out), store), store,
                          claim, wl)
    # model unstated: a search over the candidate models, reported as one
    per = {m: _candidate(_check_model(store, claim, m, wl, _fresh(out))) for m in models}
    return under_specified(out, per, "model")


def _store_for(store: CurveStore, weights: str | None) -> CurveStore:
    """The store a claim is read from: in the number format it quotes (``claim.weights``), a sibling store of the
    same deployment space kept on the first (one per format), else the store as given."""
    if weights is None or getattr(store, "weights", None) == weights or not isinstance(store, CurveStore):
        return store
    sib = store.__dict__.setdefault("_by_weights", {})
    if weights not in sib:
        sib[weights] = CurveStore(weights=weights, space=dict(store.space))
    return sib[weights]


def _fresh(out: dict) -> dict:
    return {**out, "assumptions": list(out["assumptions"]), "alternatives": []}


def _candidate(sub: dict) -> dict:
    return {k: sub.get(k) for k in CANDIDATE_KEYS}


def _axis_unstated(claim: ClaimSpec) -> bool:
    """The source names no per-user axis (none given, and listed unstated) for a figure read at a speed or a
    curve end (a peak needs no axis)."""
    p = claim.at
    return (claim.kind != "delta" and p is not None and p.interactivity is None and p.point != "peak"
            and "at.interactivity" in claim.unstated)


def check_all(store: CurveStore | None = None, ids=None) -> list[dict]:
    store = store or CurveStore()
    return [check(i, store) for i in (ids or catalog.ids("claims"))]


def json_safe(o):
    """A check result made strict JSON: NaN and inf -> null (a number field is a number or null), numpy scalars
    -> Python numbers; an infinite value of key K also gets ``K_reason`` ('unbounded: ...') beside it."""
    if hasattr(o, "item") and not isinstance(o, (dict, list, tuple)):
        o = o.item()
    if isinstance(o, float):
        return None if not math.isfinite(o) else o
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            v = v.item() if hasattr(v, "item") else v
            out[str(k)] = json_safe(v)
            if isinstance(v, float) and math.isinf(v):
                out[f"{k}_reason"] = (f"{'' if v > 0 else '-'}unbounded: a division by zero (a figure of 0, or "
                                      "an interval of zero width)")
        return out
    if isinstance(o, (list, tuple)):
        return [json_safe(v) for v in o]
    if hasattr(o, "item"):
        return json_safe(o.item())
    return o
