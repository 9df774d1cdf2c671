"""The story's solver (story.py): the values of at most two shared unknowns of one source that explain the most
of its claims, each claim's reading back placed by bisection on its tables (story_grid.grid).

Per source (``solve``): the unknowns are A's steps, B's steps (A, B: the first and second system of its ratio
claims; each with its peak and at-speed slot) and the A/B power ratio R every per-MW ratio divides by (one value
per model: Q_mw = Q_gpu / R, the model's figure q at the catalog's R0 becomes q R0 / R), R held to the same-basis
range (``conditions.power_ratio_range``: GPU TDP ratio and provisioned all-in ratio). For each choice of at most
two unknown kinds (A; B; R; A and B; B and R; A and R) and each model, the values of (k_A, k_B) and R that
explain the most claims, ties broken by the least quadrature sum of the factors in units of their bands
(z = sqrt(sum (ln k / ln band end)^2)), found by bisection (``_group_fit``): Q is monotone in each system's steps,
so at each k_A a claim reads back on an interval of k_B whose ends a bisection places, and k_A runs over the fine
nodes and the interval ends of the claims k_A alone decides (a window narrower than a node spacing is found: each
side of it is a monotone condition, bisected alone). A claim is *explained* when its figure at those values
reads back at the claimed value: |ln(Q / c)| <= ``TOL`` - ``MARGIN`` on the tables (the margin covers the
interpolation between nodes, so the model itself reads it back within TOL; a claimed range: inside it, the same
either side; 'at most' / 'at least': on its side; 'up to': the claim between the least and the most Q over the
speeds both reach). The choice that
explains the most claims, then the fewest unknowns, then the least z, is the story; the claims it leaves are
named with what they read at its values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .story_grid import KF, KS, MARGIN, TOL

N_R = 33            # grid points of the power ratio inside its same-basis range


def _zs(u: np.ndarray, band: list[float] | None) -> np.ndarray:
    """z of each ln k of u in units of its band: |ln k| / |ln of the band's end on k's side| (0 at k = 1, inf where
    that end is 1), vectorized."""
    lo, hi = band or [0.5, 2.0]
    end = np.where(u < 0, math.log(lo), math.log(hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u == 0, 0.0, np.where(end != 0, np.abs(u / np.where(end != 0, end, 1.0)), np.inf))


OPTIONS = (("A",), ("B",), ("R",), ("A", "B"), ("B", "R"), ("A", "R"))
GROUPS = ("peak", "speed")


# ---------------------------------------------------------------- the figure of one claim at any (k_A, k_B)
BISECT = 14     # halvings of a bracket between two fine nodes (1.15% apart): the end placed to 1e-6 in ln k


_PREP: dict[int, tuple[dict, dict]] = {}      # id(grid) -> (grid, its arrays): each grid prepared once


def prepared(g: dict) -> dict:
    """The tables of one claim's grid as arrays of ln Q (NaN where the model cannot read the figure)."""
    hit = _PREP.get(id(g))
    if hit is not None and hit[0] is g:
        return hit[1]
    p = _arrays_of(g)
    _PREP[id(g)] = (g, p)
    return p


def _arrays_of(g: dict) -> dict:
    def ln(tab):
        return None if not tab else np.array([[np.nan if v is None or not (v > 0) else math.log(v) for v in row]
                                              for row in tab], float)
    p = {"g": g, "systems": g["systems"], "x": np.log(np.asarray(g.get("ks") or KS, float))}
    p["nodes_only"] = bool(g.get("nodes_only"))
    if g.get("lnf"):
        xf = np.log(np.asarray(g.get("kf") or KF, float))
        p["xf"] = {h: (np.log(np.asarray(g["kfs"][h], float)) if g.get("kfs") else xf) for h in g["systems"]}
        p["lnf"] = {h: np.asarray([np.nan if v is None else v for v in g["lnf"][h]], float) for h in g["systems"]}
        p["lnfmin"] = ({h: np.asarray([np.nan if v is None else v for v in g["lnfmin"][h]], float)
                        for h in g["systems"]} if g.get("lnfmin") else None)
    else:
        p["t"], p["tmin"] = ln(g.get("q")), ln(g.get("qmin"))
    return p


def _node(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The index of the node of x at each u (within 1e-7 in ln k), -1 where u lies between nodes."""
    i = np.clip(np.searchsorted(x, u), 1, len(x) - 1)
    i = np.where(np.abs(x[i - 1] - u) < np.abs(x[i] - u), i - 1, i)
    return np.where(np.abs(x[i] - u) <= 1e-7, i, -1)


def _at_node(x: np.ndarray, y: np.ndarray, u: np.ndarray) -> np.ndarray:
    """y at the node of x at each u; NaN between nodes (a figure read over a speed range is known at its nodes)."""
    i = _node(x, u)
    return np.where(i >= 0, y[np.maximum(i, 0)], np.nan)


def lnq(p: dict, a: str, ua, ub, which: str = "q") -> np.ndarray:
    """ln Q of one claim at ln k_A = ua, ln k_B = ub (arrays, broadcast; A = ``a``, the source pair's first
    system): a product figure from its systems' fine tables (ln Q = sum_h lnf_h(k_h), piecewise linear in ln k
    between the nodes), else the coarse table over ``KS`` (bilinear in ln k). ``which``: 'q', or 'qmin' (an 'up
    to': the least Q over the speeds both reach)."""
    hs = p["systems"]
    ua, ub = np.broadcast_arrays(np.asarray(ua, float), np.asarray(ub, float))
    u_of = {h: (ua if h == a else ub) for h in hs}
    if "lnf" in p:
        tabs = p["lnf"] if which == "q" else p["lnfmin"]
        if tabs is None:
            return np.full(ua.shape, np.nan)
        out = np.zeros(ua.shape)
        for h in hs:
            out = out + (_at_node(p["xf"][h], tabs[h], u_of[h]) if p["nodes_only"] else
                         np.interp(u_of[h], p["xf"][h], tabs[h], left=np.nan, right=np.nan))
        return out
    t = p["t"] if which == "q" else p["tmin"]
    if t is None:
        return np.full(ua.shape, np.nan)
    if t.shape[0] == 1:
        return _at_node(p["x"], t[0], u_of[hs[0]])
    i, j = _node(p["x"], u_of[hs[0]]), _node(p["x"], u_of[hs[1]])
    return np.where((i >= 0) & (j >= 0), t[np.maximum(i, 0), np.maximum(j, 0)], np.nan)


def _window(g: dict, r: float | None) -> tuple[float, float]:
    """The claim's window in ln Q (its claimed value or range, TOL - MARGIN either side; a bound one-sided), moved by the
    power ratio r for a per-MW claim (Q at r = Q at the catalog's r0 x r0 / r)."""
    lo, hi = g["c_range"]
    lo, hi = math.log(lo) - (TOL - MARGIN), math.log(hi) + (TOL - MARGIN)
    if g["per_mw"] and r is not None and g.get("r0"):
        lo, hi = lo - math.log(g["r0"] / r), hi - math.log(g["r0"] / r)
    qual = g.get("qualifier")
    return (-math.inf if qual == "at_most" else lo), (math.inf if qual == "at_least" else hi)


def _side(p: dict, a: str, ua, ub, r, part: str) -> np.ndarray:
    """One side of the window: 'lo' (Q at least the window's bottom), 'hi' (Q, for an 'up to' with a tested range
    the least Q over the speeds both reach, at most its top). Each is monotone in either system's steps."""
    lo, hi = _window(p["g"], r)
    q = lnq(p, a, ua, ub)
    with np.errstate(invalid="ignore"):
        if part == "lo":
            return np.isfinite(q) & (q >= lo)
        if p["g"].get("qualifier") == "up_to":
            qm = lnq(p, a, ua, ub, "qmin")
            q = np.where(np.isfinite(qm), qm, q)
        return np.isfinite(q) & (q <= hi)


def _ok(p: dict, a: str, ua, ub, r) -> np.ndarray:
    """Whether the claim reads back at (ln k_A, ln k_B, r): both sides of its window hold."""
    return _side(p, a, ua, ub, r, "lo") & _side(p, a, ua, ub, r, "hi")


def _runs(f, rows: np.ndarray, x: np.ndarray) -> list[list[tuple[float, float]]]:
    """Per row (a value of the fixed slot), the intervals of x where the boolean f(row, x) holds: f on the nodes
    x, each change between two neighbouring nodes placed by bisection on f (every bracket at once)."""
    val = f(rows[:, None], x[None, :])
    r_i, c_i = np.nonzero(val[:, :-1] != val[:, 1:])
    lo, hi, rr = x[c_i], x[c_i + 1], rows[r_i]
    f0 = val[r_i, c_i]
    for _ in range(BISECT):
        mid = 0.5 * (lo + hi)
        same = f(rr, mid) == f0
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    cross = np.where(f0, lo, hi)            # the end on the side where f holds
    out = []
    for i in range(len(rows)):
        pts = [*([x[0]] if val[i, 0] else []), *cross[r_i == i].tolist(), *([x[-1]] if val[i, -1] else [])]
        out.append([(pts[k], pts[k + 1]) for k in range(0, len(pts) - 1, 2)])
    return out


_IV: dict[tuple, list] = {}       # (id(arrays), r where it matters, rows, nodes, var) -> intervals, per solve


def _intervals(p: dict, a: str, rows: np.ndarray, x: np.ndarray, var: str, r) -> list[list[tuple[float, float]]]:
    """Per row, the intervals of the ``var`` slot (ln k) where the claim reads back: the runs of each side of its
    window (each monotone in the slot: one bisection each), intersected."""
    key = (id(p), r if p["g"]["per_mw"] else None, a, rows.tobytes(), x.tobytes(), var)
    if key not in _IV:
        _IV[key] = _intervals_of(p, a, rows, x, var, r)
    return _IV[key]


def _intervals_of(p: dict, a: str, rows: np.ndarray, x: np.ndarray, var: str, r) -> list[list[tuple[float, float]]]:
    def f(part):
        return lambda u, v: _side(p, a, *((v, u) if var == "A" else (u, v)), r, part)
    out = []
    for lo_runs, hi_runs in zip(_runs(f("lo"), rows, x), _runs(f("hi"), rows, x)):
        out.append([(max(s1, s2), min(e1, e2)) for s1, e1 in lo_runs for s2, e2 in hi_runs
                    if max(s1, s2) <= min(e1, e2)])
    return out


def _range(opt_has: bool, band: list[float] | None, bound: list[float] | None) -> tuple[float, float]:
    """The ln k a slot may take: 0 (as modeled) outside the story's unknowns; else inside its band (the model's
    error), its bounds and the table's span."""
    if not opt_has:
        return 0.0, 0.0
    lo, hi = float(KS[0]), float(KS[-1])
    for b in (band, bound):
        if b:
            lo, hi = max(lo, b[0]), min(hi, b[1])
    return (math.log(lo), math.log(hi)) if lo > 0 and hi >= lo else (1.0, 0.0)


def _nodes(lo: float, hi: float) -> np.ndarray:
    x = np.log(KF)
    return np.unique(np.concatenate([x[(x > lo) & (x < hi)], [lo, hi]]))


def _group_fit(claims: list[tuple[str, dict]], a: str, b: str, grp: str, opt: tuple[str, ...],
               r: float | None) -> dict:
    """The step factors (k_A, k_B) of one group (peak or at-speed slots) of one model that explain the most claims
    at power ratio r, ties by the least z; a slot outside ``opt`` stays as modeled (k = 1). Each claim's figure is
    monotone in each system's steps (slower steps lower every throughput and per-user speed of that system), so
    with one slot fixed the other's values where a claim reads back form intervals whose ends a bisection places
    (``_intervals``). With both slots unknown, k_A runs over the fine nodes and the ends and middles of the
    intervals of the claims k_A alone decides; the best k_B of each: the point inside the most intervals,
    nearest 1 in units of its band."""
    sa, sb = f"{a}:{grp}", f"{b}:{grp}"
    band = {s: next((g["bands"][s] for _, g in claims if s in g["bands"]), None) for s in (sa, sb)}
    bound: dict[str, list[float]] = {}
    for s in (sa, sb):
        bs = [g["bounds"][s] for _, g in claims if s in g["bounds"]]
        bound[s] = [max(x[0] for x in bs), min(x[1] for x in bs)] if bs else [0.0, math.inf]
    ra, rb = _range("A" in opt, band[sa], bound[sa]), _range("B" in opt, band[sb], bound[sb])
    ps = [(cid, prepared(g)) for cid, g in claims]
    fit: dict[str, Any] = {"ka": 1.0, "kb": 1.0, "z": 0.0}
    if ra[0] <= ra[1] and rb[0] <= rb[1]:
        # the slot searched (var) and the fixed one's candidate values (rows)
        var, rng, fixed, frng = ("B", rb, sa, ra) if "B" in opt else ("A", ra, sb, rb)
        rows_set = {min(max(0.0, frng[0]), frng[1])}
        if "A" in opt and "B" in opt:
            rows_set |= set(_nodes(*ra).tolist())
            for _, p in ps:             # the claims k_A alone decides (B as modeled): their ends and middles
                if b not in p["systems"]:
                    for i0, i1 in _intervals(p, a, np.array([0.0]), _nodes(*ra), "A", r)[0]:
                        rows_set |= {min(i0 + 1e-9, i1), max(i1 - 1e-9, i0), 0.5 * (i0 + i1)}
        rows = np.array(sorted(rows_set))
        per = [_intervals(p, a, rows, _nodes(*rng), var, r) for _, p in ps]
        zf = _zs(rows, band[fixed])
        vslot = sb if var == "B" else sa
        best = (-1, -math.inf)
        for i, u in enumerate(rows):
            ivs = [iv[i] for iv in per]
            cand = {min(max(0.0, rng[0]), rng[1])}
            for iv in ivs:
                for i0, i1 in iv:
                    cand |= {min(i0 + 1e-9, i1), max(i1 - 1e-9, i0), 0.5 * (i0 + i1)}
            v = np.array(sorted(cand))
            n = np.zeros(len(v), int)
            for iv in ivs:
                for i0, i1 in iv:
                    n += (v >= i0) & (v <= i1)
            z = np.hypot(zf[i], _zs(v, band[vslot]))
            j = int(np.lexsort((z, -n))[0])
            if (int(n[j]), -z[j]) > best:
                best = (int(n[j]), -float(z[j]))
                ua, ub = (float(u), float(v[j])) if var == "B" else (float(v[j]), float(u))
                fit = {"ka": math.exp(ua), "kb": math.exp(ub), "z": float(z[j])}
    fit["explained"] = [cid for cid, p in ps if bool(_ok(p, a, math.log(fit["ka"]), math.log(fit["kb"]), r))]
    return fit


def model_fit(claims: list[tuple[str, dict]], a: str, b: str, opt: tuple[str, ...], r_range) -> dict:
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


def reset() -> None:
    """Forget the prepared tables and intervals (per solve: they are keyed by the grids' ids)."""
    _PREP.clear()
    _IV.clear()
