"""`perfmodel frontier --explain-at X`: one frontier point term by term, and where it lies against the measured
envelope (analyses/explain_point.py, analyses/measured_envelope.py); text and JSON forms."""

from __future__ import annotations

import math

import pandas as pd

from ..numfmt import fmt_number


def explain(front: pd.DataFrame, at: float) -> dict:
    """{'at', 'row', 'terms', 'envelope', 'widening'} for the frontier point read at ``at`` tok/s/user."""
    from ..analyses.envelope_error import distance_ratio, widening
    from ..analyses.explain_point import point_at, terms
    from ..analyses.measured_envelope import extrapolation
    row = point_at(front, at)
    ext = extrapolation(row)
    dist = {lvl: distance_ratio(ext[f"{lvl}_ratio"]) for lvl in ("hardware", "hardware_family")}
    return {"at": at, "row": row, "terms": terms(row), "envelope": ext, "distance": dist,
            "widening": {lvl: dict(zip(("low", "high", "read_at"), widening(r))) for lvl, r in dist.items()}}


def _cell(v) -> str:
    return fmt_number(v, 4, na="-")


def _table(df: pd.DataFrame, cols: list[str], left: set[str]) -> list[str]:
    body = [[_cell(v) for v in r] for r in df[cols].itertuples(index=False)]
    widths = [max(len(c), *(len(r[i]) for r in body)) for i, c in enumerate(cols)]
    fit = lambda v, w, c: v.ljust(w) if c in left else v.rjust(w)  # noqa: E731
    return ["    " + "  ".join(fit(v, w, c) for v, w, c in zip(r, widths, cols)).rstrip()
            for r in [cols, *body]]


def text(e: dict) -> str:
    """The explain block as printed under a system's frontier."""
    at, row, ext = e["at"], e["row"], e["envelope"]
    lines = [f"  at {at:g} tok/s/user: the frontier point at {row['tps_per_user']:.1f} tok/s/user (the first at or "
             "above it), term by term (values read from the serving layer's columns, named in 'from'):"]
    lines += _table(e["terms"], ["group", "term", "value", "unit", "from"], {"group", "term", "value", "unit", "from"})
    hw, fam, eng = ext.attrs["hardware"], ext.attrs["hardware_family"], ext.attrs["engine_family"]
    lines.append(f"  measured envelope ({eng} records; data/shared, data/measured): model / the largest measured, "
                 f"on {hw} and on its family {fam}; ids = the records at the maximum")
    show = ext.rename(columns={"model": "model", "hardware_max": f"max {hw}", "hardware_ratio": "ratio",
                               "hardware_verdict": "verdict", "hardware_ids": "ids",
                               "hardware_family_max": f"max {fam}", "hardware_family_ratio": "ratio ",
                               "hardware_family_verdict": "verdict ", "hardware_family_ids": "ids "})
    cols = ["quantity", "unit", "model", f"max {hw}", "ratio", "verdict", "ids", f"max {fam}", "ratio ", "verdict ",
            "ids "]
    lines += _table(show, cols, {"quantity", "unit", "verdict", "ids", "verdict ", "ids "})
    w, dist = e["widening"], e["distance"]
    fam_w, hw_w = w["hardware_family"], w["hardware"]
    lines.append(f"  distance beyond the measured envelope: {dist['hardware_family']:.4g}x on the family, "
                 f"{dist['hardware']:.4g}x on {hw} alone; plan band widening (analyses/envelope_error, the held-out "
                 f"error's growth with distance): low end / {fam_w['low']:.4g}, high end x {fam_w['high']:.4g} on "
                 f"the family (/ {hw_w['low']:.4g}, x {hw_w['high']:.4g} on {hw} alone)")
    return "\n".join(lines)


def _py(v):
    if hasattr(v, "item"):
        v = v.item()
    return None if isinstance(v, float) and not math.isfinite(v) else v


def to_json(e: dict) -> dict:
    """The explain block for --json: the terms, the envelope rows and the widening factors."""
    return {"at_tps_per_user": e["at"], "tps_per_user": _py(e["row"]["tps_per_user"]),
            "terms": [{k: _py(v) for k, v in r.items()} for r in e["terms"].to_dict("records")],
            "envelope": [{k: _py(v) for k, v in r.items()} for r in e["envelope"].to_dict("records")],
            "hardware_family": e["envelope"].attrs["hardware_family"],
            "engine_family": e["envelope"].attrs["engine_family"],
            "distance": e["distance"], "widening": e["widening"]}
