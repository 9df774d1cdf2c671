"""The power (per-MW) or price (per-dollar) basis of a claim: what the claim divides by and what the model does."""

from __future__ import annotations

from .. import catalog
from ..specs.claim import ClaimSpec
from ..specs.hardware import power_field
from .fields import metric

BASIS_TEXT = {"measured-allin": "measured all-in power draw", "provisioned-allin": "provisioned all-in (rack) power",
              "gpu-tdp": "GPU TDP", "rental": "rental price per GPU-hour", "capex": "purchase price (capex)",
              "tco": "total cost of ownership"}


def basis(claim: ClaimSpec, col: str) -> dict | None:
    """The power (per-MW) or price (per-dollar) basis: what the claim divides by and what the model divides by,
    each system's catalog value with its status, range and source."""
    if not (col.endswith("_per_mw") or col.endswith("_per_usd")):
        return None
    mw = col.endswith("_per_mw")
    m = metric(claim)
    stated = m.power_basis if mw else m.price_basis
    rows = []
    for hw in claim.system_ids:
        spec = catalog.hardware(hw)
        field = power_field({"allin_power_w": spec.specs.allin_power_w}) if mw else "price_usd_per_gpu_hour"
        sv = getattr(spec.specs, field)
        if sv is None:
            continue
        lo, hi = sv.bounds()
        rows.append({"hardware": hw, "field": field, "value": sv.value, "low": lo, "high": hi, "status": sv.status,
                     "source": sv.source})
    unit = " W" if mw else " USD/GPU-h"
    model_basis = "catalog all-in power per GPU (provisioned rack power / GPUs)" if mw else \
        "catalog price per GPU-hour (rental-equivalent estimate)"
    vals = "; ".join(f"{r['hardware']} {r['value']:,.4g}{unit} ({r['status']}"
                     + (f", range {r['low']:,.4g}-{r['high']:,.4g}" if r['high'] > r['low'] else "") + ")" for r in rows)
    claim_basis = BASIS_TEXT[stated] if stated else "an unstated basis"
    text = f"claim divides by {claim_basis}; the model by the {model_basis}: {vals}"
    if mw and claim.kind == "delta":
        text += ". The power divides both points of one curve, so it cancels in the change"
    elif mw and stated == "measured-allin":
        text += (". A measured draw below the provisioned figure changes a ratio only if the systems' draws are "
                 "different shares of their provisioned power")
    return {"claim": stated, "model": model_basis, "systems": rows, "text": text}
