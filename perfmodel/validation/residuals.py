"""Residual tables: prediction error by metric and by concurrency bucket, engine, hardware, model, serving.

error_pct = (predicted / measured - 1) x 100. Each cell: rows, median |error|, signed median error, P90 |error|.
A signed median that trends across concurrency buckets is the signature of a missing mechanism (the
fixed-versus-batch-dependent cost split, or the queueing), so the tables are read before and after each
physics change. The concurrency is the record's published concurrency (clients of the whole deployment).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..specs.records import Record

CONCURRENCY_BUCKETS = (0, 4, 16, 64, 256, np.inf)
BUCKET_LABELS = ("<=4", "5-16", "17-64", "65-256", ">256")
GROUPS = ("concurrency", "engine", "hardware", "serving", "model")


def with_context(df: pd.DataFrame, records: list[Record]) -> pd.DataFrame:
    """The predicted rows (status ok) with concurrency bucket and serving mode from their records."""
    ctx = pd.DataFrame([{"id": r.id, "conc": r.concurrency, "serving": r.serving or "aggregated"} for r in records],
                       columns=["id", "conc", "serving"]).drop_duplicates("id")   # an id repeated in two files
    out = df[df["status"] == "ok"].drop(columns=[c for c in ("serving",) if c in df]).merge(ctx, on="id", how="left")
    out["conc"] = pd.to_numeric(out["conc"], errors="coerce")       # a file without concurrencies: all None
    out["concurrency"] = pd.cut(out["conc"], CONCURRENCY_BUCKETS, labels=BUCKET_LABELS).astype(object)
    out.loc[out["conc"].isna(), "concurrency"] = "n/a"
    return out


def stats(err: pd.Series) -> dict:
    a = err.abs()
    return {"rows": len(err), "median_abs_pct": a.median(), "signed_median_pct": err.median(),
            "p90_abs_pct": a.quantile(0.9) if len(a) else np.nan}


def table(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """Rows: (metric, group value); columns: rows, median |error|, signed median, P90 |error|."""
    out = [{"metric": m, by: k, **stats(g["error_pct"])}
           for (m, k), g in df.groupby(["metric", by], sort=True, dropna=False)]
    if by == "concurrency":
        order = {b: i for i, b in enumerate((*BUCKET_LABELS, "n/a"))}
        out.sort(key=lambda r: (r["metric"], order.get(r[by], 99)))
    return pd.DataFrame(out)


def markdown(df: pd.DataFrame, records: list[Record], groups=GROUPS) -> str:
    """Markdown: overall per metric, then one table per grouping."""
    d = with_context(df, records)
    if d.empty:
        return "No predicted rows.\n"
    parts = ["| metric | rows | median abs error % | signed median % | P90 abs error % |", "|---|---|---|---|---|"]
    for m, g in d.groupby("metric"):
        s = stats(g["error_pct"])
        parts.append(f"| {m} | {s['rows']} | {s['median_abs_pct']:.1f} | {s['signed_median_pct']:+.1f} | "
                     f"{s['p90_abs_pct']:.1f} |")
    for by in groups:
        t = table(d, by)
        if t[by].nunique() < 2:
            continue
        parts += ["", f"By {by}:", "", f"| metric | {by} | rows | median abs error % | signed median % | P90 abs % |",
                  "|---|---|---|---|---|---|"]
        for r in t.itertuples(index=False):
            r = r._asdict()
            parts.append(f"| {r['metric']} | {r[by]} | {r['rows']} | {r['median_abs_pct']:.1f} | "
                         f"{r['signed_median_pct']:+.1f} | {r['p90_abs_pct']:.1f} |")
    return "\n".join(parts) + "\n"
