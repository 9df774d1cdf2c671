"""The planner's table of a seed article: what the model says a capacity planner can plan on, per model it names.

For the seed's two systems A / B with the software the verdicts read them with (the sides of its first ratio
claim on that model, as the check builds them: profile, the source's kernel speed-ups, host tier, GPUs, draft
tokens) and each model the seed names, one row at each system's peak and one at each per-user speed the seed
names (on the axis its claim reads it), from the envelopes of total tokens/s per GPU. Each row has ONE speed
limit, stated with its source (``slo_*`` columns):

- a speed row: the speed x the seed names (tokens/s per user, the claims that name it), on the row's axis: on
  ``itl`` a TPOT limit 1000 / x ms; on ``e2e_p50`` / ``e2e_p90`` an E2E limit osl / x s for a reply of the
  workload's osl tokens at that TTFT percentile; at the workload's SLO speed percentile;
- a peak row: the speed floor the seed's peak claims read for that model (``min_tps_per_user``, marked stated or
  assumed; the AA claims: 20 tok/s/user, stated for DeepSeek V4 Pro only), else ``PEAK_FLOOR`` (the planner's choice): each system's peak among the envelope's
  points at or above it (the reading of the check: ``reading.Figure`` at a peak).

Columns, every one at the row's speed limit:

- absolute throughput f_A, f_B (total tokens/s per GPU) and the multiple m = f_A / f_B per GPU, with no TTFT
  limit (as the verdicts read the claims: no seed states one), with the model's held-out ratio error
  (``rate-ratio`` of the claim's records class): interval m exp(-down) .. m exp(up), unbounded above (B) or from
  0 (A) where a system's curve ends within the model's curve-end speed error of the row's speed
  (end exp(-q90) <= x <= end exp(-q10): the multiple may jump there);
- per MW: m x P_B / P_A (P: catalog all-in power per GPU, W; status stated), per dollar: m x $_B / $_A (catalog
  price per GPU-hour, USD; status stated); the same ln half-widths (the basis is a constant of the catalog);
- sessions per rack at the row's speed limit and each TTFT limit of ``PLAN_TTFT_MS`` (the planner's choice, two
  side by side: no seed states one), at the workload's SLO percentiles: agents_per_gpu (``analyses/agents.py``)
  over EVERY evaluated deployment of the system (``CurveStore.points``, as an agents claim is checked; not only
  the throughput envelope's points, whose large batches miss a TTFT limit the others meet), times the GPUs of one
  scale-up domain (a rack).

A speed a system cannot reach is "beyond its curve end" (never a cliff maximum: no 'up to' is read here).
"""

from __future__ import annotations

import math

import pandas as pd

from .. import catalog
from ..analyses.model_error import half_widths
from ..claims.curves import AXES, CurveStore, Side, curve_end, peak, read
from ..claims.fmt import fmt
from ..claims.shared import source_key
from ..claims.values import factor_range, magnitude

PLAN_TTFT_MS = (2000.0, 5000.0)   # TTFT limits (ms) side by side: the planner's choice (no seed states one)
PEAK_FLOOR = 20.0   # tok/s/user: a peak row's speed floor where no peak claim states one (the planner's choice)
METRIC = "total_tps_per_gpu"
COLUMNS = ["source", "model", "point", "axis", "a", "b", "a_tps_per_gpu", "b_tps_per_gpu", "per_gpu", "per_gpu_low",
           "per_gpu_high", "near_end_note", "per_mw", "per_usd", *[f"{s}_sessions_per_rack_ttft{t / 1e3:g}s" for t in PLAN_TTFT_MS
                                                  for s in "ab"], "slo_tps_per_user", "slo_tpot_ms", "slo_e2e_s",
           "slo_speed_percentile", "slo_ttft_percentile", "slo_limit", "slo_source", "slo"]


def _sides(rs: list[dict], store: CurveStore, model: str) -> tuple[Side, Side] | None:
    """The two systems with the software the verdicts read them with: the sides of the seed's first two-system
    claim on ``model`` (else on any model), as the check builds them (profile, the source's kernel speed-ups,
    host tier, GPUs, draft tokens, serving mode)."""
    from ..claims.sides import claim_sides
    cands = [r for r in rs if r["kind"] == "ratio" and len(r.get("systems") or []) == 2 and r.get("model_id")]
    r = next((r for r in cands if r["model_id"] == model), cands[0] if cands else None)
    if r is None:
        return None
    c = catalog.claim(r["id"])
    a, b = claim_sides(store, c, model, c.workload or "agentx")
    return a, b


def _pair(rs: list[dict]) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """(hardware, profile) of the seed's two systems: those of its first two-system claim with a model."""
    for r in rs:
        s = r.get("systems") or []
        if r["kind"] == "ratio" and len(s) == 2 and r.get("model_id"):
            return (s[0]["hardware"], s[0]["profile"]), (s[1]["hardware"], s[1]["profile"])
    return None


def _peak_floor(rs: list[dict], model: str) -> tuple[float, str]:
    """(speed floor of a peak row in tok/s/user, its source): the floor the seed's peak claims on ``model`` give
    (``at.min_tps_per_user``, the claims named: 'stated' where the source states it, 'assumed' where the claim
    lists it under ``unstated``), else ``PEAK_FLOOR``, the planner's choice."""
    v: dict[float, list[str]] = {}
    assumed: set[str] = set()
    for r in rs:
        if r.get("model_id") == model and r["kind"] != "spec_ratio":
            c = catalog.claim(r["id"])
            at = c.at
            if at is not None and at.point == "peak" and at.min_tps_per_user:
                v.setdefault(float(at.min_tps_per_user), []).append(r["id"])
                if "at.min_tps_per_user" in c.unstated:
                    assumed.add(r["id"])
    if not v:
        return PEAK_FLOOR, "the planner's choice (no peak claim states a floor)"
    x = min(v)
    ids = sorted(v[x])
    if set(ids) <= assumed:
        return x, "assumed (not stated): " + ", ".join(ids)       # its basis in the claims' notes
    said = [i for i in ids if i not in assumed]
    return x, ("stated: " + ", ".join(said) + ("; assumed: " + ", ".join(sorted(assumed & set(ids)))
                                               if assumed & set(ids) else ""))


def _named(rs: list[dict], model: str) -> list[tuple[float, str, str]]:
    """The per-user speeds the seed names for ``model`` (tok/s/user) with the axis each is read on and the claims
    that name it."""
    out: dict[tuple[float, str], set[str]] = {}
    for r in rs:
        if r.get("model_id") != model:
            continue
        c = catalog.claim(r["id"])
        for p in ([c.from_, c.to] if c.kind == "delta" else [c.at]):
            if p is not None and p.point == "speed" and p.tps_per_user:
                ax = r.get("axis") or "itl"
                out.setdefault((float(p.tps_per_user), ax if ax in AXES else "itl"), set()).add(r["id"])
    return [(x, ax, "named: " + ", ".join(sorted(ids))) for (x, ax), ids in sorted(out.items())]


def _percentiles(wl: str) -> tuple[float, float | None]:
    """(speed percentile, TTFT percentile) of the workload's SLO (AA-AgentPerf: P25 speed, P95 TTFT; else P50)."""
    w = catalog.workload(wl)
    q = getattr(w, "slo_speed_percentile", None) or 50.0
    return float(q), getattr(w, "slo_ttft_percentile", None)


def _sessions(pts: pd.DataFrame, wl: str, speed: float, rack: float, ttft_ms: float, axis: str) -> float | None:
    """Sessions per rack meeting the row's SLO over every evaluated deployment ``pts`` of a system: the speed
    floor on the row's own axis (the column the throughput is read on) and the TTFT limit, at the workload's SLO
    percentiles (``_percentiles``)."""
    from ..analyses.agents import agents_per_gpu
    from ..search import SLO
    if not len(pts):
        return None
    col = AXES.get(axis, "tps_per_user")
    col = col if col in pts.columns else "tps_per_user"
    q, qt = _percentiles(wl)
    res = agents_per_gpu(pts, SLO.speed_floor(speed, ttft_ms, q, qt, speed_column=col))
    return None if res.value is None else res.value * rack


def tables(store: CurveStore, results: list[dict]) -> pd.DataFrame:
    """One row per (seed, model, point): see the module docstring."""
    by_src: dict[str, list[dict]] = {}
    for r in results:
        by_src.setdefault(source_key(r.get("source")), []).append(r)
    rows = []
    for src, rs in by_src.items():
        if _pair(rs) is None:
            continue
        models = sorted({r["model_id"] for r in rs if r.get("model_id") and r["kind"] != "spec_ratio"})
        for model in models:
            sides = _sides(rs, store, model)
            if sides is not None:
                rows += _model_rows(store, src, rs, model, *sides)
    return pd.DataFrame(rows)


def _peak_at(env: pd.DataFrame, floor: float, axis: str) -> float:
    """A system's peak of METRIC among its envelope's points at or above ``floor`` on ``axis`` (the check's
    reading of a peak with a speed floor, ``reading.Figure``); NaN where none is."""
    u = env[env[AXES[axis]].to_numpy(float) >= floor] if len(env) else env
    return peak(u, METRIC) if len(u) else math.nan


def slo_limit(x: float, axis: str, wl: str) -> dict:
    """The row's speed limit as an SLO (module docstring): {slo_tps_per_user, slo_tpot_ms (itl), slo_e2e_s (e2e
    axes: osl / x s), slo_speed_percentile, slo_ttft_percentile, text}."""
    q, qt = _percentiles(wl)
    out: dict[str, float | str | None] = {
        "slo_tps_per_user": x, "slo_tpot_ms": math.nan, "slo_e2e_s": math.nan, "slo_speed_percentile": q,
        "slo_ttft_percentile": qt if qt is not None else q}
    if axis == "itl":
        out["slo_tpot_ms"] = 1000.0 / x
        # the workload's percentile is of the per-user speed (AA: P25 output speed >= the floor), not of TPOT (its
        # P25 is the fast quarter); the model's decode speed has no spread at a point, so one TPOT limit reads it
        out["text"] = f"speed P{q:g} >= {x:g} tok/s/user (TPOT <= {1000.0 / x:.3g} ms)"
    else:
        from ..analyses.evaluation import workload_info
        osl = workload_info(wl).lengths["osl"]
        pct = axis.rsplit("_p", 1)[1] if "_p" in axis else "50"
        out["slo_e2e_s"] = osl / x
        out["text"] = (f"E2E P{pct} <= {osl / x:.3g} s for a {osl:,.0f}-token reply (>= {x:g} tok/s/user "
                       "E2E-normalised)")
    return out


def _model_rows(store: CurveStore, src: str, rs: list[dict], model: str, A: Side, B: Side) -> list[dict]:
    """The rows of one model: its peak and each speed the seed names, every column at the row's speed limit."""
    ha, hb = A.hardware, B.hardware
    cA, cB = catalog.hardware(ha), catalog.hardware(hb)
    p_ratio = (cB.value("allin_power_w") or math.nan) / (cA.value("allin_power_w") or math.nan)
    d_ratio = (cB.value("price_usd_per_gpu_hour") or math.nan) / (cA.value("price_usd_per_gpu_hour") or math.nan)
    rack = {"a": cA.value("scaleup_domain_gpus") or math.nan, "b": cB.value("scaleup_domain_gpus") or math.nan}
    wl = next((r["workload"] for r in rs if r.get("model_id") == model and r.get("workload")), "agentx")
    cls = "agentic" if getattr(catalog.workload(wl), "kind", "fixed") == "agentic" else "all"
    h = half_widths("rate-ratio", "all", cls)
    he = half_widths("speed", "curve-end", cls)
    pf, pf_src = _peak_floor(rs, model)
    pts = {"a": store.points(A, model, wl), "b": store.points(B, model, wl)}     # every deployment, once
    out = []
    for x, ax, x_src in [(None, "itl", pf_src), *_named(rs, model)]:
        ea, eb = (store.envelope(S, model, wl, ax, METRIC) for S in (A, B))
        if x is None:
            fa, fb = _peak_at(ea, pf, ax), _peak_at(eb, pf, ax)
        else:
            fa, fb = (float(read(e, x, ax, METRIC)[0]) for e in (ea, eb))
        m = fa / fb if fb and math.isfinite(fb) and math.isfinite(fa) else math.nan
        end_a, end_b = curve_end(ea, ax), curve_end(eb, ax)
        lo, hi = m * math.exp(-h["down"]), m * math.exp(h["up"])
        # a curve ending within the model's curve-end speed error of the row's speed: the multiple may jump there
        near = [hw for hw, e in ((ha, end_a), (hb, end_b))
                if x is not None and math.isfinite(e) and e * math.exp(-he["q90"]) <= x <= e * math.exp(-he["q10"])]
        if hb in near:
            hi = math.inf
        if ha in near:
            lo = 0.0
        note, m_lo, m_hi = near_end(rs, model, x, ax, m, fa, (ha, ea, end_a), (hb, eb, end_b), he)
        if note:
            lo, hi = min(lo, m_lo), max(hi, m_hi)
        speed = x if x is not None else pf
        lim = slo_limit(speed, ax, wl)
        row = {"source": src, "model": model, "point": "peak" if x is None else f"{x:g}", "axis": ax,
               "a": A.name, "b": B.name, "a_hw": ha, "b_hw": hb, "a_tps_per_gpu": fa, "b_tps_per_gpu": fb,
               "a_end": end_a, "b_end": end_b, "per_gpu": m, "per_gpu_low": lo, "per_gpu_high": hi,
               "near_end": ", ".join(near), "near_end_note": note, "per_mw": m * p_ratio, "per_usd": m * d_ratio,
               **{k: v for k, v in lim.items() if k != "text"}, "slo_limit": lim["text"], "slo_source": x_src,
               "slo": f"{lim['text']}, {x_src}; TTFT P{lim['slo_ttft_percentile']:g} <= "
                      + " or ".join(f"{t / 1e3:g}" for t in PLAN_TTFT_MS) + " s (the planner's choice) for sessions"}
        for t in PLAN_TTFT_MS:
            for s in "ab":
                row[f"{s}_sessions_per_rack_ttft{t / 1e3:g}s"] = _sessions(pts[s], wl, speed, rack[s], t, ax)
        out.append(row)
    return out


def _verdict_factors(rs: list[dict], model: str, hw: str) -> list[float]:
    """The slower step factors k > 1 of ``hw`` at speed that the section's verdicts on ``model`` name (allowed
    conditions, alone or in a pair): each moves ``hw``'s curve end to end / k."""
    ks = []
    for r in rs:
        if r.get("model_id") != model:
            continue
        for c in r.get("conditions") or []:
            if not c.get("allowed"):
                continue
            if c.get("kind") == "steps" and c.get("system") == hw and "at speed" in (c.get("key") or ""):
                k = c.get("factor")
            elif c.get("kind") == "joint_steps":
                k = (c.get("factors") or {}).get(hw)
            else:
                k = None
            if k and k > 1 and math.isfinite(k):
                ks.append(float(k))
    return ks


def _record_scope(rid: str) -> str:
    """', <engine family> on <workload class> lengths/sessions' of a shared record (the verdicts call a record of
    another engine or workload 'other', never evidence: the row names what it is); '' when not recorded."""
    from ..claims.evidence import scoped_records
    r = next((r for r in scoped_records() if r[0] == rid and len(r) >= 7), None)
    if r is None:
        return ""
    return f", {r[5] or 'engine not stated'} on {r[6]} {'lengths' if r[6] == 'fixed' else 'sessions'}"


def _measured_layouts(hw: str) -> set[tuple]:
    """(tp, draft tokens) of every record of ``hw`` in the shared data (any model)."""
    from ..specs.records import SHARED_FILES, read_records
    out: set[tuple] = set()
    for f in SHARED_FILES:
        path = catalog.builtin_root() / "data" / "shared" / f
        if path.is_file():
            out |= {(r.tp, r.spec_tokens) for r in read_records(path) if r.hardware == hw}
    return out


def near_end(rs: list[dict], model: str, x: float | None, ax: str, m: float, fa: float, a: tuple, b: tuple,
             he: dict) -> tuple[str, float, float]:
    """(note, low, high) for a speed row x near a curve end (issue 56 item 2): a system whose end, moved by the
    section's verdicts (their slower step factors k: end / k) or to its fastest record on the model (k_rec =
    end / v_rec: the record-backed end), comes within the model's curve-end speed error of x (x >= end / k x
    exp(-q90)). The multiple at each such k (B's figure read with its points moved to (x_i / k, f_i / k), A's as
    modeled; A's the other way) is printed beside the modeled one, and its range widens the row's interval. An
    end that rests on a layout (TP, draft tokens) no record of that hardware has is named. '' when none."""
    from ..claims.curves import end_deployment
    from ..claims.evidence import fastest
    if x is None or not math.isfinite(m):
        return "", m, m
    parts, ms = [], []
    for hw, env, end, is_b in ((*a, False), (*b, True)):
        if not math.isfinite(end):
            continue
        rec = fastest(hw, model)
        ks = _verdict_factors(rs, model, hw)
        k_rec = end / rec[1] if rec is not None and rec[1] < end else None
        cand = ks + ([k_rec] if k_rec else [])
        if not any(x >= end / k * math.exp(-he["q90"]) for k in cand):
            continue

        def m_at(k: float) -> float:
            f = float(read(env, x * k, ax, METRIC)[0]) / k
            if not math.isfinite(f) or f <= 0:
                return math.inf if is_b else 0.0
            return fa / f if is_b else f / (fa / m)
        say = []
        if k_rec and rec is not None:
            mr = m_at(k_rec)
            ms.append(mr)
            say.append(f"at {hw}'s record-backed end ({rec[0]}{_record_scope(rec[0])}: {rec[1]:.0f} tok/s/user, "
                       f"{magnitude(k_rec)}x slower than modeled) {_x(mr)}")
        if ks:
            mv = [m_at(k) for k in (min(ks), max(ks))]
            ms += mv
            kt = magnitude(min(ks)) if max(ks) / min(ks) < 1.005 else factor_range(min(ks), max(ks))
            mt = _x(mv[0]) if _x(mv[0]) == _x(mv[1]) else f"{_x(min(mv))}-{_x(max(mv))}"
            say.append(f"the section's verdicts need {hw} {kt}x slower: {mt}")
        dep = end_deployment(env, ax)
        if dep and dep.get("tp") is not None and (dep.get("tp"), dep.get("spec_tokens")) not in _measured_layouts(hw):
            say.append(f"its modeled end {fmt(end)} rests on TP{int(dep['tp'])}, {int(dep.get('spec_tokens') or 0)} drafts, "
                       f"batch {fmt(dep.get('batch'))}, a layout no record of {hw} has")
        parts.append(f"{hw}'s end {fmt(end)}: " + "; ".join(say))
    if not parts:
        return "", m, m
    fin = [v for v in ms if math.isfinite(v)]
    lo = min([m, *fin]) if not any(v == 0 for v in ms) else 0.0
    hi = max([m, *fin]) if not any(math.isinf(v) for v in ms) else math.inf
    return f"near a curve end (modeled {_x(m)}): " + "; ".join(parts), lo, hi


def _x(v: float, lo: float | None = None, hi: float | None = None) -> str:
    if v is None or not math.isfinite(v):
        return "n/a"
    s = f"{fmt(v)}x"
    if lo is None or hi is None:
        return s
    return s + (f" ({fmt(lo)}-unbounded)" if math.isinf(hi) else f" (0-{fmt(hi)})" if lo == 0 else
                f" ({fmt(lo)}-{fmt(hi)})")


def _scaled(r, col: str) -> tuple[float, float, float]:
    """A per-MW or per-dollar multiple with the per-GPU interval scaled by the same catalog constant."""
    k = r[col] / r["per_gpu"] if r["per_gpu"] else math.nan
    return r[col], r["per_gpu_low"] * k, (r["per_gpu_high"] * k if math.isfinite(r["per_gpu_high"]) else math.inf)


def _abs(v, end, x) -> str:
    if v is None or not math.isfinite(v):
        return f"beyond its end ({fmt(end)})" if x != "peak" else "n/a"
    return f"{v:,.0f}"


def _sess(r, ttft_ms: float) -> str:
    """'6,961 / 1,494': sessions per rack of A and B at the row's speed limit and a TTFT limit."""
    x = r.get("slo_tps_per_user")
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a (no speed named)"
    k = f"ttft{ttft_ms / 1e3:g}s"
    v = [r.get(f"a_sessions_per_rack_{k}"), r.get(f"b_sessions_per_rack_{k}")]
    t = [("none meets it" if a is None or (isinstance(a, float) and math.isnan(a)) else f"{a:,.0f}") for a in v]
    return f"{t[0]} / {t[1]}"


def markdown(df: pd.DataFrame, src: str, brief: bool = False) -> list[str]:
    """The planner's table of one seed (Markdown lines; [] when the seed has no two-system claim); ``brief``: the
    explanation of its columns given once, in the report's first table, and referred to here."""
    if df is None or not len(df):
        return []
    d = df[df["source"] == src]
    if not len(d):
        return []
    a, b = d["a"].iloc[0], d["b"].iloc[0]
    ha = d["a_hw"].iloc[0] if "a_hw" in d else a.split(" ")[0].split(":")[0]
    hb = d["b_hw"].iloc[0] if "b_hw" in d else b.split(" ")[0].split(":")[0]
    cA, cB = catalog.hardware(ha), catalog.hardware(hb)
    pa, pb = cA.specs.allin_power_w, cB.specs.allin_power_w
    da, db = cA.specs.price_usd_per_gpu_hour, cB.specs.price_usd_per_gpu_hour
    ttfts = " and ".join(f"<= {t / 1e3:g} s" for t in PLAN_TTFT_MS)
    qt = d["slo_ttft_percentile"].iloc[0] if "slo_ttft_percentile" in d else 50.0
    bases = (f"Per MW: catalog all-in power per GPU ({ha} {pa.value:,.0f} W, {hb} {pb.value:,.0f} W; "
             f"{pa.status}/{pb.status}); per $: catalog price per GPU-hour ({ha} ${da.value:g}, {hb} "
             f"${db.value:g}; {da.status}/{db.status}).")
    head = ("| model | point (tok/s/user) | SLO (speed limit; source) | tok/s/GPU A / B | per GPU (interval) | per MW | "
            "per $ | " + " | ".join(f"sessions/rack A / B, TTFT <= {t / 1e3:g} s" for t in PLAN_TTFT_MS) + " |")
    if brief:
        L = [f"Planner's table: {a} over {b}; columns as in the first table, TTFT at P{qt:g}. {bases}\n", head,
             "|---|---|---|---|---|---|---|" + "---|" * len(PLAN_TTFT_MS)]
        return L + _rows(d)
    L = [f"Planner's table: {a} over {b} (the software the verdicts read them with), total tokens/s per GPU on the "
         "model's envelopes (no 'up to' maxima). **Every column of a row is read at that row's SLO** (column 'SLO', "
         "with its source): a speed floor (the speed the seed names, on the axis its claims read; at a peak, the "
         f"floor the seed's peak claims read, stated or assumed, else {PEAK_FLOOR:g} tok/s/user, the planner's "
         "choice, each system's peak at or above it) at the workload's SLO speed percentile, and a TTFT limit: none "
         f"for tok/s/GPU and the multiples (no seed states one), {ttfts} side by side for the sessions (the "
         f"planner's choice), at TTFT P{qt:g}. Sessions per rack: the most live sessions of any deployment meeting "
         f"both. {bases} Interval: the held-out ratio error; unbounded (or from 0) where a curve ends within the "
         "curve-end speed error of the row's speed; widened where the section's verdicts or a record move a curve "
         "end near it (listed under the table).\n", head,
         "|---|---|---|---|---|---|---|" + "---|" * len(PLAN_TTFT_MS)]
    return L + _rows(d)


def _rows(d: pd.DataFrame) -> list[str]:
    """The table's rows, then the rows near a curve end with what widens their interval."""
    L = []
    for _, r in d.iterrows():
        pt = r["point"] + ("" if r["point"] == "peak" or r["axis"] == "itl" else f" ({r['axis']})")
        L.append(f"| {r['model']} | {pt} | {r.get('slo_limit', '')}; {r.get('slo_source', '')} | "
                 f"{_abs(r['a_tps_per_gpu'], r['a_end'], r['point'])} / "
                 f"{_abs(r['b_tps_per_gpu'], r['b_end'], r['point'])} | "
                 f"{_x(r['per_gpu'], r['per_gpu_low'], r['per_gpu_high'])} | {_x(*_scaled(r, 'per_mw'))} | "
                 f"{_x(*_scaled(r, 'per_usd'))} | " + " | ".join(_sess(r, t) for t in PLAN_TTFT_MS) + " |")
    notes = [f"- {r['model']} at {r['point']} tok/s/user: {r['near_end_note']}." for _, r in d.iterrows()
             if isinstance(r.get("near_end_note"), str) and r.get("near_end_note")]
    if notes:
        L += ["", "Rows near a curve end (their interval widened to the multiples below):", *notes]
    return L + [""]
