"""Evaluate enumerated deployments: each block of one serving mode (and KV host tier) goes through the serving
dispatcher (``serving.dispatch.serve``); disaggregated rows that name their pools (POOL_COLUMNS) are evaluated on
them, the others on the pools the search chooses per point. Rows are grouped by mode (``evaluate_rows`` returns the order). ``setup_for(mask)`` returns the Setup for a
subset of rows (the same Setup for a frontier; per-row symbol arrays for attribution coalitions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import catalog
from ..serving.dispatch import Pools, Sessions, serve
from ..specs.deployment import ENUMERABLE_MODES
from ..specs.workload import WorkloadSpec
from .deployments import points
from .systems import lengths_for


@dataclass(frozen=True)
class WorkloadInfo:
    lengths: dict
    agentic: bool = False
    pause_s: float = 0.0
    name: str = "custom"
    dists: object = None          # agentic: the workload's length distributions (specs.workload.Agentic)


def workload_info(workload) -> WorkloadInfo:
    w = catalog.workload(workload) if isinstance(workload, str) else workload
    lengths = lengths_for(w)
    if isinstance(w, WorkloadSpec):
        if w.kind == "agentic":
            assert w.agentic is not None        # the workload schema requires the block for kind agentic
            return WorkloadInfo(lengths, True, float(w.agentic.pause_s), w.id, w.agentic)
        return WorkloadInfo(lengths, False, 0.0, w.id)
    return WorkloadInfo(lengths, False, 0.0, "custom")


MODE_NAMES = ENUMERABLE_MODES
POOL_COLUMNS = ("pf_gpus", "pf_tp", "pf_ep", "instances", "pf_instances")


def mode_codes(rows: pd.DataFrame) -> np.ndarray:
    """Integer evaluation mode per row: 2 x serving index + KV host tier."""
    n = len(rows)
    if "serving" in rows:
        serving = pd.Categorical(rows["serving"], categories=MODE_NAMES).codes.astype(np.int64)
        if (serving < 0).any():
            bad = rows["serving"][serving < 0].iloc[0]
            raise ValueError(f"unknown serving mode {bad!r}")
    else:
        serving = np.zeros(n, np.int64)
    tier = rows["kv_host_tier"].to_numpy(dtype=bool) if "kv_host_tier" in rows else np.zeros(n, bool)
    return 2 * serving + tier


def evaluate_rows(setup_for, rows: pd.DataFrame, wl: WorkloadInfo, pools=None) -> tuple[pd.DataFrame, np.ndarray]:
    """Evaluate every row (deployment + batch) with the engine function of its serving mode.

    Disaggregated rows that name their prefill pool and counts (pf_gpus, pf_tp, pf_ep, instances, pf_instances)
    are evaluated as given; rows without them get the pool search ``pools`` (serving/pools.PoolSearch).

    Returns (frame, order): frame row i belongs to ``rows.iloc[order[i]]`` (rows are grouped by mode; when
    the modes already come in blocks, order is the identity and nothing is copied).
    """
    codes = mode_codes(rows)
    if len(codes) == 0 or (codes == codes[0]).all():
        return _evaluate_mode(setup_for(None), rows, wl, int(codes[0]) if len(codes) else 0, pools), \
            np.arange(len(rows))
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    bounds = np.nonzero(np.diff(sorted_codes))[0] + 1
    parts = []
    for idx in np.split(order, bounds):
        mask = np.zeros(len(rows), bool)
        mask[idx] = True
        contiguous = idx[-1] - idx[0] + 1 == len(idx)
        sub = rows.iloc[idx[0]:idx[-1] + 1] if contiguous else rows.iloc[idx]
        parts.append(_evaluate_mode(setup_for(mask), sub, wl, int(codes[idx[0]]), pools))
    return pd.concat(parts, ignore_index=True), order


def _evaluate_mode(setup, rows: pd.DataFrame, wl: WorkloadInfo, code: int, pools=None) -> pd.DataFrame:
    """One block of rows of one mode through the serving dispatcher (serving/dispatch.serve)."""
    pts = points(rows, wl.lengths)
    mode, tier = MODE_NAMES[code // 2], bool(code % 2)
    sessions = Sessions(wl.pause_s, tier, wl.dists) if wl.agentic and mode != "decode_only" else None
    given = all(c in rows and rows[c].notna().all() for c in POOL_COLUMNS)
    if mode == "disaggregated" and given:
        named = Pools(*(rows[c].to_numpy(float) for c in POOL_COLUMNS))
        return serve(setup, pts, mode, pools=named, sessions=sessions)
    return serve(setup, pts, mode, search=pools if mode == "disaggregated" else None, sessions=sessions)
