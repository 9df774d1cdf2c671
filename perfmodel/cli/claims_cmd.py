"""`perfmodel check CLAIM` and `perfmodel report`: thin formatting over perfmodel.claims and perfmodel.report."""

from __future__ import annotations

import json
import math


def _num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "unbounded"
    a = abs(x)
    return f"{x / 1e6:.3g}M" if a >= 1e6 else f"{x:,.0f}" if a >= 1e3 else f"{x:.3g}"


def format_check(r: dict) -> str:
    from ..report.sentences import pct
    v = r["verdict"] + (f" {r['condition']}" if r.get("condition") else "")
    lines = [f"{r['id']}: {r['title']}", f"  verdict: {v}", f"  why: {r['reason']}"]
    if r.get("metric_text"):
        lines.append(f"  metric: {r['metric']} ({r['metric_text']}); at {r.get('at')}")
    m = r.get("model") or {}
    if m.get("value") is not None or m.get("band"):
        lo, hi = (m.get("band") or [None, None])
        lines.append(f"  model: {_num(m.get('value'))} (band {_num(lo)} - {_num(hi)} under the profile ranges); "
                     f"claimed {r['claimed']:g}")
    iv, d = r.get("interval"), r.get("distance") or {}
    if iv and iv.get("value") is not None:
        b = iv["by_source"]
        lines.append(f"  interval: {_num(iv['low'])} - {_num(iv['high'])} around {_num(iv['value'])} (ln down/up: "
                     + ", ".join(f"{k} {v['down']:.2f}/{v['up']:.2f}" for k, v in b.items())
                     + f"); claim = {_num(d.get('multiple'))}x the central figure, "
                     f"{_num(d.get('z'))} half-widths from it")
        for p in iv.get("spec") or []:
            lines.append(f"    spec range: {p['hardware']} {p['field']} {p['low']:g}-{p['high']:g} (value "
                         f"{p['value']:g}, {p['status']}), elasticity {p['elasticity']:+.2f}: {p['range']}")
        for p in iv.get("model_error") or []:
            lines.append(f"    model error: {p['hardware']} {p['quantity']} in region {p['region']}: "
                         f"x{math.exp(p['down']):.2f} down / x{math.exp(p['up']):.2f} up ({p['rows']} held-out rows)")
    for n in r.get("needs") or []:
        lines.append(f"  would have to be true: {n['text']}")
    for s in r.get("systems") or []:
        extra = f", {_num(s.get('value'))} there" if s.get("value") is not None else ""
        if s.get("share_of_peak") is not None:
            extra += f" ({pct(s['share_of_peak'])} of its peak {_num(s.get('peak'))})"
        lines.append(f"  {s['name']}: curve ends at {_num(s['max_tps_per_user'])} tok/s/user"
                     f"{' (the point lies BEYOND it)' if s.get('beyond_end') else ''}{extra}"
                     f"{' [profile assumed]' if s.get('profile_assumed') else ''}")
        if "+kvtier" in (s.get("name") or ""):
            lines.append(f"    +kvtier: the KV host tier is on because the claim places KV in host memory "
                         f"(kv_placement: hbm+host), whatever profile {s.get('profile')} has by default")
    if r.get("weights"):
        lines.append(f"  setup: weights {r['weights']} (claims are checked in the format the vendors state them in; "
                     "other commands default to fp8 or the model's native format where narrower)")
    sens = r.get("sensitivity")
    if sens:
        key = "ratio" if "ratio" in next(iter(sens.values())) else "value"
        lines.append("  sensitivity: " + ", ".join(f"{_num(v[key])} at {_num(v['tps_per_user'])} tok/s/user"
                                                   for v in sens.values()))
    hw = r.get("hardware_only")
    if hw:
        lines.append(f"  hardware only ({hw['profile']} on both): {_num(hw['ratio'])}x; the claim needs "
                     f"{_num(hw.get('software_factor_needed'))}x more from software: "
                     f"{(hw.get('software_change') or {}).get('text', 'n/a')}")
    for a in r.get("implied") or []:
        lines.append(f"  implied: {a['meaning']}: {_num(a['implied'])} (model {_num(a['model'])})")
    for a in r.get("arithmetic") or []:
        lines.append(f"  arithmetic: {a['expression']} = {_num(a['computed'])} (stated {_num(a['stated'])}, "
                     f"{'ok' if a['ok'] else 'MISMATCH'}): {a['meaning']}")
    for p in (r.get("spec") or {}).get("pairs", []):
        lines.append(f"  spec: {p['a']} {p['a_value']:g} / {p['b']} {p['b_value']:g} = {p['ratio']:.3g}x "
                     f"({p['a_status']}/{p['b_status']}){' matches' if p['matches'] else ''}")
    for m_, pr in (r.get("per_model") or {}).items():
        lines.append(f"  if model {m_}: {pr['verdict']}{' ' + pr['condition'] if pr.get('condition') else ''}: "
                     f"{pr['reason']}")
    for a in r.get("assumptions") or []:
        lines.append(f"  assumption: {a}")
    return "\n".join(lines)


def _check(args) -> int:
    from ..claims import check
    from ..claims.check import json_safe
    r = check(args.claim)
    print(json.dumps(json_safe(r), indent=2, allow_nan=False) if args.json else format_check(r))
    return 0


def _report(args) -> int:
    from ..fileio import check_output_dir
    from ..report import build_report
    check_output_dir(args.out, "--out")
    res = build_report(args.out)
    print(f"wrote {res['markdown']} ({res['claims']} claims, {res['figures']} figures, {res['csvs']} CSV files) "
          f"in {res['seconds']:.1f} s")
    return 0


def register(sub) -> None:
    from ..defaults import RULE
    p = sub.add_parser("check", help="check a published claim: verdict, band, curve ends, sensitivity, attribution",
                       epilog=RULE)
    p.add_argument("claim", help="claim catalog id or YAML path (see claims/)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_check)
    r = sub.add_parser("report", help="check every seed claim and write the report, plots and CSVs into reports/")
    r.add_argument("--out", default="reports", help="output directory (default reports/)")
    r.set_defaults(func=_report)
