"""The planner's table of a seed article: what the model says a capacity planner can plan on, per model it names.

For the seed's two systems A / B (the systems of its first ratio claim, each with the software profile its
claims are read with) and each model the seed names, one row at each system's peak and one at each per-user
speed the seed names (on the axis its claim reads it), from the envelopes of total tokens/s per GPU:

- absolute throughput f_A, f_B (total tokens/s per GPU) and the multiple m = f_A / f_B per GPU, with the
  model's held-out ratio error (``rate-ratio`` of the claim's records class): interval m exp(-down) .. m exp(up);
- per MW: m x P_B / P_A (P: catalog all-in power per GPU, W; status stated), per dollar: m x $_B / $_A (catalog
  price per GPU-hour, USD; status stated); the same ln half-widths (the basis is a constant of the catalog);
- sessions per rack at an SLO that includes TTFT: agents_per_gpu (``analyses/agents.py``) over the envelope's
  deployments with the speed floor at the row's speed (at a peak, the seed's lowest named speed, else none) and a
  TTFT limit ``PLAN_TTFT_MS`` at the workload's SLO percentiles, times the GPUs of one scale-up domain (a rack).

A speed a system cannot reach is "beyond its curve end" (never a cliff maximum: no 'up to' is read here).
"""

from __future__ import annotations

import math

import pandas as pd

from .. import catalog
from ..claims.curves import AXES, CurveStore, Side, curve_end, peak, read
from ..claims.fmt import fmt
from ..claims.model_error import half_widths
from ..claims.shared import source_key

PLAN_TTFT_MS = 5000.0     # the planner's TTFT limit (ms): a planning choice stated in the table, not a spec number
METRIC = "total_tps_per_gpu"
COLUMNS = ["source", "model", "point", "axis", "a", "b", "a_tps_per_gpu", "b_tps_per_gpu", "per_gpu", "per_gpu_low",
           "per_gpu_high", "per_mw", "per_usd", "a_sessions_per_rack", "b_sessions_per_rack", "slo"]


def _pair(rs: list[dict]) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """(hardware, profile) of the seed's two systems: those of its first two-system claim with a model."""
    for r in rs:
        s = r.get("systems") or []
        if r["kind"] == "ratio" and len(s) == 2 and r.get("model_id"):
            return (s[0]["hardware"], s[0]["profile"]), (s[1]["hardware"], s[1]["profile"])
    return None


def _floor(rs: list[dict], model: str) -> float | None:
    """The slowest per-user speed the seed names or sets as an SLO floor for ``model`` (tok/s/user), or None."""
    v = [x for x, _ in _named(rs, model)]
    for r in rs:
        if r.get("model_id") == model and r["kind"] != "spec_ratio":
            at = catalog.claim(r["id"]).at
            if at is not None and at.min_tps_per_user:
                v.append(float(at.min_tps_per_user))
    return min(v) if v else None


def _named(rs: list[dict], model: str) -> list[tuple[float, str]]:
    """The per-user speeds the seed names for ``model`` (tok/s/user) with the axis each is read on."""
    out = set()
    for r in rs:
        if r.get("model_id") != model:
            continue
        c = catalog.claim(r["id"])
        for p in ([c.from_, c.to] if c.kind == "delta" else [c.at]):
            if p is not None and p.point == "speed" and p.tps_per_user:
                ax = r.get("axis") or "itl"
                out.add((float(p.tps_per_user), ax if ax in AXES else "itl"))
    return sorted(out)


def _sessions(store: CurveStore, side: Side, model: str, wl: str, speed: float | None, rack: float) -> float | None:
    from ..analyses.agents import agents_per_gpu
    from ..search import SLO
    w = catalog.workload(wl)
    pts = store._envelope_points(side, model, wl)
    if speed is None or not len(pts):
        return None
    slo = SLO.speed_floor(speed, PLAN_TTFT_MS, getattr(w, "slo_speed_percentile", None) or 50.0,
                          getattr(w, "slo_ttft_percentile", None))
    res = agents_per_gpu(pts, slo)
    return None if res.value is None else res.value * rack


def tables(store: CurveStore, results: list[dict]) -> pd.DataFrame:
    """One row per (seed, model, point): see the module docstring."""
    by_src: dict[str, list[dict]] = {}
    for r in results:
        by_src.setdefault(source_key(r.get("source")), []).append(r)
    rows = []
    for src, rs in by_src.items():
        pair = _pair(rs)
        if pair is None:
            continue
        (ha, pa), (hb, pb) = pair
        A, B = Side(ha, pa), Side(hb, pb)
        cA, cB = catalog.hardware(ha), catalog.hardware(hb)
        p_ratio = (cB.value("allin_power_w") or math.nan) / (cA.value("allin_power_w") or math.nan)
        d_ratio = (cB.value("price_usd_per_gpu_hour") or math.nan) / (cA.value("price_usd_per_gpu_hour") or math.nan)
        rack_a, rack_b = cA.value("scaleup_domain_gpus") or math.nan, cB.value("scaleup_domain_gpus") or math.nan
        models = sorted({r["model_id"] for r in rs if r.get("model_id") and r["kind"] != "spec_ratio"})
        for model in models:
            wl = next((r["workload"] for r in rs if r.get("model_id") == model and r.get("workload")), "agentx")
            w = catalog.workload(wl)
            cls = "agentic" if getattr(w, "kind", "fixed") == "agentic" else "all"
            h = half_widths("rate-ratio", "all", cls)
            named = _named(rs, model)
            floor = _floor(rs, model)
            for x, ax in [(None, "itl"), *named]:
                ea, eb = (store.envelope(S, model, wl, ax, METRIC) for S in (A, B))
                if x is None:
                    fa, fb = peak(ea, METRIC), peak(eb, METRIC)
                else:
                    fa, fb = (float(read(e, x, ax, METRIC)[0]) for e in (ea, eb))
                m = fa / fb if fb and math.isfinite(fb) and math.isfinite(fa) else math.nan
                slo_speed = x if x is not None else floor
                rows.append({"source": src, "model": model, "point": "peak" if x is None else f"{x:g}", "axis": ax,
                             "a": f"{ha} ({pa})", "b": f"{hb} ({pb})", "a_tps_per_gpu": fa, "b_tps_per_gpu": fb,
                             "a_end": curve_end(ea, ax), "b_end": curve_end(eb, ax),
                             "per_gpu": m, "per_gpu_low": m * math.exp(-h["down"]),
                             "per_gpu_high": m * math.exp(h["up"]), "per_mw": m * p_ratio, "per_usd": m * d_ratio,
                             "a_sessions_per_rack": _sessions(store, A, model, wl, slo_speed, rack_a),
                             "b_sessions_per_rack": _sessions(store, B, model, wl, slo_speed, rack_b),
                             "slo_tps_per_user": slo_speed,
                             "slo": (f">= {slo_speed:g} tok/s/user, TTFT <= {PLAN_TTFT_MS / 1e3:g} s"
                                     if slo_speed else "")})
    return pd.DataFrame(rows)


def _x(v: float, lo: float | None = None, hi: float | None = None) -> str:
    if v is None or not math.isfinite(v):
        return "n/a"
    s = f"{fmt(v)}x"
    return s + (f" ({fmt(lo)}-{fmt(hi)})" if lo is not None and hi is not None else "")


def _scaled(r, col: str) -> tuple[float, float, float]:
    """A per-MW or per-dollar multiple with the per-GPU interval scaled by the same catalog constant."""
    k = r[col] / r["per_gpu"] if r["per_gpu"] else math.nan
    return r[col], r["per_gpu_low"] * k, r["per_gpu_high"] * k


def _abs(v, end, x) -> str:
    if v is None or not math.isfinite(v):
        return f"beyond its end ({fmt(end)})" if x != "peak" else "n/a"
    return f"{v:,.0f}"


def _sess(r) -> str:
    """'6,961 / 1,494 at >= 120': sessions per rack of A and B at the row's SLO speed floor."""
    x = r.get("slo_tps_per_user")
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a (no speed named)"
    v = [r["a_sessions_per_rack"], r["b_sessions_per_rack"]]
    t = [("none meets it" if a is None or (isinstance(a, float) and math.isnan(a)) else f"{a:,.0f}") for a in v]
    return f"{t[0]} / {t[1]} at >= {x:g}"


def markdown(df: pd.DataFrame, src: str) -> list[str]:
    """The planner's table of one seed (Markdown lines; [] when the seed has no two-system claim)."""
    if df is None or not len(df):
        return []
    d = df[df["source"] == src]
    if not len(d):
        return []
    a, b = d["a"].iloc[0], d["b"].iloc[0]
    ha, hb = a.split(" ")[0], b.split(" ")[0]
    cA, cB = catalog.hardware(ha), catalog.hardware(hb)
    pa, pb = cA.specs.allin_power_w, cB.specs.allin_power_w
    da, db = cA.specs.price_usd_per_gpu_hour, cB.specs.price_usd_per_gpu_hour
    L = [f"Planner's table: {a} over {b}, total tokens/s per GPU on the model's envelopes (no 'up to' maxima). "
         f"Per MW divides by catalog all-in power per GPU ({ha} {pa.value:,.0f} W, {hb} {pb.value:,.0f} W; "
         f"{pa.status}/{pb.status}); per dollar by catalog price per GPU-hour ({ha} ${da.value:g}, {hb} "
         f"${db.value:g}; {da.status}/{db.status}). Interval: the held-out ratio error. Sessions per rack at the "
         f"speed floor shown (decode tok/s/user) with TTFT <= {PLAN_TTFT_MS / 1e3:g} s (a planning choice) at the "
         "workload's SLO percentiles.\n",
         "| model | point (tok/s/user) | tok/s/GPU A / B | per GPU (interval) | per MW | per $ | sessions/rack A / B |",
         "|---|---|---|---|---|---|---|"]
    for _, r in d.iterrows():
        pt = r["point"] + ("" if r["point"] == "peak" or r["axis"] == "itl" else f" ({r['axis']})")
        L.append(f"| {r['model']} | {pt} | {_abs(r['a_tps_per_gpu'], r['a_end'], r['point'])} / "
                 f"{_abs(r['b_tps_per_gpu'], r['b_end'], r['point'])} | "
                 f"{_x(r['per_gpu'], r['per_gpu_low'], r['per_gpu_high'])} | {_x(*_scaled(r, 'per_mw'))} | "
                 f"{_x(*_scaled(r, 'per_usd'))} | "
                 f"{_sess(r)} |")
    return L + [""]
