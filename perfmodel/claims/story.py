"""One story per seed article: at most two shared unknowns, solved jointly over the claims they explain, every
explained claim read back at its claimed value.

Per claim (``grid``, in the check): the claim's figure Q read with each system's decode steps k times the modeled
ones (``Figure.read(shifts=..., diagonal=True)``), on a fine grid of k (``KS``: 0.4-2.5x, 41 points, 4.7% apart)
for each of its systems. A figure whose terms are read at fixed points (a stated speed, a peak) is a product of
one term per system, Q(k_A, k_B) = prod_j f_j(k_hw(j))^(s_j), so one read per k gives the whole table; a figure
read over the speeds both systems reach (the fastest common speed, a matched interactivity) is read at every
cell (41 x 41). An 'up to' claim also keeps the least Q over those speeds (``qmin``). TTFT claims have none
(their unknowns are the load and the prefill split, not the steps).

Slots: a system's steps at a peak and at a stated speed are separate unknowns (``A:peak``, ``A:speed``): a
throughput peak sits at saturation, a speed on the small-batch end, and the model's error there is measured
separately (``conditions.region_band``). Each slot is held to its band (the model's cross-validated error of
that region: the error is spent once, on the factor) and to the system's bounds (no faster than speed of light,
no slower than lets it reach the speeds the source says it reached).

Per source (``solve``): the unknowns are A's steps, B's steps (A, B: the first and second system of its ratio
claims; each with its peak and at-speed slot) and the A/B power ratio R every per-MW ratio divides by (one value
per model: Q_mw = Q_gpu / R, the model's figure q at the catalog's R0 becomes q R0 / R), R held to the same-basis
range (``conditions.power_ratio_range``: GPU TDP ratio and provisioned all-in ratio). For each choice of at most
two unknown kinds (A; B; R; A and B; B and R; A and R) and each model, the values are the grid cells and R that
explain the most claims, ties broken by the least quadrature sum of the factors in units of their bands
(z = sqrt(sum (ln k / ln band end)^2)). A claim is *explained* when its figure at those values reads back at the
claimed value: |ln(Q / c)| <= ``TOL`` (a claimed range: inside it, TOL either side; 'at most' / 'at least': on
its side; 'up to': the claim between the least and the most Q over the speeds both reach). The choice that
explains the most claims, then the fewest unknowns, then the least z, is the story; the claims it leaves are
named with what they read at its values.
"""

from __future__ import annotations

import math

import numpy as np

from .shared import source_key
from .values import Evaluation, StepFactor, end_of

KS = np.exp(np.linspace(-math.log(2.5), math.log(2.5), 41))
TOL = 0.05          # ln distance at which a claim reads back at its claimed value (rounding of the figure)
N_R = 33            # grid points of the power ratio inside its same-basis range


def _slot(fig, hw: str) -> str:
    """'peak' when every term of ``hw`` is read at its peak (a throughput, not a per-user speed), else 'speed'."""
    peak = all(t.point.point == "peak" for t in fig.terms if t.side.hardware == hw) and fig.col != "tps_per_user"
    return "peak" if peak else "speed"


def _accept(C, ev: Evaluation) -> tuple[float, float]:
    """The claimed figure in Q's terms as a range (a claimed range's ends; else the claim itself)."""
    c = C.claim
    if c.kind != "delta" and c.claimed_range:
        return float(c.claimed_range[0]), float(c.claimed_range[1])
    return float(ev["c"]), float(ev["c"])


def _num(v) -> float | None:
    return None if v is None or not math.isfinite(v) or v <= 0 else float(v)


def grid(C, fig, ev: Evaluation) -> dict | None:
    """The claim's figure over the step-factor grid of its systems (module docstring); None for a TTFT figure, a
    figure the model cannot read or a claim whose model is unstated (its candidates tell no one story)."""
    from .conditions import measured_speed, region_band, sol_factor
    q0, c = ev["q"], ev["c"]
    if C.col == "ttft_s" or C.claim.model is None or q0 is None or math.isnan(q0) or not (c and c > 0):
        return None
    hws = list(dict.fromkeys(t.side.hardware for t in fig.terms))
    if C.claim.kind == "ratio" and len(hws) < 2:
        return None         # two builds on one hardware: a software multiple has no steps story
    up_to = C.claim.qualifier == "up_to"
    n = len(KS)
    q: list[list[float | None]]
    qmin: list[list[float | None]]
    if len(hws) == 1:
        q, qmin = [[None] * n], [[None] * n]
        for i, k in enumerate(KS):
            r = fig.read(shifts={hws[0]: float(k)}, diagonal=True)
            q[0][i] = None if r["unreached"] else _num(r["q"])
            qmin[0][i] = None if r["unreached"] else _num(r.get("qmin"))
    elif fig.grid_point:
        q = [[None] * n for _ in range(n)]
        qmin = [[None] * n for _ in range(n)]
        for i, ka in enumerate(KS):
            for j, kb in enumerate(KS):
                r = fig.read(shifts={hws[0]: float(ka), hws[1]: float(kb)}, diagonal=True)
                q[i][j] = None if r["unreached"] else _num(r["q"])
                qmin[i][j] = None if r["unreached"] else _num(r.get("qmin"))
    else:
        # fixed points: one term per system, Q a product of the terms (one read per k)
        lnv = np.full((n, len(fig.terms)), np.nan)
        for i, k in enumerate(KS):
            r = fig.read(shifts={h: float(k) for h in hws}, diagonal=True)
            lnv[i] = [math.log(v) if v is not None and math.isfinite(v) and v > 0 else np.nan for v in r["values"]]
        sign = np.array([t.sign for t in fig.terms], float)
        idx = [hws.index(t.side.hardware) for t in fig.terms]

        def at(ii: tuple[int, ...]) -> float | None:
            s = sum(sign[j] * lnv[ii[idx[j]], j] for j in range(len(fig.terms)))
            return None if not np.isfinite(s) else float(math.exp(s))
        q = [[at((i, j)) for j in range(n)] for i in range(n)]
        qmin = [[None] * n for _ in range(n)]
    slots, bands, bounds = {}, {}, {}
    for h in hws:
        s = f"{h}:{_slot(fig, h)}"
        slots[h] = s
        b = region_band(C, fig, ev, h)
        bands[s] = [b["lo"], b["hi"]]
        end, v = end_of(ev, h), measured_speed(C, h)
        sol = sol_factor(C, fig, h)
        # slower only as far as the speeds the source states it reached; faster only to the speed of light
        bounds[s] = [min(sol or 0.0, 1.0), max(1.0, end / v * 1.01) if v and end and math.isfinite(end) else math.inf]
    per_mw = C.claim.kind == "ratio" and C.col.endswith("_per_mw") and len(hws) == 2
    r0 = None
    if per_mw:
        from .. import catalog
        r0 = catalog.hardware(hws[0]).value("allin_power_w") / catalog.hardware(hws[1]).value("allin_power_w")
    c_lo, c_hi = _accept(C, ev)
    untested = up_to and not (C.point is not None and C.point.tested_range)
    return {"untested_up_to": untested, "systems": hws, "slots": slots, "model": C.model, "ks": [float(k) for k in KS], "q": q,
            "qmin": qmin if up_to else None, "c": c, "c_range": [c_lo, c_hi],
            "qualifier": C.claim.qualifier, "per_mw": per_mw, "r0": r0, "bands": bands, "bounds": bounds}


def reads_back(q: float | None, g: dict, qmin: float | None = None) -> bool:
    """Whether a figure q (the model's at the story's values; for an 'up to', with qmin the least over the common
    speeds) reads back at the claim: within TOL in ln of the claimed value or range, on a bound's side."""
    if q is None or not (q > 0) or not math.isfinite(q):
        return False
    lo, hi = g["c_range"]
    lo, hi = lo * math.exp(-TOL), hi * math.exp(TOL)
    qual = g.get("qualifier")
    if qual == "at_most":
        return q <= hi
    if qual == "at_least":
        return q >= lo
    if qual == "up_to":
        return (qmin if qmin is not None else q) <= hi and q >= lo
    return lo <= q <= hi


def _arrays(g: dict) -> tuple[np.ndarray, np.ndarray]:
    """(q, qmin) as float arrays over the (k_A, k_B) grid of the source's pair (one-system claims broadcast)."""
    q = np.array([[np.nan if v is None else v for v in row] for row in g["q"]], float)
    qm = (np.array([[np.nan if v is None else v for v in row] for row in g["qmin"]], float) if g.get("qmin")
          else np.full(q.shape, np.nan))
    return q, qm


def _explained(g: dict, ks_r: float | None) -> np.ndarray:
    """Boolean table over the claim's own grid: the claim reads back at each cell (a per-MW claim at R)."""
    q, qm = _arrays(g)
    if g["per_mw"] and ks_r is not None:
        q, qm = q * g["r0"] / ks_r, qm * g["r0"] / ks_r
    lo, hi = g["c_range"]
    lo, hi = lo * math.exp(-TOL), hi * math.exp(TOL)
    with np.errstate(invalid="ignore"):
        qual = g.get("qualifier")
        if qual == "at_most":
            ok = q <= hi
        elif qual == "at_least":
            ok = q >= lo
        elif qual == "up_to":
            ok = (np.where(np.isfinite(qm), qm, q) <= hi) & (q >= lo)
        else:
            ok = (q >= lo) & (q <= hi)
    return ok & np.isfinite(q)


def _z(k: float, band: list[float]) -> float:
    end = band[0] if k < 1 else band[1]
    return abs(math.log(k)) / abs(math.log(end)) if end != 1 else (0.0 if k == 1 else math.inf)


OPTIONS = (("A",), ("B",), ("R",), ("A", "B"), ("B", "R"), ("A", "R"))
GROUPS = ("peak", "speed")


def _slot_ok(slot: str, band: list[float] | None, bound: list[float] | None) -> np.ndarray:
    """The grid's k allowed for a slot: inside its band (the model's error) and its bounds."""
    ks = KS
    ok = np.ones(len(ks), bool)
    if band:
        ok &= (ks >= band[0] * (1 - 1e-9)) & (ks <= band[1] * (1 + 1e-9))
    if bound:
        ok &= (ks >= bound[0] * (1 - 1e-9)) & (ks <= bound[1] * (1 + 1e-9))
    return ok


def _group_fit(claims: list[tuple[str, dict]], a: str, b: str, grp: str, opt: tuple[str, ...],
               r: float | None) -> dict:
    """The cell (k_A, k_B) of one group (peak or at-speed slots) of one model that explains the most claims at
    power ratio r, ties by the least z."""
    n = len(KS)
    sa, sb = f"{a}:{grp}", f"{b}:{grp}"
    band = {s: next((g["bands"][s] for _, g in claims if s in g["bands"]), None) for s in (sa, sb)}
    bound: dict[str, list[float]] = {}
    for s in (sa, sb):
        bs = [g["bounds"][s] for _, g in claims if s in g["bounds"]]
        bound[s] = [max(x[0] for x in bs), min(x[1] for x in bs)] if bs else [0.0, math.inf]
    i1 = n // 2
    oka = _slot_ok(sa, band[sa], bound[sa]) if "A" in opt else (np.arange(n) == i1)
    okb = _slot_ok(sb, band[sb], bound[sb]) if "B" in opt else (np.arange(n) == i1)
    count = np.zeros((n, n), int)
    tables: dict[str, np.ndarray] = {}
    for cid, g in claims:
        e = _explained(g, r)
        hs = g["systems"]
        if len(hs) == 2:
            t = e if hs[0] == a else e.T
        elif hs[0] == a:
            t = np.repeat(e[0][:, None], n, axis=1)
        else:
            t = np.repeat(e[0][None, :], n, axis=0)
        tables[cid] = t
        count += t
    allowed = oka[:, None] & okb[None, :]
    za = np.array([_z(float(k), band[sa] or [0.5, 2.0]) for k in KS])
    zb = np.array([_z(float(k), band[sb] or [0.5, 2.0]) for k in KS])
    z = np.hypot(za[:, None], zb[None, :])
    score = np.where(allowed, count - z / 1e3, -np.inf)       # count first; z (< 1e3) breaks ties
    ii, jj = np.unravel_index(int(np.argmax(score)), score.shape)
    i, j = int(ii), int(jj)
    if not np.isfinite(score[i, j]):
        i, j = i1, i1
    return {"ka": float(KS[i]), "kb": float(KS[j]), "z": float(z[i, j]), "i": int(i), "j": int(j),
            "explained": [cid for cid, t in tables.items() if t[i, j]]}


def _model_fit(claims: list[tuple[str, dict]], a: str, b: str, opt: tuple[str, ...], r_range) -> dict:
    """The values of the unknowns in ``opt`` on one model that explain the most of its claims: per group (peak,
    at speed) a cell of (k_A, k_B), and one power ratio R for both groups."""
    by_grp: dict[str, list[tuple[str, dict]]] = {g: [] for g in GROUPS}
    for cid, g in claims:
        grp = "peak" if all(s.endswith(":peak") for s in g["slots"].values()) else "speed"
        by_grp[grp].append((cid, g))
    r0 = next((g["r0"] for _, g in claims if g.get("r0")), None)
    rs: list[float | None] = [r0]
    if "R" in opt and r0 is not None and r_range and math.isfinite(r_range[1]):
        rs = sorted({*np.geomspace(r_range[0], r_range[1], N_R).tolist(), r0})
    best: dict | None = None
    for r in rs:
        fits = {grp: _group_fit(cl, a, b, grp, opt, r) for grp, cl in by_grp.items() if cl}
        n = sum(len(f["explained"]) for f in fits.values())
        z = math.hypot(*[f["z"] for f in fits.values()]) if fits else 0.0
        dr = abs(math.log(r / r0)) if (r and r0) else 0.0
        key = (n, -z, -dr)
        if best is None or key > best["key"]:
            best = {"key": key, "groups": fits, "r": r if "R" in opt else None, "z": z,
                    "explained": [c for f in fits.values() for c in f["explained"]]}
    assert best is not None
    if best["r"] is not None:       # the range of R that explains the same claims at the same cells
        ok = []
        for r in rs:
            same = all(set(_group_fit(cl, a, b, grp, opt, r)["explained"]) >= set(best["groups"][grp]["explained"])
                       for grp, cl in by_grp.items() if cl and grp in best["groups"])
            if same and r is not None:
                ok.append(r)
        best["r_range"] = [min(ok), max(ok)] if ok else [best["r"], best["r"]]
    return best


def solve(results: list[dict]) -> dict[str, dict]:
    """Per source: the story (module docstring) as {unknowns, per_model, explained, left, readback, text}."""
    from .conditions import power_ratio_range
    out: dict[str, dict] = {}
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
            fits = {m: _model_fit(cl, a, b, opt, r_range) for m, cl in models.items()}
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
        q, qm = _arrays(g)
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
    """Each claim's figure at the story's values (the grid cell it chose, R applied): {id: {q, claimed, ok}}."""
    out = {}
    for m, cl in models.items():
        f = fits[m]
        for cid, g in cl:
            grp = "peak" if all(s.endswith(":peak") for s in g["slots"].values()) else "speed"
            gf = f["groups"].get(grp)
            if gf is None:
                continue
            q, qm = _arrays(g)
            hs = g["systems"]
            if len(hs) == 2:
                ij = (gf["i"], gf["j"]) if hs[0] == a else (gf["j"], gf["i"])
            else:
                ij = (0, gf["i"] if hs[0] == a else gf["j"])
            v, vm = float(q[ij]), float(qm[ij])
            if g["per_mw"] and f["r"] is not None:
                v, vm = v * g["r0"] / f["r"], vm * g["r0"] / f["r"]
            vv = v if math.isfinite(v) else None
            out[cid] = {"q": vv, "qmin": vm if math.isfinite(vm) else None, "claimed": g["c_range"],
                        "qualifier": g.get("qualifier"), "ok": reads_back(vv, g, vm if math.isfinite(vm) else None),
                        "shifts": {h: (gf["ka"] if h == a else gf["kb"]) for h in hs}, "r": f["r"]}
    return out


def _fk(hw: str, k: float) -> str:
    return StepFactor(hw, k).words("story", steps=False)


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
            "region's error and its system's bounds): ")
    return (head + "; ".join(parts) + ". Read back at its values, within "
            f"{math.exp(TOL) - 1:.0%} of the claim: {', '.join(rb(i) for i in explained) or 'none'}"
            + (f"; not explained: {', '.join(rb(i) for i in left)}" if left else "") + ".")


__all__ = ["KS", "TOL", "grid", "reads_back", "solve"]
