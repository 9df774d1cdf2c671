"""Shared unknowns solved once per source (rule 4 of issue 32).

Claims of one source article often turn on one unknown: the A/B measured power ratio behind every per-MW
ratio, where one system's curve ends on one model, how much faster a vendor's build is than the calibrated
profile. ``conditions.py`` solves, per claim, the range of that unknown that puts the claim inside the model's
error interval; here the claims of one source that share an unknown (same ``key``) are put together: each claim's
range, the values every claim allows at once (the intersection, or none), the catalog's value and the evidence.
The source's own arithmetic across claims (``pairs.py``: e.g. 12-18x per GPU over 5.7x per MW implies a power
ratio of 2.1-3.2x) is set beside the solved value.
"""

from __future__ import annotations

import math
import re

from .conditions import evidence, range_text


def source_key(source: str | None) -> str:
    """The seed article a claim's ``source`` names (e.g. 'aa-agentperf-rubin'), else the source text itself."""
    m = re.search(r"seeds/([\w.\-]+)\.txt", source or "")
    return m.group(1) if m else (source or "unstated source")


def _range(c: dict) -> tuple[float, float] | None:
    if c.get("range_needed"):
        lo, hi = c["range_needed"]
        return (lo, hi)
    if c["kind"] == "steps" and c.get("edge") is not None:
        a, b = c["edge"], c.get("needed") or c["edge"]
        return (min(a, b), max(a, b))
    return None


def _named(r: dict, c: dict) -> bool:
    """Whether a claim's condition enters the shared unknowns: an allowed condition only where the verdict names
    it (an alternative the verdict ranks below those it names, e.g. a faster-Rubin software condition beside the
    slower GB300 the source's own claim states, would make a shared value of a reading the verdict does not give);
    a condition not allowed always (a claim's ``shared_terms`` always enter)."""
    if not c.get("allowed") or not c.get("short"):
        return True
    return c["short"] in (r.get("condition") or "")


def solve(results: list[dict]) -> dict[str, list[dict]]:
    """Per source: one entry per shared unknown met by two or more claims (the conditions of claims outside
    their interval): claims [(id, low, high)] whose needed value is physically allowed (the others under
    ``not_alone``), the intersection ``solved`` of the allowed ones (None when no one value serves them all), the catalog value where there is one, the evidence, and the source's own cross-claim arithmetic."""
    groups: dict[tuple[str, str], dict] = {}
    for r in results:
        src = source_key(r.get("source"))
        seen = set()
        terms = r.get("shared_terms") or []
        for c in [*terms, *(c for c in r.get("conditions") or [] if _named(r, c))]:
            if c.get("key") in seen:
                continue
            seen.add(c.get("key"))
            rg = _range(c)
            if rg is None or any(math.isnan(v) for v in rg):
                continue
            evid = (((c.get("records") or {}).get("text") or evidence(c["system"])) if c["kind"] == "steps"
                    else c.get("evidence"))
            g = groups.setdefault((src, c["key"]), {"key": c["key"], "kind": c["kind"], "claims": [],
                                                    "catalog": c.get("catalog"), "evidence": evid,
                                                    "catalog_range": c.get("catalog_range"), "not_alone": [],
                                                    "basis": []})
            (g["claims"] if c.get("allowed") else g["not_alone"]).append((r["id"], rg[0], rg[1]))
            if c.get("claimed") and c.get("model") and c.get("catalog"):
                g["basis"].append((r["id"], c["claimed"], c["model"] * c["catalog"], c.get("error") or [0, 0]))
    out: dict[str, list[dict]] = {}
    for (src, _), g in groups.items():
        if len(g["claims"]) < 2:
            continue
        lo = max(c[1] for c in g["claims"])
        hi = min(c[2] for c in g["claims"])
        if g["kind"] in ("all-in power", "price") and g.get("catalog_range"):
            lo, hi = max(lo, g["catalog_range"][0]), min(hi, g["catalog_range"][1])     # one basis: its range
        g["solved"] = [lo, hi] if lo <= hi else None
        g["gap"] = None if lo <= hi else [hi, lo]       # the claims' needs miss one another between these
        at = g["solved"] or g["gap"]       # the value all claims allow, else the closest the claims come
        if at and g["basis"]:               # the cross-claim arithmetic at that value: per GPU = per MW x R
            g["at_solved"] = []
            for i, c, m, (dn, up) in g["basis"]:
                need = [c * at[0], c * at[1] if math.isfinite(at[1]) else math.inf]
                # inside the model's error at that value: the needed per-GPU range meets [m e^-down, m e^up]
                inside = need[1] >= m * math.exp(-dn) and need[0] <= m * math.exp(up)
                g["at_solved"].append({"id": i, "per_gpu_needed": need, "model_per_gpu": m, "inside": inside})
        g["arithmetic"] = sorted({x["text"] for r in results if source_key(r.get("source")) == src
                                  for x in (r.get("cross_claims") or [])
                                  if g["kind"] in ("all-in power", "price") and g["kind"].split()[-1] in x["text"]})
        out.setdefault(src, []).append(g)
    return out


def text(g: dict) -> str:
    """One line: the unknown, what each claim needs, the value all allow, the catalog's value and the evidence."""
    unit = "x" if g["kind"] != "steps" else "x the modeled step"
    per = ", ".join(f"`{i}` {range_text(lo, hi)}" for i, lo, hi in g["claims"])
    if g.get("not_alone"):
        per += "; outside the physically allowed range, so not by this unknown alone: " + ", ".join(
            f"`{i}` {range_text(lo, hi)}" for i, lo, hi in g["not_alone"])
    solved = (f"one value serves all: **{range_text(*g['solved'])}{unit}**" if g["solved"] else
              f"**no one value serves every claim** (their needs miss one another between {g['gap'][0]:.2g} and "
              f"{g['gap'][1]:.2g})")
    cat = (f"; catalog {g['catalog']:.2f}x" if g.get("catalog") else
           "; catalog: the calibrated profile (1x)" if g["kind"] == "steps" else "")
    ar = f"; the source's own arithmetic: {' / '.join(g['arithmetic'])}" if g.get("arithmetic") else ""
    at = ""
    if g.get("at_solved"):
        at = f"; at {range_text(*(g['solved'] or g['gap']))}x each claim is, per GPU: " + ", ".join(
            f"`{x['id']}` {range_text(*x['per_gpu_needed'])}x (model {x['model_per_gpu']:.2g}x: "
            f"{'inside' if x['inside'] else 'outside'} its error)"
            for x in g["at_solved"])
    return f"- {g['key']}: {solved} (claims need {per}){cat}; evidence: {g['evidence']}{ar}{at}"
