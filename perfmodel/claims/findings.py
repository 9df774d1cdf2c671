"""What a check records of its reading (the evidence under its verdict): the reading at the claim's point with
its interval and each system's curve end (``evaluate``), each system's line, the hardware-only and as-measured
ratios, the software headroom, the basis a per-MW or per-dollar ratio needs, and the nearest precedent of a speed
claim on hardware with no record of its model."""

from __future__ import annotations

import math
from typing import Any

from .. import catalog
from ..analyses.model_error import half_widths
from ..specs.claim import ClaimSpec
from .curves import AXES, CurveStore, Side, curve_end, end_deployment, peak
from .fmt import fmt as _fmt
from .fmt import number as _f
from .interval import interval, summary, width
from .latency import is_latency
from .reading import Figure, env_metric
from .sides import ClaimSides
from .values import CurveEnd, Evaluation, Reading


def _dir(fig: Figure, hw: str) -> str:
    """Which side of Q a system's unreached term sends Q to ('down': 0, 'up': infinity)."""
    t = next(t for t in fig.terms if t.side.hardware == hw)
    return "down" if (t.sign > 0) != is_latency(fig.col) else "up"


def q_of(r: Reading, fig: Figure) -> float:
    """A reading's Q for the interval: with an unreached system, 0 or infinity (never dropped)."""
    if r["unreached"]:
        dirs = {_dir(fig, hw) for hw in r["unreached"]}
        return float("nan") if len(dirs) > 1 else (0.0 if dirs == {"down"} else math.inf)
    return r["q"]


def evaluate(C: ClaimSides, fig: Figure) -> Evaluation:
    """The reading, its interval (the model's own cross-validated error of the claim's kind, applied vertically:
    rule 1), the software headroom (the profile's fast corner, reported, never in the interval), each system's
    curve end with the model's curve-end speed error, and the distance of the claim."""
    nom = fig.read()
    opt = fig.with_sides(lambda s: s.but(corner="opt")).read()
    q = nom["q"] if not nom["unreached"] else q_of(nom, fig)
    terms = [{"hardware": t.side.hardware, "row": r, "sign": t.sign, "metric": fig.col, "percentile": fig.percentile}
             for t, r in zip(fig.terms, nom["rows"])]
    iv = interval(q, (q, q_of(opt, fig)), terms, [], model_error=True, workload=C.wclass)
    h = half_widths("speed", "curve-end", C.wclass)
    ends: dict[str, CurveEnd] = {}
    for hw, e in zip(nom["systems"], nom["ends"]):
        ok = math.isfinite(e)
        ends[hw] = {"end": e, "low": e * math.exp(-h["q90"]) if ok else math.inf,
                    "high": e * math.exp(-h["q10"]) if ok else -math.inf}
    unreached = {"nominal": list(nom["unreached"]), "down": [], "up": []}
    return {"fig": fig, "nom": nom, "pess": nom, "opt": opt, "q": q, "iv": iv, "ends": ends,
            "unreached": unreached, "c": C.claimed(q), "end_error": h}


def _systems(C: ClaimSides, ev: Evaluation) -> list[dict]:
    """Each system: its profile, its curve end (with the end's own row), its figure at the point."""
    out, nom = [], ev["nom"]
    for i, (s, (prof, assumed)) in enumerate(zip(C.sides, C.profiles)):
        env = ev["fig"].env(s)
        j = next((k for k, t in enumerate(ev["fig"].terms) if t.side.hardware == s.hardware), None)
        end = ev["ends"].get(s.hardware)
        e: dict[str, float] = {} if end is None else {"end": end["end"], "low": end["low"], "high": end["high"]}
        d: dict[str, Any] = {"name": s.name, "hardware": s.hardware, "profile": prof, "profile_assumed": assumed,
             "max_tps_per_user": e.get("end"), "end_low": _f(e.get("low")) if e.get("low") != math.inf else None,
             "end_high": _f(e.get("high")) if e.get("high") != -math.inf else None,
             "value": _f(nom["values"][j]) if j is not None else None,
             "beyond_end": s.hardware in nom["unreached"], "end_deployment": end_deployment(env, C.axis)}
        if len(env):
            er = env.loc[env[AXES[C.axis]].idxmax()]
            d["end_figure"] = _f(er[env_metric(C.col)]) if env_metric(C.col) in er else None
            row = nom["rows"][j] if j is not None else None
            if row is not None and j is not None:
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


def headroom(C: ClaimSides, ev: Evaluation) -> dict:
    """The software headroom: the figure at the profile's fast corner (every fitted parameter at its fast end),
    reported beside the interval, never in it (rule 1)."""
    qo = q_of(ev["opt"], ev["fig"])
    q = ev["q"]
    return {"fast_corner": _f(qo), "factor": _f(qo / q) if q and math.isfinite(q) and q > 0 and qo and
            math.isfinite(qo) else None}


def basis_need(C: ClaimSides, ev: Evaluation) -> dict | None:
    """The power (per MW) or price (per dollar) ratio a ratio claim needs, inside its interval or not: the input
    of the source's shared condition (``shared.py``)."""
    from .conditions import ratio_basis
    if C.col.endswith("_per_mw"):
        return ratio_basis(C, ev, "allin_power_w", "all-in power", "all-in powers")
    if C.col.endswith("_per_usd"):
        return ratio_basis(C, ev, "price_usd_per_gpu_hour", "price", "prices")
    return None


def record_reading(out: dict, C: ClaimSides, fig: Figure, ev: Evaluation, dist: dict) -> None:
    """The reading, its interval, each system's curve end and point, the sensitivity to the speed, into ``out``."""
    iv, q, nom, claim = ev["iv"], ev["q"], ev["nom"], C.claim
    out["interval"], out["distance"] = summary(iv), dist
    tr = (lambda v: None if v is None else v - 1) if claim.kind == "delta" else (lambda v: v)
    fq = _f(tr(q)) if q is not None and math.isfinite(q) else _f(q)
    out["model"] = {"value": fq, "central": fq,
                    "band": [_f(tr(q_of(ev["pess"], fig))), _f(tr(q_of(ev["opt"], fig)))],
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
    x = nom.get("x")
    if x is not None and not fig.grid_point:      # +-10% per-user speed (a stated speed only)
        out["sensitivity"] = {f"x{f:g}": {"tps_per_user": x * f, "ratio": _f(fig.read(x_scale=f)["q"])}
                              for f in (0.9, 1.1)}


def compare_software(out: dict, C: ClaimSides, q: float, sw: dict) -> None:
    """Hardware only (the second system's software on both) beside as measured (each system's own software)."""
    if C.claim.kind != "ratio":
        return
    A, B = C.sides
    hw_q = C.figure(sides=[B.but(hardware=A.hardware, gpus=A.gpus), B]).read()["q"]
    out["hardware_only"] = {"ratio": _f(hw_q), "profile": B.profile + (f" {B.weights}" if B.weights else ""),
                            "software_change": sw,
                            "software_factor_needed": _f(C.claim.claimed / hw_q) if hw_q and math.isfinite(hw_q)
                            else None}
    out["as_measured"] = {"ratio": _f(q), "profiles": [s.name for s in C.sides]}


def with_precedent(out: dict, store: CurveStore, claim: ClaimSpec, wl: str) -> dict:
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
