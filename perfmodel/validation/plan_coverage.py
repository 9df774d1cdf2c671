"""The coverage of a plan's 80% throughput band (analyses/plan_error.band) on configurations it never saw.

The cross-validated rows (``reports/crossval.csv``, each predicted by profiles fitted without its configuration)
are split by configuration into ``folds``; each fold's throughput rows (e = ln(predicted / measured), TPOT counted
as its inverse: ``analyses/model_error.RATE_METRICS``) are tested against the q10-q90 band of their region
(``region_of`` their record's concurrency) computed on the other folds' rows (all of them where the region has
fewer than 20). The share inside is the coverage of the 80% band (docs/plan.md states it;
tests/test_plan_intervals.py holds it to 75-85%).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalog
from ..analyses.model_error import RATE_METRICS, region_of
from ..analyses.plan_error import FOLDS
from ..specs.records import record_setups


def coverage(cv: pd.DataFrame | None = None, folds: int = FOLDS) -> dict:
    """The share of held-out throughput rows inside the 80% band computed without their configuration's fold
    (module docstring): {rows, inside, share, by_region}."""
    if cv is None:
        cv = pd.read_csv(catalog.builtin_root() / "reports" / "crossval.csv")
    ok = cv[(cv["status"] == "ok") & (cv["measured"] > 0) & (cv["predicted"] > 0)
            & cv["metric"].isin(list(RATE_METRICS))].copy()
    sign = ok["metric"].map(RATE_METRICS).astype(float)
    ok["e"] = np.log(ok["predicted"] / ok["measured"]) * sign
    conc, _ = record_setups(sorted(ok["file"].dropna().unique()))
    ok["region"] = [region_of(conc.get(i)) for i in ok["id"]]
    configs = sorted(ok["config"].astype(str).unique())
    fold_of = {c: i % folds for i, c in enumerate(configs)}
    ok["fold"] = ok["config"].astype(str).map(fold_of)
    inside = np.zeros(len(ok), bool)
    for k in range(folds):
        test, train = ok["fold"] == k, ok["fold"] != k
        for reg, g in ok[test].groupby("region"):
            t = ok[train & (ok["region"] == reg)]["e"]
            t = t if len(t) >= 20 else ok[train]["e"]
            q10, q90 = np.quantile(t, 0.1), np.quantile(t, 0.9)
            inside[g.index.map(ok.index.get_loc)] = ((g["e"] >= q10) & (g["e"] <= q90)).to_numpy()
    by = {reg: float(inside[(ok["region"] == reg).to_numpy()].mean()) for reg in sorted(ok["region"].unique())}
    return {"rows": int(len(ok)), "configs": len(configs), "inside": int(inside.sum()),
            "share": float(inside.mean()), "by_region": by}
