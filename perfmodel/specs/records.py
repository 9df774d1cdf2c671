"""Read measured serving records (the format of data/shared/README.md).

Columns may come in any order; extra columns are ignored; blank cells mean "not published" (None).
A malformed row raises a one-line SpecError naming the file, the line number and the column.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from ..errors import SpecError, short
from ..fileio import read_text
from .common import Strict
from .deployment import Serving

KINDS = ("point", "frontier", "ratio")
SERVING = ("aggregated", "disaggregated", "prefill_only", "decode_only")
METRICS = ("output_tps_per_gpu", "total_tps_per_gpu", "input_tps_per_gpu", "tps_per_user", "tpot_ms", "ttft_ms",
           "total_tps_per_mw", "max_tps_per_user", "agents_per_gpu")
REQUIRED = ("id", "kind", "hardware", "model", "metric", "value")


class Record(Strict):
    """One measured number and the setup it was measured on. Units as in the column names."""

    id: str = Field(min_length=1)
    kind: Literal["point", "frontier", "ratio"]
    hardware: str = Field(min_length=1, description="hardware catalog id")
    hardware_b: str | None = Field(None, description="second system of a ratio row (A/B = hardware/hardware_b)")
    model: str = Field(min_length=1, description="model catalog id")
    workload: str | None = Field(None, description="workload catalog id; blank = fixed isl/osl")
    weights: str | None = Field(None, description="weight format of the heavy layers (default fp8)")
    kv_cache: str | None = Field(None, description="KV-cache format (default fp8)")
    engine: str | None = Field(None, description="engine family as published")
    serving: Serving | None = None
    gpus: int | None = Field(None, ge=1, le=100_000)
    prefill_gpus: int | None = Field(None, ge=1, le=100_000)
    decode_gpus: int | None = Field(None, ge=1, le=100_000)
    tp: int | None = Field(None, ge=1, le=1024)
    ep: int | None = Field(None, ge=1, le=100_000)
    dp_attention: bool | None = None
    spec_tokens: int | None = Field(None, ge=0, le=16)
    acceptance_length: float | None = Field(None, ge=1, le=17)
    isl: float | None = Field(None, gt=0, le=10_000_000)
    osl: float | None = Field(None, gt=0, le=10_000_000)
    prefix_hit: float | None = Field(None, ge=0, lt=1)
    concurrency: float | None = Field(None, gt=0)
    decode_workers: int | None = Field(None, ge=1, le=100_000, description="disaggregated: decode instances")
    prefill_workers: int | None = Field(None, ge=1, le=100_000, description="disaggregated: prefill instances")
    prefill_tp: int | None = Field(None, ge=1, le=1024)
    prefill_ep: int | None = Field(None, ge=1, le=100_000)
    prefill_dp_attention: bool | None = None
    batch_per_gpu: float | None = Field(None, gt=0)
    max_running_requests: int | None = Field(None, ge=1, le=1_000_000, description="optional: the engine's "
                                             "running-request cap per scheduler as configured (max_num_seqs, "
                                             "max_running_requests, max_batch_size); blank: the profile's default")
    at_tps_per_user: float | None = Field(None, gt=0)
    metric: Literal[METRICS]  # type: ignore[valid-type]
    value: float = Field(gt=0, description="measured number (ratio rows: the measured ratio)")
    date: str | None = None
    source: str | None = None
    notes: str | None = None
    line: int = Field(0, description="line of the CSV file the row starts on (1 = header)")
    family: str | None = Field(None, description="data family (source and kind) the calibration weights by: a "
                               "'family' column, else '<file stem>:<kind>' as read (e.g. inferencex-silicon:point)")

    @field_validator("weights", "kv_cache")
    @classmethod
    def _format(cls, v, info):
        """A format the engine knows (perfmodel/formats.py; other spellings of one read as it: WEIGHT_SPELLINGS,
        KV_SPELLINGS), else a one-line error naming the column."""
        from ..formats import KV_SPELLINGS, WEIGHT_SPELLINGS, kv_format_problem, weight_format_problem
        weights = info.field_name == "weights"
        if isinstance(v, str):
            v = (WEIGHT_SPELLINGS if weights else KV_SPELLINGS).get(v.lower(), v.lower())
        problem = None if v is None else (weight_format_problem(v) if weights else kv_format_problem(v))
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("hardware", "hardware_b", "model", "workload")
    @classmethod
    def _catalog_id(cls, v, info):
        """A catalog entry as results spell it (``B200``, ``GB300-NVL72``, ``MiniMaxAI/MiniMax-M3``) -> its id;
        anything else is kept as written (an unknown id is reported when the row is predicted)."""
        from .. import catalog
        kind = {"hardware": "hardware", "hardware_b": "hardware", "model": "models", "workload": "workloads"}
        return v if v is None else catalog.canonical_id(kind[info.field_name], v)

    @field_validator("dp_attention", "prefill_dp_attention", mode="before")
    @classmethod
    def _bool(cls, v):
        if isinstance(v, str):
            s = v.strip().lower()
            if s in ("true", "yes", "1"):
                return True
            if s in ("false", "no", "0"):
                return False
            raise ValueError("expected true or false")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.kind == "ratio" and not self.hardware_b:
            raise ValueError("a ratio row needs hardware_b")
        if self.workload is None and (self.isl is None or self.osl is None):
            raise ValueError("give isl and osl, or a workload id")
        return self


_FIELDS = set(Record.model_fields) - {"line"}


def read_records(path: str | Path) -> list[Record]:
    """Parse and validate every row of a record CSV. Errors: ``FILE: line N: column: problem``."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise SpecError("empty file: expected a header line and at least one record", file=str(path))
    fh = io.StringIO(text, newline="")
    out: list[Record] = []
    seen: dict[str, int] = {}
    try:
        with fh:
            reader = csv.DictReader(fh)
            header = [h.strip() for h in (reader.fieldnames or [])]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise SpecError(f"missing column(s) {', '.join(missing)}", file=str(path), field="line 1")
            reader.fieldnames = header
            start = reader.line_num + 1
            for raw in reader:
                line = start
                start = reader.line_num + 1
                if not any((v or "").strip() for k, v in raw.items() if k is not None):
                    continue  # blank line
                if None in raw:
                    raise SpecError(f"{len(header) + len(raw[None])} cells for {len(header)} columns",
                                    file=str(path), field=f"line {line}")
                data = {k: v.strip() for k, v in raw.items() if k in _FIELDS and v is not None and v.strip() != ""}
                try:
                    fam = data.get("family") or f"{path.stem}:{data.get('kind', '')}"
                    rec = Record.model_validate({**data, "line": line, "family": fam})
                except ValidationError as exc:
                    err = exc.errors()[0]
                    col = ".".join(str(p) for p in err.get("loc", ())) or "row"
                    msg = err.get("msg", "invalid value").removeprefix("Value error, ")
                    if col in data:
                        msg = f"{msg} (got {short(data[col])})"
                    raise SpecError(msg, file=str(path), field=f"line {line}: {col}") from None
                if rec.id in seen:
                    raise SpecError(f"duplicate id {rec.id!r} (first on line {seen[rec.id]})", file=str(path),
                                    field=f"line {line}: id")
                seen[rec.id] = line
                out.append(rec)
    except csv.Error as exc:
        raise SpecError(f"malformed CSV: {exc}", file=str(path), field=f"line {reader.line_num}") from None
    if not out:
        raise SpecError("no records: the file has a header but no rows", file=str(path))
    return out


def project_record_files(kind: str = "measured") -> list[Path]:
    """Record CSVs written into the project: data/measured/*.csv (fitted by ``perfmodel calibrate`` beside
    calibration.csv) or data/holdout/*.csv (never fitted). Sorted; [] when the folder is not shipped."""
    from ..catalog import builtin_root
    d = builtin_root() / "data" / kind
    return sorted(d.glob("*.csv")) if d.is_dir() else []


SHARED_FILES = ("calibration.csv", "curve-end.csv", "inferencex-silicon.csv", "agentic.csv", "mlperf.csv")


def shared_data_files() -> list[Path]:
    """The project's copy of the shared measured records (data/shared/, shipped in the wheel): the files the calibration
    fits by default, in SHARED_FILES order; [] when the folder is not there."""
    from ..catalog import builtin_root
    d = builtin_root() / "data" / "shared"
    return [d / f for f in SHARED_FILES if (d / f).is_file()]


def project_measured_files() -> list[Path]:
    """data/measured/*.csv: the measured records ``perfmodel calibrate`` fits beside calibration.csv."""
    return project_record_files("measured")


SETUP = ("model", "engine", "weights", "serving", "gpus", "tp", "ep", "isl", "osl", "concurrency", "metric")
"""The fields of a record's setup besides its hardware (analyses/model_error pairs rows on them)."""


def record_setups(files) -> tuple[dict[str, float], dict[str, tuple]]:
    """Each record id's concurrency and setup tuple (hardware, *SETUP) over the catalog's record ``files``
    (paths relative to the catalog root; a file that is not there is skipped)."""
    import numpy as np

    from ..catalog import builtin_root
    conc, setup = {}, {}
    for f in files:
        path = builtin_root() / f
        if path.is_file():
            for r in read_records(path):
                conc[r.id] = np.nan if r.concurrency is None else float(r.concurrency)
                setup[r.id] = (r.hardware, *(getattr(r, k, None) for k in SETUP))
    return conc, setup
