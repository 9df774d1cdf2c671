"""The load issue's figures from a per-record CSV (``perfmodel crossval --out`` or ``validate --out``): the rows of
``data/shared/agentic.csv`` by the record's concurrency band, median |error|, and the signed median error of TPOT
and of throughput (every ``*_tps_per_gpu`` metric), as docs/accuracy.md's ledger quotes them.

    python scripts/agentic_bands.py reports/crossval.csv [out/gate/after-config.csv ...]
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

RECORDS = "data/shared/agentic.csv"
BANDS = [(0, 16, "1-16"), (16, 64, "17-64"), (64, np.inf, "65+"), (16, np.inf, "17+"), (0, np.inf, "all")]


def bands(path: str) -> pd.DataFrame:
    """One row per band: rows predicted, median |error| %, signed TPOT %, signed throughput %."""
    rec = pd.read_csv(RECORDS)[["id", "concurrency"]]
    d = pd.read_csv(path)
    d = d[d["file"].astype(str).str.endswith("agentic.csv")].merge(rec, on="id")
    d = d[d["error_pct"].notna()]
    out = []
    for lo, hi, label in BANDS:
        b = d[(d["concurrency"] > lo) & (d["concurrency"] <= hi)]
        out.append({"band": label, "rows": len(b), "median_abs_pct": b["error_pct"].abs().median(),
                    "tpot_signed_pct": b[b["metric"] == "tpot_ms"]["error_pct"].median(),
                    "throughput_signed_pct": b[b["metric"].str.endswith("_tps_per_gpu")]["error_pct"].median()})
    return pd.DataFrame(out)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for path in argv:
        print(path)
        print(bands(path).to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
