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
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from .. import catalog
from ..analyses.model_error import CURVE_END_CONCURRENCY, half_widths, region_of
from ..specs.claim import ClaimSpec, OperatingPoint
from .arith import arithmetic_checks, spec_ratio_check
from .basis import basis
from .conditions import conditions
from .curves import AXES, CurveStore, Side, curve_end, end_deployment, peak
from .fields import metric, point, speed
from .fields import slo as claim_slo
from .fmt import faster_slower
from .fmt import fmt as _fmt
from .interval import distance, interval, spread_part, summary, width
from .latency import carried as latency_carried
from .latency import is_latency
from .latency import name as latency_name
from .needs import delta_speed, other_curve, power_or_price, ttft_wait
from .reading import Figure, Term, env_metric
from .verdict import CONSISTENT_Z, WIDE, grade

TOL = 0.15               # relative slack of a claim's own rounded arithmetic (kept for the report's text)
NEED_SPEEDUPS = (1.0, 1.25, 2.0, 5.0)  # kernel speed-ups searched for the 'what would have to be true' text
DEFAULT_MODELS = ("deepseek-v4.1-flash", "deepseek-v4-pro", "glm-5.2", "kimi-k3")
DEFAULT_WORKLOAD = "agentx"
DEFAULT_PROFILE = "vllm"
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


def _f(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _profile_for(claim: ClaimSpec, i: int) -> tuple[str, bool]:
    """(profile id, assumed?) for system i: stated; else from the engine text; else the other system's."""
    s = claim.systems[i]
    if s.profile:
        return s.profile, False
    eng = (s.engine or "").lower()
    if "dynamo" in eng:
        return ("dynamo-trtllm" if "tensorrt" in eng or "trt" in eng else "dynamo-vllm"), True
    for o in claim.systems:
        if o.profile:
            return o.profile, True
    return DEFAULT_PROFILE, True


def _host_tier(claim: ClaimSpec, hw: str) -> bool | None:
    for h in claim.hints_for(hw):
        if h.kv_placement == "hbm+host":
            return True
        if h.kv_placement == "hbm":
            return False
    return None


PACKAGING = re.compile(r"\b(tray|board|baseboard|sled|chassis|blade|package)s?\b", re.IGNORECASE)


def _packaging_hint(h) -> bool:
    """A ``gpus`` hint that describes how the hardware is packaged (its note names a tray, board, sled, ...) and
    no parallel layout: kept apart from the serving instance."""
    return bool(h.gpus and h.note and PACKAGING.search(h.note) and h.tp is None and h.ep is None)


def _gpus(claim: ClaimSpec, hw: str) -> tuple[int, ...] | None:
    """The serving instance's GPUs the source states (a packaging figure, tray_gpus or a tray-like note, never)."""
    for h in claim.hints_for(hw):
        if h.gpus and not _packaging_hint(h):
            return (h.gpus,)
    return None


def system_gpus(claim: ClaimSpec, i: int) -> tuple[int, str]:
    """(GPUs in system i as a per-system figure counts them, where from): the claim's ``gpus_per_system``, else
    the catalog's NVLink domain (a 72-GPU NVL72 rack, an 8-GPU HGX node)."""
    ref = claim.systems[i]
    if ref.gpus_per_system:
        return ref.gpus_per_system, "the claim"
    v = catalog.hardware(ref.hardware).value("scaleup_domain_gpus")
    return int(v or 1), "the catalog's NVLink domain"


def _per_system(claim: ClaimSpec) -> bool:
    return claim.metric is not None and claim.metric.per == "rack"


def software_only(claim: ClaimSpec) -> bool:
    """A ratio of two builds (engines, versions, settings) on the same hardware: a software multiple."""
    return claim.kind == "ratio" and len(set(claim.system_ids)) == 1


def _single_request(claim: ClaimSpec) -> bool:
    """The source states one request in flight (a concurrency-1 hint, or a single session at the curve end)."""
    return (any(h.concurrency == 1 for h in claim.deployment_hints)
            or (claim.at is not None and claim.at.point == "max_speed"))


def _stated(claim: ClaimSpec, hw: str, field: str) -> bool:
    """Whether the source states a deployment hint (not listed in ``unstated`` as the catalog's assumption)."""
    for i, h in enumerate(claim.deployment_hints):
        if (h.system in (None, hw)) and getattr(h, field) is not None:
            return f"deployment_hints[{i}].{field}" not in claim.unstated
    return False


def _spec_tokens(claim: ClaimSpec, hw: str, space: tuple[int, ...]) -> tuple[int, ...] | None:
    """The draft tokens a source states for a system (rule: the stated setting is the one read): a stated count
    alone; a stated tuning range, the store's counts inside it and its two ends; None: unstated (searched)."""
    for h in claim.hints_for(hw):
        if h.spec_tokens is not None and _stated(claim, hw, "spec_tokens"):
            return (h.spec_tokens,)
        if h.spec_tokens_range is not None:
            lo, hi = h.spec_tokens_range
            return tuple(sorted({lo, hi, *(k for k in space if lo <= k <= hi)}))
    return None


def _serving(claim: ClaimSpec, hw: str) -> tuple[str, ...] | None:
    for h in claim.hints_for(hw):
        if h.serving:
            return (h.serving,)
    return None


def _column(claim: ClaimSpec) -> tuple[str, list[str]]:
    m = metric(claim)
    notes: list[str] = []
    if m.quantity != "throughput":
        return m.quantity, notes
    tokens = m.tokens or "total"
    if m.tokens is None:
        notes.append("metric.tokens unstated: total tokens (incl. cached input) assumed")
    per = m.per or "gpu"
    if per == "rack":
        per = "gpu"         # per system: per GPU times the GPUs per system (_Claim.system_gpus, Figure.scale)
    if per == "dollar":
        return f"{tokens}_tokens_per_usd", notes
    return f"{tokens}_tps_per_{per}", notes


def _axis(at: OperatingPoint | None) -> str:
    """The curve axis a point is read on: itl, e2e (mean TTFT), or e2e_p50 / e2e_p90."""
    axis = at.interactivity if at and at.interactivity else "itl"
    if axis == "e2e" and at is not None and at.percentile in (50, 90):
        return f"e2e_p{at.percentile:.0f}"
    return axis


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


# ------------------------------------------------------------------ the figure of a claim
class _Claim:
    """The sides and the figure of one claim for one model (the one pipeline's input)."""

    def __init__(self, store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict):
        self.store, self.claim, self.model, self.wl = store, claim, model, wl
        self.col, notes = _column(claim)
        out["assumptions"] += notes
        self.sides, self.profiles = [], []
        for i, hw in enumerate(claim.system_ids):
            prof, assumed = _profile_for(claim, i)
            if assumed:
                out["assumptions"].append(f"{hw}'s software not stated: profile {prof} assumed")
            ref = claim.systems[i]
            s = Side(hw, prof, host_tier=_host_tier(claim, hw), gpus=_gpus(claim, hw),
                     speedup=ref.decode_speedup or 1.0, prefill_speedup=ref.prefill_speedup,
                     spec_tokens=_spec_tokens(claim, hw, tuple(store.space.get("spec_tokens", ()))),
                     serving=_serving(claim, hw))
            if ref.decode_speedup or ref.prefill_speedup:
                out["assumptions"].append(f"{hw}: as measured, the source's own kernel speed-ups over the {prof} profile "
                                          f"(decode x{ref.decode_speedup or 1:g}, prefill x{ref.prefill_speedup or 1:g})")
            if s.host_tier:
                out["assumptions"].append(f"{hw}: KV host tier on (the claim's deployment hint: hbm+host)")
            if s.gpus:
                out["assumptions"].append(f"{hw}: instances of {s.gpus[0]} GPUs only (the claim's deployment hint)")
            for h in claim.hints_for(hw):
                if _packaging_hint(h) or h.tray_gpus:
                    out["assumptions"].append(f"{hw}: {h.gpus or h.tray_gpus} GPUs per {'tray' if h.tray_gpus else 'unit'}"
                                              " is how the hardware is packaged, not the serving instance: "
                                              "instances of any size")
            if s.spec_tokens is not None:
                out["assumptions"].append(f"{hw}: {', '.join(map(str, s.spec_tokens))} draft tokens per step only "
                                          "(the source's stated setting)")
            if s.serving is not None:
                out["assumptions"].append(f"{hw}: {s.serving[0]} serving only (the source's stated setting)")
            self.sides.append(s)
            self.profiles.append((prof, assumed))
        self.point = claim.to if claim.kind == "delta" else claim.at
        self.axis = _axis(self.point)
        self.software_only = software_only(claim)
        self.scale = 1.0
        if _per_system(claim) and claim.kind in ("ratio", "absolute"):
            g = [system_gpus(claim, i) for i in range(len(claim.systems))]
            self.scale = g[0][0] / g[1][0] if claim.kind == "ratio" else float(g[0][0])
            out["assumptions"].append("per system: " + ", ".join(f"{hw} {n} GPUs ({src})" for hw, (n, src) in
                                                                 zip(claim.system_ids, g))
                                      + f": the per-GPU figure times {self.scale:.4g}")
        self.judge = lambda other: check(other, store)["verdict"]     # another claim's verdict (conditions.py)
        self.wclass = _wclass(wl)

    def figure(self, axis: str | None = None, sides: list[Side] | None = None) -> Figure:
        c, sides = self.claim, sides or self.sides
        if c.kind == "ratio":
            terms = [Term(sides[0], 1, point(c, "at")), Term(sides[1], -1, point(c, "at"))]
        elif c.kind == "delta":
            terms = [Term(sides[0], 1, point(c, "to")), Term(sides[0], -1, point(c, "from"))]
        else:
            terms = [Term(sides[0], 1, point(c, "at"))]
        if is_latency(self.col) and _single_request(c):    # one request: the latency at the curve end (batch 1)
            one = c.at.model_copy(update={"point": "max_speed", "tps_per_user": None, "tested_range": None,
                                          "min_tps_per_user": None}) if c.at else None
            terms = [Term(t.side, t.sign, one or t.point) for t in terms]
        tr = self.point.tested_range if self.point else None
        f = Figure(self.store, self.model, self.wl, self.col, axis or self.axis, terms, c.qualifier, tr)
        f.scale, f.percentile, f.load = self.scale, metric(c).percentile, _load(c)
        return f

    def claimed(self, q: float) -> float:
        """The claim's figure in Q's terms (a change as its retained share); a range claim at the end nearest
        the model's figure (inside the range: the model's figure)."""
        c = self.claim
        if c.kind == "delta":
            return 1 + c.claimed
        if c.claimed_range and q is not None and math.isfinite(q) and q > 0:
            return min(max(q, c.claimed_range[0]), c.claimed_range[1])
        return c.claimed


def claim_sides(store: CurveStore, claim: ClaimSpec, model: str, wl: str) -> list[Side]:
    """The systems of a claim as its check reads them (profile, the source's kernel speed-ups, host tier, GPUs,
    draft tokens, serving mode): the software the planner's table uses, the same as the verdicts'."""
    return _Claim(store, claim, model, wl, {"assumptions": []}).sides


def _dir(fig: Figure, hw: str) -> str:
    """Which side of Q a system's unreached term sends Q to ('down': 0, 'up': infinity)."""
    t = next(t for t in fig.terms if t.side.hardware == hw)
    return "down" if (t.sign > 0) != is_latency(fig.col) else "up"


def _q_of(r: dict, fig: Figure) -> float:
    """A reading's Q for the interval: with an unreached system, 0 or infinity (never dropped)."""
    if r["unreached"]:
        dirs = {_dir(fig, hw) for hw in r["unreached"]}
        return float("nan") if len(dirs) > 1 else (0.0 if dirs == {"down"} else math.inf)
    return r["q"]


def _region(fig: Figure, nom: dict, hws: list[str]) -> str:
    """The region of the curve of the systems' operating points (``curve-end`` for batch-1-like points; of two,
    the one nearer the end)."""
    regs = []
    for hw in hws:
        i = next(i for i, t in enumerate(fig.terms) if t.side.hardware == hw)
        row = nom["rows"][i]
        conc = None if row is None else _f(row.get("concurrency"))
        regs.append((conc if conc is not None else math.inf,
                     "curve-end" if conc is not None and conc <= CURVE_END_CONCURRENCY else region_of(conc)))
    return min(regs)[1]


def _wclass(wl: str) -> str:
    """The workload class of the held-out records a claim's error term reads (rule 1): agentic or all."""
    return "agentic" if getattr(catalog.workload(wl), "kind", "fixed") == "agentic" else "all"


def _evaluate(C: _Claim, fig: Figure) -> dict:
    """The reading, its interval (the model's own cross-validated error of the claim's kind, applied vertically:
    rule 1), the software headroom (the profile's fast corner, reported, never in the interval), each system's
    curve end with the model's curve-end speed error, and the distance of the claim."""
    nom = fig.read()
    opt = fig.with_sides(lambda s: s.but(corner="opt")).read()
    q = nom["q"] if not nom["unreached"] else _q_of(nom, fig)
    terms = [{"hardware": t.side.hardware, "row": r, "sign": t.sign, "metric": fig.col, "percentile": fig.percentile}
             for t, r in zip(fig.terms, nom["rows"])]
    iv = interval(q, (q, _q_of(opt, fig)), terms, [], model_error=True, workload=C.wclass)
    h = half_widths("speed", "curve-end", C.wclass)
    ends = {}
    for hw, e in zip(nom["systems"], nom["ends"]):
        ok = math.isfinite(e)
        ends[hw] = {"end": e, "low": e * math.exp(-h["q90"]) if ok else math.inf,
                    "high": e * math.exp(-h["q10"]) if ok else -math.inf}
    unreached = {"nominal": list(nom["unreached"]), "down": [], "up": []}
    return {"fig": fig, "nom": nom, "pess": nom, "opt": opt, "q": q, "iv": iv, "ends": ends,
            "unreached": unreached, "c": C.claimed(q), "end_error": h}


def _graded(C: _Claim, ev: dict) -> tuple[dict, dict | None]:
    dist = distance(ev["c"], ev["iv"], C.claim.qualifier if C.claim.kind != "delta" else "about")
    return dist, grade(ev["iv"], dist, ev["ends"], ev["unreached"])


def _unit(col: str, kind: str) -> str:
    if kind == "delta":
        return " (retained share)"
    if kind in ("ratio",):
        return "x"
    return {"tps_per_user": " tok/s/user", "ttft_s": " s", "e2e_s": " s", "tpot_ms": " ms",
            "agents_per_gpu": " sessions/GPU"}.get(col, "")


def _interval_text(iv: dict, dist: dict, claimed: float, unit: str) -> str:
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


def _verdict(out: dict, verdict: str, condition: str | None, reason: str) -> dict:
    out.update(verdict=verdict, condition=condition, reason=reason)
    return out


def _needs_text(needs: list[dict]) -> str:
    return "".join(f". What would have to be true: {n['text']}" for n in needs[:3])


def _faster(side: Side, s: float) -> Side:
    """The side with decode and prefill kernels s times faster than it already has."""
    pf = side.speedup if side.prefill_speedup is None else side.prefill_speedup
    return side.but(speedup=side.speedup * s, prefill_speedup=pf * s)


def _software_needed(C: _Claim, fig: Figure, claimed: float, q: float) -> dict:
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


def _systems(C: _Claim, ev: dict) -> list[dict]:
    """Each system: its profile, its curve end (with the end's own row), its figure at the point."""
    out, nom = [], ev["nom"]
    for i, (s, (prof, assumed)) in enumerate(zip(C.sides, C.profiles)):
        env = ev["fig"].env(s)
        j = next((k for k, t in enumerate(ev["fig"].terms) if t.side.hardware == s.hardware), None)
        e = ev["ends"].get(s.hardware, {})
        d = {"name": s.name, "hardware": s.hardware, "profile": prof, "profile_assumed": assumed,
             "max_tps_per_user": e.get("end"), "end_low": _f(e.get("low")) if e.get("low") != math.inf else None,
             "end_high": _f(e.get("high")) if e.get("high") != -math.inf else None,
             "value": _f(nom["values"][j]) if j is not None else None,
             "beyond_end": s.hardware in nom["unreached"], "end_deployment": end_deployment(env, C.axis)}
        if len(env):
            er = env.loc[env[AXES[C.axis]].idxmax()]
            d["end_figure"] = _f(er[env_metric(C.col)]) if env_metric(C.col) in er else None
            row = nom["rows"][j] if j is not None else None
            if row is not None:
                t = ev["fig"].terms[j]
                own = t.point.point in ("peak", "max_speed") or C.col == "tps_per_user"
                # the figure at a speed is interpolated at that speed: the line names that speed, not the row's;
                # at a peak or a curve end the figure is the row's own, with the row's TTFT
                d["point_tps_per_user"] = (_f(row[AXES[C.axis]]) if own else
                                           _f(nom["x"] if ev["fig"].grid_point else t.point.tps_per_user))
                d["point_ttft_s"] = _f(row["ttft_ms"] / 1e3) if own and "ttft_ms" in row else None
                d["point_concurrency"] = _f(row.get("concurrency"))
            if not is_latency(C.col) and C.col not in ("tps_per_user", "agents_per_gpu"):
                pk = peak(env, C.col)
                d["peak"] = pk
                at = C.point
                d["share_of_peak"] = (_f(d["value"] / pk) if d["value"] is not None and at is not None
                                      and at.point != "peak" and pk else None)
        out.append(d)
    return out


def _check_model(store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict) -> dict:
    """The one pipeline for one model: reading and interval, verdict, what would have to be true, conditions."""
    C = _Claim(store, claim, model, wl, out)
    if C.col == "agents_per_gpu":
        return _check_agents(C, out)
    fig = C.figure()
    ev = _evaluate(C, fig)
    from .story import grid
    out["story_grid"] = grid(C, fig, ev)       # the figure over both systems' step factors (story.py)
    dist, g = _graded(C, ev)
    _record(out, C, fig, ev, dist)
    sw = ({"speedup": None, "text": f"not searched: {g['verdict']}"} if g is not None else
          _software_needed(C, fig, claim.claimed, ev["q"]))
    _compare(out, C, ev["q"], sw)
    out["needs"] = needs = _needs(C, fig, ev, sw)
    out["headroom"] = _headroom(C, ev)
    text = _interval_text(ev["iv"], dist, ev["c"], _unit(C.col, claim.kind))
    ttft_blind = C.col in ("ttft_s", "e2e_s") and not _load_stated(C)   # a TTFT (or E2E) needs its load
    basis_need = _basis_need(C, ev)
    if basis_need and not (claim.qualifier == "up_to" and "xs" in ev["nom"] and ev["c"] < ev["q"]):
        out["shared_terms"] = [basis_need]      # what every per-MW / per-$ ratio needs of the source's power/price
    if ttft_blind:      # both sides of the interval: a TTFT with no load stated is never graded (symmetric rule)
        hw = C.sides[0].hardware
        tw = ttft_wait(ev["nom"]["rows"][0], ev["c"], hw)
        needs += [tw] if tw else []
        return _verdict(out, "not checkable", None,
                        text + f". The claim states no load (concurrency or request rate) and no prefill capacity for "
                        f"{hw}: the model's TTFT is its queue's P50 on the throughput-optimal deployment at that "
                        f"speed, and a TTFT inside or outside that interval can come from a load or a prefill:decode "
                        f"split the model is not told" + _needs_text(needs))
    if g:
        out["flag"] = g.get("flag")
        _name_engine(out, C, ev)
        if not is_latency(C.col):    # what this agreeing claim allows of each system's steps (shared.py)
            from .conditions import steps_range
            out.setdefault("shared_terms", []).extend(
                r for hw in dict.fromkeys(t.side.hardware for t in fig.terms)
                if (r := steps_range(C, fig, ev, hw)) is not None)
        return _verdict(out, g["verdict"], g["condition"], text)
    if C.software_only:         # two builds on one hardware: the condition is the software gap, no physics bound
        gap = software_gap(C, ev)
        out["conditions"] = [gap]
        return _verdict(out, "consistent only if", gap["short"], text + "; " + gap["text"])
    cliff = _up_to_cliff(C, fig, ev)
    if cliff:
        out["conditions"] = [cliff]
        return _verdict(out, "consistent only if", cliff["short"], text + "; " + cliff["text"])
    conds = conditions(C, fig, ev)
    out["conditions"] = conds
    noop = next((c for c in conds if c.get("noop")), None)
    if noop:        # a step change under 2% moves the figure through the claim: a jump of the modeled curve
        out["flag"] = (f"the claim sits on a jump of the modeled curve: {noop['system']}'s steps "
                       f"{abs(noop['factor'] - 1) * 100:.1f}% {'faster' if noop['factor'] < 1 else 'slower'} than "
                       "modeled reach it, far inside the model's speed error")
        return _verdict(out, "consistent", None, text + "; " + out["flag"])
    if not any(c["allowed"] and c.get("tag") in ("within error", "supported by records") for c in conds):
        from .joint import joint_steps  # one unknown at a time does not do it: both systems' steps
        j = joint_steps(C, fig, ev)
        conds += [j] if j else []
    ok = sorted((c for c in conds if c["allowed"]), key=_rank)
    if C.col == "tps_per_user" and conds:
        st = next((c for c in conds if c["kind"] == "steps"), None)
        fixed = _fixed_step(C, fig, st) if st else None
        if st and fixed:
            st["text"], st["short"] = fixed["text"], fixed["short"] + " [" + st["short"].rsplit("[", 1)[-1]
        elif st and st.get("edge") is None and st.get("sol_factor"):
            sol_end = ev["q"] / st["sol_factor"]
            st["text"] = st["short"] = (f"the claimed speed is above the speed-of-light profile's curve end "
                                        f"({_fmt(sol_end)} tok/s/user)")
            st["fixed_step"] = fixed
    if ok:
        return _verdict(out, "consistent only if", " or ".join(c["short"] for c in ok[:2]),
                        text + "; " + " or ".join(c["text"] for c in ok))
    if conds:
        return _cannot(out, C, ev, conds, text, needs)
    un = ev["nom"]["unreached"]
    ends_t = ", ".join(f"{h} {_fmt(ev['ends'][h]['end'])}" for h in un)
    why = (f"{' and '.join(un)} cannot reach the claim's point in the model: more than one named condition is "
           f"needed (each curve's end: {ends_t} tok/s/user)"
           if len(un) > 1 else "no single named condition moves the figure to the claim")
    return _verdict(out, "not decidable by this model", why, text)


ENGINES = ("vllm", "sglang", "trtllm")      # the engine profiles a baseline may be read on


def _name_engine(out: dict, C: _Claim, ev: dict) -> None:
    """A consistent ratio claim that holds only against the engine the baseline is read on names it (flag)."""
    turn = _engine_turn(C, ev) if C.claim.kind == "ratio" and not C.software_only and not is_latency(C.col) else None
    if turn:
        out["engine_turn"] = turn
        out["flag"] = "; ".join(t for t in (out.get("flag"), turn["text"]) if t)


def _engine_turn(C: _Claim, ev: dict) -> dict | None:
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


def software_gap(C: _Claim, ev: dict) -> dict:
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


def on_jump(C: _Claim, ev: dict) -> list[str]:
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
        return f"speed of light allows {1 / s:.3g}x faster" if s else str(c.get("bound", ""))
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
        sol = f"; speed of light {1 / c['sol_factor']:.3g}x faster" if c.get("sol_factor") else ""
        return (f"the model's cross-validated {c.get('band_quantity', 'speed')} error ({c.get('band_region', '')}) "
                f"allows {1 / lo:.3g}x faster to {hi:.3g}x slower{sol}")
    if c.get("bands"):
        return "the two factors spent in quadrature: " + f"{c.get('z', math.nan):.2f} of the model's error"
    return str(c.get("bound", ""))


def why_not_kind(c: dict) -> str:
    from .conditions import why_not
    if c["kind"] == "joint_steps" and not c.get("allowed"):
        return "on the evidence"
    return why_not(c)


def _cannot(out: dict, C: _Claim, ev: dict, conds: list[dict], text: str, needs: list[dict]) -> dict:
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
        return _verdict(out, "not decidable by this model", cond,
                        text + "; " + cond + "; " + "; ".join(c["text"] for c in conds[:2]))
    spec = next((x for x in out.get("cross_claims") or [] if x["verdict"] == SPEC_INCONSISTENT
                 and x["claims"][1] == C.claim.id), None)
    if spec is not None:       # the source's own per-GPU figure fixes the rest: only the basis is left, off the specs
        out["implausible"] = "specs"
        cond = f"{spec['text'].split('; ')[0]}: {spec['condition']}"
        return _verdict(out, SPEC_INCONSISTENT, cond, text + "; " + cond + ". Conditions: "
                        + "; ".join(c["text"] for c in conds[:3]))
    steps_ = [(c, k) for c, k in zip(conds, kinds) if c["kind"] in ("steps", "joint_steps")]
    if steps_ and all(k == "beyond physics" for _, k in steps_):
        kind = "beyond physics"
    elif steps_:
        kind = "on the evidence"
    else:
        out["implausible"] = "specs"
        cond = "; ".join(f"{c['short']}: {_bound_text(c)}" for c in conds[:2])
        return _verdict(out, SPEC_INCONSISTENT, cond, text + "; " + cond)
    out["implausible"] = kind
    pick = [c for c, k in zip(conds, kinds) if k == kind] or conds
    cond = f"{kind}: " + "; ".join(f"{c['short']} ({_bound_text(c)})" for c in pick[:2])
    return _verdict(out, "implausible", cond, text + "; " + cond + ". Conditions: "
                    + "; ".join(c["text"] for c in conds[:3]) + _needs_text(needs))


TAG_RANK = ("within error", "supported by records", "software headroom", "beyond the fitted ranges",
            "beyond error, records allow",
            "vendor's word", "beyond error", "contradicts records")


def _rank(c: dict) -> int:
    """Order of the allowed conditions a verdict names: a power or price ratio (a basis, checkable) first, then
    step conditions from the best evidenced (within the model's error) to the least (contradicted by records)."""
    if c["kind"] not in ("steps", "joint_steps"):
        return -1
    return TAG_RANK.index(c["tag"]) if c.get("tag") in TAG_RANK else len(TAG_RANK)


def _basis_need(C: _Claim, ev: dict) -> dict | None:
    """The power (per MW) or price (per dollar) ratio a ratio claim needs, inside its interval or not: the input
    of the source's shared condition (``shared.py``)."""
    from .conditions import ratio_basis
    if C.col.endswith("_per_mw"):
        return ratio_basis(C, ev, "allin_power_w", "all-in power", "all-in powers")
    if C.col.endswith("_per_usd"):
        return ratio_basis(C, ev, "price_usd_per_gpu_hour", "price", "prices")
    return None


def _headroom(C: _Claim, ev: dict) -> dict:
    """The software headroom: the figure at the profile's fast corner (every fitted parameter at its fast end),
    reported beside the interval, never in it (rule 1)."""
    qo = _q_of(ev["opt"], ev["fig"])
    q = ev["q"]
    return {"fast_corner": _f(qo), "factor": _f(qo / q) if q and math.isfinite(q) and q > 0 and qo and
            math.isfinite(qo) else None}


def _up_to_cliff(C: _Claim, fig: Figure, ev: dict) -> dict | None:
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


def _fixed_step(C: _Claim, fig: Figure, st: dict) -> dict | None:
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


def _record(out: dict, C: _Claim, fig: Figure, ev: dict, dist: dict) -> None:
    """The reading, its interval, each system's curve end and point, the sensitivity to the speed, into ``out``."""
    iv, q, nom, claim = ev["iv"], ev["q"], ev["nom"], C.claim
    out["interval"], out["distance"] = summary(iv), dist
    tr = (lambda v: None if v is None else v - 1) if claim.kind == "delta" else (lambda v: v)
    fq = _f(tr(q)) if q is not None and math.isfinite(q) else _f(q)
    out["model"] = {"value": fq, "central": fq,
                    "band": [_f(tr(_q_of(ev["pess"], fig))), _f(tr(_q_of(ev["opt"], fig)))],
                    "interval": [_f(tr(iv["low"])), _f(tr(iv["high"]))], "width": width(iv),
                    "x": _f(nom.get("x")), "a_value": _f(nom["values"][0]),
                    "b_value": _f(nom["values"][1]) if len(nom["values"]) > 1 and claim.kind == "ratio" else None}
    if fig.grid_point and "qmin" in nom:
        out["model"].update(ratio_min=_f(nom["qmin"]), ratio_max=_f(nom["qmax"]), x_min=_f(nom.get("x_min")),
                            x_max=_f(nom.get("x_max")), common_range=nom["range"], grid_points=nom["grid_points"],
                            grid_step=_f(nom["grid_step"]))
    out["systems"] = _systems(C, ev)
    out["ends"] = {hw: {k: _f(v) if v not in (math.inf, -math.inf) else None for k, v in e.items()}
                   for hw, e in ev["ends"].items()}
    if nom.get("x") is not None and not fig.grid_point:      # +-10% per-user speed (a stated speed only)
        out["sensitivity"] = {f"x{f:g}": {"tps_per_user": nom["x"] * f, "ratio": _f(fig.read(x_scale=f)["q"])}
                              for f in (0.9, 1.1)}


def _compare(out: dict, C: _Claim, q: float, sw: dict) -> None:
    """Hardware only (the second system's software on both) beside as measured (each system's own software)."""
    if C.claim.kind != "ratio":
        return
    A, B = C.sides
    hw_q = C.figure(sides=[B.but(hardware=A.hardware, gpus=A.gpus), B]).read()["q"]
    out["hardware_only"] = {"ratio": _f(hw_q), "profile": B.profile, "software_change": sw,
                            "software_factor_needed": _f(C.claim.claimed / hw_q) if hw_q and math.isfinite(hw_q)
                            else None}
    out["as_measured"] = {"ratio": _f(q), "profiles": [s.name for s in C.sides]}


def _curve_end_need(C: _Claim, model_speed: float, claimed: float) -> dict | None:
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


def _needs(C: _Claim, fig: Figure, ev: dict, sw: dict) -> list[dict]:
    """What would have to be true (needs.py): the power or price, the second system's curve (from the model's
    first system and from the seed's own figure for it), the fall along one curve, the kernels."""
    claim, q, c_eff, nom = C.claim, ev["q"], ev["c"], ev["nom"]
    em, needs = env_metric(C.col), []
    finite = q is not None and math.isfinite(q) and q > 0
    if claim.kind != "delta":
        needs += power_or_price(C.col, C.sides[0].hardware, C.sides[1].hardware if claim.kind == "ratio" else None,
                                q, c_eff)
    at_x = claim.kind == "ratio" and nom.get("x") is not None and not fig.grid_point and finite
    if at_x:
        oc = other_curve(C.store, C.sides[1], C.model, C.wl, C.axis, C.col, nom["x"], nom["values"][0], c_eff,
                         C.sides[1].hardware, em)
        needs += [oc] if oc else []
    anchor = _seed_anchor(claim, C.col)
    if anchor and finite:
        sid, fa = anchor
        ha, hb = C.sides[0].hardware, C.sides[1].hardware
        if at_x:
            oc = other_curve(C.store, C.sides[1], C.model, C.wl, C.axis, C.col, nom["x"], fa, c_eff, hb, em)
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
                and c.workload == claim.workload and c.metric is not None and _column(c)[0] == col
                and c.at == claim.at):
            return cid, c.claimed
    return None


def _load_stated(C: _Claim) -> bool:
    return _single_request(C.claim) or any(h.concurrency for s in C.sides for h in C.claim.hints_for(s.hardware))


def _load(claim: ClaimSpec) -> float | None:
    """The requests in flight a source states above one (a concurrency hint), where a latency is read
    (latency.at_load); None: none stated, or one request (read at the curve end)."""
    n = [h.concurrency for h in claim.deployment_hints if h.concurrency]
    return float(n[0]) if n and n[0] > 1 else None


def _check_agents(C: _Claim, out: dict) -> dict:
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
        return _verdict(out, "implausible", None, f"no modeled deployment meets the SLO {res.slo.text()}: "
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
    text = _interval_text(iv, dist, C.claim.claimed, " sessions/GPU")
    if g:
        return _verdict(out, g["verdict"], g["condition"], text)
    return _verdict(out, "implausible", None, text)


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
    return _verdict(out, "not checkable", None,
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
    claim = load_claim(claim)
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
        return _verdict(out, r["verdict"], r["condition"], r["reason"])
    from .pairs import cross_checks
    out["cross_claims"] = [x for x in cross_checks([catalog.claim(i) for i in catalog.ids("claims")])
                           if claim.id in x["claims"]]
    col, _ = _column(claim)
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
    out["axis"] = _axis(p)
    out["at"] = _describe_point(claim.at, "at.min_tps_per_user" in claim.unstated) if claim.at else f"{_describe_point(claim.from_)} -> {_describe_point(claim.to)}"
    out["weights"] = store.weights
    out["weights_stated"] = claim.weights is not None
    wl = claim.workload or DEFAULT_WORKLOAD
    if claim.workload is None:
        out["assumptions"].append(f"workload unstated: {wl} assumed")
    out["read_on"] = read_on(claim, wl)
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
        return _precedent(_under_specified(out, per, "per-user axis"), store, claim, wl)
    if claim.model:
        return _precedent(_inherit_ttft(claim, _check_model(store, claim, claim.model, wl, out), store), store,
                          claim, wl)
    # model unstated: a search over the candidate models, reported as one
    per = {m: _candidate(_check_model(store, claim, m, wl, _fresh(out))) for m in models}
    return _under_specified(out, per, "model")


def _store_for(store: CurveStore, weights: str | None) -> CurveStore:
    """The store a claim is read from: in the number format it quotes (``claim.weights``), a sibling store of the
    same deployment space kept on the first (one per format), else the store as given."""
    if weights is None or getattr(store, "weights", None) == weights or not isinstance(store, CurveStore):
        return store
    sib = store.__dict__.setdefault("_by_weights", {})
    if weights not in sib:
        sib[weights] = CurveStore(weights=weights, space=dict(store.space))
    return sib[weights]


CANDIDATE_KEYS = ("verdict", "condition", "reason", "model", "systems", "hardware_only", "as_measured", "interval",
                  "distance", "needs", "ends", "implausible")


def _precedent(out: dict, store: CurveStore, claim: ClaimSpec, wl: str) -> dict:
    """A per-user speed claim on a system with no record of the model: the nearest precedent (the fastest record of
    an earlier version of the model, ``evidence.precedent``) set beside the verdict, with the model's curve end for
    that hardware and earlier model (the claim's software) and how far the record beats or trails it."""
    from .evidence import fastest, precedent
    if out.get("metric") != "tps_per_user" or not out.get("systems") or claim.model is None:
        return out
    s0 = out["systems"][0]
    hw = s0["hardware"]
    if fastest(hw, claim.model) is not None:
        return out
    p = precedent(hw, claim.model)
    if p is None:
        return out
    prof = p["engine"] if p["engine"] in catalog.ids("profiles") else s0["profile"]     # the record's own engine
    side = Side(p["hardware"], prof)
    try:
        env = store.envelope(side, p["model"], wl, out.get("axis") or "itl", "total_tps_per_gpu")
        end = curve_end(env, out.get("axis") or "itl") if len(env) else math.nan
    except KeyError:        # a store that holds only the claim's own systems (a synthetic one): the record alone
        end = math.nan
    ratio = p["tps_per_user"] / end if end and math.isfinite(end) else math.nan
    need = (claim.claimed / s0["max_tps_per_user"]) if s0.get("max_tps_per_user") else math.nan
    words = (f"nearest precedent: no record of {hw} on {claim.model}; record {p['record']} of {p['hardware']} on "
             f"{p['model']} (an earlier version; {p['engine'] or 'engine not stated'}, {p['wclass']} workload) "
             f"reached {_fmt(p['tps_per_user'])} tok/s/user")
    if math.isfinite(ratio):
        words += (f", {ratio:.2g}x the model's curve end there ({_fmt(end)} on {prof})" +
                  (f": a tuned stack beat the model by {ratio:.2g}x where this claim needs {need:.2g}x"
                   if math.isfinite(need) and ratio > 1 else ""))
    out["precedent"] = {**p, "model_end": _f(end), "ratio": _f(ratio), "text": words}
    out["reason"] = (out.get("reason") or "") + "; " + words
    if out.get("condition"):
        out["condition"] += f" ({words})"
    return out


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


def _under_specified(out: dict, per: dict[str, dict], what: str) -> dict:
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
        return _verdict(out, first["verdict"], first["condition"],
                        f"the same for every candidate {what} (the claim names none): " + summ)
    if verdicts == {"consistent only if"}:      # one verdict, a condition per candidate: all of them, none picked
        out["candidate_range"] = [min(vals), max(vals)] if vals else None
        return _verdict(out, "consistent only if", f"for every candidate {what} (none stated), each with its own "
                        "condition: " + "; ".join(f"{m}: {r['condition']}" for m, r in per.items()), summ)
    out["candidate_range"] = [min(vals), max(vals)] if vals else None
    rng = f"{_fmt(min(vals))}-{_fmt(max(vals))}" if vals else "undefined"
    return _verdict(out, "not checkable (under-specified)", f"the {what} is unstated and the {len(per)} candidates "
                    f"disagree (verdicts or the conditions they need): the model's figure ranges {rng} over them",
                    summ)


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
