"""The family gate of a landing that moves fitted numbers (docs/accuracy.md, the ledger): compare two
``perfmodel crossval --by family --out FILE`` CSVs, before and after, and print the gate table.

    python scripts/family_gate.py reports/crossval-family.csv out/gate/crossval-family.csv

A landing passes when no data family of MIN_RECORDS or more records gets worse (median |error| of its left-out
rows) by more than TOLERANCE points and the all-rows median does not get worse. Exit status 0 on pass, 1 on fail.
"""

from __future__ import annotations

import sys

import pandas as pd

MIN_RECORDS = 5
TOLERANCE = 2.0


def family_medians(path: str) -> tuple[pd.DataFrame, float]:
    """Per family: records and median |error| (%) of the predicted rows; and the all-rows median."""
    d = pd.read_csv(path)
    d["abs_error"] = d["error_pct"].abs()
    g = d.groupby("family").agg(records=("id", "size"), median=("abs_error", "median"))
    return g, float(d["abs_error"].median())


def gate(before: str, after: str) -> tuple[pd.DataFrame, bool]:
    """The gate table (family, records, before, after, change, verdict) and whether the landing passes."""
    b, b_all = family_medians(before)
    a, a_all = family_medians(after)
    t = b.merge(a, left_index=True, right_index=True, how="outer", suffixes=("_before", "_after"))
    t["change"] = t["median_after"] - t["median_before"]
    gated = t["records_before"].fillna(0) >= MIN_RECORDS
    t["verdict"] = "not gated"
    t.loc[gated, "verdict"] = ["worse" if c > TOLERANCE else "ok" for c in t.loc[gated, "change"]]
    t.loc["all rows"] = [len(pd.read_csv(before)), b_all, len(pd.read_csv(after)), a_all, a_all - b_all,
                         "worse" if a_all > b_all else "ok"]
    return t, bool((t["verdict"] != "worse").all())


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    t, ok = gate(*argv)
    print(t.to_string(float_format=lambda v: f"{v:.1f}"))
    print("gate:", "passes" if ok else "fails")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
