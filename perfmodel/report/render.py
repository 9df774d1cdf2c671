"""Render the report's figures to PNG in a second process while the report goes on computing.

Drawing a figure with its constrained layout and writing the PNG takes ~0.5 s of a single core per figure
(a fifth of ``perfmodel report``). The figure is pickled (its artists, not its pixels) and drawn by a
forked worker; ``close()`` waits until every file is written and raises the first error. Without ``fork``
(not Linux or macOS) figures are drawn in process, as before.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def _draw(blob: bytes, path: str) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig = pickle.loads(blob)
    FigureCanvasAgg(fig)
    fig.savefig(path)
    return path


class Renderer:
    """``save(fig, path)`` queues a figure; ``close()`` waits for all of them."""

    def __init__(self, background: bool = True):
        self._pool = None
        if background and "fork" in mp.get_all_start_methods():
            self._pool = ProcessPoolExecutor(1, mp_context=mp.get_context("fork"))
        self._jobs = []

    def save(self, fig, path: str | Path) -> None:
        if self._pool is None:
            fig.savefig(path)
        else:
            self._jobs.append(self._pool.submit(_draw, pickle.dumps(fig), str(path)))

    def close(self) -> None:
        try:
            for job in self._jobs:
                job.result()
        finally:
            if self._pool is not None:
                self._pool.shutdown()
            self._jobs = []

    def __enter__(self) -> "Renderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
