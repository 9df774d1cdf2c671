"""`python -m perfmodel.claims.error_table [reports/crossval.csv]`: derive the model-error table
``data/model-error/crossval-spread.csv`` from the cross-validated residuals (``model_error.spread_table``).

A module of its own, so that the library ``model_error`` is never both imported and run as __main__.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from .. import catalog
from .model_error import TABLE, _records, spread_table


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    src = Path(argv[0] if argv else "reports/crossval.csv")
    if not src.is_file():
        print(f"error: {src}: no such crossval CSV (perfmodel crossval --report reports/crossval.md writes "
              f"reports/crossval.csv)", file=sys.stderr)
        return 2
    cv = pd.read_csv(src)
    out = catalog.builtin_root() / TABLE
    out.parent.mkdir(parents=True, exist_ok=True)
    t = spread_table(cv, *_records(sorted(cv["file"].dropna().unique())))
    t.to_csv(out, index=False, float_format="%.5g")
    print(f"wrote {TABLE.as_posix()} ({len(t)} rows from {len(cv)} crossval rows of {src})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
