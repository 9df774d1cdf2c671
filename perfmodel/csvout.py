"""CSV exports with a fixed, documented column set (issue 25 item 7).

``write_csv(df, path, columns)`` writes exactly ``columns`` in that order: a column the rows do not have is
written blank, whole-number columns (INT_COLUMNS: counts of GPUs, instances, sequences, draft tokens) are written
as integers (``8``, not ``8.0``; blank where absent), and with ``disagg_blank`` the pool columns of a
disaggregated deployment (DISAGG_ONLY) are blank on rows that are not disaggregated, as the README documents.
Units are in the column names (``_ms``, ``_gb_per_gpu``, ``tps`` = tokens/s); shares (``prefix_hit``,
``evicted_share``, ``prefill_utilization``) are fractions in [0, 1].
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from .fileio import write_whole

INT_COLUMNS = ("gpus", "tp", "dp", "ep", "pp", "spec_tokens", "instances", "pf_instances", "pf_gpus", "pf_tp",
               "pf_dp", "pf_ep", "prefill_gpus", "decode_gpus", "batch", "max_batch")
DISAGG_ONLY = ("instances", "pf_instances", "pf_gpus", "pf_tp", "pf_dp", "pf_ep", "prefill_ratio", "prefill_gpus",
               "decode_gpus", "prefill_utilization", "prefill_queue_ms", "kv_transfer_ms")


def _int_column(s: pd.Series) -> pd.Series:
    """Whole numbers as nullable integers; a column with a fractional value is left as it is."""
    x = pd.to_numeric(s, errors="coerce")
    if s.dtype == bool or x.isna().all() and s.notna().any():
        return s
    finite = x.dropna()
    if len(finite) and not np.all(np.isfinite(finite)) or (finite != np.round(finite)).any():
        return s
    if len(finite) and np.abs(finite).max() >= INT64_LIMIT:     # beyond int64 (a what-if's huge batch): as floats
        return s
    return x.round().astype("Int64")


INT64_LIMIT = 2.0 ** 63
"""Whole numbers at or beyond this magnitude do not fit an int64 column; they are written as they are."""


def tidy(df: pd.DataFrame, columns: list[str] | None = None, disagg_blank: bool = False) -> pd.DataFrame:
    """``df`` with exactly ``columns`` (missing ones blank), integer columns as integers, pool columns blank on
    rows that are not disaggregated (``disagg_blank``)."""
    out = df.reindex(columns=list(dict.fromkeys(columns))) if columns is not None else df.copy()
    if disagg_blank and "serving" in df:
        agg = (df["serving"] != "disaggregated").to_numpy()
        for c in DISAGG_ONLY:
            if c in out:
                out[c] = out[c].astype(object).where(~agg, None)
    for c in INT_COLUMNS:
        for name in (c, f"a_{c}", f"b_{c}"):
            if name in out:
                out[name] = _int_column(out[name])
    return out


def write_csv(df: pd.DataFrame, path, columns: list[str] | None = None, disagg_blank: bool = False) -> None:
    """Write ``tidy(df, columns, disagg_blank)`` to ``path`` whole (``fileio.write_whole``; '-' = standard
    output), no index."""
    t = tidy(df, columns, disagg_blank)
    if path == "-":
        t.to_csv(sys.stdout, index=False)
    else:
        write_whole(path, t.to_csv(index=False))
