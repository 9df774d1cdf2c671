"""One story per seed article: at most two shared unknowns, solved jointly over the claims they explain.

Per claim (``grid``, in the check): the claim's figure Q read with each system's decode steps k times the modeled
ones, on a grid of k (``KS``: 0.4-2.5x, 13 points) for each of its systems (a ratio: a 13 x 13 table; one system:
13 values). TTFT claims have none (their unknowns are the load and the prefill split, not the steps).

Per source (``solve``): the unknowns are A's steps and B's steps on each model the source names (A, B: the first
and second system of its ratio claims) and the A/B power ratio R that every per-MW ratio divides by, one value per
model (Q_mw = Q_gpu / R: the model's figure q at the catalog's R0 becomes q R0 / R). For each choice of at most two
unknown kinds (A and B; B and R; A and R; or one), each model's values are the grid cell (and R) that explain the
most of its claims, ties broken by the least quadrature sum of the step factors in units of their bands
(z = sqrt(sum (ln k / ln band end)^2)); a claim is explained when it lies inside the model's interval around the
figure at those values (q exp(-down) <= c <= q exp(up); at_most / at_least one-sided). R is held to the catalog's
range of the same basis (all-in power per GPU, provisioned), step factors to each system's bounds (the speeds the
source says it reached; speed of light). The choice that explains the most claims, then the fewest unknowns, then
the least z, is the story; the claims it leaves are named.
"""

from __future__ import annotations

import math

import numpy as np

from .shared import source_key

KS = np.exp(np.linspace(-math.log(2.5), math.log(2.5), 13))


def grid(C, fig, ev: dict) -> dict | None:
    """The claim's figure over the step-factor grid of its systems (module docstring); None for a TTFT figure or
    a figure the model cannot read."""
    from .conditions import measured_speed, region_band, sol_factor
    q0, c, iv = ev["q"], ev["c"], ev["iv"]
    if C.col == "ttft_s" or not (q0 and math.isfinite(q0) and q0 > 0 and c and c > 0):
        return None
    hws = list(dict.fromkeys(t.side.hardware for t in fig.terms))

    def q_of(shifts):
        r = fig.read(shifts=shifts, diagonal=True)
        return None if r["unreached"] or not math.isfinite(r["q"]) else float(r["q"])
    if len(hws) == 1:
        q = [[q_of({hws[0]: float(k)}) for k in KS]]
    else:
        q = [[q_of({hws[0]: float(ka), hws[1]: float(kb)}) for kb in KS] for ka in KS]
    bands, bounds = {}, {}
    for h in hws:
        b = region_band(C, fig, ev, h)
        bands[h] = [b["lo"], b["hi"]]
        end, v = ev["ends"].get(h, {}).get("end"), measured_speed(C, h)
        s = sol_factor(C, fig, h)
        # slower only as far as the speeds the source states it reached (a stated speed above the modeled end:
        # no slower than modeled); faster only to the speed of light
        bounds[h] = [min(s or 0.0, 1.0), max(1.0, end / v * 1.01) if v and end and math.isfinite(end) else math.inf]
    per_mw = C.claim.kind == "ratio" and C.col.endswith("_per_mw") and len(hws) == 2
    r0 = None
    if per_mw:
        from .. import catalog
        r0 = catalog.hardware(hws[0]).value("allin_power_w") / catalog.hardware(hws[1]).value("allin_power_w")
    return {"systems": hws, "model": C.model, "q": q, "c": c, "down": iv["down"], "up": iv["up"],
            "qualifier": C.claim.qualifier, "per_mw": per_mw, "r0": r0, "bands": bands, "bounds": bounds}


def _inside(q: float | None, c: float, g: dict) -> bool:
    if q is None:
        return False
    lo, hi = q * math.exp(-g["down"]), q * math.exp(g["up"])
    if g["qualifier"] == "at_most":
        return lo <= c
    if g["qualifier"] == "at_least":
        return hi >= c
    return lo <= c <= hi


def _r_interval(q: float | None, g: dict) -> tuple[float, float] | None:
    """The R at which a per-MW ratio claim lies inside the interval around q R0 / R."""
    if q is None or not g["r0"]:
        return None
    c = g["c"]
    return g["r0"] * q / (c * math.exp(g["down"])), g["r0"] * q * math.exp(g["up"]) / c


def _best_r(ivs: list[tuple[float, float]], lo: float, hi: float) -> tuple[int, tuple[float, float] | None]:
    """The range of R inside [lo, hi] covered by the most intervals: (count, (r_low, r_high))."""
    pts = sorted({lo, hi, *(v for a, b in ivs for v in (a, b) if lo <= v <= hi)})
    best: tuple[int, tuple[float, float] | None] = (0, None)
    for a, b in zip(pts, pts[1:] + [pts[-1]]):
        m = math.sqrt(a * b) if b > a else a
        n = sum(x <= m <= y for x, y in ivs)
        if n > best[0]:
            best = (n, (a, b))
    if best[1] is not None:          # widen to every neighbouring segment with the same count
        n = best[0]
        r_lo, r_hi = best[1]
        for a, b in zip(pts, pts[1:]):
            m = math.sqrt(a * b)
            if sum(x <= m <= y for x, y in ivs) == n and (abs(a - r_hi) < 1e-12 or abs(b - r_lo) < 1e-12):
                r_lo, r_hi = min(r_lo, a), max(r_hi, b)
        best = (n, (r_lo, r_hi))
    return best


def _z(k: float, band: list[float]) -> float:
    end = band[0] if k < 1 else band[1]
    return abs(math.log(k)) / abs(math.log(end)) if end != 1 else (0.0 if k == 1 else math.inf)


OPTIONS = (("A",), ("B",), ("R",), ("A", "B"), ("B", "R"), ("A", "R"))


def _model_fit(claims: list[tuple[str, dict]], a: str, b: str, opt: tuple[str, ...], r_range) -> dict:
    """The values of the unknowns in ``opt`` on one model that explain the most of its claims."""
    n = len(KS)
    i1 = n // 2
    ia = range(n) if "A" in opt else [i1]
    ib = range(n) if "B" in opt else [i1]
    best: dict | None = None
    best_key: tuple[int, float] = (0, 0.0)
    for i in ia:
        for j in ib:
            ka, kb = float(KS[i]), float(KS[j])
            ok: list[str] = []
            ivs: list[tuple[str, tuple[float, float]]] = []
            bad = False
            for cid, g in claims:
                ks = {a: ka, b: kb}
                for h in g["systems"]:
                    lo, hi = g["bounds"][h]
                    if not (lo <= ks[h] <= hi):
                        bad = True
                q = g["q"][i][j] if len(g["systems"]) == 2 else g["q"][0][i if g["systems"][0] == a else j]
                if g["per_mw"] and "R" in opt:
                    r = _r_interval(q, g)
                    if r:
                        ivs.append((cid, r))
                elif _inside(q, g["c"], g):
                    ok.append(cid)
            if bad:
                continue
            r_best = None
            if ivs:
                cnt, r_best = _best_r([r for _, r in ivs], *r_range)
                if r_best:
                    m = math.sqrt(r_best[0] * r_best[1]) if r_best[1] > r_best[0] else r_best[0]
                    ok += [cid for cid, (x, y) in ivs if x <= m <= y]
            band = next((g["bands"] for _, g in claims if a in g["bands"] and b in g["bands"]), None) or {}
            z = math.hypot(_z(ka, band.get(a, [0.5, 2])), _z(kb, band.get(b, [0.5, 2])))
            key = (len(ok), -z)
            if best is None or key > best_key:
                best, best_key = {"ka": ka, "kb": kb, "r": r_best, "explained": ok, "z": z}, key
    return best or {"ka": 1.0, "kb": 1.0, "r": None, "explained": [], "z": 0.0}


def solve(results: list[dict]) -> dict[str, dict]:
    """Per source: the story (module docstring) as {unknowns, per_model, explained, left, text}."""
    from .. import catalog
    from .interval import spec_bounds
    out: dict[str, dict] = {}
    by_src: dict[str, list[dict]] = {}
    for r in results:       # TTFT-bound (not checkable) and 'up to' claims have unknowns of their own
        if r.get("story_grid") and r["verdict"] not in ("not checkable", "not checkable (under-specified)") \
                and r.get("qualifier") != "up_to":
            by_src.setdefault(source_key(r.get("source")), []).append(r)
    for src, rs in by_src.items():
        pair = next((r["story_grid"]["systems"] for r in rs if len(r["story_grid"]["systems"]) == 2), None)
        if pair is None:
            continue
        a, b = pair
        ba, bb = spec_bounds(a, "allin_power_w"), spec_bounds(b, "allin_power_w")
        va, vb = catalog.hardware(a).value("allin_power_w"), catalog.hardware(b).value("allin_power_w")
        r_range = ((ba["low"] if ba else va) / (bb["high"] if bb else vb),
                   (ba["high"] if ba else va) / (bb["low"] if bb else vb))
        models: dict[str, list[tuple[str, dict]]] = {}
        for r in rs:
            g = r["story_grid"]
            if set(g["systems"]) <= {a, b}:
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
        ids = [r["id"] for r in rs]
        explained = [i for f in fits.values() for i in f["explained"]]
        left = [i for i in ids if i not in explained]
        out[src] = {"unknowns": list(opt), "systems": [a, b], "per_model": fits, "explained": explained,
                    "left": left, "power_range": list(r_range), "text": _text(src, opt, a, b, fits, explained, left,
                                                                              r_range)}
    return out


def _text(src, opt, a, b, fits, explained, left, r_range) -> str:
    names = {"A": f"{a}'s steps", "B": f"{b}'s steps", "R": f"the {a}/{b} all-in power ratio"}
    parts = []
    for m, f in fits.items():
        if not f["explained"]:
            continue
        v = []
        for u in opt:
            if u == "R" and f["r"]:
                v.append(f"power ratio {f['r'][0]:.2g}-{f['r'][1]:.2g}x")
            elif u in ("A", "B"):
                k = f["ka"] if u == "A" else f["kb"]
                hw = a if u == "A" else b
                v.append(f"{hw} steps {1 / k:.2g}x faster" if k < 1 else f"{hw} steps {k:.2g}x slower"
                         if k > 1 else f"{hw} as modeled")
        n = len(f["explained"])
        parts.append(f"on {m}: " + (", ".join(v) or "as modeled") + f" ({n} claim{'s' if n > 1 else ''})")
    held = (f"; the power ratio held to the catalog's {r_range[0]:.2f}-{r_range[1]:.2f}x" if "R" in opt else "")
    head = (f"**One story for this source**, {len(opt)} shared unknown{'s' if len(opt) > 1 else ''} ("
            + " and ".join(names[u] for u in opt) + f"{held}; steps within each system's bounds): ")
    return (head + "; ".join(parts) + f". It explains {', '.join(f'`{i}`' for i in explained) or 'none'}"
            + (f"; not: {', '.join(f'`{i}`' for i in left)}" if left else "") + ".")


__all__ = ["KS", "grid", "solve"]
