"""Check the report's claims in worker processes while the report's own figures are computed in process.

``perfmodel report`` spends most of its time evaluating each claim's systems. Claims about the same model
and workload read the same curves, so they are grouped by (model, workload): the groups the report's own
figures share (``local``) are checked in process, with the figures' store; the others go to
``PERFMODEL_JOBS - 1`` bins (largest groups first) checked by as many forked workers (``PERFMODEL_JOBS``
default 2; 1 or no ``fork``: all in process), each worker with its own ``CurveStore``. The workers are
forked at once, before the pool's manager thread starts (no fork while a thread runs). A system's curve is
evaluated once per process and shared by every claim, plot and table of that process. The results are
those of checking in one process (each check is deterministic given its inputs), in the order of the ids.
Progress: each worker adds 1 to a shared counter (``multiprocessing.Value``, inherited through the fork) per
claim checked, and the parent reads it (``ClaimChecks.poll``) to count completed claims on its progress bar.
"""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing.sharedctypes import Synchronized

from ..claims import CurveStore, check
from ..claims.check import load_claim
from ..workers import jobs

_store: CurveStore | None = None     # a worker's store (set by _init in each worker process)
_done = None                         # the claims checked by all workers (a shared counter, set by _init)
POLL_S = 0.5                         # how often the parent reads the counter while it waits for the workers


def _init(weights: str, space: dict, done=None) -> None:
    global _store, _done
    _store = CurveStore(weights=weights, space=dict(space))
    _done = done


def _check(claim_ids: list[str]) -> list[dict]:
    out = []
    for i in claim_ids:
        out.append(check(i, _store))
        if _done is not None:
            with _done.get_lock():
                _done.value += 1
    return out


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


class Workers(ProcessPoolExecutor):
    """The report's process pool, with its workers' shared count of claims checked."""

    claims_done: Synchronized      # read by ClaimChecks.poll (progress)


def pool(store: CurveStore) -> Workers | None:
    """The report's pool of ``jobs() - 1`` forked workers (each with a store like ``store``; the report's own
    process is the other job), or None for one process. Shut it down when done (``with``)."""
    n = jobs()
    if n < 2 or "fork" not in mp.get_all_start_methods():
        return None
    ctx = mp.get_context("fork")
    done = ctx.Value("i", 0)
    ex = Workers(n - 1, mp_context=ctx, initializer=_init, initargs=(store.weights, store.space, done))
    ex.claims_done = done
    return ex


class ClaimChecks:
    """Submits the checks of ``ids`` to ``workers`` (None: none) at once; ``results(store)`` checks the
    ``local`` ones and the rest without workers with ``store`` and returns every result, in ``ids`` order."""

    def __init__(self, ids: list[str], store: CurveStore, local=lambda claim: False,
                 workers: ProcessPoolExecutor | None = None):
        self._ids, self._jobs, self._here = list(ids), [], list(ids)
        self._done = getattr(workers, "claims_done", None)
        self._seen = self._done.value if self._done is not None else 0   # the pool may have checked others before
        if workers is not None:
            self._here, bins = _bins(self._ids, local, max(1, jobs() - 1))
            self._jobs = [(b, workers.submit(_check, b)) for b in bins]

    def poll(self) -> int:
        """Claims the workers finished since the last poll (0 without workers)."""
        if self._done is None:
            return 0
        now = self._done.value
        new, self._seen = now - self._seen, now
        return new

    def results(self, store: CurveStore, on_done=None) -> list[dict]:
        """Every result in ``ids`` order; ``on_done(n)`` is called with each batch of n newly completed claims
        (checked here or by the workers), for a progress bar."""
        tick = on_done or (lambda n: None)
        out = {}
        for i in self._here:
            out[i] = check(i, store)
            tick(1 + self.poll())
        pending = {job for _b, job in self._jobs}
        while pending:
            _finished, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            tick(self.poll())
        tick(self.poll() if self._done is not None else len(self._ids) - len(self._here))  # no counter: at the end
        for b, job in self._jobs:
            out.update(zip(b, job.result()))
        return [out[i] for i in self._ids]
