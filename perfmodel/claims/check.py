"""Check one published claim against the model: a verdict with its reasons.

The model's figure gets one interval (``interval.py``: software-profile corners, catalog spec ranges and the
cross-validated model error, root-sum-square in ln space). The claim's distance z is ln(claim / model) in
half-widths of the interval on the claim's side. Verdicts follow from z by one rule (``_grade``):

- ``consistent``: z <= ``CONSISTENT_Z`` (0.5);
- ``consistent only if <condition>``: z <= 1 and the uncertainty leans the claim's way (the largest contributors
  on that side are named); or z > 1 (outside the whole interval) and one named assumption reconciles it: the
  other interactivity axis (when the claim does not state it), a nearby operating point (when the speed is
  approximate or read at a curve's end), a curve that extends further than the model's, or faster software on
  the claimed system (kernels at most ``MAX_SOFTWARE`` x the profile's); a spec ratio within 5% of a published
  pair (``arith.py``);
- ``implausible``: outside the whole interval and nothing above reconciles it; ``needs`` (``needs.py``) says what
  would have to be true, solved on the model's curves;
- ``not checkable``: the model cannot see what sets the figure (a TTFT outside the interval when the claim states
  no load or prefill capacity).

Every check returns a plain dict (JSON-ready); the CLI and the report only format it. Nothing here tunes a
parameter toward a claim: the assumptions are tried in a fixed order and reported as assumptions.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import catalog
from ..specs.claim import ClaimSpec, OperatingPoint
from .arith import arithmetic_checks, spec_ratio_check
from .curves import AXES, AXIS_TEXT, CurveStore, Side, curve_end, end_deployment, peak, read, row_at
from .interval import distance, interval, largest_parts, summary
from .needs import delta_speed, other_curve, power_or_price, ttft_wait

TOL = 0.15               # relative slack for rounded published figures and curve interpolation
MAX_SOFTWARE = 2.0       # the largest kernel speed-up accepted as a named software assumption
SPEEDUPS = (1.0, 1.25, 2.0, 5.0)   # kernel speed-ups tried (decode and prefill together)
DEFAULT_MODELS = ("deepseek-v4.1-flash", "deepseek-v4-pro", "glm-5.2", "kimi-k3")
DEFAULT_WORKLOAD = "agentx"
DEFAULT_PROFILE = "vllm"

METRIC_TEXT = {
    "total_tps_per_gpu": "total tokens/s per GPU (input incl. cached prefix + output)",
    "output_tps_per_gpu": "output (generated) tokens/s per GPU",
    "total_tps_per_mw": "total tokens/s per MW of all-in power",
    "output_tps_per_mw": "output tokens/s per MW of all-in power",
    "total_tokens_per_usd": "total tokens per US dollar (GPU-hour price estimate)",
    "output_tokens_per_usd": "output tokens per US dollar",
    "tps_per_user": "tokens/s per user",
    "ttft_s": "time to first token, s",
}


# ------------------------------------------------------------------ loading
def load_claim(name: str | Path | ClaimSpec) -> ClaimSpec:
    """A claim by catalog id or YAML path (one-line SpecError on bad input)."""
    if isinstance(name, ClaimSpec):
        return name
    return catalog.claim(str(name))


# ------------------------------------------------------------------ helpers
def _f(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "unbounded"
    a = abs(x)
    s = f"{x / 1e6:.3g}M" if a >= 1e6 else f"{x:,.0f}" if a >= 1e3 else f"{x:.3g}"
    return s + unit


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


def _gpus(claim: ClaimSpec, hw: str) -> tuple[int, ...] | None:
    for h in claim.hints_for(hw):
        if h.gpus:
            return (h.gpus,)
    return None


def _column(claim: ClaimSpec) -> tuple[str, list[str]]:
    m, notes = claim.metric, []
    if m.quantity != "throughput":
        return m.quantity, notes
    tokens = m.tokens or "total"
    if m.tokens is None:
        notes.append("metric.tokens unstated: total tokens (incl. cached input) assumed")
    per = m.per or "gpu"
    if per == "rack":
        per = "gpu"
        notes.append("per rack read as per GPU (both systems are 72-GPU racks, so the ratio is the same)")
    if per == "dollar":
        return f"{tokens}_tokens_per_usd", notes
    return f"{tokens}_tps_per_{per}", notes


def _axis(at: OperatingPoint | None) -> str:
    """The curve axis a point is read on: itl, e2e (mean TTFT), or e2e_p50 / e2e_p90 (a P50 / P90 claim on the
    E2E axis)."""
    axis = at.interactivity if at and at.interactivity else "itl"
    if axis == "e2e" and at.percentile in (50, 90):
        return f"e2e_p{at.percentile:.0f}"
    return axis


def _env_metric(col: str) -> str:
    """The metric an envelope is taken on (TTFT and per-user speed are read off the throughput envelope)."""
    return "total_tps_per_gpu" if col in ("ttft_s", "tps_per_user", "agents_per_gpu") else col


def _value(store: CurveStore, side: Side, model: str, wl: str, at: OperatingPoint, axis: str, col: str,
           x: float | None = None) -> tuple[float, float]:
    """(value of ``col`` at the point, curve end) for one side. NaN when the point lies beyond the curve.
    agents_per_gpu: the most sessions per GPU over every evaluated point within the SLO (analyses/agents.py);
    NaN when no point meets it."""
    env = store.envelope(side, model, wl, axis, _env_metric(col))
    end = curve_end(env, axis)
    if col == "agents_per_gpu":
        from ..analyses.agents import SLO, agents_per_gpu
        slo = SLO(x if x is not None else at.tps_per_user, at.ttft_ms, at.percentile or 50.0)
        res = agents_per_gpu(store.points(side, model, wl), slo)
        return (float("nan") if res.value is None else res.value), end
    if at.point == "max_speed" or col == "tps_per_user":
        return end, end
    if at.point == "peak" and x is None:
        if col == "ttft_s":
            r = env.iloc[int(env["total_tps_per_gpu"].to_numpy().argmax())]
            return float(r["ttft_ms"]) / 1e3, end
        return peak(env, col), end
    x = x if x is not None else at.tps_per_user
    if col == "ttft_s":
        r = row_at(env, x, axis)
        return (float("nan") if r is None else float(r["ttft_ms"]) / 1e3), end
    return float(read(env, x, axis, col)[0]), end


def _ratio(va: float, vb: float) -> float:
    if math.isnan(va):
        return float("nan")
    if math.isnan(vb) or vb <= 0:
        return float("inf")
    return va / vb


def _inside(claimed: float, lo: float, hi: float, qualifier: str = "about") -> bool:
    if any(map(lambda v: v is None or math.isnan(v), (lo, hi))):
        return False
    if qualifier == "at_most":
        return lo <= claimed * (1 + TOL)
    if qualifier == "at_least":
        return hi >= claimed / (1 + TOL)
    return lo / (1 + TOL) <= claimed <= hi * (1 + TOL)


def _band(vals) -> tuple[float, float]:
    v = [x for x in vals if not math.isnan(x)]
    return (min(v), max(v)) if v else (float("nan"), float("nan"))


CONSISTENT_Z = 0.5      # a claim within this share of the interval's half-width of the central figure: consistent


def _row(store: CurveStore, side: Side, model: str, wl: str, at: OperatingPoint, axis: str, col: str,
         x: float | None = None):
    """The envelope row a figure is read from (its deployment, batch and resource times), or None."""
    env = store.envelope(side, model, wl, axis, _env_metric(col))
    if not len(env):
        return None
    if at.point == "max_speed" or col == "tps_per_user":
        return env.loc[env[AXES[axis]].idxmax()]
    if at.point == "peak" and x is None:
        return env.loc[env["total_tps_per_gpu" if col == "ttft_s" else col].idxmax()]
    x = x if x is not None else at.tps_per_user
    return None if x is None else row_at(env, x, axis)


def _interval_text(iv: dict, dist: dict, claimed: float, unit: str) -> str:
    """'model 3.35x (interval 2.1-5.0x: ...) vs claimed 58x: 17.3x the model's figure, 6.2 half-widths out'."""
    b = iv["by_source"]
    parts = ", ".join(f"{k} x{math.exp(v['down']):.2f}/x{math.exp(v['up']):.2f}" for k, v in
                      (("profile", b["profile"]), ("spec", b["spec"]), ("model error", b["model"])))
    z = dist["z"]
    zt = "n/a" if z is None or math.isnan(z) else f"{z:.2f}"
    return (f"model {_fmt(iv['value'])}{unit} (interval {_fmt(iv['low'])}-{_fmt(iv['high'])}{unit}; down/up by "
            f"source: {parts}) vs claimed {_fmt(claimed)}{unit}: {_fmt(dist['multiple'])}x the model's figure, "
            f"{zt} half-widths from it")


def _needs_text(needs: list[dict]) -> str:
    return "".join(f". What would have to be true: {n['text']}" for n in needs[:3])


def _grade(out: dict, iv: dict, dist: dict, claimed: float, unit: str) -> dict | None:
    """The verdict rule on the distance z (half-widths of the interval on the claim's side):
    z <= CONSISTENT_Z: consistent; z <= 1: consistent only if the uncertainty leans the claim's way (its largest
    contributors on that side named); z > 1 (outside the whole interval): None, the caller tries its named
    assumptions and else calls the claim implausible."""
    z = dist["z"]
    if z is None or math.isnan(z):
        return None
    if z <= CONSISTENT_Z:
        return _verdict(out, "consistent", None, _interval_text(iv, dist, claimed, unit))
    if z <= 1:
        side = "up" if dist["side"] == "above" else "down"
        return _verdict(out, "consistent only if", "the uncertainty leans the claim's way: "
                        + " and ".join(largest_parts(iv, side)), _interval_text(iv, dist, claimed, unit))
    return None


# ------------------------------------------------------------------ ratio claims
class _Ratio:
    """Reads A/B for one claim, model and axis at any point (caches through the store)."""

    def __init__(self, store, claim, A, B, model, wl, col):
        self.store, self.claim, self.A, self.B, self.model, self.wl, self.col = store, claim, A, B, model, wl, col

    def at(self, at: OperatingPoint, axis: str, A=None, B=None, x=None) -> dict:
        A, B = A or self.A, B or self.B
        ea = curve_end(self.store.envelope(A, self.model, self.wl, axis, _env_metric(self.col)), axis)
        eb = curve_end(self.store.envelope(B, self.model, self.wl, axis, _env_metric(self.col)), axis)
        if x is None and at.point == "fastest_common":
            x = min(ea, eb)
        if x is None and at.point == "speed":
            x = at.tps_per_user
        if at.point == "matched" and x is None:
            return self.matched(axis, A, B)
        va, _ = _value(self.store, A, self.model, self.wl, at, axis, self.col, x)
        vb, _ = _value(self.store, B, self.model, self.wl, at, axis, self.col, x)
        return {"ratio": _ratio(va, vb), "a": va, "b": vb, "a_end": ea, "b_end": eb, "x": x}

    def matched(self, axis, A=None, B=None, points: int = 40) -> dict:
        A, B = A or self.A, B or self.B
        m = _env_metric(self.col)
        ea, eb = (self.store.envelope(s, self.model, self.wl, axis, m) for s in (A, B))
        col = AXES[axis]
        lo = max(ea[col].min(), eb[col].min())
        hi = min(curve_end(ea, axis), curve_end(eb, axis))
        grid = np.geomspace(lo, hi, points) if hi > lo else np.array([hi])
        r = read(ea, grid, axis, self.col) / read(eb, grid, axis, self.col)
        i, j = int(np.nanargmin(r)), int(np.nanargmax(r))
        return {"ratio": float(r[j]), "ratio_min": float(r[i]), "ratio_max": float(r[j]), "x_min": float(grid[i]),
                "x_max": float(grid[j]), "a_end": curve_end(ea, axis), "b_end": curve_end(eb, axis),
                "a": float("nan"), "b": float("nan"), "x": None, "range": [float(lo), float(hi)]}

    def band(self, at, axis) -> tuple[float, float, list]:
        """The band: both systems' profiles at the same corner (slow ends, nominal, fast ends): the engines'
        uncertainty moves both alike. Opposite corners (one engine at its fast end, the other at its slow end)
        are reported in ``corners`` but do not set the band: they bracket almost any multiple."""
        vals, rows = [], []
        for ca, cb in (("pess", "pess"), ("value", "value"), ("opt", "opt"), ("opt", "pess"), ("pess", "opt")):
            r = self.at(at, axis, self.A.but(corner=ca), self.B.but(corner=cb))
            if ca == cb:
                vals += [r["ratio_min"], r["ratio_max"]] if "ratio_min" in r else [r["ratio"]]
            rows.append({"a_corner": ca, "b_corner": cb, "ratio": _f(r["ratio"]) if not math.isinf(r["ratio"])
                         else float("inf")})
        return (*_band(vals), rows)


def _check_ratio(store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict) -> dict:
    col, notes = _column(claim)
    out["assumptions"] += notes
    at, axis = claim.at, _axis(claim.at)
    (ha, hb) = claim.system_ids
    (pa, pa_assumed), (pb, pb_assumed) = _profile_for(claim, 0), _profile_for(claim, 1)
    if pb_assumed:
        out["assumptions"].append(f"{hb}'s software not stated: profile {pb} assumed")
    if pa_assumed:
        out["assumptions"].append(f"{ha}'s software not stated: profile {pa} assumed")
    A = Side(ha, pa, host_tier=_host_tier(claim, ha), gpus=_gpus(claim, ha))
    B = Side(hb, pb, host_tier=_host_tier(claim, hb), gpus=_gpus(claim, hb))
    if A.host_tier:
        out["assumptions"].append(f"{ha}: KV host tier on (the claim's deployment hint: hbm+host)")
    R = _Ratio(store, claim, A, B, model, wl, col)
    nom = R.at(at, axis)
    lo, hi, corners = R.band(at, axis)
    claimed = claim.claimed
    out["model"] = {"value": _f(nom["ratio"]), "band": [_f(lo), _f(hi)], "corners": corners,
                    "a_value": _f(nom["a"]), "b_value": _f(nom["b"]), "x": _f(nom["x"])}
    if "ratio_min" in nom:
        out["model"].update(ratio_min=nom["ratio_min"], ratio_max=nom["ratio_max"], x_min=nom["x_min"],
                            x_max=nom["x_max"], common_range=nom["range"])
    out["systems"] = [
        {"name": A.name, "hardware": ha, "profile": pa, "profile_assumed": pa_assumed,
         "max_tps_per_user": nom["a_end"], "value": _f(nom["a"])},
        {"name": B.name, "hardware": hb, "profile": pb, "profile_assumed": pb_assumed,
         "max_tps_per_user": nom["b_end"], "value": _f(nom["b"])}]
    x = nom["x"]
    for s, side in zip(out["systems"], (A, B)):
        s["beyond_end"] = bool(x is not None and x > s["max_tps_per_user"] * (1 + 1e-9))
        s["end_deployment"] = end_deployment(store.envelope(side, model, wl, axis, _env_metric(col)), axis)
        if col not in ("ttft_s", "tps_per_user"):
            pk = peak(store.envelope(side, model, wl, axis, col), col)
            s["peak"] = pk
            s["share_of_peak"] = _f(s["value"] / pk) if s["value"] is not None and at.point != "peak" else None
    # sensitivity to the operating point: +-10% per-user speed
    if x is not None:
        out["sensitivity"] = {f"x{f:g}": {"tps_per_user": x * f, "ratio": _f(R.at(at, axis, x=x * f)["ratio"])}
                              for f in (0.9, 1.1)}
    # hardware only: B's software on both
    A_hw = Side(ha, pb, host_tier=B.host_tier, gpus=A.gpus)
    hw = R.at(at, axis, A=A_hw)
    hw_ratio = hw["ratio"]
    need = claimed / hw_ratio if hw_ratio and not math.isnan(hw_ratio) and not math.isinf(hw_ratio) else None
    out["hardware_only"] = {"ratio": _f(hw_ratio), "profile": pb, "software_factor_needed": _f(need)}
    sw = _software_needed(R, at, axis, A, claimed)
    out["hardware_only"]["software_change"] = sw
    # implied arithmetic: the other system's figure the claim implies, given the model's figure for A
    if not math.isnan(nom["a"]) and at.point != "matched":
        out["implied"] = [{"meaning": f"{hb} {col} implied by the model's {ha} figure / claimed multiple",
                           "implied": nom["a"] / claimed, "model": _f(nom["b"])}]
    # the interval: profile corners, spec ranges and the model's error (interval.py), and the claim's distance
    q, xr = nom["ratio"], nom["x"]
    c_eff = claimed
    if claim.claimed_range:
        c_eff = min(max(q, claim.claimed_range[0]), claim.claimed_range[1]) if math.isfinite(q) else claimed
    if at.point == "matched":   # the model's ratio over the common range nearest the claim
        q = min(max(c_eff, nom["ratio_min"]), nom["ratio_max"])
        xr = nom["x_min"] if abs(q - nom["ratio_min"]) < abs(q - nom["ratio_max"]) else nom["x_max"]
        lo, hi = min(lo, nom["ratio_min"]), max(hi, nom["ratio_max"])
    terms = [{"hardware": ha, "row": _row(store, A, model, wl, at, axis, col, xr), "sign": 1, "metric": col},
             {"hardware": hb, "row": _row(store, B, model, wl, at, axis, col, xr), "sign": -1, "metric": col}]
    iv = interval(q, (lo, hi), terms)
    dist = distance(c_eff, iv, claim.qualifier)
    out["interval"], out["distance"] = summary(iv), dist
    out["model"]["interval"] = [_f(iv["low"]), _f(iv["high"])]
    out["model"]["central"] = _f(q)
    needs = power_or_price(col, ha, hb, q, c_eff)
    if at.point != "matched" and x is not None and math.isfinite(q):
        oc = other_curve(store, B, model, wl, axis, col, x, nom["a"], c_eff, hb, _env_metric(col))
        needs += [oc] if oc else []
    if sw.get("speedup") is not None and sw["speedup"] > 1:
        needs.append({"kind": "kernels", "speedup": sw["speedup"], "text": f"{_fmt(claimed)}x needs {sw['text']}"})
    out["needs"] = needs
    graded = _grade(out, iv, dist, c_eff, "x")
    if graded:
        return graded
    # 1. the other axis, when unstated
    if "at.interactivity" in claim.unstated and at.point != "peak":
        other = "itl" if axis.startswith("e2e") else "e2e"
        alt = R.at(at, other)
        alo, ahi, _ = R.band(at, other)
        if "ratio_min" in alt:
            alo, ahi = min(alo, alt["ratio_min"]), max(ahi, alt["ratio_max"])
        out["alternatives"].append({"assumption": f"{other} axis", "ratio": _f(alt["ratio"]), "band": [alo, ahi]})
        if _inside(claimed, alo, ahi, claim.qualifier):
            return _verdict(out, "consistent only if", f"the per-user axis is {other} ({AXIS_TEXT[other]})",
                            f"on the assumed {axis} axis the model gives {_fmt(nom['ratio'])}x (band "
                            f"{_fmt(lo)}-{_fmt(hi)}x); on the {other} axis {_fmt(alt['ratio'])}x")
    # 2. B's curve ends before the point: any multiple is possible only if B reaches it
    if x is not None and math.isinf(nom["ratio"]):
        return _verdict(out, "consistent only if",
                        f"{hb}'s curve reaches {_fmt(x)} tok/s/user (the model's ends at {_fmt(nom['b_end'])})",
                        f"the model's {hb} cannot serve {_fmt(x)} tok/s/user on the {axis} axis at all, so the "
                        f"multiple there is unbounded; the claimed {claimed:g}x implies {hb} at "
                        f"{_fmt(nom['a'] / claimed)} ({col}) right at the end of its curve")
    # 3. a nearby operating point
    if x is not None:
        span = (0.8, 1.25) if (at.approx or at.point == "fastest_common") else (0.9, 1.1)
        grid = x * np.geomspace(*span, 9)
        if at.point == "fastest_common":
            grid = grid[grid <= x * (1 + 1e-9)]
        rs = [R.at(at, axis, x=g)["ratio"] for g in grid]
        fin = [(g, r) for g, r in zip(grid, rs) if not math.isnan(r)]
        hit = [g for g, r in fin if _inside(claimed, r, r, "about")]
        out["alternatives"].append({"assumption": f"operating point {span[0]:g}-{span[1]:g} x {_fmt(x)}",
                                    "ratios": [[float(g), _f(r)] for g, r in fin]})
        if hit:
            g = min(hit, key=lambda v: abs(math.log(v / x)))
            return _verdict(out, "consistent only if",
                            f"the operating point is ~{_fmt(g)} tok/s/user on the model's {axis} axis "
                            f"(not {_fmt(x)})",
                            f"the multiple moves fast near the end of a curve: {_fmt(nom['ratio'])}x at {_fmt(x)}, "
                            f"{_fmt(R.at(at, axis, x=g)['ratio'])}x at {_fmt(g)} tok/s/user")
    # 4. faster software on A
    if sw.get("speedup") is not None and sw["speedup"] <= MAX_SOFTWARE and claimed > hi:
        return _verdict(out, "consistent only if", sw["text"],
                        f"model {_fmt(nom['ratio'])}x (band {_fmt(lo)}-{_fmt(hi)}x) vs claimed {claimed:g}x; "
                        f"hardware alone (same {pb} software on both) gives {_fmt(hw_ratio)}x")
    return _verdict(out, "implausible", None,
                    _interval_text(iv, dist, c_eff, "x") + f"; hardware alone gives {_fmt(hw_ratio)}x and "
                    + (sw["text"] if sw.get("speedup") else "no kernel speed-up up to 5x closes the gap")
                    + _needs_text(needs))


def _software_needed(R: _Ratio, at, axis, A: Side, claimed: float) -> dict:
    """Kernel speed-up s on A (decode and prefill together, A's published features) that gives the claimed ratio."""
    if at.point == "matched":
        return {"speedup": None, "text": "not searched for a 'matched' point"}
    rs = []
    for s in SPEEDUPS:
        r = R.at(at, axis, A=A.but(speedup=s))["ratio"]
        rs.append(r)
    feats = " with the KV host tier on" if A.host_tier else ""
    pts = [(s, r) for s, r in zip(SPEEDUPS, rs) if not math.isnan(r) and not math.isinf(r)]
    table = [[s, _f(r)] for s, r in zip(SPEEDUPS, rs)]
    if not pts:
        return {"speedup": None, "ratios": table, "text": "the model's ratio is undefined at this point"}
    if pts[0][1] >= claimed:
        return {"speedup": 1.0, "ratios": table,
                "text": f"no kernel change: {A.hardware} as published ({A.profile}{feats}) already gives "
                        f"{_fmt(pts[0][1])}x"}
    for (s0, r0), (s1, r1) in zip(pts, pts[1:]):
        if r0 < claimed <= r1:
            t = math.log(claimed / r0) / math.log(r1 / r0)
            s = math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
            return {"speedup": s, "ratios": table,
                    "text": f"{A.hardware}'s decode and prefill kernels {s:.2f}x as fast as the {A.profile} "
                            f"profile's ({(s - 1) * 100:.0f}% faster){feats}"}
    return {"speedup": None, "ratios": table,
            "text": f"even kernels {SPEEDUPS[-1]:g}x faster give only {_fmt(pts[-1][1])}x"}


# ------------------------------------------------------------------ one-system claims
def _check_single(store: CurveStore, claim: ClaimSpec, model: str, wl: str, out: dict) -> dict:
    col, notes = _column(claim)
    out["assumptions"] += notes
    hw = claim.system_ids[0]
    prof, assumed = _profile_for(claim, 0)
    if assumed:
        out["assumptions"].append(f"{hw}'s software not stated: profile {prof} assumed")
    S = Side(hw, prof, host_tier=_host_tier(claim, hw), gpus=_gpus(claim, hw))
    if S.gpus:
        out["assumptions"].append(f"{hw}: instances of {S.gpus[0]} GPUs only (the claim's deployment hint)")
    claimed = claim.claimed

    def val(side, axis, x_from=None, x_to=None):
        if claim.kind == "delta":
            a, end = _value(store, side, model, wl, claim.from_, axis, col, x_from)
            b, _ = _value(store, side, model, wl, claim.to, axis, col, x_to)
            return (b / a - 1 if a and not math.isnan(a) else float("nan")), end
        return _value(store, side, model, wl, claim.at, axis, col)

    at = claim.to if claim.kind == "delta" else claim.at
    axis = _axis(at)
    v, end = val(S, axis)
    if col == "agents_per_gpu" and math.isnan(v) and claim.kind != "delta":
        from ..analyses.agents import SLO, agents_per_gpu
        res = agents_per_gpu(store.points(S, model, wl), SLO(at.tps_per_user, at.ttft_ms, at.percentile or 50.0))
        out["model"] = {"value": None, "band": [None, None], "speed_of_light": None}
        out["systems"] = [{"name": S.name, "hardware": hw, "profile": prof, "profile_assumed": assumed,
                           "max_tps_per_user": end}]
        return _verdict(out, "implausible", None, f"no modeled deployment meets the SLO {res.slo.text()}: "
                                                  f"{res.reason}")
    lo, hi = _band([val(S.but(corner=c), axis)[0] for c in ("pess", "value", "opt")])
    sol, _ = val(Side(hw, "speed-of-light", gpus=S.gpus), axis)
    out["model"] = {"value": _f(v), "band": [_f(lo), _f(hi)], "speed_of_light": _f(sol)}
    out["systems"] = [{"name": S.name, "hardware": hw, "profile": prof, "profile_assumed": assumed,
                       "max_tps_per_user": end}]
    x = at.tps_per_user if at.point == "speed" else None
    out["systems"][0]["beyond_end"] = bool(x is not None and x > end)
    if claim.kind == "delta":
        out["systems"][0]["beyond_end"] = bool(max(claim.from_.tps_per_user or 0, x or 0) > end)
        k = lambda d: 1 + d  # noqa: E731  compare retained shares (to/from), not the deltas
        inside = lambda c, a, b: _inside(k(c), k(a), k(b))  # noqa: E731
        unit = ""
    else:
        inside = lambda c, a, b: _inside(c, a, b, claim.qualifier)  # noqa: E731
        unit = {"tps_per_user": " tok/s/user", "ttft_s": " s", "agents_per_gpu": " sessions/GPU"}.get(col, "")
    if x is not None and claim.kind != "delta":
        out["sensitivity"] = {f"x{f:g}": {"tps_per_user": x * f,
                                          "value": _f(_value(store, S, model, wl, at, axis, col, x * f)[0])}
                              for f in (0.9, 1.1)}
    show = (lambda d: f"{d * 100:+.0f}%") if claim.kind == "delta" else (lambda d: _fmt(d, unit))
    # the interval (interval.py): a delta is read as the retained share 1 + change, a ratio of two rows
    if claim.kind == "delta":
        q, band, c_eff, unit_iv = 1 + v, (1 + lo, 1 + hi), 1 + claimed, " (retained share)"
        terms = [{"hardware": hw, "row": _row(store, S, model, wl, claim.to, axis, col), "sign": 1, "metric": col},
                 {"hardware": hw, "row": _row(store, S, model, wl, claim.from_, axis, col), "sign": -1,
                  "metric": col}]
    else:
        q, band, c_eff, unit_iv = v, (lo, hi), claimed, unit
        terms = [{"hardware": hw, "row": _row(store, S, model, wl, at, axis, col), "sign": 1, "metric": col}]
    iv = interval(q, band, terms)
    dist = distance(c_eff, iv, claim.qualifier if claim.kind != "delta" else "about")
    out["interval"], out["distance"] = summary(iv), dist
    out["model"]["interval"] = [_f(iv["low"] - 1 if claim.kind == "delta" else iv["low"]),
                                _f(iv["high"] - 1 if claim.kind == "delta" else iv["high"])]
    needs = power_or_price(col, hw, None, q, c_eff) if claim.kind != "delta" else []
    if claim.kind == "delta":
        needs.append(delta_speed(store, S, model, wl, axis, col, _env_metric(col), claim.from_.tps_per_user,
                                 claim.to.tps_per_user, claimed, hw))
    out["needs"] = needs
    graded = _grade(out, iv, dist, c_eff, unit_iv)
    if graded:
        return graded
    if col == "ttft_s" and not any(h.concurrency for h in claim.hints_for(hw)):
        tw = ttft_wait(terms[0]["row"], c_eff, hw)
        needs += [tw] if tw else []
        return _verdict(out, "not checkable", None,
                        _interval_text(iv, dist, c_eff, unit) + f". The claim states no load (concurrency or request "
                        f"rate) and no prefill capacity for {hw}: the model's TTFT is its queue's P50 on the "
                        f"throughput-optimal deployment at that speed, and a TTFT outside that interval can come from "
                        f"a load or a prefill:decode split the model is not told" + _needs_text(needs))
    unstated_axis = any(p.endswith("interactivity") for p in claim.unstated)
    if unstated_axis and (at.point != "peak"):
        other = "itl" if axis.startswith("e2e") else "e2e"
        av, _ = val(S, other)
        alo, ahi = _band([val(S.but(corner=c), other)[0] for c in ("pess", "value", "opt")])
        out["alternatives"].append({"assumption": f"{other} axis", "value": _f(av), "band": [alo, ahi]})
        if inside(claimed, alo, ahi):
            return _verdict(out, "consistent only if", f"the per-user axis is {other} ({AXIS_TEXT[other]})",
                            f"on the assumed {axis} axis the model gives {show(v)}; on {other} {show(av)}")
    if claim.kind == "delta" and (claim.from_.approx or claim.to.approx):
        x0, x1 = claim.from_.tps_per_user, claim.to.tps_per_user
        tries = []
        for f0 in (0.9, 1.0, 1.1):
            for f1 in (0.9, 1.0, 1.1):
                d, _ = val(S, axis, x0 * f0, x1 * f1)
                tries.append((x0 * f0, x1 * f1, d))
        out["alternatives"].append({"assumption": "speeds +-10%", "values": [list(map(_f, t)) for t in tries]})
        hit = [t for t in tries if not math.isnan(t[2]) and inside(claimed, t[2], t[2])]
        if hit:
            t = hit[0]
            return _verdict(out, "consistent only if", f"the speeds are ~{_fmt(t[0])} -> ~{_fmt(t[1])} tok/s/user",
                            f"model {show(v)} from {_fmt(x0)} to {_fmt(x1)}; {show(t[2])} from {_fmt(t[0])} to "
                            f"{_fmt(t[1])} (the curve is steep there)")
    if claim.kind == "delta" or col == "ttft_s":
        return _verdict(out, "implausible", None, _interval_text(iv, dist, c_eff, unit_iv) + _needs_text(needs))
    # a throughput or speed: faster kernels on this system?
    if not math.isnan(v) and claimed > hi:
        for s in SPEEDUPS[1:]:
            vs, _ = val(S.but(speedup=s), axis)
            if not math.isnan(vs) and vs * (1 + TOL) >= claimed:
                out["software_change"] = {"speedup": s, "value": vs}
                if s <= MAX_SOFTWARE:
                    return _verdict(out, "consistent only if",
                                    f"{hw}'s decode and prefill kernels are ~{s:g}x as fast as the {prof} profile's",
                                    f"model {show(v)} (band {show(lo)} to {show(hi)}) vs claimed {show(claimed)}; "
                                    f"with kernels {s:g}x: {show(vs)}")
                break
    beyond = "" if math.isnan(sol) else f"; even speed-of-light software gives {show(sol)}"
    sc = out.get("software_change")
    if sc:
        needs.append({"kind": "kernels", "speedup": sc["speedup"],
                      "text": f"{show(claimed)} needs {hw}'s decode and prefill kernels ~{sc['speedup']:g}x as fast "
                              f"as the {prof} profile's (model {show(sc['value'])} with them)"})
    return _verdict(out, "implausible", None, _interval_text(iv, dist, c_eff, unit) + beyond + _needs_text(needs))


BASIS_TEXT = {"measured-allin": "measured all-in power draw", "provisioned-allin": "provisioned all-in (rack) power",
              "gpu-tdp": "GPU TDP", "rental": "rental price per GPU-hour", "capex": "purchase price (capex)",
              "tco": "total cost of ownership"}


def basis(claim: ClaimSpec, col: str) -> dict | None:
    """The power (per-MW) or price (per-dollar) basis: what the claim divides by and what the model divides by,
    each system's catalog value with its status, range and source."""
    if not (col.endswith("_per_mw") or col.endswith("_per_usd")):
        return None
    mw = col.endswith("_per_mw")
    stated = claim.metric.power_basis if mw else claim.metric.price_basis
    rows = []
    for hw in claim.system_ids:
        spec = catalog.hardware(hw)
        sv = spec.specs.allin_power_w if mw else spec.specs.price_usd_per_gpu_hour
        field = "allin_power_w" if mw else "price_usd_per_gpu_hour"
        if mw and sv is None:
            sv, field = spec.specs.gpu_tdp_w, "gpu_tdp_w"
        if sv is None:
            continue
        lo, hi = sv.bounds()
        rows.append({"hardware": hw, "field": field, "value": sv.value, "low": lo, "high": hi, "status": sv.status,
                     "source": sv.source})
    unit = " W" if mw else " USD/GPU-h"
    model_basis = "catalog all-in power per GPU (provisioned rack power / GPUs)" if mw else \
        "catalog price per GPU-hour (rental-equivalent estimate)"
    vals = "; ".join(f"{r['hardware']} {r['value']:,.4g}{unit} ({r['status']}"
                     + (f", range {r['low']:,.4g}-{r['high']:,.4g}" if r['high'] > r['low'] else "") + ")" for r in rows)
    text = (f"claim divides by {BASIS_TEXT.get(stated, 'an unstated basis')}; the model by the {model_basis}: {vals}")
    if mw and claim.kind == "delta":
        text += ". The power divides both points of one curve, so it cancels in the change"
    elif mw and stated == "measured-allin":
        text += (". A measured draw below the provisioned figure changes a ratio only if the systems' draws are "
                 "different shares of their provisioned power")
    return {"claim": stated, "model": model_basis, "systems": rows, "text": text}


# ------------------------------------------------------------------ entry point
def _verdict(out: dict, verdict: str, condition: str | None, reason: str) -> dict:
    out.update(verdict=verdict, condition=condition, reason=reason)
    return out


def _describe_point(p: OperatingPoint | None) -> str:
    if p is None:
        return ""
    if p.point == "speed":
        s = f"{'~' if p.approx else ''}{p.tps_per_user:g} tok/s/user"
    else:
        s = {"peak": "each system's peak", "fastest_common": "the fastest speed both reach",
             "max_speed": "the end of the curve", "matched": "matched interactivity (speed not given)"}[p.point]
    if p.percentile:
        s += f", P{p.percentile:g}"
    if p.interactivity:
        s += f", {p.interactivity} axis"
    if p.ttft_ms:
        s += f", TTFT <= {p.ttft_ms:g} ms"
    return s


def check(claim, store: CurveStore | None = None, models=DEFAULT_MODELS) -> dict:
    """Check one claim (id, path or ClaimSpec). Returns a JSON-ready dict with ``verdict``, ``condition``,
    ``reason``, the model's value and band, each system's curve end, sensitivity, the hardware-only ratio and
    the software change the rest needs, the claim's own arithmetic and the assumptions the verdict rests on."""
    claim = load_claim(claim)
    store = store or CurveStore()
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
        near = min((p["ratio"] for p in r["pairs"]), key=lambda v: abs(math.log(v / claim.claimed)), default=None)
        # a spec ratio has no interval: z is absent (None), not NaN
        out["distance"] = {"multiple": claim.claimed / near if near else None, "z": None,
                           "side": None, "nearest_pair": near}
        return _verdict(out, r["verdict"], r["condition"], r["reason"])
    col, _ = _column(claim)
    out["metric"] = col
    out["metric_text"] = METRIC_TEXT.get(col, col)
    b = basis(claim, col)
    if b:
        out["basis"] = b
        out["assumptions"].append("basis: " + b["text"])
    p = claim.at or claim.to
    out["axis"] = _axis(p)
    out["at"] = _describe_point(claim.at) if claim.at else f"{_describe_point(claim.from_)} -> {_describe_point(claim.to)}"
    out["weights"] = store.weights
    wl = claim.workload or DEFAULT_WORKLOAD
    if claim.workload is None:
        out["assumptions"].append(f"workload unstated: {wl} assumed")
    if p and p.interactivity == "e2e" and p.percentile in (50, 90):
        out["assumptions"].append(f"P{p.percentile:.0f} E2E axis: the queue's P{p.percentile:.0f} TTFT for "
                                  "requests of the workload's median lengths (the catalog publishes no spread of "
                                  "request lengths)")
    elif p and p.interactivity == "e2e" and p.percentile:
        out["assumptions"].append(f"E2E axis read at the mean TTFT: the model computes P50 and P90, not "
                                  f"P{p.percentile:g}")
    fn = _check_ratio if claim.kind == "ratio" else _check_single
    if claim.model:
        return fn(store, claim, claim.model, wl, out)
    # model unstated: check each candidate model and report which ones reconcile the claim
    per = {}
    for m in models:
        sub = fn(store, claim, m, wl, {**out, "assumptions": list(out["assumptions"]), "alternatives": []})
        per[m] = {k: sub.get(k) for k in ("verdict", "condition", "reason", "model", "systems", "hardware_only",
                                          "interval", "distance", "needs")}
    out["per_model"] = per
    ok = [m for m, r in per.items() if r["verdict"] == "consistent"]
    cond = [m for m, r in per.items() if r["verdict"] == "consistent only if"]
    first = per[ok[0] if ok else cond[0] if cond else models[0]]
    out.update(model=first["model"], systems=first["systems"], hardware_only=first["hardware_only"],
               interval=first["interval"], distance=first["distance"], needs=first["needs"])
    summary = "; ".join(f"{m}: {_fmt((r['model'] or {}).get('value'))}x {r['verdict']}" for m, r in per.items())
    if ok and len(ok) == len(per):
        return _verdict(out, "consistent", None, "for every candidate model (the claim names none): " + summary)
    if ok:
        return _verdict(out, "consistent only if", f"the model is {' or '.join(ok)} (unstated)", summary)
    if cond:
        return _verdict(out, "consistent only if", f"the model is {cond[0]} and {per[cond[0]]['condition']}", summary)
    return _verdict(out, "implausible", None, "for none of the candidate models: " + summary)


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

