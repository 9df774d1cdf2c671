"""Leave-one-out cross-validation of the calibration: each record predicted by profiles fitted without it.

For each record r of the target file: ``calibrate`` on every fitting record except r (the target file's other
rows plus the project's data/measured records), with a coarser grid (CV_GRID: 4 coarse points per axis, one
refinement of 3, about ten times cheaper than the full fit, so slightly pessimistic); then r is predicted with
the fitted profile of its engine (central value). If r's engine has no fit without r, the pooled fit over
the remaining records stands in. This is the accuracy to expect on a new record from the same kind of source;
the held-out files (data/holdout) test other kinds of source.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from .calibrate import calibrate, fit_family, fitted_profile, with_priors
from .predict_rows import Unsupported, central_params, predict_record, profile_id
from .records import Record

CV_GRID = (4, 3, 1)


def leave_one_out(targets: list[Record], others: list[Record] = (), grid_size: tuple[int, int, int] = CV_GRID,
                  progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per target record: id, metric, measured, predicted (fitted without it), error_pct, status."""
    from .. import catalog
    rows = []
    for rec in targets:
        base = {"id": rec.id, "kind": rec.kind, "hardware": rec.hardware, "model": rec.model,
                "engine": rec.engine or "", "metric": rec.metric, "measured": rec.value}
        train = [r for r in targets if r.id != rec.id] + list(others)
        try:
            pid = profile_id(rec)
            res = calibrate(train, grid_size=grid_size)
            if pid in res:
                fit, basis = res[pid], res[pid]["basis"]
            else:
                fit = fit_family(train, {p: with_priors(catalog.profile(p), []) for p in
                                         {profile_id(r) for r in train}}, grid_size=grid_size)
                basis = f"pooled fit over {len(fit['rows'])} records"
            prof = fitted_profile(pid, fit)
            pred = float(predict_record(rec, prof, central_params(prof))[0])
            rows.append({**base, "predicted": pred, "error_pct": (pred / rec.value - 1) * 100, "status": "ok",
                         "fit": basis})
        except Unsupported as exc:
            rows.append({**base, "predicted": np.nan, "error_pct": np.nan, "status": f"unsupported: {exc}",
                         "fit": ""})
        if progress:
            r = rows[-1]
            progress(f"{rec.id}: measured {rec.value:.4g}, " + (
                f"predicted without it {r['predicted']:.4g} ({r['error_pct']:+.1f}%)" if r["status"] == "ok"
                else r["status"]))
    return pd.DataFrame(rows)


def cv_markdown(df: pd.DataFrame, s: dict, data_file: str, command: str) -> str:
    lines = ["| id | hardware | model | engine | metric | measured | predicted without it | error_pct | fit |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples():
        pred = "" if np.isnan(r.predicted) else f"{r.predicted:.4g}"
        err = "" if np.isnan(r.error_pct) else f"{r.error_pct:+.1f}"
        lines.append(f"| {r.id} | {r.hardware} | {r.model} | {r.engine} | {r.metric} | {r.measured:.4g} | {pred} | "
                     f"{err} | {r.fit or r.status} |")
    return f"""# Leave-one-out cross-validation

Regenerate with one command (several minutes):

    {command}

Each record of `{data_file}` is predicted by profiles calibrated on every other record (plus the project's
`data/measured/` records), never on itself: the accuracy to expect on a new record from the same kind of
source. The grid is coarser than `perfmodel calibrate`'s (4 points per axis, one refinement), so these numbers
are slightly pessimistic. Method: `perfmodel/validation/crossval.py`.

{s['predicted']}/{s['rows']} rows predicted; median |error| {s['median_abs_error_pct']:.1f}%, mean |error|
{s['mean_abs_error_pct']:.1f}%, within ±25%: {s['within_25pct']:.0%}

{chr(10).join(lines)}
"""
