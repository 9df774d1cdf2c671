"""The story's tables of one claim (story.py): its figure read over both systems' step factors, and whether a
figure reads back at the claim.

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
"""

from __future__ import annotations

import math

import numpy as np

from .curves import AXES
from .latency import is_latency
from .values import Evaluation, end_of

KS = np.exp(np.linspace(-math.log(2.5), math.log(2.5), 41))    # a figure over a speed range: its coarse table
KF = np.exp(np.linspace(-math.log(2.5), math.log(2.5), 161))   # a product figure's fine table (KS = KF[::4])
TOL = 0.05          # ln distance at which a claim reads back at its claimed value (rounding of the figure)
MARGIN = 0.005      # ln: the solver keeps this far inside TOL (interpolation between nodes, well under it)


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


def grid_arrays(g: dict) -> tuple[np.ndarray, np.ndarray]:
    """(q, qmin) as float arrays over the (k_A, k_B) grid of the source's pair (one-system claims broadcast)."""
    q = np.array([[np.nan if v is None else v for v in row] for row in g["q"]], float)
    qm = (np.array([[np.nan if v is None else v for v in row] for row in g["qmin"]], float) if g.get("qmin")
          else np.full(q.shape, np.nan))
    return q, qm
