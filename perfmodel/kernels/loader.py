"""Read the measured kernel tables: ``index.csv`` lists ``<gpu>/<framework>/<table>.csv.gz`` files.

Only the needed columns are read, string columns as pandas categoricals, so the ~6 million rows fit in well
under 2 GiB. A table the index does not list, or a listed file that is missing, is a one-line ``SpecError``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..errors import SpecError

SOURCE_REPO = "https://github.com/ai-dynamo/aiconfigurator"
SOURCE_COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
LICENSE_NOTICE = ("Extracted from aic-core/src/aiconfigurator_core/systems/data/ in ai-dynamo/aiconfigurator at "
                  f"commit {SOURCE_COMMIT}. Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES. "
                  "SPDX-License-Identifier: Apache-2.0.")

GPUS = ("h100_sxm", "h200_sxm", "b200_sxm", "b300_sxm", "gb200", "gb300")
HARDWARE_ID = {"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm", "b200_sxm": "b200", "b300_sxm": "b300",
               "gb200": "gb200-nvl72", "gb300": "gb300-nvl72"}
"""Table GPU name -> hardware catalog id."""

STRING_COLUMNS = {"framework", "version", "device", "op_name", "kernel_source", "gemm_dtype", "moe_dtype",
                  "distribution", "attn_dtype", "kv_cache_dtype", "mla_dtype", "nccl_dtype", "allreduce_dtype",
                  "backend", "implementation", "model", "architecture", "gemm_type", "moe_kernel",
                  "simulation_mode"}


KERNEL_TABLES_HINT = (f"not shipped: get them from {SOURCE_REPO} at {SOURCE_COMMIT} "
                      "(aic-core/src/aiconfigurator_core/systems/data), convert as docs/kernels.md says, "
                      "pass --data DIR")
"""One line: where the kernel tables come from and which path to pass (``perfmodel kernels`` without them)."""


def default_data_dir() -> Path:
    """The kernel tables: ``data/kernels`` in the checkout when a user has put them there, else
    ``shared/data/kernels`` beside the checkout (the project's working copy); neither ships with the package."""
    root = Path(__file__).resolve().parents[2]
    here = root / "data" / "kernels"
    return here if (here / "index.csv").is_file() else root.parent / "shared" / "data" / "kernels"


@lru_cache(maxsize=8)
def read_index(data_dir: str) -> pd.DataFrame:
    path = Path(data_dir) / "index.csv"
    if not path.is_file():
        raise SpecError(f"kernel tables not found; {KERNEL_TABLES_HINT}", file=str(path))
    ix = pd.read_csv(path, dtype=str)
    missing = {"gpu", "framework", "table", "file"} - set(ix.columns)
    if missing:
        raise SpecError(f"missing column(s) {', '.join(sorted(missing))}", file=str(path))
    return ix


def table_files(data_dir: str | Path, table: str, gpu: str | None = None) -> list[tuple[str, str, Path]]:
    """(gpu, framework, path) of every file of ``table`` (for one GPU if given) the index lists."""
    ix = read_index(str(data_dir))
    sel = ix[ix["table"] == table]
    if gpu is not None:
        sel = sel[sel["gpu"] == gpu]
    return [(r.gpu, r.framework, Path(data_dir) / r.file) for r in sel.itertuples()]


def load_table(data_dir: str | Path, table: str, columns: list[str], gpu: str | None = None,
               required: bool = True) -> pd.DataFrame:
    """All files of ``table`` concatenated, with ``gpu`` and ``engine`` (the index's framework) columns.

    Reads only ``columns`` (those a file lacks are left out); string columns are categoricals. A table with no
    listed file (when ``required``) or a listed file that does not exist is a one-line error naming it."""
    files = table_files(data_dir, table, gpu)
    if not files:
        if not required:
            return pd.DataFrame(columns=["gpu", "engine", *columns])
        where = f" for {gpu}" if gpu else ""
        raise SpecError(f"kernel table {table!r}{where} is not listed in index.csv",
                        file=str(Path(data_dir) / "index.csv"))
    frames = []
    for g, fw, path in files:
        if not path.is_file():
            raise SpecError(f"kernel table {table!r} ({g}/{fw}) is missing", file=str(path))
        head = pd.read_csv(path, nrows=0).columns
        use = [c for c in columns if c in head]
        dtypes = {c: ("category" if c in STRING_COLUMNS else "float64") for c in use}
        df = pd.read_csv(path, usecols=use, dtype=dtypes)
        df["gpu"] = g
        df["engine"] = fw
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    for c in out.columns:
        if c in STRING_COLUMNS or c in ("gpu", "engine"):
            out[c] = out[c].astype("category")
    out.attrs["table"] = table
    return out
