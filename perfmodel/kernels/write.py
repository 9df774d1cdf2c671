"""``perfmodel kernels --write``: store the fitted curves in the catalog (the only path that changes it).

- hardware/<gpu>.yaml ``kernel_fits``: family -> engine -> variant -> curve fitted on that GPU's table;
- profiles/<engine>.yaml ``kernel_fits``: the engine's curves, each parameter the median over the table GPUs;
- hardware/vr200-nvl72.yaml (no tables): GB300's curves carried over by physics (``derive_physics``).
The block is replaced as a whole at the end of each file; every other line is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import yaml

from .. import catalog
from ..fileio import write_whole
from ..specs.kernel_fits import KernelFits
from .fitting import Fit
from .loader import HARDWARE_ID, LICENSE_NOTICE, SOURCE_COMMIT, SOURCE_REPO

COMMAND = "perfmodel kernels --write"
DATA_URL = f"{SOURCE_REPO}/tree/{SOURCE_COMMIT}/aic-core/src/aiconfigurator_core/systems/data"
PROFILE_ENGINES = ("sglang", "trtllm", "vllm")
PHYSICS_TARGETS = {"vr200-nvl72": "gb300"}
"""Hardware without kernel tables -> the table GPU its curves are derived from (same SM design generation)."""
LATENCY_PARAMS = {"lat1_us", "lat2_us"}
"""Collective latencies: scaled by the ratio of scale-up latencies for a GPU without tables."""


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def source_of(f: Fit) -> str:
    return f"{DATA_URL} ; table {f.gpu}/{f.engine}/{f.table} (Apache-2.0, converted copy in ../shared/data/kernels)"


def _curve(f: Fit) -> dict:
    err = f.median_abs_err_pct
    out: dict[str, object] = {"params": {k: _sig(v) for k, v in f.params.items()}, "status": "fitted",
                               "source": source_of(f)}
    if np.isfinite(err):
        out["held_out_median_abs_err_pct"] = round(float(err), 2)
    return out


def hardware_block(fits: list[Fit]) -> dict:
    fams: dict = {}
    for f in fits:
        fams.setdefault(f.family, {}).setdefault(f.engine, {})[f.variant] = _curve(f)
    return {"notice": LICENSE_NOTICE, "command": COMMAND, "families": fams}


def profile_block(fits: list[Fit], engine: str) -> dict | None:
    """The engine's curves over all table GPUs: per (family, variant) the median of each parameter."""
    by: dict = {}
    for f in fits:
        if f.engine == engine:
            by.setdefault((f.family, f.variant), []).append(f)
    if not by:
        return None
    fams: dict = {}
    for (fam, var), fs in sorted(by.items()):
        params = {k: _sig(float(np.median([x.params[k] for x in fs]))) for k in fs[0].params}
        gpus = sorted({x.gpu for x in fs})
        fams.setdefault(fam, {}).setdefault(engine, {})[var] = {
            "params": params, "status": "fitted",
            "source": f"{DATA_URL} ; tables {', '.join(f'{g}/{engine}/{fs[0].table}' for g in gpus)} (Apache-2.0)",
            "note": f"median over {len(gpus)} GPUs of the per-GPU fits (hardware/*.yaml kernel_fits)"}
    return {"notice": LICENSE_NOTICE, "command": COMMAND, "families": fams}


def derive_physics(block: dict, hw_id: str, base_gpu: str) -> dict:
    """Curves for hardware without tables from ``base_gpu``'s: the efficiencies, shape constants and launch
    latencies carry over (same kernels on the same SM design; the catalog has no clock field to scale them by),
    peaks, bandwidths and SM count enter through the curves from the hardware's own catalog values, and the
    collective latencies scale by the ratio of scale-up latencies, with the catalog's low/high range."""
    hw, base = catalog.hardware(hw_id), catalog.hardware(HARDWARE_ID[base_gpu])
    lat, base_lat = hw.specs.scaleup_latency_us, base.value("scaleup_latency_us")
    lo, hi = lat.bounds()
    fams: dict = {}
    for fam, engines in block["families"].items():
        for eng, curves in engines.items():
            for var, c in curves.items():
                params = dict(c["params"])
                low, high = {}, {}
                for k in LATENCY_PARAMS & params.keys():
                    v = params[k]
                    params[k], low[k], high[k] = (_sig(v * lat.value / base_lat), _sig(v * lo / base_lat),
                                                  _sig(v * hi / base_lat))
                entry = {"params": params, "status": "physics",
                         "source": f"{c['source']} ; {lat.source}",
                         "note": (f"no kernel table for {hw_id}: {base_gpu}'s fitted curve; its own peaks, HBM and "
                                  f"scale-up bandwidth and {int(hw.value('sm_count'))} SMs enter through the "
                                  f"curve; collective latencies x scale-up latency {lat.value:g}/{base_lat:g} us "
                                  f"(range {lo:g}-{hi:g} us); efficiencies and launch latencies as {base_gpu} "
                                  f"(no clock figure in the catalog)")}
                if low:
                    entry["low"], entry["high"] = low, high
                fams.setdefault(fam, {}).setdefault(eng, {})[var] = entry
    return {"notice": LICENSE_NOTICE, "command": COMMAND, "families": fams}


def render(block: dict) -> str:
    """The ``kernel_fits:`` YAML block, one flow-style line per curve."""
    KernelFits.model_validate(block)   # never write an invalid block
    lines = ["kernel_fits:", f"  notice: {yaml.safe_dump(block['notice'], width=1 << 30).strip()}",
             f"  command: {block['command']}"]
    if block.get("launch"):
        lines.append("  launch:")
        for key, entry in block["launch"].items():
            lines.append(f"    {key}: {yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, width=1 << 30).strip()}")
    lines.append("  families:")
    for fam in block["families"]:
        lines.append(f"    {fam}:")
        for eng, curves in block["families"][fam].items():
            lines.append(f"      {eng}:")
            for var, c in curves.items():
                flow = yaml.safe_dump(c, default_flow_style=True, sort_keys=False, width=1 << 30).strip()
                lines.append(f"        {yaml.safe_dump(var, width=1 << 30).strip().removesuffix('...').strip()}: {flow}")
    return "\n".join(lines) + "\n"


def replace_block(text: str, block_text: str) -> str:
    """``text`` with its top-level ``kernel_fits:`` block (if any) removed and ``block_text`` appended."""
    text = re.sub(r"(?ms)^kernel_fits:.*?(?=^\S|\Z)", "", text)
    return text.rstrip("\n") + "\n" + block_text


CATALOG_ROOT: Path | None = None
"""Where the files are written: None = the files the catalog resolves (the built-in catalog); a directory =
``<dir>/<kind>/<file name>`` (read from there if present, else from the catalog's file)."""


def _write(kind: str, ident: str, block: dict) -> Path:
    src = catalog.resolve_path(kind, ident)
    path = src if CATALOG_ROOT is None else Path(CATALOG_ROOT) / kind / src.name
    if path.is_file():
        src = path
    new = replace_block(src.read_text(), render(block))
    catalog.validate(kind, yaml.safe_load(new), str(path))
    write_whole(path, new)
    return path


def rubin_source(hw_id: str) -> str:
    """The hardware file's own SM-count source: where a derived launch estimate points for that hardware's specs."""
    return catalog.hardware(hw_id).specs.sm_count.source


def launch_of(data_dir) -> dict[str, dict]:
    """Hardware id -> ``launch`` block (kernels/launch.py); {} without a data directory."""
    from .launch import launch_blocks
    from .loader import default_data_dir
    return launch_blocks(str(data_dir or default_data_dir()), PHYSICS_TARGETS, rubin_source)


def write_launch(data_dir=None) -> list[Path]:
    """Store only the ``launch`` blocks (``perfmodel kernels --launch --write``): each hardware file's kernel_fits
    block is rewritten with its curves as they are and the launch costs computed from the tables."""
    written = []
    for hw_id, launch in launch_of(data_dir).items():
        src = catalog.resolve_path("hardware", hw_id)
        block = yaml.safe_load(src.read_text()).get("kernel_fits")
        if block is None:
            continue
        written.append(_write("hardware", hw_id, {**block, "launch": launch}))
    return written


def write_catalog(fits: list[Fit], data_dir=None) -> list[Path]:
    """Write every block; returns the files written."""
    written = []
    per_gpu: dict = {}
    for f in fits:
        per_gpu.setdefault(f.gpu, []).append(f)
    blocks = {}
    launch = launch_of(data_dir)
    for gpu, fs in per_gpu.items():
        blocks[gpu] = hardware_block(fs)
        if HARDWARE_ID[gpu] in launch:
            blocks[gpu]["launch"] = launch[HARDWARE_ID[gpu]]
        written.append(_write("hardware", HARDWARE_ID[gpu], blocks[gpu]))
    for engine in PROFILE_ENGINES:
        b = profile_block(fits, engine)
        if b is not None:
            written.append(_write("profiles", engine, b))
    for hw_id, base in PHYSICS_TARGETS.items():
        if base in blocks:
            derived = derive_physics(blocks[base], hw_id, base)
            if hw_id in launch:
                derived["launch"] = launch[hw_id]
            written.append(_write("hardware", hw_id, derived))
    return written
