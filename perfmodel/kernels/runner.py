"""Fit every kernel family on every GPU's tables: the work behind ``perfmodel kernels``.

One GPU at a time is loaded (only the needed columns, categorical strings), each family's variants are fitted
on the training groups and scored on the held-out groups. ``summary`` pools a family's held-out rows over the
engines and variants of one GPU: median |predicted / measured - 1| in percent.
"""

from __future__ import annotations

import numpy as np

from .fitting import Fit, fit_and_score, held_out_mask
from .gpu import peaks
from .loader import GPUS, load_table


def families():
    """The fitted kernel families, in print order (one module each)."""
    from . import attention, collectives, gemm, mla, moe
    return [gemm, moe, attention, mla, collectives]


def fit_family(fam, data_dir, gpu: str) -> list[Fit]:
    """Fit one family on one GPU; [] when the GPU has none of its tables."""
    pk = peaks(gpu)
    fits = []
    for table in fam.TABLES:
        df = load_table(data_dir, table, fam.COLUMNS, gpu=gpu, required=False)
        if df.empty:
            continue
        for engine, variant, feats, lat, keys, size in fam.variants(df, pk):
            held = held_out_mask(keys)
            groups = held_out_group_ids(keys)
            family = family_name(fam, table, variant)
            params = fam.params_for(variant) if hasattr(fam, "params_for") else fam.PARAMS
            fit = fit_and_score(family, gpu, engine, variant, fam.latency_ms, params, feats, lat, held, groups,
                                size, table)
            if fit is not None:
                fits.append(fit)
    return fits


def family_name(fam, table: str, variant: str) -> str:
    """The printed family of a variant (a module may fit several, e.g. decode and prefill attention)."""
    if not hasattr(fam, "family_of"):
        return fam.FAMILY
    try:
        return fam.family_of(table, variant)
    except TypeError:
        return fam.family_of(table)


def held_out_group_ids(keys) -> np.ndarray:
    from .fitting import group_hash
    return group_hash(keys)


BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def fit_gpu(data_dir, gpu: str) -> list[Fit]:
    """Every family on one GPU."""
    out = []
    for fam in families():
        out.extend(fit_family(fam, data_dir, gpu))
    return out


def fit_all(data_dir, gpus=GPUS, workers: int = 1) -> list[Fit]:
    """Every family on every GPU; ``workers`` > 1 fits GPUs in parallel processes (one GPU's tables each)."""
    data_dir = str(data_dir)
    if workers <= 1 or len(gpus) < 2:
        return [f for g in gpus for f in fit_gpu(data_dir, g)]
    import multiprocessing as mp
    import os
    from concurrent.futures import ProcessPoolExecutor
    # one BLAS thread per worker: the fits are many small least-squares problems, and threaded BLAS in each
    # of the workers oversubscribes the cores (3-4x the CPU time on 2 cores)
    saved = {v: os.environ.get(v) for v in BLAS_THREAD_VARS}
    os.environ.update({v: "1" for v in BLAS_THREAD_VARS})
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as ex:
            parts = list(ex.map(fit_gpu, [data_dir] * len(gpus), gpus))
    finally:
        for v, old in saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
    return [f for part in parts for f in part]


def summary(fits: list[Fit]) -> list[tuple[str, str, int, float]]:
    """(family, gpu, held-out rows, median |error| %) per family and GPU, pooled over engines and variants."""
    rows: dict[tuple[str, str], list[Fit]] = {}
    for f in fits:
        rows.setdefault((f.family, f.gpu), []).append(f)
    out = []
    for (fam, gpu), fs in rows.items():
        err = np.concatenate([f.rel_err for f in fs])
        out.append((fam, gpu, int(err.size), float(np.median(np.abs(err)) * 100) if err.size else float("nan")))
    return out
