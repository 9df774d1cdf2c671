"""`python -m perfmodel.claims.error_table [reports/crossval.csv [reports/validation.csv]]`: derive the model-error
table ``data/model-error/crossval-spread.csv`` from the cross-validated residuals (``analyses/model_error.class_table``),
with the agentic class from the cross-validated rows of ``data/shared/agentic.csv`` (held out by configuration),
or, where the crossval CSV has none, from its validation rows.

A module of its own, so that the library ``model_error`` is never both imported and run as __main__.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from .. import catalog
from ..analyses.model_error import AGENTIC_FILE, TABLE, class_table
from ..fileio import write_whole
from ..specs.records import record_setups


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    src = Path(argv[0] if argv else "reports/crossval.csv")
    if not src.is_file():
        print(f"error: {src}: no such crossval CSV (perfmodel crossval --report reports/crossval.md writes "
              f"reports/crossval.csv)", file=sys.stderr)
        return 2
    cv = pd.read_csv(src)
    val = Path(argv[1] if len(argv) > 1 else "reports/validation.csv")
    ag, ag_src = None, f"{src} (held out by configuration)"
    if "file" in cv.columns and (cv["file"] == AGENTIC_FILE).any():
        ag = cv[cv["file"] == AGENTIC_FILE]          # held out by configuration (agentic.csv is fitted now)
    elif val.is_file():
        ag_src = f"{val} (in sample)"
        v = pd.read_csv(val)
        ag = v[v["file"] == AGENTIC_FILE] if "file" in v.columns else None
    out = catalog.builtin_root() / TABLE
    files = sorted({*cv["file"].dropna().unique(), *([AGENTIC_FILE] if ag is not None and len(ag) else [])})
    t = class_table(cv, *record_setups(files), agentic=ag)
    write_whole(out, t.to_csv(index=False, float_format="%.5g"))
    n_ag = 0 if ag is None else len(ag)
    print(f"wrote {TABLE.as_posix()} ({len(t)} rows from {len(cv)} crossval rows of {src}; agentic class from {n_ag} "
          f"rows of {ag_src})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
