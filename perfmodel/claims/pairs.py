"""Cross-claim arithmetic: two claims on the same systems, model, workload and point, one per GPU and one per MW
(or per dollar), imply the power (or price) ratio of the systems:

    per-GPU multiple = per-MW multiple x (P_A / P_B)        so  P_A / P_B = per-GPU / per-MW
    per-dollar multiple = per-GPU multiple / (price_A / price_B)  so  price_A / price_B = per-GPU / per-dollar

The implied ratio (a range where a claim gives one) is compared with the catalog's: its value A/B and its range
[A_low / B_high, A_high / B_low] from each system's stated low/high; a power ratio with its same-basis range
(``conditions.power_ratio_range``: GPU TDP over GPU TDP, provisioned all-in over provisioned all-in; a measured
draw on one side over a provisioned figure on the other is no ratio of powers). Verdicts: ``consistent`` when the catalog
value lies within the implied range (each end widened by ``ROUND`` for the claims' rounding), ``consistent only
if`` the systems' values lie toward the named ends of their ranges when only the catalog range reaches it,
``inconsistent with the published specs`` when no catalog value in range does (the implied ratio named).
"""

from __future__ import annotations

import itertools

from .. import catalog
from ..errors import SpecError
from ..specs.claim import ClaimSpec
from .fields import metric
from .verdict import SPEC_INCONSISTENT

ROUND = 0.05     # the claims' own figures are rounded: each end of an implied ratio widened by 5%

FIELDS = {frozenset(("gpu", "mw")): ("allin_power_w", "all-in power", "mw"),
          frozenset(("gpu", "dollar")): ("price_usd_per_gpu_hour", "price per GPU-hour", "dollar")}


def _range(c: ClaimSpec) -> tuple[float, float]:
    return c.claimed_range if c.claimed_range else (c.claimed, c.claimed)


def _same_point(a: ClaimSpec, b: ClaimSpec) -> bool:
    pa, pb = a.at, b.at
    return pa is not None and pb is not None and pa.point == pb.point and pa.tps_per_user == pb.tps_per_user


def pair_check(g: ClaimSpec, o: ClaimSpec) -> dict:
    """The ratio of the systems' power (o per MW) or price (o per dollar) that per-GPU claim g and claim o imply,
    against the catalog's."""
    o_per = metric(o).per
    if o_per is None:
        raise SpecError(f"claim {o.id!r}: a per-MW or per-dollar claim names its normaliser", field="metric.per")
    field, what, per = FIELDS[frozenset(("gpu", o_per))]
    (g_lo, g_hi), (o_lo, o_hi) = _range(g), _range(o)
    if per == "mw":      # P_A / P_B = per-GPU / per-MW
        imp = (g_lo / o_hi, g_hi / o_lo)
    else:                # price_A / price_B = per-GPU / per-dollar
        imp = (g_lo / o_hi, g_hi / o_lo)
    ha, hb = (catalog.hardware(h).specs for h in g.system_ids)
    sa, sb = getattr(ha, field), getattr(hb, field)
    (a_lo, a_hi), (b_lo, b_hi) = sa.bounds(), sb.bounds()
    cat, cat_lo, cat_hi = sa.value / sb.value, a_lo / b_hi, a_hi / b_lo
    basis = ""
    if per == "mw":      # one power basis: a measured draw on one side over a provisioned figure is no ratio
        from .conditions import power_ratio_range
        pr = power_ratio_range(*g.system_ids)
        cat_lo, cat_hi, basis = pr["low"], pr["high"], pr["text"]
    lo, hi = imp[0] / (1 + ROUND), imp[1] * (1 + ROUND)
    A, B = g.system_ids
    imp_t = f"{imp[0]:.2f}x" if abs(imp[1] / imp[0] - 1) < 1e-9 else f"{imp[0]:.2f}-{imp[1]:.2f}x"
    head = (f"{g.id} ({'-'.join(f'{v:g}' for v in sorted(set(_range(g))))}x per GPU) over {o.id} "
            f"({'-'.join(f'{v:g}' for v in sorted(set(_range(o))))}x per {per}) implies {A}/{B} {what} {imp_t}; "
            f"the catalog gives {sa.value:,.4g}/{sb.value:,.4g} = {cat:.2f}x ("
            + (basis if basis else f"range {cat_lo:.2f}-{cat_hi:.2f}x") + ")")
    if lo <= cat <= hi:
        verdict, cond = "consistent", None
    elif cat_hi >= lo and cat_lo <= hi:
        verdict = "consistent only if"
        ends: list[str | None] = []
        if basis:        # a power ratio: the same-basis range names no system's end, only the ratio
            ends = [f"inside the same-basis range ({max(lo, cat_lo):.2f}-{min(hi, cat_hi):.2f}x)"]
        elif cat < lo:
            ends = [f"{A} toward its high end ({a_hi:,.4g})" if a_hi > sa.value else None,
                    f"{B} toward its low end ({b_lo:,.4g})" if b_lo < sb.value else None]
        else:
            ends = [f"{A} toward its low end ({a_lo:,.4g})" if a_lo < sa.value else None,
                    f"{B} toward its high end ({b_hi:,.4g})" if b_hi > sb.value else None]
        cond = f"the {what} ratio is {imp_t}, i.e. " + " and ".join(e for e in ends if e)
    else:       # no value in the catalog's ranges gives it: the source's own two figures need a basis outside them
        verdict = SPEC_INCONSISTENT
        cond = (f"the {what} ratio they imply, {imp_t}, lies outside the catalog's "
                + ("same-basis " if basis else "") + f"range {cat_lo:.2f}-{cat_hi:.2f}x")
    return {"claims": [g.id, o.id], "systems": [A, B], "model": g.model, "workload": g.workload, "field": field,
            "implied": list(imp), "catalog": cat, "catalog_range": [cat_lo, cat_hi], "verdict": verdict,
            "condition": cond, "text": head + (f": {verdict}" + (f" {cond}" if cond else "")),
            "unstated_shared": [f for f in ("model", "workload") if getattr(g, f) is None]}


def cross_checks(claims: list[ClaimSpec]) -> list[dict]:
    """Every pair of ratio claims on the same systems (in order), model, workload and point, one per GPU and the
    other per MW or per dollar."""
    out = []
    ratio = [c for c in claims if c.kind == "ratio" and c.metric is not None]
    for g, o in itertools.permutations(ratio, 2):
        if metric(g).per != "gpu" or metric(o).per not in ("mw", "dollar"):
            continue
        if (g.system_ids, g.model, g.workload) != (o.system_ids, o.model, o.workload) or not _same_point(g, o):
            continue
        out.append(pair_check(g, o))
    return out
