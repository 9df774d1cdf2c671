"""Fit one part of a profile variant (``<profile>@<variant>``) on the records of that configuration only.

A variant is a named stack configuration (profiles/*.yaml ``variants``): a sourced change of some parts of the
step, the calibrated defaults unchanged. Where one of its parts is not fixed by its sources (e.g. the gap between
kernels under programmatic dependent launch), it is scanned over a grid on the records of that configuration:

    x* = argmin_x  median_i |ln(pred_i(x) / meas_i)|      (an unsupported row counts UNSUPPORTED_LN)

with every other parameter at the variant's (or the profile's) central value. Leave-one-row-out: x*_(-i) fitted
without row i predicts row i; the spread of x*_(-i) is the range written beside the value. Frontier rows are read
on the variant's own frontier (validation/frontier_rows.frontier_value), point rows at their published point.

    python -m perfmodel.validation.variant_fit trtllm@min-latency --param kernel_overhead_us \
        --grid 2,2.25,2.5,2.75,3,3.5 --data data/shared/curve-end.csv --ids n62,n64,n66,n70,n72,n80,n82,n84
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from .. import catalog
from ..specs.records import read_records
from .frontier_rows import frontier_value
from .point_rows import predict_point
from .row_context import Unsupported, make_ctx
from .samples import central_params

UNSUPPORTED_LN = 2.0   # |ln error| charged for a row the variant cannot reach (e.g. a curve ending below the read)


def predict_table(profile_id: str, param: str, grid, records) -> pd.DataFrame:
    """ln(pred / meas) per record (rows) and grid value (columns); NaN where unsupported."""
    prof = catalog.profile(profile_id)
    out = pd.DataFrame(index=[r.id for r in records], columns=list(grid), dtype=float)
    for x in grid:
        prm = central_params(prof)
        prm[param] = np.array([float(x)])
        for r in records:
            try:
                ctx = make_ctx(r.hardware, r, prof, prm)
                v = (predict_point(r, ctx, []) if r.kind == "point" else frontier_value(r, ctx, []))[0]
                out.loc[r.id, x] = np.log(float(v) / r.value)
            except Unsupported:
                pass
    return out


def objective(ln: pd.DataFrame) -> pd.Series:
    """Median |ln error| per grid value (unsupported rows charged UNSUPPORTED_LN)."""
    return ln.abs().fillna(UNSUPPORTED_LN).median(axis=0)


def fit(ln: pd.DataFrame) -> dict:
    """Best grid value on all rows, and leave-one-row-out: the value fitted without each row and that row's error."""
    best = objective(ln).idxmin()
    loo = {}
    for rid in ln.index:
        x = objective(ln.drop(index=rid)).idxmin()
        loo[rid] = (x, ln.loc[rid, x])
    return {"value": best, "loo": loo, "range": (min(v[0] for v in loo.values()), max(v[0] for v in loo.values()))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m perfmodel.validation.variant_fit", description=__doc__.split("\n")[0])
    ap.add_argument("variant", help="profile@variant")
    ap.add_argument("--param", required=True)
    ap.add_argument("--grid", required=True, help="comma-separated values")
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--ids", required=True, help="comma-separated record ids of the configuration")
    a = ap.parse_args(argv)
    ids = a.ids.split(",")
    recs = [r for f in a.data for r in read_records(f) if r.id in ids]
    ln = predict_table(a.variant, a.param, [float(x) for x in a.grid.split(",")], recs)
    res = fit(ln)
    print((np.expm1(ln) * 100).round(0).to_string())
    print("median |ln error|:", objective(ln).round(3).to_dict())
    print(f"{a.param} = {res['value']:g} (leave-one-row-out range {res['range'][0]:g}-{res['range'][1]:g})")
    for rid, (x, e) in res["loo"].items():
        print(f"  without {rid}: {a.param} = {x:g}; {rid} predicted {100 * np.expm1(e):+.0f}%" if e == e
              else f"  without {rid}: {a.param} = {x:g}; {rid} unsupported")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
