"""Racks as bought: a plan's units packed into whole scale-up domains (NVL racks, or 8-GPU nodes).

A deployment unit of u GPUs (an instance, or a disaggregated split: its prefill and decode pools) whose GPUs all fit
one domain of D GPUs sits inside one domain: its tensor / expert parallel collectives and, for a split, the KV
transfer between its pools ran over the scale-up links (serving/disaggregated.transfer_bandwidth: inside one
domain while the split's GPUs <= D). So a domain holds k = floor(D / u) units and n units need

    domains = ceil(n / k)                                              (u <= D)

not ceil(n u / D): GLM-5 on GB200 at 73 units of 64 GPUs is 73 racks, not 65. A split larger than a domain sends
its KV over the NICs; each of its instances (decode instances of g GPUs, prefill instances of p GPUs) still sits
whole inside one domain, packed first-fit decreasing (the larger instances first, the smaller ones into the space
they leave, then new domains):

    a >= b the two instance sizes, N_a, N_b their counts over all units, m_a = floor(D / a)
    d_a = ceil(N_a / m_a);  free slots for b: (d_a - 1) floor((D - m_a a) / b) + floor((D - r_a a) / b),
    r_a = N_a - (d_a - 1) m_a the last domain's a-instances;  domains = d_a + ceil(max(0, N_b - slots) / floor(D / b))

The GPUs bought are domains x D; power and price follow them (the idle GPUs of a part-filled rack are paid for and
provisioned). A demand over time buys racks and keeps them: the racks to add in a period are
max(0, domains_t - max over earlier periods of domains_s).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SpecError


def domains_for(units: float, unit_gpus: float, domain: float, instances: tuple[tuple[float, float], ...] = ()
                ) -> tuple[int, str]:
    """(whole domains, the packing rule in words) for ``units`` units of ``unit_gpus`` GPUs in domains of
    ``domain`` GPUs; ``instances``: the (GPUs per instance, instances per unit) of a split's pools, used when a
    unit is larger than a domain (module docstring)."""
    if not (units >= 0 and unit_gpus > 0 and domain > 0):
        raise SpecError(f"cannot pack {units!r} units of {unit_gpus!r} GPUs into domains of {domain!r}",
                        field="scaleup_domain_gpus")
    if units == 0:
        return 0, "no units"
    if unit_gpus <= domain:
        k = math.floor(domain / unit_gpus + 1e-9)
        return math.ceil(units / k - 1e-9), f"{k} unit(s) of {unit_gpus:g} GPUs per {domain:g}-GPU domain"
    sizes = sorted(((float(g), float(n) * units) for g, n in instances if n and n > 0 and g > 0), reverse=True)
    if not sizes or sizes[0][0] > domain:
        raise SpecError(f"a unit of {unit_gpus:g} GPUs has an instance larger than a {domain:g}-GPU domain",
                        field="scaleup_domain_gpus")
    (a, n_a), (b, n_b) = sizes[0], (sizes[1] if len(sizes) > 1 else (sizes[0][0], 0.0))
    m_a = math.floor(domain / a + 1e-9)
    d_a = math.ceil(n_a / m_a - 1e-9)
    r_a = n_a - (d_a - 1) * m_a
    slots = (d_a - 1) * math.floor((domain - m_a * a) / b + 1e-9) + math.floor((domain - r_a * a) / b + 1e-9)
    d_b = math.ceil(max(0.0, n_b - slots) / math.floor(domain / b + 1e-9) - 1e-9)
    return d_a + d_b, (f"split of {unit_gpus:g} GPUs over domains: instances of {a:g} and {b:g} GPUs packed "
                       f"whole, first-fit decreasing")


def units_in_domains(domains: np.ndarray, unit_gpus: np.ndarray, domain: float,
                     domains_per_unit: np.ndarray | None = None) -> np.ndarray:
    """Units that fit in ``domains`` whole domains (a limit to fill): floor(domains / 1) floor(D / u) where a unit
    fits a domain; floor(domains / d1) where it does not (d1 = ``domains_per_unit``, the domains one unit packs
    into alone: a lower bound, as units are not packed jointly here)."""
    d = np.floor(np.asarray(domains, float) + 1e-9)
    u = np.asarray(unit_gpus, float)
    per = np.floor(domain / u + 1e-9)
    d1 = np.ones_like(u) if domains_per_unit is None else np.asarray(domains_per_unit, float)
    return np.where(u <= domain, d * per, np.floor(d / np.maximum(d1, 1.0) + 1e-9))


def racks_to_add(domains: list[int]) -> list[int]:
    """Per period, the domains to buy: max(0, domains_t - the most held before), racks never handed back."""
    held, out = 0, []
    for d in domains:
        out.append(max(0, int(d) - held))
        held = max(held, int(d))
    return out
