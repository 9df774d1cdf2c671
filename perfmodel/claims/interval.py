"""One interval per claim figure: the model's own cross-validated error of the claim's kind (issue 32, rule 1).

A claim figure is a product of system figures: Q = prod_i f_i^(s_i), s_i = +1 (numerator: A of a ratio, the
later point of a delta) or -1 (denominator).

**The interval** (c): the held-out residual spread (``model_error.py``) of the claim's own kind, applied
vertically to Q: down = q90, up = -q10 of ln(pred / meas) (swapped for s = -1). A rate figure over another reads
the spread of pairs of held-out rows (``rate-ratio``: two systems at one setup, errors the two share cancelled;
``rate-delta``: two points of one sweep); a per-user speed reads ``speed`` (``curve-end`` at batch-1-like
points); any other figure its own quantity (``rate``, ``ttft``). Agentic claims read the agentic records'
rows (``workload="agentic"``; the table names the stand-in where they are too few). interval = [Q exp(-down),
Q exp(up)]; any ``extra`` reading parts combine with it root-sum-square in ln space.

**Reported beside it, never in it** (their unknowns become named conditions, ``conditions.py``):

(a) **profile**: the profile corners (every parameter at its slow / fast end): up_a = ln(Q_fast / Q), the
    software headroom.
(b) **spec**: every hardware value with a stated ``low``/``high`` or published variants spans [lo, hi] =
    hull(low, high, value, variant values), propagated to first order through the elasticity of each system
    figure at its operating point: d ln f / d ln(HBM bandwidth) = t_hbm / t_step, d ln f / d ln(rate of format
    k) = (t_compute / t_step) w_k with w_k = (FLOPs_k / rate_k) / sum_j (FLOPs_j / rate_j); -1 for the power a
    per-MW figure divides by and the price a per-dollar figure divides by; TTFT takes the opposite sign. For one
    (system, field) the elasticities of all terms on that system add (a delta on one system keeps only the
    difference); d_lo = E ln(lo / value), d_hi = E ln(hi / value).

A reading at which a system cannot reach the point (Q = 0 or infinity) has no interval: the verdict solves the
conditions instead. Deterministic: no sampling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from .. import catalog
from ..analyses.model_error import CURVE_END_CONCURRENCY, half_widths, region_of
from .latency import error_part, is_latency

RATE_FIELDS = {"bf16": "bf16_dense_pflops", "fp8": "fp8_dense_pflops", "fp4": "fp4_dense_pflops"}
PROPAGATED = ("hbm_bandwidth_tbps", *RATE_FIELDS.values(), "allin_power_w", "gpu_tdp_w", "price_usd_per_gpu_hour")


def spec_bounds(hw: str, field: str) -> dict | None:
    """The catalog's range for one value of hardware ``hw`` (id[@variant]): hull of its low/high, its value and
    every variant's value; None when the field is absent or has a single value."""
    base = hw.split("@")[0]
    spec = catalog.hardware(hw)
    sv = getattr(spec.specs, field)
    if sv is None:
        return None
    vals = [sv.value, *sv.bounds()]
    srcs = [sv.range_note] if sv.low is not None else []
    for name, var in catalog.hardware(base).variants.items():
        if field in var.specs:
            vals.append(var.specs[field].value)
            srcs.append(f"variant {name}: {var.specs[field].value:g}")
    lo, hi = min(vals), max(vals)
    if hi <= lo:
        return None
    return {"hardware": hw, "field": field, "value": sv.value, "low": lo, "high": hi, "status": sv.status,
            "source": sv.source, "range": "; ".join(srcs)}


def elasticities(row: pd.Series, metric: str, hw: str) -> dict[str, float]:
    """d ln(figure) / d ln(field) at one operating point (see the module docstring)."""
    spec = catalog.hardware(hw)
    step = float(row.get("step_ms", float("nan")))
    out: dict[str, float] = {}
    if step > 0:
        sign = -1.0 if is_latency(metric) else 1.0
        out["hbm_bandwidth_tbps"] = sign * float(row.get("res_hbm_bandwidth_ms", 0.0)) / step
        t = {}
        for fmt, field in RATE_FIELDS.items():
            rate = spec.value(field)
            fl = float(row.get(f"step_flops_{fmt}", 0.0) or 0.0)
            if rate and fl > 0:
                t[field] = fl / rate
        tot = sum(t.values())
        share_c = float(row.get("res_compute_ms", 0.0)) / step
        for field, v in t.items():
            out[field] = sign * share_c * v / tot
    if metric.endswith("_per_mw"):
        basis = row.get("power_basis", "all-in")
        out["allin_power_w" if basis == "all-in" else "gpu_tdp_w"] = -1.0
    if metric.endswith("_per_usd"):
        out["price_usd_per_gpu_hour"] = -1.0
    return out


def _ln_dev(q: float, v: float) -> float:
    """ln(v / q) with v = 0 -> -inf and v = inf -> +inf (q finite and positive)."""
    if v <= 0:
        return -math.inf
    return math.inf if math.isinf(v) else math.log(v / q)


def spread_part(q: float, values, **info) -> dict:
    """down/up half-widths of the readings ``values`` around q (0 and inf readings give an infinite side;
    NaN readings, where both sides are undefined, make both sides infinite)."""
    if q is None or math.isnan(q) or math.isinf(q) or q <= 0:
        return {**info, "down": 0.0, "up": 0.0}
    down = up = 0.0
    for v in values:
        if v is None:
            continue
        if isinstance(v, float) and math.isnan(v):
            down = up = math.inf
            continue
        d = _ln_dev(q, v)
        down, up = max(down, -d), max(up, d)
    return {**info, "down": down, "up": up}


def _profile_part(q: float, lo: float, hi: float) -> dict:
    return spread_part(q, [lo, hi], label="software-profile ranges")


def _region(t: dict) -> str:
    conc = t["row"].get("concurrency")
    return region_of(None if conc is None else float(conc))


def _model_parts(terms: list[dict], workload: str = "all") -> list[dict]:
    """The model-error part of the claim's own kind (rule 1), applied vertically: a rate figure over another
    (opposite signs) reads the pair spread (``rate-ratio`` for two systems, ``rate-delta`` for two points of one
    system; the wider of the two regions), a per-user speed its ``speed`` spread (``curve-end`` at batch-1-like
    points), any other term its own spread; TTFT always per term. ``workload``: the class of records read
    (``agentic`` for an agentic claim, with the table's stand-in named)."""

    def part(t, q, reg, flip):
        h = half_widths(q, reg, workload)
        down, up = (h["up"], h["down"]) if flip else (h["down"], h["up"])
        return {"hardware": t["hardware"], "quantity": h["quantity"], "region": h["region"], "rows": h["rows"],
                "workload": h.get("workload", "all"), "stand_in": h.get("stand_in"),
                "median_abs_pct": h["median_abs_pct"], "down": down, "up": up}
    rates = [t for t in terms if not is_latency(t["metric"])]
    if len(rates) == 2 and rates[0]["sign"] != rates[1]["sign"]:
        q = "rate-delta" if rates[0]["hardware"] == rates[1]["hardware"] else "rate-ratio"
        cands = [part(rates[0], q, _region(t), False) for t in rates]
        best = max(cands, key=lambda p: p["up"] + p["down"])
        best["hardware"] = " / ".join(t["hardware"] for t in rates)
        out = [best]
    else:
        out = []
        for t in rates:
            if t["metric"] == "tps_per_user":
                out.append(part(t, "speed", _speed_region(t), t["sign"] < 0))
            else:
                out.append(part(t, "rate", _region(t), t["sign"] < 0))
    return out + [_latency_part(t, workload) for t in terms if is_latency(t["metric"])]


def _speed_region(t: dict) -> str:
    """The region of a per-user speed's error: ``curve-end`` at batch-1-like points, else the row's."""
    conc = t["row"].get("concurrency")
    return "curve-end" if conc is not None and float(conc) <= CURVE_END_CONCURRENCY else _region(t)


def _latency_part(t: dict, workload: str) -> dict:
    """The model-error part of a latency term (``latency.error_part``: TTFT its own error, TPOT the speed error
    flipped, E2E its two parts added), flipped again for a denominator (s = -1)."""
    hs: dict[str, dict] = {}

    def band(qty: str) -> tuple[float, float]:
        h = hs[qty] = half_widths(qty, _region(t) if qty == "ttft" else _speed_region(t), workload)
        return h["down"], h["up"]
    p = error_part(t["metric"], t["row"], t.get("percentile"), band)
    h = hs.get("ttft") or hs["speed"]
    down, up = (p["up"], p["down"]) if t["sign"] < 0 else (p["down"], p["up"])
    return {"hardware": t["hardware"], "quantity": p["quantity"], "region": h["region"], "rows": h["rows"],
            "workload": h.get("workload", "all"), "stand_in": h.get("stand_in"),
            "median_abs_pct": h["median_abs_pct"], "down": down, "up": up}


def interval(q: float, profile_band: tuple, terms: list[dict], extra: Sequence[dict] = (), model_error: bool = True,
             workload: str = "all") -> dict:
    """The interval of figure ``q``: the model's cross-validated error of the claim's kind (c), with any
    ``extra`` reading parts, root-sum-square in ln space (rule 1: one error term). The profile corners
    (``profile_band``: slow and fast ends) and the catalog's spec ranges (b) are computed and returned beside it
    (``profile``, ``spec``: the software headroom and the spec conditions) but do not widen it.
    ``terms``: [{'hardware', 'row' (envelope row or None), 'sign', 'metric'}], one per system figure in q.
    Returns value, low, high, the ln half-widths and each part."""
    prof = _profile_part(q, *profile_band)
    spec_parts: list[dict] = []
    by_field: dict[tuple, float] = {}
    live = [t for t in terms if t.get("row") is not None]
    for t in live:
        for f, e in elasticities(t["row"], t["metric"], t["hardware"]).items():
            by_field[(t["hardware"], f)] = by_field.get((t["hardware"], f), 0.0) + t["sign"] * e
    model_parts = _model_parts(live, workload) if model_error else []
    for (hw, f), E in by_field.items():
        b = spec_bounds(hw, f)
        if b is None or abs(E) < 1e-3:
            continue
        d_lo, d_hi = E * math.log(b["low"] / b["value"]), E * math.log(b["high"] / b["value"])
        spec_parts.append({**b, "elasticity": E, "down": max(0.0, -d_lo, -d_hi), "up": max(0.0, d_lo, d_hi)})
    extra = list(extra)
    parts = [*model_parts, *extra]
    down = math.sqrt(sum(p["down"] ** 2 for p in parts))
    up = math.sqrt(sum(p["up"] ** 2 for p in parts))
    sq = lambda ps, k: math.sqrt(sum(p[k] ** 2 for p in ps))  # noqa: E731
    ok = q is not None and not math.isnan(q) and not math.isinf(q) and q > 0
    return {"value": q, "low": q * math.exp(-down) if ok else float("nan"),
            "high": q * math.exp(up) if ok else float("nan"), "down": down, "up": up,
            "profile": prof, "spec": spec_parts, "model_error": model_parts, "reading": extra,
            "by_source": {"model": {"down": sq(model_parts, "down"), "up": sq(model_parts, "up")},
                          "reading": {"down": sq(extra, "down"), "up": sq(extra, "up")},
                          "excluded_profile": prof,
                          "excluded_spec": {"down": sq(spec_parts, "down"), "up": sq(spec_parts, "up")}}}


def distance(claimed: float, iv: dict, qualifier: str = "about") -> dict:
    """How far the claim lies from the central figure: the multiple claimed / model and z, the ln distance in
    half-widths of the interval on the claim's side (z <= 1: inside). ``at_most`` / ``at_least`` claims are at
    distance 0 when the model's figure satisfies them."""
    q = iv["value"]
    if q is None or claimed is None or math.isnan(q) or math.isinf(q) or q <= 0 or claimed <= 0:
        return {"multiple": float("nan"), "z": float("nan"), "side": None}
    ln = math.log(claimed / q)
    if (qualifier == "at_most" and ln >= 0) or (qualifier == "at_least" and ln <= 0):
        return {"multiple": claimed / q, "z": 0.0, "side": "satisfied"}
    hw = iv["up"] if ln > 0 else iv["down"]
    z = abs(ln) / hw if hw > 0 else (0.0 if ln == 0 else float("inf"))
    return {"multiple": claimed / q, "z": z, "side": "above" if ln > 0 else "below",
            "unbounded": math.isinf(hw)}


def width(iv: dict) -> float:
    """high / low of an interval (inf when a side is unbounded)."""
    d = iv["up"] + iv["down"]
    return math.inf if math.isinf(d) else math.exp(d)


def _items(iv: dict, side: str) -> list[tuple[str, float]]:
    items = []
    for p in iv["model_error"]:
        items.append((f"the model's own error on {p['hardware']} ({p['quantity']}, {p['region']}: "
                      f"{p['median_abs_pct']:.0f}% median over {p['rows']} held-out rows)", p[side]))
    for p in iv.get("reading", []):
        items.append((p["label"], p[side]))
    return items


def contributors(iv: dict, n: int = 2) -> list[str]:
    """The n largest contributors to the whole interval (down + up half-widths), as text."""
    tot: dict[str, list] = {}
    for side in ("down", "up"):
        for label, v in _items(iv, side):
            tot.setdefault(label, [0.0, 0.0])[0 if side == "down" else 1] = v
    ranked = sorted(((k, d, u) for k, (d, u) in tot.items() if d + u > 1e-3), key=lambda t: -(t[1] + t[2]))
    return [f"{k} (x{math.exp(d):.2f} down / x{math.exp(u):.2f} up)".replace("xinf", "unbounded")
            for k, d, u in ranked[:n]]


def largest_parts(iv: dict, side: str, n: int = 2) -> list[str]:
    """The largest contributors to one side ('up'/'down') of the interval, as text."""
    items = [i for i in _items(iv, side) if i[1] > 1e-3]
    items.sort(key=lambda i: -i[1])
    return [f"{t} (x{math.exp(v):.2f})" for t, v in items[:n]]


def _f(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def summary(iv: dict) -> dict:
    """JSON-ready digest of an interval (value, low, high, ln half-widths per source)."""
    return {"value": _f(iv["value"]), "low": _f(iv["low"]), "high": _f(iv["high"]), "down": iv["down"],
            "up": iv["up"], "by_source": iv["by_source"],
            "spec": [{k: p[k] for k in ("hardware", "field", "value", "low", "high", "status", "elasticity",
                                        "down", "up", "range")} for p in iv["spec"]],
            "model_error": iv["model_error"], "reading": iv.get("reading", []), "propagated_fields": list(PROPAGATED)}
