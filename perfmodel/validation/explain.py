"""Residuals you can take apart: what the model runs at each point row (``perfmodel validate --explain FILE``).

For every point row it evaluates the row once at the profile's central values (the prediction ``validate``
prints) and reports, from the serving layer's own output columns (docs/output-columns.md), nothing recomputed:

    running           sequences holding a KV slot per (decode) instance (``batch``)
    clients           clients in flight per instance the row puts on it (``concurrency``; agentic: lanes)
    decode_tokens     tokens a decode step verifies: running x (1 + draft tokens)
    prefill_tokens    uncached input tokens prefilled per decode step on average:
                      request_rate_per_s x uncached_input x step_ms / 1000
    prefill_share     share of the instance's time spent prefilling (``prefill_utilization``, the prefill
                      servers' rho)
    prefix_hit        input read from the prefix cache (agentic), with the share of sessions whose KV sits in the
                      host tier (``kv_in_host_share``) and the share evicted (``evicted_share``)
    uncached_input    tokens per turn prefilled
    queue_wait_ms     mean wait for a prefill server plus mean wait for a running slot
    limit             what binds: ``running_cap`` or ``kv_pool`` where the running batch fills its cap (98%) and
                      clients wait for a slot (capacity waits above 1% of TTFT: the engine's running-request cap
                      where it is below what the KV pool holds, else the KV pool), else the step's binding
                      resource (``bound``)
    running_cap       the running cap per instance the evaluation used (``max_batch``)

and, beside them, what the record states: its measured prefix hit (the ``prefix_hit`` column) and the
running-request cap its notes quote from the serve flags (``stated_cap``, per instance: ``record_running_cap``
times the attention-DP ranks). The record format has no measured running count. Frontier, ratio, prefill-only
and agents-per-GPU rows pick their own deployment or have no single operating point: their status says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalog
from ..errors import SpecError
from ..specs.records import Record
from .point_rows import WAIT_SHARE, point_frame
from .predict_rows import profile_id
from .row_context import Unsupported, make_ctx
from .samples import central_params
from .workload_versions import resolve_record

FULL = 0.98
"""A running batch at this share of its cap or above fills it."""

COLUMNS = ["id", "metric", "measured", "predicted", "error_pct", "concurrency", "clients", "running", "running_cap",
           "decode_tokens", "prefill_tokens", "prefill_share", "prefix_hit", "measured_prefix_hit",
           "host_share", "evicted_share", "uncached_input", "queue_wait_ms", "limit", "stated_cap",
           "step_ms", "tpot_ms", "ttft_ms", "profile", "status"]


def _col(d: pd.Series, name: str, default: float = np.nan) -> float:
    v = d.get(name, default)
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def limit_of(d: pd.Series) -> str:
    """The binding limit of one evaluated point (see the module docstring)."""
    ttft = _col(d, "ttft_ms")
    wait = _col(d, "capacity_wait_ms", 0.0)
    full = _col(d, "batch") >= FULL * _col(d, "max_batch")
    if full and wait > WAIT_SHARE * max(ttft, 1e-9):
        return "kv_pool" if _col(d, "max_batch") >= _col(d, "kv_max_batch") else "running_cap"
    return str(d.get("bound", ""))


def explain_point(d: pd.Series) -> dict:
    """The explain columns of one evaluated point ``d`` (one row of a serving frame)."""
    running = _col(d, "batch")
    rate, step = _col(d, "request_rate_per_s"), _col(d, "step_ms")
    uncached = _col(d, "uncached_input")
    return {
        "clients": _col(d, "concurrency"), "running": running, "running_cap": _col(d, "max_batch"),
        "decode_tokens": running * (1 + _col(d, "spec_tokens", 0.0)),
        "prefill_tokens": rate * uncached * step / 1000, "prefill_share": _col(d, "prefill_utilization"),
        "prefix_hit": _col(d, "prefix_hit"), "host_share": _col(d, "kv_in_host_share"),
        "evicted_share": _col(d, "evicted_share"), "uncached_input": uncached,
        "queue_wait_ms": _col(d, "prefill_queue_ms", 0.0) + _col(d, "capacity_wait_ms", 0.0),
        "limit": limit_of(d), "step_ms": step, "tpot_ms": _col(d, "tpot_ms"), "ttft_ms": _col(d, "ttft_ms"),
    }


def explain_record(rec: Record) -> dict:
    """One row of the explain table for record ``rec`` (its status says why a row has no operating point)."""
    from .workload_versions import record_running_cap
    base = {"id": rec.id, "metric": rec.metric, "measured": rec.value,
            "concurrency": np.nan if rec.concurrency is None else rec.concurrency,
            "measured_prefix_hit": np.nan if rec.prefix_hit is None else rec.prefix_hit}
    try:
        rec = resolve_record(rec)
        pid = profile_id(rec)
        prof = catalog.profile(pid)
        if rec.kind != "point" or rec.serving == "prefill_only" or rec.metric == "agents_per_gpu":
            return {**base, "profile": pid, "status": f"{rec.kind} row: no single operating point"}
        ctx = make_ctx(rec.hardware, rec, prof, central_params(prof))
        frame = point_frame(rec, ctx, [])
        d = frame.df.iloc[0]
        pred = float(d[frame.metric]) * frame.scale
        dp = frame.pts["gpus"] / (frame.pts["tp"] * frame.pts["pp"])
        stated = record_running_cap(rec, dp)
        return {**base, **explain_point(d), "predicted": pred, "error_pct": (pred / rec.value - 1) * 100,
                "stated_cap": np.nan if stated is None else stated * dp, "profile": pid, "status": "ok"}
    except Unsupported as exc:
        return {**base, "status": f"unsupported: {exc}"}
    except SpecError as exc:
        return {**base, "status": f"unsupported: {exc.line()}"}


def explain_rows(records: list[Record]) -> pd.DataFrame:
    """The explain table of ``records``, one row each (``COLUMNS``)."""
    return pd.DataFrame([explain_record(r) for r in records]).reindex(columns=COLUMNS)


BANDS = [(0, 16, "1-16"), (16, 64, "17-64"), (64, 256, "65-256"), (256, np.inf, ">256")]
"""Bands of the record's concurrency (clients or sessions of the whole deployment) in the summary."""


def band_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per band of the record's concurrency, of the predicted rows: rows, median |error| and signed median error of TPOT and of
    throughput (every ``*_tps_per_gpu`` metric), median running / clients and prefill share, and the count of
    each binding limit."""
    t = table[table["status"] == "ok"].copy()
    rows = []
    for lo, hi, label in BANDS:
        b = t[(t["concurrency"] > lo) & (t["concurrency"] <= hi)]
        if b.empty:
            continue
        tpot = b[b["metric"] == "tpot_ms"]["error_pct"]
        tput = b[b["metric"].str.endswith("_tps_per_gpu")]["error_pct"]
        ttft = b[b["metric"] == "ttft_ms"]["error_pct"]
        rows.append({"concurrency": label, "rows": len(b), "median_abs_error_pct": b["error_pct"].abs().median(),
                     "tpot_signed_pct": tpot.median(), "throughput_signed_pct": tput.median(),
                     "ttft_signed_pct": ttft.median(),
                     "running_over_clients": (b["running"] / b["clients"]).median(),
                     "prefill_share": b["prefill_share"].median(),
                     "limits": ", ".join(f"{k} {v}" for k, v in b["limit"].value_counts().items())})
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table (floats to 2 decimals), the form docs/accuracy.md quotes the summary in."""
    def cell(v) -> str:
        return f"{v:.2f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)
