"""How many worker processes the parallel jobs use (claims in ``perfmodel report``, folds in ``perfmodel
crossval``): ``$PERFMODEL_JOBS`` (default 2, at most the CPUs; 1 runs everything in process)."""

from __future__ import annotations

import os


def jobs() -> int:
    """Worker processes: ``$PERFMODEL_JOBS`` (default 2, at most the CPUs)."""
    raw = os.environ.get("PERFMODEL_JOBS", "2")
    try:
        n = int(raw)
    except ValueError:
        raise SystemExit(f"PERFMODEL_JOBS={raw!r}: give a whole number of worker processes (1: none)") from None
    return max(1, min(n, os.cpu_count() or 1))
