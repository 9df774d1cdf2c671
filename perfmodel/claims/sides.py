"""The sides of a claim: each system as its check reads it (the profile stated or assumed, the source's kernel
speed-ups, KV host tier, instance GPUs, draft tokens and serving mode), the claim's column and axis, and the
figure Q over the sides (``ClaimSides``, the one pipeline's input: check.py)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from .. import catalog
from ..specs.claim import ClaimSpec, OperatingPoint
from .curves import CurveStore, Side
from .fields import metric, point
from .latency import is_latency
from .reading import Figure, Term

DEFAULT_PROFILE = "vllm"


def profile_for(claim: ClaimSpec, i: int) -> tuple[str, bool]:
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


def per_system(claim: ClaimSpec) -> bool:
    return claim.metric is not None and claim.metric.per == "rack"


def software_only(claim: ClaimSpec) -> bool:
    """A ratio of two builds (engines, versions, settings) on the same hardware: a software multiple."""
    return claim.kind == "ratio" and len(set(claim.system_ids)) == 1


def single_request(claim: ClaimSpec) -> bool:
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


def claim_column(claim: ClaimSpec) -> tuple[str, list[str]]:
    m = metric(claim)
    notes: list[str] = []
    if m.quantity != "throughput":
        return m.quantity, notes
    tokens = m.tokens or "total"
    if m.tokens is None:
        notes.append("metric.tokens unstated: total tokens (incl. cached input) assumed")
    per = m.per or "gpu"
    if per == "rack":
        per = "gpu"         # per system: per GPU times the GPUs per system (ClaimSides.system_gpus, Figure.scale)
    if per == "dollar":
        return f"{tokens}_tokens_per_usd", notes
    return f"{tokens}_tps_per_{per}", notes


def point_axis(at: OperatingPoint | None) -> str:
    """The curve axis a point is read on: itl, e2e (mean TTFT), or e2e_p50 / e2e_p90."""
    axis = at.interactivity if at and at.interactivity else "itl"
    if axis == "e2e" and at is not None and at.percentile in (50, 90):
        return f"e2e_p{at.percentile:.0f}"
    return axis


class ClaimSides:
    """The sides and the figure of one claim for one model (the one pipeline's input). ``out['assumptions']``
receives every assumption made reading the sides; ``judge`` (claim -> its check result) lets the conditions ask
another claim's verdict and conditions (None: every other claim counts as plausible and backs nothing)."""

    def __init__(self, store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict,
                 judge: Callable[[ClaimSpec], dict] | None = None):
        self.store, self.claim, self.model, self.wl = store, claim, model, wl
        self.col, notes = claim_column(claim)
        out["assumptions"] += notes
        self.sides, self.profiles = [], []
        for i, hw in enumerate(claim.system_ids):
            prof, assumed = profile_for(claim, i)
            if assumed:
                out["assumptions"].append(f"{hw}'s software not stated: profile {prof} assumed")
            ref = claim.systems[i]
            s = Side(hw, prof, host_tier=_host_tier(claim, hw), gpus=_gpus(claim, hw),
                     speedup=ref.decode_speedup or 1.0, prefill_speedup=ref.prefill_speedup,
                     spec_tokens=_spec_tokens(claim, hw, tuple(store.space.get("spec_tokens", ()))),
                     serving=_serving(claim, hw), weights=ref.weights)
            if ref.decode_speedup or ref.prefill_speedup:
                out["assumptions"].append(f"{hw}: as measured, the source's own kernel speed-ups over the {prof} profile "
                                          f"(decode x{ref.decode_speedup or 1:g}, prefill x{ref.prefill_speedup or 1:g})")
            if s.weights is not None:
                out["assumptions"].append(f"{hw}: {s.weights} weights (the source's format for this system)")
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
        self.axis = point_axis(self.point)
        self.software_only = software_only(claim)
        self.scale = 1.0
        if per_system(claim) and claim.kind in ("ratio", "absolute"):
            g = [system_gpus(claim, i) for i in range(len(claim.systems))]
            self.scale = g[0][0] / g[1][0] if claim.kind == "ratio" else float(g[0][0])
            out["assumptions"].append("per system: " + ", ".join(f"{hw} {n} GPUs ({src})" for hw, (n, src) in
                                                                 zip(claim.system_ids, g))
                                      + f": the per-GPU figure times {self.scale:.4g}")
        self.judge = judge          # claim -> its check result (check.py passes one; conditions.judged reads it)
        self.wclass = workload_class(wl)

    def figure(self, axis: str | None = None, sides: list[Side] | None = None) -> Figure:
        c, sides = self.claim, sides or self.sides
        if c.kind == "ratio":
            terms = [Term(sides[0], 1, point(c, "at")), Term(sides[1], -1, point(c, "at"))]
        elif c.kind == "delta":
            terms = [Term(sides[0], 1, point(c, "to")), Term(sides[0], -1, point(c, "from"))]
        else:
            terms = [Term(sides[0], 1, point(c, "at"))]
        if is_latency(self.col) and single_request(c):    # one request: the latency at the curve end (batch 1)
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


def _load(claim: ClaimSpec) -> float | None:
    """The requests in flight a source states above one (a concurrency hint), where a latency is read
    (latency.at_load); None: none stated, or one request (read at the curve end)."""
    n = [h.concurrency for h in claim.deployment_hints if h.concurrency]
    return float(n[0]) if n and n[0] > 1 else None


def claim_sides(store: CurveStore, claim: ClaimSpec, model: str, wl: str) -> list[Side]:
    """The systems of a claim as its check reads them (profile, the source's kernel speed-ups, host tier, GPUs,
    draft tokens, serving mode): the software the planner's table uses, the same as the verdicts'."""
    return ClaimSides(store, claim, model, wl, {"assumptions": []}).sides


def workload_class(wl: str) -> str:
    """The workload class of the held-out records a claim's error term reads (rule 1): agentic or all."""
    return "agentic" if getattr(catalog.workload(wl), "kind", "fixed") == "agentic" else "all"
