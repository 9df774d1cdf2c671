"""What-if: scale or set hardware fields and profile parameters, and compare the new frontier with the baseline.

``whatif("gb200-nvl72", "deepseek-v3", scale={"hbm_bandwidth": 2.4})`` returns a ``Comparison`` whose A is the
changed system and B the baseline, so ``curve.ratio`` is new / baseline along the interactivity axis.
Names: full hardware fields (``hbm_bandwidth_tbps``), short names (``systems.HW_ALIASES``: ``hbm_bandwidth``,
``nvlink_bandwidth``, ``fp4_flops``, ``flops``, ...), profile parameters (``decode_speedup``,
``step_overhead_ms``, ...) and ``acceptance_rate``.
"""

from __future__ import annotations

from .compare import Comparison, compare_frontiers
from .frontier import frontier
from .systems import DEFAULT_PROFILE, System, as_system, resolve_changes


def describe_changes(scale: dict | None, set_: dict | None) -> str:
    parts = [f"{k} x{v:g}" for k, v in (scale or {}).items()] + [f"{k}={v:g}" for k, v in (set_ or {}).items()]
    return ", ".join(parts) or "no change"


def changed_system(system: System, scale: dict | None = None, set_: dict | None = None) -> System:
    new = resolve_changes(system, scale, set_)
    return new.with_changes(label=f"{system.name} [{describe_changes(scale, set_)}]")


def whatif(hardware, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *, scale: dict | None = None,
           set_: dict | None = None, points: int = 60, **frontier_kw) -> Comparison:
    """New frontier (A) against the baseline (B) and their ratio along the curve.

    ``scale``: name -> factor (dimensionless: ``{"hbm_bandwidth": 2.4}`` multiplies the TB/s by 2.4);
    ``set_``: name -> value in the field's spec unit (``hbm_capacity_gb`` GB, ``step_overhead_ms`` ms, ...);
    names as in the module docstring. ``frontier_kw`` go to ``frontier``. Returns a ``Comparison`` whose
    ``curve.ratio`` and ``summary.ratio`` are new / baseline (dimensionless)."""
    base = as_system(hardware, profile)
    new = changed_system(base, scale, set_)
    base = base.with_changes(label=f"{base.name} [baseline]")
    fb = frontier(base, model, workload, profile, **frontier_kw)
    fa = frontier(new, model, workload, profile, **frontier_kw)
    return compare_frontiers(fa, fb, points)
