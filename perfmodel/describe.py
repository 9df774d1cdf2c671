"""Derived figures for listings: model summaries and hardware ridge points / rack totals."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from . import catalog
from .arch import model_summary
from .serving.lengths import workload_lengths
from .specs.hardware import HARDWARE_FIELDS, HardwareSpec

if TYPE_CHECKING:
    import pandas as pd


def hardware_summary(hw: HardwareSpec, base: HardwareSpec | None = None) -> dict:
    """Per-GPU specs, ridge points (dense FLOP per HBM byte) per format, and totals per scale-up domain.
    ``base``: the spec with no variant applied (``hw`` may be a selected variant): the variants are listed
    relative to it, each selectable as ``<base id>@<variant>``."""
    base = base or hw
    v = {f: hw.value(f) for f in HARDWARE_FIELDS}
    s = hw.specs     # the required fields, typed as given
    bw = s.hbm_bandwidth_tbps.value * 1e12
    ridge = {fmt: (p * 1e15 / bw if (p := v.get(f"{fmt}_dense_pflops")) else None)
             for fmt in ("bf16", "fp8", "fp4")}
    n = int(s.scaleup_domain_gpus.value)
    rack = {"gpus": n, "hbm_tb": s.hbm_capacity_gb.value * n / 1e3, "hbm_bandwidth_pbps": s.hbm_bandwidth_tbps.value * n / 1e3,
            "fp4_dense_eflops": (v["fp4_dense_pflops"] or 0) * n / 1e3, "fp8_dense_eflops": s.fp8_dense_pflops.value * n / 1e3,
            "host_memory_tb": s.host_memory_gb.value * n / 1e3,
            "power_kw": (v["allin_power_w"] or s.gpu_tdp_w.value) * n / 1e3}
    present = [f for f in HARDWARE_FIELDS if getattr(hw.specs, f) is not None]
    return {"id": hw.id, "name": hw.name, "specs": {k: x for k, x in v.items() if x is not None},
            "status": {f: getattr(hw.specs, f).status for f in present},
            "sources": {f: _source_line(getattr(hw.specs, f)) for f in present},
            "ridge_flop_per_byte": ridge, "domain_totals": rack,
            **({"selected_variant": hw.id.split("@", 1)[1]} if "@" in hw.id else {}),
            "variants": {name: _variant_changes(base, name) for name in sorted(base.variants)}}


def _source_line(sv) -> str:
    """'status: source (note)' for one sourced value."""
    return f"{sv.status}: {sv.source}" + (f" ({sv.note})" if sv.note else "")


def _variant_changes(hw: HardwareSpec, name: str) -> dict:
    """What a variant changes: its description and, per field, 'base -> variant value [status]'."""
    var = hw.variants[name]
    changes = {}
    for f, sv in var.specs.items():
        base = getattr(hw.specs, f)
        changes[f] = f"{base.value:g} -> {sv.value:g} [{sv.status}]" if base is not None else f"{sv.value:g} [{sv.status}]"
    return {"description": var.description, "changes": changes, "select": f"{hw.id}@{name}"}


def profile_summary(prof, base) -> dict:
    """A profile's dump (range edges marked) with its variants as changes to the base profile ('base -> variant
    [low-high]'), each selectable as ``<base id>@<variant>``."""
    d = mark_range_edges(prof.model_dump(mode="json"))
    if prof is not base:
        d["selected_variant"] = prof.id.split("@", 1)[1]
    d["variants"] = {name: {"description": v.description, "status": v.status, "source": v.source,
                            **({"calibration": v.calibration} if v.calibration else {}),
                            "changes": {k: f"{getattr(base, k).value:g} -> {p.value:g} [{p.low:g}-{p.high:g}]"
                                        for k, p in v.params.items()},
                            "select": f"{base.id}@{name}"} for name, v in sorted(base.variants.items())}
    return d


def mark_range_edges(d: dict) -> dict:
    """A profile's dump with ``at_range_edge`` added to each fitted parameter whose value lies within EDGE_SHARE
    of an edge of the calibration's search range (validation/calibrate.py): the data pull past the plausible
    range, a sign of a missing mechanism, not an ordinary value. Fitted = named in the ``calibration`` note."""
    import re

    from .validation.calibrate import EDGE_SHARE, FIT_PARAMS, FORMAT_FIT, SPEC_FIT
    note = d.get("calibration") or ""
    m = re.search(r"fitted ([a-z0-9_, ]+) on ln", note)
    fitted = {w.strip() for w in m.group(1).split(",")} if m else set()
    for name, (lo, hi) in {**FIT_PARAMS, **FORMAT_FIT, **SPEC_FIT}.items():
        holder = d.get("spec_decoding") if name in SPEC_FIT else d
        entry = (holder or {}).get(name)
        if name not in fitted or not isinstance(entry, dict) or entry.get("value") is None:
            continue
        x = (entry["value"] - lo) / (hi - lo)
        if x <= EDGE_SHARE or x >= 1 - EDGE_SHARE:
            side = "lower" if x <= EDGE_SHARE else "upper"
            entry["at_range_edge"] = (f"{side} edge of the calibration search range [{lo:g}, {hi:g}]: the data pull "
                                      "past it (a missing mechanism, not a measured value)")
    return d


def table(kind: str) -> pd.DataFrame:
    """One row per catalog entry of ``kind`` with its key derived figures."""
    import pandas as pd
    rows = []
    for i in catalog.ids(kind):
        spec = catalog.load(kind, i)
        if kind == "hardware":
            s = hardware_summary(spec)
            sp = s["specs"]
            rows.append({"id": i, "hbm_gb": sp["hbm_capacity_gb"], "hbm_tbps": sp["hbm_bandwidth_tbps"],
                         "fp8_pflops": sp["fp8_dense_pflops"], "fp4_pflops": sp.get("fp4_dense_pflops"),
                         "scaleup_gbps": sp["scaleup_bandwidth_gbps"], "domain": int(sp["scaleup_domain_gpus"]),
                         "host_link_gbps": sp["host_link_bandwidth_gbps"], "ridge_fp8": round(s["ridge_flop_per_byte"]["fp8"]),
                         "variants": list(s["variants"])})
        elif kind == "models":
            s = model_summary(spec)
            rows.append({"id": i, "aliases": list(spec.aliases), "layers": s["layers"],
                         "total_params_b": round(s["total_params"] / 1e9, 1),
                         "active_params_b": round(s["active_params_per_token"] / 1e9, 1),
                         "kv_bytes_per_token_bf16": s["kv_bytes_per_token"]["bf16"],
                         "kv_bytes_per_token_fp8": s["kv_bytes_per_token"]["fp8"],
                         "confidence": spec.confidence})
        elif kind == "workloads":
            row = {"id": i, "kind": spec.kind, "name": spec.name}
            if spec.kind == "fixed":
                row.update(isl=spec.isl, osl=spec.osl, prefix_hit=spec.prefix_hit)
            else:   # the lengths the engine uses: means, with the turn structure's uncached input
                w = workload_lengths(spec)
                row.update(isl=round(w["isl"]), osl=round(w["osl"]), prefix_hit=round(1 - w["new"] / w["isl"], 4),
                           turns=spec.agentic.turns.mean_value if spec.agentic.turns else None,
                           tool_pause_s=spec.agentic.pause_s)
            rows.append(row)
        elif kind == "profiles":
            rows.append({"id": i, "engine": spec.engine, **{k: round(x, 3) for k, x in spec.values().items()}})
        else:
            rows.append({"id": i, **{k: getattr(spec, k, None) for k in ("kind", "title", "claimed")}})
    return pd.DataFrame(rows)


def show(name: str) -> tuple[str, dict]:
    """Find ``name`` in any catalog kind; return (kind, details)."""
    from .errors import SpecError
    kinds: tuple[str, ...] = ("hardware", "models", "workloads", "profiles", "claims")
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        kinds = (catalog.kind_of(catalog.resolve_path("id", name)),)   # a file: its kind, not a guess
    for kind in kinds:
        try:
            spec = catalog.load(kind, name)
        except SpecError as exc:
            if "unknown" in exc.problem and "unknown variant" not in exc.problem:
                continue
            raise
        if kind == "hardware":
            return kind, hardware_summary(spec, catalog.hardware_base(name))
        if kind == "models":
            s = model_summary(spec)
            s["aliases"] = spec.aliases
            s["sources"] = spec.sources
            return kind, s
        if kind == "profiles":
            return kind, profile_summary(spec, catalog.load(kind, name.split("@", 1)[0]) if "@" in name else spec)
        return kind, spec.model_dump(mode="json")
    import difflib
    every = [i for k in ("hardware", "models", "workloads", "profiles", "claims") for i in catalog.ids(k)]
    close = difflib.get_close_matches(name, every, n=3, cutoff=0.4)
    raise SpecError(f"unknown id {name!r}" + (f"; did you mean {', '.join(close)}?" if close else ""), field="id")
