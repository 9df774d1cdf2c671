"""One story per seed article: at most two shared unknowns, solved jointly over the claims they explain, every
explained claim read back at its claimed value.

Per claim (``grid``, in the check): the claim's figure Q read with each system's decode steps k times the modeled
ones (``Figure.read(shifts=..., diagonal=True)``). A figure whose terms are read at fixed points (a stated speed, a
peak) is a product of one term per system, Q(k_A, k_B) = prod_j f_j(k_hw(j))^(s_j): each system's ln f is read on a
fine table of k (``KF``: 0.4-2.5x, 161 nodes 1.15% apart; ``lnf``), so ln Q at any (k_A, k_B) is the sum of the
two, piecewise linear in ln k between the nodes. A figure read over the speeds both systems reach (the fastest
common speed, a matched interactivity) is read on the coarse table ``KS`` (41 x 41 nodes, 4.7% apart; ``q``),
bilinear in ln k between them. An 'up to' claim also keeps the least Q over those speeds (``qmin``). Latency
claims have none (their unknowns are the load and the prefill split, not the steps).

Slots: a system's steps at a peak and at a stated speed are separate unknowns (``A:peak``, ``A:speed``): a
throughput peak sits at saturation, a speed on the small-batch end, and the model's error there is measured
separately (``conditions.region_band``). Each slot is held to its band (the model's cross-validated error of
that region: the error is spent once, on the factor) and to the system's bounds (no faster than speed of light,
no slower than lets it reach the speeds the source says it reached).

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

from .curves import AXES
from .latency import is_latency
from .shared import source_key
from .values import Evaluation, StepFactor, end_of

KS = np.exp(np.linspace(-math.log(2.5), math.log(2.5), 41))    # a figure over a speed range: its coarse table
KF = np.exp(np.linspace(-math.log(2.5), math.log(2.5), 161))   # a product figure's fine table (KS = KF[::4])
TOL = 0.05          # ln distance at which a claim reads back at its claimed value (rounding of the figure)
MARGIN = 0.005      # ln: the solver keeps this far inside TOL (interpolation between nodes, well under it)
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


def _ln(v) -> float:
    """ln of a figure, NaN where the model cannot read it (None, 0, infinite)."""
    return math.log(v) if v is not None and math.isfinite(v) and v > 0 else math.nan


def _list(a: np.ndarray) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in a]


def grid(C, fig, ev: Evaluation) -> dict | None:
    """The claim's figure over the step-factor tables of its systems (module docstring); None for a latency, a
    figure the model cannot read or a claim whose model is unstated (its candidates tell no one story)."""
    from .conditions import measured_speed, region_band, sol_factor
    q0, c = ev["q"], ev["c"]
    if is_latency(C.col) or C.claim.model is None or q0 is None or math.isnan(q0) or not (c and c > 0):
        return None
    hws = list(dict.fromkeys(t.side.hardware for t in fig.terms))
    if C.claim.kind == "ratio" and len(hws) < 2:
        return None         # two builds on one hardware: a software multiple has no steps story
    up_to = C.claim.qualifier == "up_to"
    n = len(KS)
    lnf: dict[str, list] | None = None
    lnfmin: dict[str, list] | None = None
    kfs: dict[str, list] | None = None
    if fig.grid_point and len(hws) == 1:    # one system over a speed range: the fine nodes, read at the nodes only
        lq, lm = np.full(len(KF), np.nan), np.full(len(KF), np.nan)
        for i, k in enumerate(KF):
            r = fig.read(shifts={hws[0]: float(k)}, diagonal=True)
            if not r["unreached"]:
                lq[i], lm[i] = _ln(r["q"]), _ln(r.get("qmin"))
        lnf, lnfmin = {hws[0]: _list(lq)}, ({hws[0]: _list(lm)} if np.isfinite(lm).any() else None)
        q, qmin = [[_num(math.exp(v)) if np.isfinite(v) else None for v in lq[::4]]], \
            [[_num(math.exp(v)) if np.isfinite(v) else None for v in lm[::4]]]
    elif fig.grid_point:                    # two systems over a speed range: the coarse table, read at its nodes
        q = [[None] * n for _ in range(n)]
        qmin = [[None] * n for _ in range(n)]
        for i, ka in enumerate(KS):
            for j, kb in enumerate(KS):
                r = fig.read(shifts={hws[0]: float(ka), hws[1]: float(kb)}, diagonal=True)
                q[i][j] = None if r["unreached"] else _num(r["q"])
                qmin[i][j] = None if r["unreached"] else _num(r.get("qmin"))
    else:
        # fixed points: Q a product of one factor per system, each read at the fine nodes and at every factor
        # where one of its terms bends or jumps (``_term_nodes``): linear in ln k between them, so exact
        sign = [t.sign for t in fig.terms]
        per, nodes = {}, {}
        for h in hws:
            nodes[h] = _term_nodes(fig, h)
            lv = np.full(len(nodes[h]), np.nan)
            for i, k in enumerate(nodes[h]):
                r = fig.read(shifts={h: float(k)}, diagonal=True)
                lv[i] = sum(sign[j] * _ln(x) for j, (t, x) in enumerate(zip(fig.terms, r["values"]))
                            if t.side.hardware == h)
            per[h] = lv + (math.log(fig.scale) if h == hws[0] else 0.0)   # a per-system figure's constant factor
        lnf, kfs = {h: _list(v) for h, v in per.items()}, {h: [float(k) for k in nodes[h]] for h in hws}
        at = {h: np.interp(np.log(KS), np.log(nodes[h]), per[h]) for h in hws}
        tab = at[hws[0]][:, None] + (at[hws[1]][None, :] if len(hws) == 2 else 0.0)
        q = [[_num(math.exp(v)) if np.isfinite(v) else None for v in row] for row in tab]
        if len(hws) == 1:
            q = [q[0]]
        qmin = [[None] * n for _ in range(len(q))]
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
            "qmin": qmin if up_to else None, "kf": [float(k) for k in KF], "lnf": lnf, "kfs": kfs,
            "lnfmin": lnfmin if up_to else None, "nodes_only": fig.grid_point, "c": c, "c_range": [c_lo, c_hi],
            "qualifier": C.claim.qualifier, "per_mw": per_mw, "r0": r0, "bands": bands, "bounds": bounds}


def _term_nodes(fig, h: str) -> np.ndarray:
    """The step factors at which system ``h``'s factor of a fixed-point figure is read: the fine nodes ``KF`` and,
    each on both sides, every factor at which one of its terms bends or jumps: an envelope point crossing the
    stated speed x (read at x k: k = x_i / x) or the peak's speed floor (usable points at least floor x k: k =
    x_i / floor). Between them ln f is linear in ln k (log-log interpolation of the envelope, 1 / k)."""
    ks = [KF]
    for t in fig.terms:
        env = fig.env(t.side) if t.side.hardware == h else None
        p = t.point
        x = p.tps_per_user if p.point == "speed" else p.min_tps_per_user if p.point == "peak" else None
        if env is not None and len(env) and x:
            b = env[AXES[fig.axis]].to_numpy(float) / x
            ks += [b * (1 - 1e-9), b * (1 + 1e-9)]
    k = np.unique(np.concatenate(ks))
    return k[(k >= KF[0]) & (k <= KF[-1])]


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


def _zs(u: np.ndarray, band: list[float] | None) -> np.ndarray:
    """_z at every ln k of u (vectorized)."""
    lo, hi = band or [0.5, 2.0]
    end = np.where(u < 0, math.log(lo), math.log(hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u == 0, 0.0, np.where(end != 0, np.abs(u / np.where(end != 0, end, 1.0)), np.inf))


def _z(k: float, band: list[float]) -> float:
    end = band[0] if k < 1 else band[1]
    return abs(math.log(k)) / abs(math.log(end)) if end != 1 else (0.0 if k == 1 else math.inf)


OPTIONS = (("A",), ("B",), ("R",), ("A", "B"), ("B", "R"), ("A", "R"))
GROUPS = ("peak", "speed")


# ---------------------------------------------------------------- the figure of one claim at any (k_A, k_B)
BISECT = 14     # halvings of a bracket between two fine nodes (1.15% apart): the end placed to 1e-6 in ln k


_PREP: dict[int, tuple[dict, dict]] = {}      # id(grid) -> (grid, its arrays): each grid prepared once


def _prep(g: dict) -> dict:
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


def _lnq(p: dict, a: str, ua, ub, which: str = "q") -> np.ndarray:
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
    q = _lnq(p, a, ua, ub)
    with np.errstate(invalid="ignore"):
        if part == "lo":
            return np.isfinite(q) & (q >= lo)
        if p["g"].get("qualifier") == "up_to":
            qm = _lnq(p, a, ua, ub, "qmin")
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
    ps = [(cid, _prep(g)) for cid, g in claims]
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
    _PREP.clear()
    _IV.clear()
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
            p, ua, ub = _prep(g), math.log(gf["ka"]), math.log(gf["kb"])
            v, vm = float(np.exp(_lnq(p, a, ua, ub))), float(np.exp(_lnq(p, a, ua, ub, "qmin")))
            hs = g["systems"]
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
            "region's error (a system's, not a ratio's) and its system's bounds): ")
    return (head + "; ".join(parts) + ". Read back at its values, within "
            f"{math.exp(TOL) - 1:.0%} of the claim: {', '.join(rb(i) for i in explained) or 'none'}"
            + (f"; not explained: {', '.join(rb(i) for i in left)}" if left else "") + ".")


__all__ = ["KF", "KS", "MARGIN", "TOL", "grid", "reads_back", "solve"]
