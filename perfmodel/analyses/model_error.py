"""The model's own error by region of the curve, from the cross-validated residuals.

Every held-out record of ``reports/crossval.csv`` (``perfmodel crossval --out reports/crossval.csv``: each
record predicted by profiles fitted without its whole configuration) gives e = ln(predicted / measured). Rows
are grouped by

- quantity: ``rate`` = throughput per GPU and per-user speed, with TPOT counted as its inverse
  (e = -ln(TPOT_pred / TPOT_meas): a TPOT too long is a speed too low); ``ttft`` = time to first token;
- region: the record's published concurrency (clients of the deployment), ``high-interactivity`` <= 16,
  ``middle`` 17-256, ``saturation`` > 256 (the buckets of ``validation/residuals.py`` merged in pairs); ``all``
  pools every row including those without a concurrency.

From pairs of rate rows it also derives ``rate-ratio`` (e_i - e_j of two systems at one setup: the same
model, engine, formats, layout, lengths and concurrency; region of that concurrency), the error of a ratio of
two systems, correlated parts cancelled; and ``rate-delta`` (e_i - e_j of one configuration's sweep at two
regions), the error of a ratio of two points on one curve.

``speed`` is the per-user speed alone (TPOT rows as 1/TPOT and per-user speed rows): the error of where on the
speed axis the model puts an operating point, by the same regions plus ``curve-end`` (a record's concurrency
<= ``CURVE_END_CONCURRENCY``: batch-1-like runs at the high-interactivity end of a curve, where a curve's end
is placed). Its q10 / q50 / q90 carry the spread and the measured bias of the model's speeds at the end.

Workload class: every group is also taken over the **agentic** records alone (``workload`` column ``agentic``):
the measured agentic results of ``data/shared/agentic.csv`` predicted by profiles that never saw them (the
profiles are calibrated on calibration, curve-end and inferencex-silicon records only), read from the
validation CSV (``reports/validation.csv``). An agentic claim reads the agentic rows of its quantity and region;
where they are fewer than ``MIN_ROWS`` the agentic ``all`` region stands in, then the all-workload row (the
stand-in is named in the verdict).

The derived table ``data/model-error/crossval-spread.csv`` holds rows, the 10th, 50th and 90th percentiles of e
and the median |error| in % per (quantity, region). Regenerate it (seconds; it reads the crossval rows and the
records they came from, ``specs/records.record_setups``, it fits nothing) with::

    python -m perfmodel.claims.error_table reports/crossval.csv

Use: a model figure f in region r lies, at the table's 80% coverage, in f exp(-q90) .. f exp(-q10); the
half-widths in ln space are ``down = max(q90, 0)`` and ``up = max(-q10, 0)`` (a model that overpredicts,
q90 > 0, leaves room below its figure). The region of a model operating point is its row's ``concurrency``
(concurrent requests per instance) on the same thresholds.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .. import catalog
from ..errors import SpecError

TABLE = Path("data") / "model-error" / "crossval-spread.csv"
REGIONS = (("high-interactivity", 0, 16), ("middle", 16, 256), ("saturation", 256, np.inf))
RATE_METRICS = {"total_tps_per_gpu": 1, "output_tps_per_gpu": 1, "input_tps_per_gpu": 1, "tps_per_user": 1,
                "tpot_ms": -1}
SPEED_METRICS = ("tpot_ms", "tps_per_user")
CURVE_END_CONCURRENCY = 4
COLUMNS = ["quantity", "region", "rows", "ln_q10", "ln_q50", "ln_q90", "median_abs_pct"]
MIN_ROWS = 20            # fewer held-out rows than this: a wider group stands in
AGENTIC_FILE = "data/shared/agentic.csv"


def region_of(concurrency: float | None) -> str:
    """The region of a concurrency (None or NaN: ``all``)."""
    if concurrency is None or not np.isfinite(concurrency):
        return "all"
    for name, lo, hi in REGIONS:
        if lo < concurrency <= hi:
            return name
    return "all"


def _pairs(ok: pd.DataFrame, setup: dict[str, tuple], by: str) -> pd.DataFrame:
    """Differences e_i - e_j (both orders) of rate rows that share a setup and differ in ``by``: ``hardware``
    (the error of a ratio of two systems at one setup; region: the shared concurrency) or ``concurrency``
    (the error of a ratio of two points of one configuration's sweep; region ``all``)."""
    r = ok[ok["quantity"] == "rate"].copy()
    def key(i, c):
        st = setup.get(i)
        if st is None:
            return None
        return st[1:] if by == "hardware" else (c, st[-1])    # setup without hardware; or sweep and metric
    r["key"] = [key(i, c) for i, c in zip(r["id"], r["config"])]
    r = r[r["key"].notna()]
    rows = []
    for key, g in r.groupby("key"):
        e, h = g["e"].to_numpy(), (g["hardware"] if by == "hardware" else g["region"]).to_numpy()
        reg = g["region"].iloc[0] if by == "hardware" else "all"
        for i in range(len(e)):
            for j in range(len(e)):
                if h[i] != h[j]:
                    rows.append((reg, e[i] - e[j]))
    return pd.DataFrame(rows, columns=["region", "e"])


def spread_table(cv: pd.DataFrame, concurrency: dict[str, float], setup: dict[str, tuple] | None = None
                 ) -> pd.DataFrame:
    """The per (quantity, region) percentiles of ln(predicted / measured) from crossval rows (``id``, ``metric``,
    ``measured``, ``predicted``, ``status``) and each record id's concurrency; with each record's ``setup``
    (hardware, then every other setup field incl. metric and concurrency) also ``rate-ratio`` (pairs at one
    setup on two systems) and ``rate-delta`` (pairs of one sweep at two regions)."""
    ok = cv[(cv["status"] == "ok") & (cv["measured"] > 0) & (cv["predicted"] > 0)].copy()
    ln = np.log(ok["predicted"] / ok["measured"])
    sign = ok["metric"].map(RATE_METRICS)
    ok["quantity"] = np.where(sign.notna(), "rate", np.where(ok["metric"] == "ttft_ms", "ttft", ""))
    ok["e"] = np.where(sign.notna(), ln * sign.fillna(1), ln)
    ok["region"] = [region_of(concurrency.get(i)) for i in ok["id"]]
    ok = ok[ok["quantity"] != ""]
    groups = [(q, g) for q, g in ok.groupby("quantity")]
    sp = ok[ok["metric"].isin(SPEED_METRICS)].copy()
    groups.append(("speed", sp))
    end = sp[[concurrency.get(i, np.nan) <= CURVE_END_CONCURRENCY for i in sp["id"]]].copy()
    end["region"] = "curve-end"
    groups.append(("speed", end))
    if setup:
        groups += [("rate-ratio", _pairs(ok, setup, "hardware")), ("rate-delta", _pairs(ok, setup, "concurrency"))]
    rows = []
    for q, g in groups:
        regs = ["curve-end"] if (len(g) and (g["region"] == "curve-end").all()) else [r[0] for r in REGIONS] + ["all"]
        for reg in regs:
            s = g if reg == "all" else g[g["region"] == reg]
            if len(s) == 0:
                continue
            e = s["e"].to_numpy()
            rows.append({"quantity": q, "region": reg, "rows": len(e), "ln_q10": np.quantile(e, 0.1),
                         "ln_q50": np.quantile(e, 0.5), "ln_q90": np.quantile(e, 0.9),
                         "median_abs_pct": float(np.median(np.abs(np.expm1(e)))) * 100})
    return pd.DataFrame(rows, columns=COLUMNS)


def class_table(cv: pd.DataFrame, concurrency: dict[str, float], setup: dict[str, tuple] | None = None,
                agentic: pd.DataFrame | None = None) -> pd.DataFrame:
    """``spread_table`` of the cross-validated rows (workload ``all``) and, with ``agentic`` (validation rows of
    held-out agentic records), the same table of those rows alone (workload ``agentic``)."""
    t = spread_table(cv, concurrency, setup).assign(workload="all")
    if agentic is not None and len(agentic):
        if "config" not in agentic.columns:       # a sweep: the setup without concurrency and metric
            agentic = agentic.assign(config=[str((setup or {}).get(i, (i,))[:-2]) for i in agentic["id"]])
        t = pd.concat([t, spread_table(agentic, concurrency, setup).assign(workload="agentic")], ignore_index=True)
    return t[["workload", *COLUMNS]]


@lru_cache(maxsize=1)
def table() -> pd.DataFrame:
    """The committed spread table (one-line SpecError if it is missing or malformed)."""
    path = catalog.builtin_root() / TABLE
    if not path.is_file():
        raise SpecError("model-error table missing; regenerate with: python -m perfmodel.claims.error_table "
                        "reports/crossval.csv", file=str(path))
    df = pd.read_csv(path)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise SpecError(f"model-error table lacks column {missing[0]!r}", file=str(path))
    return df


def half_widths(quantity: str, region: str, workload: str = "all") -> dict:
    """{'down', 'up'} ln half-widths and the table row they come from. The first group with at least MIN_ROWS
    rows among (workload, region), (workload, ``all``), (``all``, region), (``all``, ``all``) is read; ``stand_in``
    names a fallback from the asked workload class."""
    t = table()
    if "workload" not in t.columns:
        t = t.assign(workload="all")
    tries = [(workload, region), (workload, "all")] if workload != "all" else []
    tries += [("all", region), ("all", "all")]
    sub, wl, reg = None, None, None
    for wl, reg in tries:
        s = t[(t["workload"] == wl) & (t["quantity"] == quantity) & (t["region"] == reg)]
        if not s.empty and int(s["rows"].iloc[0]) >= MIN_ROWS:
            sub = s
            break
    if sub is None:
        raise SpecError(f"model-error table has no rows for quantity {quantity!r}", field="quantity")
    r = sub.iloc[0]
    return {"quantity": quantity, "region": reg, "workload": wl, "rows": int(r["rows"]),
            "stand_in": (f"fewer than {MIN_ROWS} held-out {workload} rows: all-workload rows stand in"
                         if wl != workload else None),
            "down": max(float(r["ln_q90"]), 0.0),
            "up": max(-float(r["ln_q10"]), 0.0), "median_abs_pct": float(r["median_abs_pct"]),
            "bias": float(r["ln_q50"]), "q10": float(r["ln_q10"]), "q90": float(r["ln_q90"])}

