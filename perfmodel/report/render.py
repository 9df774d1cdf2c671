"""Render the report's figures to PNG in a worker process while the report goes on computing.

Drawing a figure with its constrained layout and writing the PNG takes ~0.5 s of a single core per figure
(a fifth of ``perfmodel report``). The figure is pickled (its artists, not its pixels) and drawn by a
worker of the report's process pool (``parallel.pool``); ``close()`` waits until every file is written and
raises the first error. Without a pool (``PERFMODEL_JOBS=1``, no ``fork``) figures are drawn in process.
"""

from __future__ import annotations

import pickle
from concurrent.futures import Executor
from pathlib import Path


def _draw(blob: bytes, path: str) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig = pickle.loads(blob)
    FigureCanvasAgg(fig)
    fig.savefig(path)
    return path


class Renderer:
    """``save(fig, path)`` queues a figure; ``close()`` waits for all of them."""

    def __init__(self, pool: Executor | None = None):
        self._pool, self._jobs = pool, []

    def save(self, fig, path: str | Path) -> None:
        if self._pool is None:
            fig.savefig(path)
        else:
            self._jobs.append(self._pool.submit(_draw, pickle.dumps(fig), str(path)))

    def close(self) -> None:
        jobs, self._jobs = self._jobs, []
        for job in jobs:
            job.result()

    def __enter__(self) -> "Renderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
