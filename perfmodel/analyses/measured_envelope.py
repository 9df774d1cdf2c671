"""The measured envelope: the largest deployments any shipped record ran, and how far a model point lies beyond.

A frontier picks deployments over everything that fits in memory; the records (``data/shared/*.csv`` and
``data/measured/*.csv``, read with ``specs.records.read_records``) say what engines have actually run. Per
record (ratio and prefill-only rows left out) six quantities are derived, each blank where the record does not
state what it needs:

    decode GPUs        D = decode_gpus (disaggregated; else decode_workers x tp, the smallest split the record's
                       worker count and TP allow), else gpus (aggregated, decode-only)
    batch_per_gpu      = batch_per_gpu where published, else concurrency / D   (sequences per decode GPU; on agentic
                         rows concurrency counts live sessions, so this bounds the running batch from above)
    sessions_per_gpu   = concurrency / gpus, agentic rows only (live sessions per GPU, both pools counted, as
                         AgentX and AA-AgentPerf divide)
    ep                 = ep   (expert-parallel width of one (decode) instance)
    context_per_gpu    = concurrency x isl / D   (tokens of context held per decode GPU; isl blank: the
                         workload's, for agentic workloads the mean context of a turn)
    kv_demand_gb_per_gpu = context_per_gpu x k / 1e9, k the model's growing KV bytes per token at the record's KV
                         format (arch/kv.kv_bytes_per_token; default fp8): the same context weighs 54 kB a token on
                         GLM-5.2 and 15 kB on Qwen3.5's hybrid attention. Windows, recurrent state and TP
                         replication are left out, on records and model points alike (a yardstick, not a memory fit)
    span_gpus          = decode_gpus / decode_workers where both are stated, else max(tp, ep)   (GPUs of one
                         (decode) instance)

``envelope`` takes the maximum of each quantity per key, with the ids of every record at that maximum: per
hardware and engine family, and per hardware family (vendor and scale-up domain size, e.g. GB200, GB300 and
VR200 NVL72 are one family) and engine family. The engine family is the record's ``engine`` (or the profile's)
without a ``dynamo-`` prefix: Dynamo orchestrates the same engine's workers. A model point's quantities
(``point_quantities``) are read from its serving-layer columns the same way: batch / gpus, sessions_per_gpu,
ep, sessions (agentic; else concurrency, else batch) x isl / gpus, gpus. ``extrapolation`` gives the ratio
model / measured maximum and a verdict per quantity, and the ``joint`` ratio to the nearest single run over
batch, EP, KV demand and span together (a point may lie inside each maximum, set by different runs, and
outside every run). How a plan's interval widens with these ratios is measured on held-out rows in
``analyses/envelope_error.py``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

QUANTITIES: dict[str, tuple[str, str]] = {
    "batch_per_gpu": ("sequences/GPU", "decode batch per decode GPU (records: batch_per_gpu, else concurrency / "
                                       "decode GPUs)"),
    "sessions_per_gpu": ("sessions/GPU", "live agentic sessions per GPU, both pools (records: concurrency / gpus)"),
    "ep": ("ranks", "expert-parallel width of one (decode) instance"),
    "context_per_gpu": ("tokens/GPU", "context held per decode GPU: sessions (or clients) x mean context / "
                                      "decode GPUs"),
    "kv_demand_gb_per_gpu": ("GB/GPU", "KV the held context needs per decode GPU: context_per_gpu x the model's "
                                       "KV bytes per token at its KV format"),
    "span_gpus": ("GPUs", "GPUs of one (decode) instance"),
}
"""The envelope's quantities: name -> (unit, meaning)."""

LEVELS = ("hardware", "hardware_family")
INSIDE_TOL = 1e-9


def engine_family(engine: str | None) -> str | None:
    """'dynamo-sglang' -> 'sglang'; None or 'none' (the roofline profile) -> None (every engine)."""
    if engine is None or (isinstance(engine, float) and math.isnan(engine)) or engine in ("", "none"):
        return None
    return str(engine).removeprefix("dynamo-")


@functools.cache
def hardware_family(hardware: str) -> str:
    """'<vendor>-scaleup<N>' from the catalog (vendor, scaleup_domain_gpus); the id itself when not in it."""
    from .. import catalog
    from ..errors import SpecError
    try:
        h = catalog.hardware(hardware)
        return f"{h.vendor}-scaleup{h.specs.scaleup_domain_gpus.value:g}"
    except (SpecError, AttributeError, FileNotFoundError):
        return hardware


@functools.cache
def kv_bytes_per_token(model: str, kv_cache: str | None) -> float:
    """The model's growing KV bytes per context token at ``kv_cache`` (default fp8), B; NaN when the model or the
    format is not in the catalog."""
    from .. import catalog
    from ..arch.kv import kv_bytes_per_token as per_token
    from ..errors import SpecError
    try:
        return float(per_token(catalog.model(model), kv_cache or "fp8"))
    except (SpecError, FileNotFoundError, KeyError, ValueError):
        return math.nan


@functools.cache
def _workload_context(workload: str) -> tuple[float, bool]:
    """(input tokens per request, agentic): for agentic workloads the mean context of a turn; (nan, False) when
    the workload is not in the catalog."""
    from ..errors import SpecError
    from .evaluation import workload_info
    try:
        wi = workload_info(workload)
    except (SpecError, FileNotFoundError, KeyError):
        return math.nan, False
    return float(wi.lengths["isl"]), bool(wi.agentic)


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    return pd.to_numeric(df[col], errors="coerce").to_numpy(float) if col in df else np.full(len(df), np.nan)


def record_frame(records: Iterable) -> pd.DataFrame:
    """One row per record (``specs.records.Record``) with the envelope quantities (module docstring);
    ratio and prefill-only rows are left out. Columns: id, hardware, hardware_family, engine, engine_family,
    agentic, decode_gpus_used, and one column per QUANTITIES entry (NaN where the record does not state it)."""
    raw = pd.DataFrame([r.model_dump() for r in records])
    if raw.empty:
        return pd.DataFrame(columns=["id", "hardware", "hardware_family", "engine", "engine_family", "agentic",
                                     "decode_gpus_used", *QUANTITIES])
    raw = raw[(raw["kind"] != "ratio") & (raw["serving"].astype(str) != "prefill_only")].reset_index(drop=True)
    ctx = np.array([_workload_context(w) if isinstance(w, str) and w else (math.nan, False)
                    for w in raw["workload"]], dtype=object).reshape(-1, 2)
    agentic = ctx[:, 1].astype(bool)
    isl = np.where(np.isfinite(_num(raw, "isl")), _num(raw, "isl"), ctx[:, 0].astype(float))
    disagg = raw["serving"].astype(str).to_numpy() == "disaggregated"
    gpus, dec, workers = _num(raw, "gpus"), _num(raw, "decode_gpus"), _num(raw, "decode_workers")
    tp, ep, conc = _num(raw, "tp"), _num(raw, "ep"), _num(raw, "concurrency")
    dec_used = np.where(disagg, np.where(np.isfinite(dec), dec, workers * tp), gpus)
    batch = np.where(np.isfinite(_num(raw, "batch_per_gpu")), _num(raw, "batch_per_gpu"), conc / dec_used)
    span = np.where(np.isfinite(dec) & np.isfinite(workers), dec / workers, np.fmax(tp, ep))
    out = pd.DataFrame({
        "id": raw["id"], "hardware": raw["hardware"],
        "hardware_family": [hardware_family(h) for h in raw["hardware"]],
        "engine": raw["engine"], "engine_family": [engine_family(e) for e in raw["engine"]],
        "agentic": agentic, "decode_gpus_used": dec_used,
        "batch_per_gpu": batch,
        "sessions_per_gpu": np.where(agentic, conc / gpus, np.nan),
        "ep": ep,
        "context_per_gpu": conc * isl / dec_used,
        "kv_demand_gb_per_gpu": conc * isl / dec_used * np.array(
            [kv_bytes_per_token(m, k if isinstance(k, str) else None) for m, k in zip(raw["model"], raw["kv_cache"])],
            float) / 1e9,
        "span_gpus": span,
    })
    for q in QUANTITIES:
        v = out[q].to_numpy(float)
        out[q] = np.where(np.isfinite(v) & (v > 0), v, np.nan)
    return out


def shipped_records() -> list:
    """Every shipped measured record: data/shared/*.csv (the calibration's files) and data/measured/*.csv."""
    from ..specs.records import project_measured_files, read_records, shared_data_files
    return [r for f in [*shared_data_files(), *project_measured_files()] for r in read_records(f)]


@functools.cache
def shipped_frame() -> pd.DataFrame:
    """record_frame of the shipped records (read once per process)."""
    return record_frame(shipped_records())


@dataclass(frozen=True)
class Extent:
    """The measured maximum of one quantity over a set of records: value (the quantity's unit), the ids of the
    records at that maximum, and how many records state the quantity at all."""

    value: float
    record_ids: tuple[str, ...]
    records: int

    def ids_text(self, most: int = 3) -> str:
        ids = list(self.record_ids)
        return ", ".join(ids[:most]) + (f" +{len(ids) - most} more" if len(ids) > most else "")


def extent(frame: pd.DataFrame, quantity: str) -> Extent | None:
    """The maximum of ``quantity`` over ``frame``'s rows with the ids that reach it (within 1e-9 relative);
    None when no row states it."""
    v = frame[quantity].to_numpy(float)
    ok = np.isfinite(v)
    if not ok.any():
        return None
    top = float(v[ok].max())
    at = ok & (v >= top * (1 - 1e-9))
    return Extent(top, tuple(frame["id"].to_numpy()[at]), int(ok.sum()))


def envelope(hardware: str, engine: str | None, frame: pd.DataFrame | None = None) -> dict[str, dict[str, Extent | None]]:
    """{level: {quantity: Extent or None}} for ``hardware`` (a catalog id) and an engine family (a record's engine
    or a profile's; None: every engine), at the levels 'hardware' (that hardware's records) and
    'hardware_family' (every hardware of its family)."""
    return {level: {q: extent(sub, q) for q in QUANTITIES} for level, sub in _levels(hardware, engine, frame).items()}


def _levels(hardware: str, engine: str | None, frame: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """{level: the records of that level}: the hardware's, and its family's, of the engine family (None: all)."""
    frame = shipped_frame() if frame is None else frame
    fam = engine_family(engine)
    same_engine = np.ones(len(frame), bool) if fam is None else (frame["engine_family"] == fam).to_numpy()
    return {"hardware": frame[same_engine & (frame["hardware"] == hardware).to_numpy()],
            "hardware_family": frame[same_engine & (frame["hardware_family"] == hardware_family(hardware)).to_numpy()]}


JOINT = ("batch_per_gpu", "ep", "kv_demand_gb_per_gpu", "span_gpus")
"""The quantities one measured run must reach together for a point to lie inside the joint envelope."""


def joint(model: Mapping[str, float], records: pd.DataFrame) -> tuple[float, str, str]:
    """The nearest measured run to a point over JOINT together: (ratio, record id, binding quantity) with

        ratio = min over records of max over q of model_q / record_q

    (quantities the point does not have are skipped; a record's blank EP reads as 1, no expert parallelism
    stated; any other blank as not reached). ratio <= 1: one run reached every quantity at once; each single
    quantity's ratio is at most this one. (nan, '', '') without records."""
    qs = [q for q in JOINT if math.isfinite(model.get(q, math.nan))]
    if records.empty or not qs:
        return math.nan, "", ""
    vals = {q: records[q].to_numpy(float) for q in qs}
    if "ep" in vals:
        vals["ep"] = np.where(np.isnan(vals["ep"]), 1.0, vals["ep"])
    ratios = np.column_stack([np.where(np.isfinite(vals[q]), model[q] / vals[q], np.inf) for q in qs])
    worst = ratios.max(axis=1)
    i = int(np.argmin(worst))
    return float(worst[i]), str(records["id"].to_numpy()[i]), qs[int(np.argmax(ratios[i]))]


def _val(row: Mapping, key: str) -> float:
    v = row.get(key)
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return x


def point_quantities(row: Mapping) -> dict[str, float]:
    """A model point's envelope quantities from its serving-layer columns (docs/output-columns.md): batch / gpus,
    sessions_per_gpu (agentic), ep, context = held x isl / gpus with held = sessions (agentic) else concurrency
    (else batch), context x the model's KV bytes per token (its ``model`` and ``kv_cache`` columns) / 1e9, gpus;
    per (decode) instance, so per decode GPU on disaggregated points."""
    gpus, batch = _val(row, "gpus"), _val(row, "batch")
    sessions, conc = _val(row, "sessions"), _val(row, "concurrency")
    held = sessions if math.isfinite(sessions) else (conc if math.isfinite(conc) and conc > 0 else batch)
    context = held * _val(row, "isl") / gpus
    kv = kv_bytes_per_token(str(row.get("model")), row.get("kv_cache") if isinstance(row.get("kv_cache"), str)
                            else None)
    return {"batch_per_gpu": batch / gpus, "sessions_per_gpu": _val(row, "sessions_per_gpu"), "ep": _val(row, "ep"),
            "context_per_gpu": context, "kv_demand_gb_per_gpu": context * kv / 1e9, "span_gpus": gpus}


def verdict(ratio: float) -> str:
    """'inside' (ratio <= 1), 'outside by Nx', or 'nothing measured' (NaN ratio)."""
    if not math.isfinite(ratio):
        return "nothing measured"
    if ratio <= 1 + INSIDE_TOL:
        return "inside"
    return f"outside by {ratio:.4g}x"


def extrapolation(row: Mapping, hardware: str | None = None, engine: str | None = None,
                  frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per quantity: the point's value (``model``), and per level (hardware; hardware family) the measured maximum
    (``<level>_max``), the ids that set it (``<level>_ids``), ``<level>_ratio`` = model / maximum and
    ``<level>_verdict``; a last row ``joint``: the ratio to the nearest run over JOINT together (``joint``), its
    id and the quantity that binds in ``<level>_ids``. ``hardware`` defaults to the row's, ``engine`` to its
    profile's engine family."""
    hardware = hardware or str(row.get("hardware"))
    if engine is None and row.get("profile"):
        from .. import catalog
        engine = catalog.profile(str(row["profile"])).engine
    levels = _levels(hardware, engine, frame)
    env = {level: {q: extent(sub, q) for q in QUANTITIES} for level, sub in levels.items()}
    model = point_quantities(row)
    rows = []
    for q, (unit, _) in QUANTITIES.items():
        r: dict = {"quantity": q, "unit": unit, "model": model[q]}
        for level in LEVELS:
            e = env[level][q]
            r[f"{level}_max"] = e.value if e else math.nan
            r[f"{level}_ids"] = e.ids_text() if e else ""
            ratio = model[q] / e.value if e and math.isfinite(model[q]) else math.nan
            r[f"{level}_ratio"] = ratio
            r[f"{level}_verdict"] = verdict(ratio) if math.isfinite(model[q]) else "not applicable"
        rows.append(r)
    r = {"quantity": "joint", "unit": "", "model": math.nan}
    for level in LEVELS:
        ratio, rid, binds = joint(model, levels[level])
        r.update({f"{level}_max": math.nan, f"{level}_ids": f"nearest {rid} ({binds})" if rid else "",
                  f"{level}_ratio": ratio, f"{level}_verdict": verdict(ratio)})
    rows.append(r)
    out = pd.DataFrame(rows)
    out.attrs.update(hardware=hardware, hardware_family=hardware_family(hardware),
                     engine_family=engine_family(engine) or "every engine")
    return out
