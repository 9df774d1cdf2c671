"""Cross-validation of the calibration by whole configuration (group k-fold).

A configuration is one measured deployment swept over concurrency (``config_key``: the source's sweep id
where the notes name one, else every setup column except the concurrency and the metric). The
configurations are dealt into K folds (deterministic: sorted keys shuffled with a fixed seed); for each fold
the profiles are calibrated (``calibrate``) on every other fold plus the project's data/measured records and
the fold's records are predicted with the fitted profile of their engine (central values). Each fit starts
from the middle of the search ranges, not from the catalog profile (which was fitted on all records). No point of a
held-out sweep, at any concurrency, is ever in its own training set, so a sweep's shape is predicted, not
interpolated. This is the accuracy to expect on a new deployment from the same kind of source; the
held-out files (data/holdout) test other kinds of source.
"""

from __future__ import annotations

import multiprocessing as mp
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from ..progress import bar as progress_bar  # (``progress`` is cross_validate's callback)
from ..specs.records import Record
from ..workers import jobs
from .batch_predict import plan, predict_matrix
from .calibrate import calibrate, fitted_profile, memo_fits
from .predict_rows import profile_id
from .row_context import Unsupported
from .samples import central_params

FOLDS = 5
SEED = 0
_SWEEP = re.compile(r"silicon_sample row (\S+?):")


def config_key(rec: Record) -> str:
    """The configuration a record belongs to: its sweep id (concurrency removed) or its setup columns."""
    m = _SWEEP.search(rec.notes or "")
    if m:
        return re.sub(r"_c\d+(\.\d+)?_", "_", m.group(1))
    cols = ("hardware", "model", "engine", "serving", "workload", "weights", "kv_cache", "gpus", "prefill_gpus",
            "decode_gpus", "tp", "ep", "dp_attention", "spec_tokens", "isl", "osl", "prefix_hit", "kind")
    return "|".join(str(getattr(rec, c)) for c in cols)


def family_key(rec: Record) -> str:
    """The data family a record belongs to (source and kind, ``Record.family``)."""
    return rec.family or "unnamed"


def folds(records: list[Record], k: int = FOLDS, seed: int = SEED, by: str = "config") -> list[int]:
    """Fold index of each record: whole configurations dealt round-robin after a seeded shuffle
    (``by="config"``), or one fold per data family (``by="family"``: leave one family out; k is ignored)."""
    if by == "family":
        fams = sorted({family_key(r) for r in records})
        return [fams.index(family_key(r)) for r in records]
    keys = sorted({config_key(r) for r in records})
    order = np.random.default_rng(seed).permutation(len(keys))
    fold_of = {keys[j]: i % k for i, j in enumerate(order)}
    return [fold_of[config_key(r)] for r in records]


def _predict(records: list[Record], results: dict[str, dict]) -> np.ndarray:
    """Central predictions of ``records`` with the fitted profiles ``results`` (pooled fallback)."""
    out = np.full(len(records), np.nan)
    by: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        try:
            by.setdefault(profile_id(r), []).append(i)
        except Unsupported:
            continue
    for pid, idx in by.items():
        fit = results.get(pid)
        if fit is None:
            continue
        prof = fitted_profile(pid, fit)
        pl = plan([records[i] for i in idx])
        out[idx] = predict_matrix(pl, {pid: prof}, central_params(prof))[:, 0]
    return out


_TASK: tuple | None = None    # (targets, fold of each target, other training records) of the running cross-validation


def _run_fold(f: int) -> tuple[list[int], np.ndarray]:
    """Fit without fold ``f`` (every other fold plus the other training records, from the middle of the search
    ranges) and predict fold ``f``: (indices of its records, their central predictions)."""
    assert _TASK is not None
    targets, fold, others = _TASK
    test = [i for i, x in enumerate(fold) if x == f]
    train = [r for r, x in zip(targets, fold) if x != f] + list(others)
    return test, _predict([targets[i] for i in test], calibrate(train, neutral_start=True))


def cross_validate(targets: list[Record], others: Sequence[Record] = (), k: int = FOLDS, seed: int = SEED,
                   progress: Callable[[str], None] | None = None, by: str = "config") -> pd.DataFrame:
    """One row per target record: id, config, family, fold, metric, measured, predicted (fitted without its
    configuration, or with ``by="family"`` without its whole data family), error_pct, status."""
    fold = folds(targets, k, seed, by)
    k = max(fold) + 1 if fold else 0
    with memo_fits():
        if by == "family":
            # the fit on every record first: a fold whose left-out family has no record of an engine family fits
            # that engine on the same records as this fit, so it reuses it (memo_fits; the fit is deterministic,
            # so no number changes) and refits only the engine families whose records it leaves out
            calibrate(list(targets) + list(others), neutral_start=True)
        return _cross_validate(targets, others, fold, k, progress)


def _cross_validate(targets: list[Record], others: Sequence[Record], fold: list[int], k: int,
                    progress: Callable[[str], None] | None) -> pd.DataFrame:
    """``cross_validate`` over the dealt folds, inside its memo (forked workers inherit it)."""
    pred = np.full(len(targets), np.nan)
    sizes = np.bincount(fold, minlength=k) if fold else np.zeros(0, int)
    tasks = sorted((f for f in range(k) if f in set(fold)), key=lambda f: -sizes[f])    # largest held-out first
    global _TASK
    _TASK = (targets, fold, others)
    n_jobs = min(jobs(), len(tasks))
    if n_jobs > 1:
        # folds are independent fits: forked workers (each inherits the records and the memo), largest fold first
        ctx = mp.get_context("fork")
        with ProcessPoolExecutor(n_jobs, mp_context=ctx) as pool:
            done = pool.map(_run_fold, tasks)
            for f, (test, p) in progress_bar(zip(tasks, done), desc="crossval folds", unit="fold", total=len(tasks)):
                pred[test] = p
                if progress:
                    progress(f"fold {f + 1}/{k}: {len(test)} held-out records")
    else:
        for f in progress_bar(tasks, desc="crossval folds", unit="fold", at_once=True):
            test, p = _run_fold(f)
            pred[test] = p
            if progress:
                progress(f"fold {f + 1}/{k}: {len(test)} held-out records")
    _TASK = None
    rows = []
    for rec, fo, p in zip(targets, fold, pred):
        ok = np.isfinite(p)
        rows.append({"id": rec.id, "config": config_key(rec), "family": family_key(rec), "fold": fo, "kind": rec.kind, "hardware": rec.hardware,
                     "model": rec.model, "engine": rec.engine or "", "metric": rec.metric, "measured": rec.value,
                     "predicted": p if ok else np.nan, "error_pct": (p / rec.value - 1) * 100 if ok else np.nan,
                     "status": "ok" if ok else "unsupported"})
    return pd.DataFrame(rows)


def cv_markdown(df: pd.DataFrame, records: list[Record], files: list[str], command: str) -> str:
    """reports/crossval.md: per file and overall, the residual tables of the held-out predictions."""
    from .residuals import markdown
    by_file = []
    for f in files:
        d = df[df["file"] == f]
        ok = d[d["status"] == "ok"]
        by_file.append(f"| `{f}` | {len(d)} | {len(ok)} | {d['config'].nunique()} | "
                       f"{ok['error_pct'].abs().median():.1f} | {ok['error_pct'].median():+.1f} |")
    sections = []
    for f in files:
        d = df[df["file"] == f]
        ids = set(d["id"])
        sections += [f"## `{f}`", "", markdown(d, [r for r in records if r.id in ids]), ""]
    return "\n".join([
        "# Cross-validation by configuration", "",
        "Regenerate with one command (several minutes):", "", f"    {command}", "",
        "Every record is predicted by profiles calibrated without its whole configuration (a concurrency",
        "sweep at every concurrency, or one setup), in folds of whole configurations; each fit starts from the",
        "middle of the search ranges. Method: `perfmodel/validation/crossval.py`. error = predicted / measured",
        "- 1; signed medians show bias, and their trend across concurrency buckets the missing physics.", "",
        "| file | records | predicted | configurations | median abs error % | signed median % |",
        "|---|---|---|---|---|---|", *by_file, "",
        "## All files", "", markdown(df, records), "", *sections])
