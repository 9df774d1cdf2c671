"""The Markdown of the claims report (formatting only: every number comes from the check results / CSVs)."""

from __future__ import annotations

import math
from pathlib import Path

from ..claims.curves import AXIS_TEXT
from ..claims.fmt import fmt as _fmt
from ..claims.verdict import CATEGORIES, CONSISTENT_Z, SPEC_INCONSISTENT, WIDE
from .sentences import Sentences, pct


def _end_text(d: dict | None) -> str:
    """'aggregated, 8 GPUs, TP8 DP1 EP1, 4 drafts, batch 1, bound by latency' from end_deployment()."""
    if not d:
        return "n/a"
    text = (f"{d.get('serving', '')}, {d.get('gpus', 0):g} GPUs, TP{d.get('tp', 0):g} DP{d.get('dp', 0):g} "
            f"EP{d.get('ep', 0):g}, {d.get('spec_tokens', 0):g} drafts, batch {d.get('batch', 0):g}, bound by "
            f"{d.get('bound', '?')}")
    parts = d.get("contributors") or []
    if parts and d.get("step_ms"):
        text += (f"; its {d['step_ms']:.3g} ms step is set by " +
                 ", ".join(f"{p['part']} {p['ms']:.3g} ms ({pct(p['share'])})" for p in parts))
    return text


def _v(r) -> str:
    return r["verdict"] + (f" {r['condition']}" if r.get("condition") else "")


def _model_cell(r) -> str:
    m = r.get("model") or {}
    if r["kind"] == "spec_ratio":
        return ", ".join(f"{p['ratio']:.3g}x ({p['a_value']:g}/{p['b_value']:g})" for p in r["spec"]["pairs"])
    v = m.get("value")
    if v is None:
        return "n/a"
    if r["kind"] == "delta":
        lo, hi = m["band"]
        return f"{v * 100:+.0f}% ({lo * 100:+.0f}% to {hi * 100:+.0f}%)" if lo is not None else f"{v * 100:+.0f}%"
    lo, hi = m.get("interval") or [None, None]
    c = m.get("central", v)
    s = f"{_fmt(c)} ({'0' if lo == 0 else _fmt(lo)} - {_fmt(hi)})"
    if "ratio_min" in m:
        s += f"; over the common range {_fmt(m['ratio_min'])} - {_fmt(m['ratio_max'])}"
    return s


def _distance_cell(r) -> str:
    d = r.get("distance") or {}
    z = d.get("z")
    if d.get("nearest_pair"):
        return f"{d['multiple']:.3g}x the nearest published pair"
    if z is None or (isinstance(z, float) and math.isnan(z)):
        return "n/a"
    return f"{_fmt(d.get('multiple'))}x, {'inf' if math.isinf(z) else f'{z:.2f}'}"


def _row(claims_df, cid):
    if claims_df is None or "id" not in claims_df:
        return None
    sub = claims_df[claims_df["id"] == cid]
    return None if sub.empty else sub.iloc[0]


def three_way(r, claims_df) -> list[str]:
    """Hardware only | as measured | what would have to be true, every figure from the claim's claims.csv row."""
    row = _row(claims_df, r["id"])
    if row is None:
        return []
    hw = r.get("hardware_only") or {}
    am = r.get("as_measured") or {}
    lo, hi = row["interval_low"], row["interval_high"]
    need = row["would_have_to_be_true"] if isinstance(row["would_have_to_be_true"], str) else \
        "nothing beyond the interval: the claim lies inside it"
    seed = row["seed_figures"] if isinstance(row.get("seed_figures"), str) else ""
    if seed:
        need += f". The seed's own figures: {seed}"
    L = [f"| hardware only (`{hw.get('profile')}` software on both) | as measured ({', '.join(am.get('profiles', []))}) "
         f"| what would have to be true |", "|---|---|---|",
         f"| {_fmt(row['hardware_only_ratio'])}x | {_fmt(row['central'])}x (interval "
         f"{'0' if lo == 0 else _fmt(lo)} - {_fmt(hi)}) | {need.replace('|', '/')} |"]
    return L


def point_lines(r, s, tag) -> list[str]:
    """Two lines for one system: its curve end (with the figure at that end) and the claim's point (with the
    figure there), each line from one operating point."""
    L = [f"- {s['name']}, curve end: {_fmt(s['max_tps_per_user'])} tok/s/user, {_fmt(s.get('end_figure'))} "
         f"{r.get('metric')} there; the end: {_end_text(s.get('end_deployment'))}."]
    if s.get("beyond_end"):
        L.append(f"- {s['name']}, at the claim's point: beyond its curve's end.")
    elif s.get("point_tps_per_user") is not None:
        share = f", {pct(s['share_of_peak'])} of its own peak {_fmt(s.get('peak'))}" \
            if s.get("share_of_peak") is not None else ""
        L.append(f"- {s['name']}, at the claim's point: {_fmt(s['point_tps_per_user'])} tok/s/user, "
                 f"{_fmt(s.get('value'))} {r.get('metric')}{share}.")
    return L


def accuracy_table(acc) -> list[str]:
    """The validation accuracy the verdicts rest on: cross-validated residual spread by quantity and region."""
    L = ["| quantity | region of the curve | held-out rows | median abs error | 80% of predictions / measured |",
         "|---|---|---|---|---|"]
    names = {"rate": "throughput and per-user speed (1/TPOT)", "ttft": "TTFT",
             "rate-ratio": "ratio of two systems at one setup", "rate-delta": "ratio of two points of one sweep",
             "speed": "per-user speed alone (1/TPOT; curve-end: concurrency <= 4)"}
    for row in acc.itertuples():
        L.append(f"| {names.get(row.quantity, row.quantity)} | {row.region} | {row.rows} | {row.median_abs_pct:.0f}% | "
                 f"{math.exp(row.ln_q10):.2f}x - {math.exp(row.ln_q90):.2f}x |")
    return L


def _claimed(r) -> str:
    if r["kind"] == "delta":
        return f"{r['claimed'] * 100:+.0f}%"
    if r.get("claimed_range"):
        return f"{r['claimed_range'][0]:g}-{r['claimed_range'][1]:g}"
    q = {"up_to": "up to ", "at_most": "at most ", "at_least": "at least "}.get(r["qualifier"], "")
    return q + _fmt(r["claimed"])


def render(results, claims_df, attr, figs, fr_md, at_md, assumptions, acc=None, sentences: Sentences | None = None
           ) -> str:
    from ..claims.describe import format_check
    sentences = sentences if sentences is not None else Sentences()
    byid = {r["id"]: r for r in results}
    n = {k: sum(r["verdict"] == k for r in results) for k in (*CATEGORIES, SPEC_INCONSISTENT)}
    L = []
    L.append("# Rubin vs Blackwell claims, checked against the roofline model\n")
    L.append("Generated by `perfmodel report` from the built-in catalog (hardware/, models/, profiles/, workloads/, "
             "claims/). Every number below is in a CSV under `reports/claims/`: the verdict table in `claims.csv` "
             "(full detail in `claims.json`), each figure in the CSV of the same name. Re-run the command to "
             "regenerate everything.\n")
    L.append(f"**{len(results)} claims**: {n['consistent']} consistent, {n['consistent only if']} consistent only "
             f"if a named condition holds, {n['implausible']} implausible under this model, "
             f"{n['not decidable by this model']} not decidable by this model, {n['not checkable']} not checkable; "
             f"of the spec ratios, {n[SPEC_INCONSISTENT]} {SPEC_INCONSISTENT}.\n")
    if acc is not None:
        L.append("## How far the model can be trusted (cross-validated)\n")
        L.append("Each measured record predicted by profiles fitted without its configuration "
                 "(`reports/crossval.md`); the spread below widens every claim's interval. Regions by the record's "
                 "concurrency: high-interactivity <= 16, middle 17-256, saturation > 256; a region with fewer than 20 "
                 "rows is not used (the `all` row stands in). Data: `claims/accuracy.csv` (from "
                 "`data/model-error/crossval-spread.csv`, `python -m perfmodel.claims.error_table "
                 "reports/crossval.csv`).\n")
        L += accuracy_table(acc)
        L.append("")
    L.append("## How to read the numbers\n")
    L.append("- Ratios are A/B with A the first system named (Vera Rubin NVL72 in every seed claim).")
    L.append("- *Throughput* `total_tps_per_gpu` counts input tokens including the cached prefix plus output tokens, "
             "per GPU of the whole deployment (InferenceX `tput_per_gpu`); `output_tps_per_gpu` counts generated "
             "tokens only; `_per_mw` divides by all-in power per GPU, `_per_usd` by the estimated GPU-hour price.")
    for k, t in AXIS_TEXT.items():
        L.append(f"- *{k} axis*: {t}.")
    L.append("- *Curve end*: the highest per-user speed any enumerated deployment reaches (its maximum "
             "interactivity). A point beyond a curve's end cannot be served by that system at all in the model.")
    L.append("- *Interval*: the model's central figure widened by four sources, combined as a root-sum-square of "
             "their half-widths in ln space: the software-profile ranges (every parameter at its slow end and at its "
             "fast end, both systems at the same end), the catalog's spec ranges (estimate/announced values and "
             "variants, propagated through each operating point's resource shares), the model's own cross-validated "
             "error at that region of the curve (table above) and the reading (below). A figure read at a speed "
             "carries the model's error as a reading: its points moved along the curve by the error's 10th and 90th "
             "percentiles (both systems alike by the `speed` rows; the second relative to the first by the pair "
             "spread of two systems at one setup), so that near a curve end the uncertainty is in the speed, not "
             "only in the throughput. *Distance*: claim / model, and the ln distance in half-widths of the interval "
             "on the claim's side. *Hardware only*: the second system's software (profile, KV tier, kernel speed-ups) "
             "on both systems; *as measured*: each system's own software, with the kernel speed-ups the seed itself "
             "reports. *Software needed*: the kernel speed-up (decode and prefill together, in the profile's own "
             "`decode_speedup` / `prefill_speedup` terms) that would give the claimed multiple.")
    L.append("- *Reading*: a peak is each system's highest figure among its usable points (at or above the "
             "benchmark's slowest SLO tier and within its TTFT limit, where the claim states them); \"up to\" is the "
             "maximum over the speeds the source tested (else the speeds both systems reach) on a grid fine enough "
             "that neighbouring points differ by less than 5%; a claim with no stated speed is read over the speeds "
             "both reach, its central value the model's median there and the range a contributor of the interval. "
             "Near a curve end the figure is also read with each system's per-user speeds shifted by the model's "
             "cross-validated speed error (the `speed` rows of the table above, `curve-end` for batch-1-like "
             "points). A setting at which a system cannot reach the point makes that side of the interval unbounded.")
    L.append(f"- Verdicts: *consistent* when the claim lies within {CONSISTENT_Z:g} half-widths of the central figure "
             f"on an interval at most {WIDE:g}x wide; *consistent only if* <condition> when it lies within the "
             "interval but further out (the largest contributors on its side named), or outside it with one named "
             "condition (the unstated axis or model, faster kernels up to 2x) under which it lies inside the interval "
             "recomputed with that condition; a condition found by trying alternatives says how many were tried; "
             f"*not decidable by this model* when the interval spans more than {WIDE:g}x (its two largest contributors "
             "named) or a system's curve ends near the point (where the model places that end, and its range); "
             "*implausible* outside the interval with no condition bringing it inside, with what would have to be "
             "true; *not checkable* when the model cannot see what sets the figure (a TTFT with no load stated, and "
             "an E2E-axis comparison resting on such a TTFT). A spec ratio is *consistent* when rounding a published "
             f"pair's ratio to the claim's precision gives the claim, else *{SPEC_INCONSISTENT}* (nearest pair named). "
             "Nothing is tuned toward a claim.\n")
    L.append("## Verdicts\n")
    L.append("| claim | metric, operating point | claimed | model (interval) | claim/model, z | verdict |")
    L.append("|---|---|---|---|---|---|")
    for r in results:
        what = f"{r.get('metric', '')}, {r.get('at', '')}" if r["kind"] != "spec_ratio" else f"spec {r['metric']}"
        if r.get("read_on"):
            what += f"; read on {r['read_on']}"
        L.append(f"| `{r['id']}` | {what} | {_claimed(r)} | {_model_cell(r)} | {_distance_cell(r)} | {_v(r)} |")
    def outside(r):
        z = (r.get("distance") or {}).get("z")
        return r["verdict"] == "implausible" or (z is not None and not math.isnan(z) and z > 1)
    out_rows = [r for r in results if outside(r) and r.get("needs")]
    if out_rows:
        L.append("\n### What would have to be true (claims outside the interval)\n")
        for r in out_rows:
            L.append(f"- `{r['id']}`: " + "; ".join(n["text"] for n in r["needs"][:2]) + ".")
    L.append("")
    cross = {tuple(x["claims"]): x for r in results for x in (r.get("cross_claims") or [])}
    if cross:
        L.append("## Cross-claim arithmetic (per GPU = per MW x power ratio; per dollar = per GPU / price ratio)\n")
        L.append("Pairs of claims on the same systems, model, workload and point; each end of a claimed range "
                 "widened by 5% for rounding. Data: `claims/cross_claims.csv`.\n")
        for x in cross.values():
            note = (f" (both claims leave {' and '.join(x['unstated_shared'])} unstated: paired as stated)"
                    if x["unstated_shared"] else "")
            L.append(f"- {x['text']}{note}.")
        L.append("")
    bases: dict[str, list[str]] = {}
    for r in results:
        if r.get("basis"):
            bases.setdefault(r["basis"]["text"], []).append(r["id"])
    if bases:
        L.append("## Power and price basis of the per-MW and per-dollar claims\n")
        for text, ids in bases.items():
            L.append(f"- {', '.join(f'`{i}`' for i in ids)}: {text}.")
        L.append("")
    # headline: the 58x / 2.7x pair
    h, p = byid.get("vllm-58x-at-387"), byid.get("vllm-2.7x-at-peak")
    if h and p and h.get("systems"):
        a, b = h["systems"]
        L.append("## The headline: 58x at 387 tok/s/user, 2.7x at peak (DeepSeek-V4.1-Flash, AgentX)\n")
        for r in (p, h):
            L.append(f"### `{r['id']}`: claimed {_claimed(r)}x; **{_v(r)}**\n")
            L += three_way(r, claims_df)
            L.append("")
        L.append(f"Each system in `{h['id']}`, one operating point per line (figures from that claim's row of "
                 "`claims/claims.csv`):\n")
        for tag, s_ in (("a", a), ("b", b)):
            L += point_lines(h, s_, tag)
        ar = {x["expression"]: x for x in h.get("arithmetic") or []}
        seed = [(k, x) for k, x in ar.items() if "share of its peak" in (x.get("meaning") or "")]
        if len(seed) == 2 and a.get("share_of_peak") is not None and b.get("share_of_peak") is not None:
            (ka, xa), (kb, xb) = seed
            L.append("- " + " ".join([
                sentences.share(a["hardware"], a["share_of_peak"], f"claims.csv:{h['id']}:a_share_of_peak",
                                xa["computed"], f"claims.json:{h['id']}:arithmetic:{ka}"),
                sentences.share(b["hardware"], b["share_of_peak"], f"claims.csv:{h['id']}:b_share_of_peak",
                                xb["computed"], f"claims.json:{h['id']}:arithmetic:{kb}"),
                sentences.ends(a["hardware"], a["max_tps_per_user"], f"claims.csv:{h['id']}:a_max_tps_per_user",
                               b["hardware"], b["max_tps_per_user"], f"claims.csv:{h['id']}:b_max_tps_per_user")]))
        sens = h.get("sensitivity") or {}
        if sens:
            L.append("- Sensitivity to the operating point: " + ", ".join(
                f"{_fmt(v['ratio'])}x at {_fmt(v['tps_per_user'])}" for v in sens.values()) + " tok/s/user.")
        L.append("")
    L.append("## Frontiers on the agentic workload (AgentX)\n")
    L.append("GB200, GB300 and Vera Rubin NVL72 with the same `vllm` profile, nvfp4 weights; left: ITL axis, right: "
             "E2E axis; dotted lines mark where each curve ends. Data: `claims/frontiers.csv`.\n")
    L += fr_md
    L.append("\n## Ratio against interactivity\n")
    L.append("Vera Rubin NVL72 over GB300 and over GB200 (same `vllm` profile), read on both envelopes at the same "
             "per-user speed, up to the end of the shorter curve. Data: `claims/ratios.csv`.\n")
    L.append("![ratios](claims/ratios.png)\n")
    L.append("## Where the gain comes from (Shapley attribution)\n")
    L.append("From GB300 NVL72 (vllm) to Vera Rubin NVL72 (vllm with the seed's ~25% kernel speed-up, read as "
             "decode and prefill kernels x1.25, and the KV host tier on). Each bar multiplies the running "
             "product; hardware groups in blue, software parts in orange. Data: `claims/attribution.csv`.\n")
    for at in attr["at"].unique():
        sub = attr[attr["at"] == at]
        L.append(f"- at {at}: total x{sub['total_ratio'].iloc[0]:.3g}; "
                 + ", ".join(f"{r.name} x{r.factor:.3g}" for r in sub.itertuples() if abs(r.factor - 1) > 5e-3))
    L.append("")
    L += at_md
    L.append("\n## What if GB300 had Rubin's memory bandwidth?\n")
    L.append("GB300 NVL72 with its HBM bandwidth set to Vera Rubin's catalog value, everything else unchanged. "
             "Data: `claims/whatif-gb300-rubin-bandwidth.csv`.\n")
    L.append("![what-if](claims/whatif-gb300-rubin-bandwidth.png)\n")
    L.append("## Each claim in detail\n")
    for r in results:
        L.append(f"### `{r['id']}`\n")
        L.append(f"> {r['quote'].strip()}\n")
        L.append(f"Source: {r['source']}\n")
        if r["kind"] == "ratio" and r.get("hardware_only"):
            L += three_way(r, claims_df)
            L.append("")
        L.append("```\n" + format_check(r) + "\n```\n")
        if r.get("unstated"):
            L.append(f"Unstated in the source: {', '.join(r['unstated'])}"
                     + (f" (assumed values: {', '.join(r['assumed_fields'])})" if r.get("assumed_fields") else "")
                     + ".\n")
    L.append("## Assumptions\n")
    L += [f"- {a}" for a in assumptions]
    L.append("- Software profiles where a claim does not name one: per claim above (`assumption:` lines); AA-AgentPerf "
             "runs ('TensorRT-LLM or vLLM behind NVIDIA Dynamo') use `dynamo-trtllm`.")
    L.append("")
    return "\n".join(L)


# ------------------------------------------------------------------ the compact report (issue 32)
CELL = 200          # characters of a verdict cell at most


def verdict_cell(r: dict) -> str:
    """The verdict and its condition (or flag) in at most CELL characters; the detail is in claims.json."""
    s = r["verdict"]
    if r.get("condition"):
        s += ": " + r["condition"]
    elif r.get("flag"):
        s += f" ({r['flag']})"
    s = s.replace("|", "/")
    return s if len(s) <= CELL else s[:CELL - 3].rstrip() + "..."


def _num(v, unit="") -> str:
    from ..claims.fmt import fmt
    return "n/a" if v is None else f"{fmt(v)}{unit}"


def _plan_lines(rs: list[dict]) -> list[str]:
    """What to plan on: per ratio claim, the hardware-only multiple, with the vendor's software, the headroom."""
    L = ["| claim | hardware only | with each system's own software | software headroom (fast corner) |",
         "|---|---|---|---|"]
    n = 0
    for r in rs:
        if r["kind"] != "ratio" or not r.get("hardware_only"):
            continue
        h = (r.get("headroom") or {}).get("fast_corner")
        L.append(f"| `{r['id']}` | {_num(r['hardware_only'].get('ratio'), 'x')} | "
                 f"{_num((r.get('as_measured') or {}).get('ratio'), 'x')} | {_num(h, 'x')} |")
        n += 1
    return L if n else []


def render_compact(results, figs, acc=None, shared=None, cross=None) -> str:
    """claims.md: counts, a first screen per source article, one line per claim, a short section per claim."""
    from ..claims.shared import source_key
    from ..claims.shared import text as shared_text
    shared = shared or {}
    cats = (*CATEGORIES, SPEC_INCONSISTENT)
    n = {k: sum(r["verdict"] == k for r in results) for k in cats}
    L = ["# Rubin vs Blackwell claims, checked against the roofline model\n",
         "Generated by `perfmodel report`. Per claim detail: `claims/claims.json` and `claims/claims.csv`.\n",
         f"**{len(results)} claims**: " + ", ".join(f"{n[k]} {k}" for k in cats if n[k]) + ".\n",
         "**How a verdict is reached.** The model's figure carries one error term: the cross-validated error of "
         "the claim's own kind (ratio of two systems, change along one curve, a throughput, a per-user speed, a "
         "TTFT), from held-out agentic records for agentic claims, applied vertically. *Consistent*: the claim "
         "lies within that interval on its own side. Outside it, each single unknown that would bring it inside is "
         "solved (a power or price ratio, one system's decode steps faster or slower than modeled, for an 'up to' "
         "the fastest speed tested): *consistent only if* it names the first physically allowed one with its "
         "value and evidence; *implausible* only when none is (faster than speed of light, or a system that could "
         "no longer reach a speed the source says it was measured at). An unstated model whose candidates "
         "disagree is *not checkable (under-specified)*. The profile's fast corner is reported as software "
         "headroom, never in the interval.\n"]
    by_src: dict[str, list[dict]] = {}
    for r in results:
        by_src.setdefault(source_key(r.get("source")), []).append(r)
    for src, rs in by_src.items():
        L.append(f"## {src}\n")
        L.append(f"{len(rs)} claims: " + ", ".join(f"{sum(r['verdict'] == k for r in rs)} {k}" for k in cats
                                                    if any(r["verdict"] == k for r in rs)) + ".\n")
        pl = _plan_lines(rs)
        if pl:
            L.append("What to plan on:\n")
            L += pl + [""]
        if shared.get(src):
            L.append("Shared conditions, solved once for this source:\n")
            L += [shared_text(g) for g in shared[src]] + [""]
        L.append("| claim | claimed | model (interval) | verdict |")
        L.append("|---|---|---|---|")
        for r in rs:
            L.append(f"| `{r['id']}` | {_claimed(r)} | {_model_cell(r)} | {verdict_cell(r)} |")
        L.append("")
    if acc is not None:
        L.append("## The error term (held-out residuals, ln(pred/meas) 10th-90th percentile)\n")
        L.append("| records | quantity | region | rows | 80% of predictions / measured |")
        L.append("|---|---|---|---|---|")
        a = acc if "workload" in acc.columns else acc.assign(workload="all")
        for _, x in a.iterrows():
            L.append(f"| {x['workload']} | {x['quantity']} | {x['region']} | {int(x['rows'])} | "
                     f"{math.exp(x['ln_q10']):.2f}x - {math.exp(x['ln_q90']):.2f}x |")
        L.append("")
    L.append("## Per claim\n")
    for r in results:
        L.append(f"### `{r['id']}`\n")
        if r["kind"] != "spec_ratio":
            L.append(f"- Read: {r.get('metric', '')}, {r.get('at', '')}; {r.get('read_on', '')}.")
        L.append(f"- Verdict: **{r['verdict']}**" + (f" {r['condition']}" if r.get("condition") else "") + ".")
        for c in (r.get("conditions") or [])[1:3]:
            L.append(f"- Also: {c.get('text', '')}.")
        L.append("")
    if figs:
        L.append("## Figures\n")
        L += [f"![{Path(f).stem}](claims/{Path(f).name})" for f in figs] + [""]
    return "\n".join(L)
