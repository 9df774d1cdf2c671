"""Check the report's claims in worker processes while the report's own figures are computed in process.

``perfmodel report`` spends most of its time evaluating each claim's systems. Claims about the same model
and workload read the same curves, so they are grouped by (model, workload): the groups the report's own
figures share (``local``) are checked in process, with the figures' store; the others go to
``PERFMODEL_JOBS - 1`` forked workers (``PERFMODEL_JOBS`` default 2; 1 or no ``fork``: all in process),
largest groups first, each worker with its own ``CurveStore``. A system's curve is evaluated once per
process and shared by every claim, plot and table of that process. The results are those of checking in
one process (each check is deterministic given its inputs), in the order of the ids.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor

from ..claims import CurveStore, check
from ..claims.check import load_claim

_store: CurveStore | None = None     # a worker's store (set by _init in each worker process)


def jobs() -> int:
    """Worker processes for the claims: ``$PERFMODEL_JOBS`` (default 2, at most the CPUs)."""
    raw = os.environ.get("PERFMODEL_JOBS", "2")
    try:
        n = int(raw)
    except ValueError:
        raise SystemExit(f"PERFMODEL_JOBS={raw!r}: give a whole number of worker processes (1: none)") from None
    return max(1, min(n, os.cpu_count() or 1))


def _init(weights: str, space: dict) -> None:
    global _store
    _store = CurveStore(weights=weights, space=dict(space))


def _check(claim_ids: list[str]) -> list[dict]:
    return [check(i, _store) for i in claim_ids]


def _bins(ids: list[str], local, n: int) -> tuple[list[str], list[list[str]]]:
    """(ids checked in process, one id list per worker): groups by (model, workload), largest first, each to
    the least loaded worker."""
    groups: dict[tuple, list[str]] = {}
    here = []
    for i in ids:
        c = load_claim(i)
        if local(c):
            here.append(i)
        else:
            groups.setdefault((c.model or "", c.workload or ""), []).append(i)
    bins: list[list[str]] = [[] for _ in range(n)]
    for g in sorted(groups.values(), key=len, reverse=True):
        min(bins, key=len).extend(g)
    return here, [b for b in bins if b]


class ClaimChecks:
    """Submits the checks of ``ids`` to the workers at once; ``results(store)`` checks the ``local`` ones
    with ``store`` and returns every result, in the order of ``ids``."""

    def __init__(self, ids: list[str], store: CurveStore, local=lambda claim: False):
        self._ids, self._pool, self._jobs, n = list(ids), None, [], jobs()
        self._here = self._ids
        if n > 1 and "fork" in mp.get_all_start_methods():
            self._here, bins = _bins(self._ids, local, n - 1)
            if bins:
                self._pool = ProcessPoolExecutor(len(bins), mp_context=mp.get_context("fork"), initializer=_init,
                                                 initargs=(store.weights, store.space))
                self._jobs = [(b, self._pool.submit(_check, b)) for b in bins]

    def results(self, store: CurveStore) -> list[dict]:
        try:
            out = {i: check(i, store) for i in self._here}
            for b, job in self._jobs:
                out.update(zip(b, job.result()))
            return [out[i] for i in self._ids]
        finally:
            if self._pool is not None:
                self._pool.shutdown()
