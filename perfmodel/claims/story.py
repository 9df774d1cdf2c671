"""One story per seed article: at most two shared unknowns, solved jointly over the claims they explain, every
explained claim read back at its claimed value.

The story lives in three rooms: ``story_grid`` (per claim, in the check: its figure over the step-factor
tables of its systems, and whether a figure reads back), ``story_fit`` (per source: the values of the unknowns
that explain the most claims, by bisection) and this module (``solve``: the story of each source, its
read-back and its text).
"""

from __future__ import annotations

import math

import numpy as np

from . import story_fit
from .shared import source_key
from .story_fit import OPTIONS, lnq, model_fit, prepared
from .story_grid import KF, KS, MARGIN, TOL, grid, grid_arrays, reads_back
from .values import StepFactor


def solve(results: list[dict]) -> dict[str, dict]:
    """Per source: the story (module docstring) as {unknowns, per_model, explained, left, readback, text}."""
    from .conditions import power_ratio_range
    out: dict[str, dict] = {}
    story_fit.reset()
    by_src: dict[str, list[dict]] = {}
    for r in results:       # TTFT-bound (not checkable) claims have unknowns of their own
        if r.get("story_grid") and r["verdict"] not in ("not checkable", "not checkable (under-specified)"):
            by_src.setdefault(source_key(r.get("source")), []).append(r)
    for src, rs in by_src.items():
        pair = next((r["story_grid"]["systems"] for r in rs if len(r["story_grid"]["systems"]) == 2), None)
        if pair is None:
            continue
        a, b = pair
        pr = power_ratio_range(a, b)
        r_range = (pr["low"], pr["high"])
        models: dict[str, list[tuple[str, dict]]] = {}
        for r in rs:
            g = r["story_grid"]
            if set(g["systems"]) <= {a, b} and not g.get("untested_up_to"):   # an untested 'up to': apart
                models.setdefault(g["model"], []).append((r["id"], g))
        best = None
        for opt in OPTIONS:
            fits = {m: model_fit(cl, a, b, opt, r_range) for m, cl in models.items()}
            n = sum(len(f["explained"]) for f in fits.values())
            z = sum(f["z"] for f in fits.values())
            key = (n, -len(opt), -z)
            if best is None or key > best[0]:
                best = (key, opt, fits)
        assert best is not None
        _, opt, fits = best
        ids = [r["id"] for r in rs if set(r["story_grid"]["systems"]) <= {a, b}
               and not r["story_grid"].get("untested_up_to")]
        explained = [i for f in fits.values() for i in f["explained"]]
        left = [i for i in ids if i not in explained]
        apart = [(r["id"], r["story_grid"]) for r in rs if r["story_grid"].get("untested_up_to")]
        readback = _readback(models, fits, a, b)
        per_model = {m: {"factors": _factors(f, a, b, opt), "r": f["r"], "r_range": f.get("r_range"),
                         "explained": f["explained"], "z": f["z"]} for m, f in fits.items()}
        out[src] = {"unknowns": list(opt), "systems": [a, b], "per_model": per_model, "explained": explained,
                    "left": left, "power_range": list(r_range), "power_basis": pr["text"], "readback": readback,
                    "tolerance": TOL, "up_to_apart": [i for i, _ in apart],
                    "text": _text(opt, a, b, per_model, explained, left, pr, readback) + _apart_text(apart)}
    return out


def _apart_text(apart: list[tuple[str, dict]]) -> str:
    """The 'up to' claims with no tested range, apart from the story: the model's least and most figure over every
    speed both systems reach (as modeled), never counted as read back (a range that wide straddles most claims)."""
    from .fmt import fmt
    if not apart:
        return ""
    parts = []
    for i, g in apart:
        q, qm = grid_arrays(g)
        c = len(KS) // 2
        ij = (c, c) if q.shape[0] > 1 else (0, c)
        lo, hi = float(qm[ij]), float(q[ij])
        rng = f"{fmt(lo)}-{fmt(hi)}" if math.isfinite(lo) and math.isfinite(hi) else "n/a"
        parts.append(f"`{i}` {rng} as modeled (claimed up to {fmt(g['c_range'][1])})")
    return " 'Up to' claims with no tested range, not read back: " + ", ".join(parts) + "."


def _factors(f: dict, a: str, b: str, opt) -> dict[str, float]:
    """{slot: k} of the unknowns a story sets (A's and B's peak and at-speed steps)."""
    out = {}
    for grp, gf in f["groups"].items():
        if "A" in opt:
            out[f"{a}:{grp}"] = gf["ka"]
        if "B" in opt:
            out[f"{b}:{grp}"] = gf["kb"]
    return out


def _readback(models, fits, a: str, b: str) -> dict[str, dict]:
    """Each claim's figure at the story's values (its tables at the factors it chose, R applied):
    {id: {q, claimed, ok}}."""
    out = {}
    for m, cl in models.items():
        f = fits[m]
        for cid, g in cl:
            grp = "peak" if all(s.endswith(":peak") for s in g["slots"].values()) else "speed"
            gf = f["groups"].get(grp)
            if gf is None:
                continue
            p, ua, ub = prepared(g), math.log(gf["ka"]), math.log(gf["kb"])
            v, vm = float(np.exp(lnq(p, a, ua, ub))), float(np.exp(lnq(p, a, ua, ub, "qmin")))
            hs = g["systems"]
            if g["per_mw"] and f["r"] is not None:
                v, vm = v * g["r0"] / f["r"], vm * g["r0"] / f["r"]
            vv = v if math.isfinite(v) else None
            out[cid] = {"q": vv, "qmin": vm if math.isfinite(vm) else None, "claimed": g["c_range"],
                        "qualifier": g.get("qualifier"), "ok": reads_back(vv, g, vm if math.isfinite(vm) else None),
                        "shifts": {h: (gf["ka"] if h == a else gf["kb"]) for h in hs}, "r": f["r"]}
    return out


def _fk(hw: str, k: float) -> str:
    return StepFactor(hw, k).words(steps=False, as_modeled=True)


def _text(opt, a, b, per_model, explained, left, pr, readback) -> str:
    from .fmt import fmt
    names = {"A": f"{a}'s steps", "B": f"{b}'s steps", "R": f"the {a}/{b} power ratio"}
    parts = []
    for m, f in per_model.items():
        if not f["explained"]:
            continue
        v = [f"{_fk(s.split(':')[0], k)} {'at peak' if s.endswith(':peak') else 'at speed'}"
             for s, k in f["factors"].items()]
        if "R" in opt and f["r"]:
            lo, hi = f["r_range"] or [f["r"], f["r"]]
            v.append(f"power ratio {f['r']:.2f}x" + (f" ({lo:.2f}-{hi:.2f}x)" if hi > lo * 1.005 else ""))
        n = len(f["explained"])
        parts.append(f"on {m}: " + (", ".join(v) or "as modeled") + f" ({n} claim{'s' if n > 1 else ''})")

    def rb(i: str) -> str:
        x = readback.get(i) or {}
        lo, hi = x.get("claimed") or [None, None]
        c = fmt(lo) if lo == hi else f"{fmt(lo)}-{fmt(hi)}"
        if x.get("qualifier") == "up_to" and x.get("qmin"):
            return f"`{i}` {fmt(x['qmin'])}-{fmt(x['q'])} over the speeds both reach (claimed up to {c})"
        return f"`{i}` {fmt(x['q']) if x.get('q') else 'n/a'} (claimed {c})"
    held = f"; the power ratio held to its {pr['text']}" if "R" in opt else ""
    head = (f"**One story for this source**, {len(opt)} shared unknown{'s' if len(opt) > 1 else ''} ("
            + " and ".join(names[u] for u in opt) + f"{held}; steps at peak and at speed apart, each inside its "
            "region's error (a system's, not a ratio's) and its system's bounds): ")
    return (head + "; ".join(parts) + ". Read back at its values, within "
            f"{math.exp(TOL) - 1:.0%} of the claim: {', '.join(rb(i) for i in explained) or 'none'}"
            + (f"; not explained: {', '.join(rb(i) for i in left)}" if left else "") + ".")


__all__ = ["KF", "KS", "MARGIN", "TOL", "grid", "reads_back", "solve"]
