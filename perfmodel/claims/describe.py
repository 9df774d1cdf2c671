"""The text of one claim check (``perfmodel check CLAIM`` and the report's per-claim blocks).

Each line states the figures of one operating point only: a curve end with the figure at that end, the claim's
point with the figure there (never one point's speed next to another point's figure).
"""

from __future__ import annotations

import math


def _num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "unbounded"
    a = abs(x)
    return f"{x / 1e6:.3g}M" if a >= 1e6 else f"{x:,.0f}" if a >= 1e3 else f"{x:.3g}"


def format_check(r: dict) -> str:
    from .fmt import pct
    per = r.get("per_model") or {}
    if per:     # an unstated model: the verdict, then one line per candidate (never one long line)
        lines = [f"{r['id']}: {r['title']}", f"  verdict: {r['verdict']}",
                 f"  model: not stated by the claim; read on each catalog candidate in turn ({', '.join(per)}), "
                 "none of them the claim's own unless the source names it:"]
        lines += [f"    if model {m_}: {pr['verdict']}{' ' + pr['condition'] if pr.get('condition') else ''} "
                  f"(model {_num((pr.get('model') or {}).get('value'))}, interval "
                  f"{_num((pr.get('interval') or {}).get('low'))}-{_num((pr.get('interval') or {}).get('high'))})"
                  for m_, pr in per.items()]
        if r["verdict"] == "not checkable (under-specified)" and r.get("condition"):
            lines.append(f"  why: {r['condition']}")
    else:
        v = r["verdict"] + (f" {r['condition']}" if r.get("condition") else "")
        lines = [f"{r['id']}: {r['title']}", f"  verdict: {v}", f"  why: {r['reason']}"]
    if r.get("metric_text"):
        lines.append(f"  metric: {r['metric']} ({r['metric_text']}); at {r.get('at')}")
    m = r.get("model") or {}
    if m.get("value") is not None or m.get("band"):
        lo, hi = (m.get("band") or [None, None])
        lines.append(f"  model: {_num(m.get('value'))} (at the profile's slow / fast corners {_num(lo)} / {_num(hi)}: "
                     f"not part of the interval; the fast corner is the software headroom); claimed {r['claimed']:g}")
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
    if r.get("weights"):
        why = ("the format the claim quotes" if r.get("weights_stated") else
               "claims are checked in the format the vendors state them in; other commands default to fp8 or the "
               "model's native format where narrower")
        lines.append(f"  setup: weights {r['weights']} ({why})")
    for n in r.get("needs") or []:
        lines.append(f"  would have to be true: {n['text']}")
    for s in r.get("systems") or []:
        # one line per operating point: the curve end with its own figure; the claim's point with its own
        rng = (f" (range {_num(s['end_low'])}-{_num(s['end_high'])})" if s.get("end_low") is not None
               and s.get("end_high") is not None else "")
        endfig = f", {_num(s['end_figure'])} {r.get('metric')} there" if s.get("end_figure") is not None else ""
        lines.append(f"  {s['name']}: curve ends at {_num(s['max_tps_per_user'])} tok/s/user{rng}{endfig}"
                     f"{' [profile assumed]' if s.get('profile_assumed') else ''}")
        if "+kvtier" in (s.get("name") or ""):
            lines.append(f"    +kvtier: the KV host tier is on because the claim places KV in host memory "
                         f"(kv_placement: hbm+host), whatever profile {s.get('profile')} has by default")
        if s.get("beyond_end"):
            lines.append(f"  {s['name']}: cannot reach the claim's point (beyond its curve's end)")
        elif s.get("value") is not None and s.get("point_tps_per_user") is not None:
            share = (f" ({pct(s['share_of_peak'])} of its peak {_num(s.get('peak'))})"
                     if s.get("share_of_peak") is not None else "")
            ttft = f", TTFT {_num(s['point_ttft_s'])} s" if s.get("point_ttft_s") is not None else ""
            lines.append(f"  {s['name']}: at the claim's point, {_num(s['point_tps_per_user'])} tok/s/user: "
                         f"{_num(s['value'])} {r.get('metric')}{ttft}{share}")
    sens = r.get("sensitivity")
    if sens:
        key = "ratio" if "ratio" in next(iter(sens.values())) else "value"
        lines.append("  sensitivity: " + ", ".join(f"{_num(v[key])} at {_num(v['tps_per_user'])} tok/s/user"
                                                   for v in sens.values()))
    for a in r.get("alternatives") or []:
        lines.append(f"  condition tried: {a['assumption']}: {_num(a.get('value'))}, z {_num(a.get('z'))}, "
                     f"{'holds' if a.get('holds') else 'does not bring the claim inside the interval'}")
    for c in r.get("cross_claims") or []:
        lines.append(f"  cross-claim: {c['text']}")
    hw = r.get("hardware_only")
    if hw:
        sw = (hw.get("software_change") or {})
        am = r.get("as_measured") or {}
        lines.append(f"  hardware only ({hw['profile']} on both): {_num(hw['ratio'])}x; as measured "
                     f"({', '.join(am.get('profiles', []))}): {_num(am.get('ratio'))}x"
                     + (f"; the claim needs {_num(hw.get('software_factor_needed'))}x over hardware alone: "
                        f"{sw['text']}" if sw.get("speedup") is not None else ""))
    for a in r.get("implied") or []:
        lines.append(f"  implied: {a['meaning']}: {_num(a['implied'])} (model {_num(a['model'])})")
    for a in r.get("arithmetic") or []:
        lines.append(f"  arithmetic: {a['expression']} = {_num(a['computed'])} (stated {_num(a['stated'])}, "
                     f"{'ok' if a['ok'] else 'MISMATCH'}): {a['meaning']}")
    for p in (r.get("spec") or {}).get("pairs", []):
        lines.append(f"  spec: {p['a']} {p['a_value']:g} / {p['b']} {p['b_value']:g} = {p['ratio']:.3g}x "
                     f"({p['a_status']}/{p['b_status']}){' matches' if p['matches'] else ''}")
    for a in r.get("assumptions") or []:
        lines.append(f"  assumption: {a}")
    return "\n".join(lines)
