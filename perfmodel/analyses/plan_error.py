"""Plan intervals from the model's cross-validated error and the power basis.

**Intervals.** A plan sizes units on the frontier's output tokens/s per GPU y. The model's held-out error of a
throughput (``analyses/model_error``: e = ln(predicted / measured), quantity ``rate``, the region of the chosen
point's batch; agentic records for agentic workloads) has 10th / 90th percentiles q10, q90, so at 80% the true
throughput lies in

    y_true in [y exp(-q90), y exp(-q10)]

and the units needed for a demand D (requests/s, r = y u / osl per unit, headroom h) in
``[ceil(D / (r exp(-q10) (1 - h))), ceil(D / (r exp(-q90) (1 - h)))]``; GPUs, MW and $/M tokens follow (MW with
the power basis's range, $ with the price range). A limit-filled plan keeps its GPUs; its capacity takes the band.

**Coverage.** ``validation/plan_coverage.coverage`` checks that band on configurations it never saw (docs/plan.md
states it; tests/test_plan_intervals.py holds it to 75-85%).

**Power basis** (``--power-basis``): ``board`` (default) the hardware's ``allin_power_w`` (provisioned all-in power
per GPU: rack or node power / GPUs; GPU TDP where absent, named), ``tdp`` the GPU TDP (``gpu_tdp_w``), ``measured``
a measured all-in draw under load (``data/measured-power/power.yaml``, sourced); a system without the figure falls
back to ``board``, its basis text starting ``FALLBACK board:`` and naming what is missing.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .. import catalog
from ..errors import SpecError

POWER_BASES = ("board", "tdp", "measured")
DEMAND_KINDS = ("requests_per_s", "output_tps", "tokens_per_day", "users", "sessions")
"""The demand kinds of a plan (``plan.Demand``) and the column names a demand file may use."""
MEASURED_POWER = Path("data") / "measured-power" / "power.yaml"
FOLDS = 5


def band(concurrency: float | None, agentic: bool, measured_hardware: bool = True) -> dict:
    """{lo, hi, mid, text}: the true throughput over the model's at 80%, exp(-q90) .. exp(-q10), and at the median,
    exp(-q50) (the held-out bias of the workload kind and region: ``mid`` < 1 where the model over-predicts), for a
    point of this concurrency (sequences in flight per instance). Without a measured record of the hardware the
    half-widths take, in quadrature, the spread of the measured hardware's own biases (``hardware_spread``):
        q90' = q50 + sqrt((q90 - q50)^2 + (z_0.9 s)^2),   q10' = q50 - sqrt((q50 - q10)^2 + (z_0.9 s)^2)."""
    from .model_error import half_widths, region_of
    h = half_widths("rate", region_of(concurrency), "agentic" if agentic else "all")
    q10, q50, q90 = h["q10"], h["bias"], h["q90"]
    text = (f"rate error, {h['workload']} records, {h['region']} ({h['rows']} held-out rows)")
    if not measured_hardware:
        hs = hardware_spread()
        extra = Z90 * hs["sd"]
        q90, q10 = q50 + math.hypot(q90 - q50, extra), q50 - math.hypot(q50 - q10, extra)
        text += (f", widened for hardware with no measured record (between-hardware bias sd {hs['sd']:.3f} over "
                 f"{hs['hardware']} measured hardware, in quadrature)")
    lo, hi, mid = math.exp(-q90), math.exp(-q10), math.exp(-q50)
    return {"lo": lo, "hi": hi, "mid": mid,
            "text": f"{text}: true/model {lo:.2f}-{hi:.2f}x at 80%, median {mid:.2f}x"}


Z90 = 1.2815515655446004
"""z of the 90th percentile of a standard normal (the 80% band's half-width in sd)."""


@functools.cache
def hardware_spread(min_rows: int = 20) -> dict:
    """{sd, hardware}: the standard deviation over hardware (each with >= ``min_rows`` held-out throughput rows in
    ``reports/crossval.csv``) of the hardware's median ln(predicted / measured): how far one hardware's bias sits
    from another's, the least an unmeasured hardware's unknown bias may be."""
    from .model_error import RATE_METRICS
    cv = pd.read_csv(catalog.builtin_root() / "reports" / "crossval.csv")
    ok = cv[(cv["status"] == "ok") & (cv["measured"] > 0) & (cv["predicted"] > 0)
            & cv["metric"].isin(list(RATE_METRICS))]
    e = np.log(ok["predicted"] / ok["measured"]) * ok["metric"].map(RATE_METRICS).astype(float)
    g = e.groupby(ok["hardware"]).agg(["count", "median"])
    g = g[g["count"] >= min_rows]
    return {"sd": float(g["median"].std(ddof=1)), "hardware": int(len(g))}


@functools.cache
def measured_hardware() -> frozenset[str]:
    """Hardware with a measured record in the shipped record files (data/shared/*.csv, data/measured/*.csv)."""
    from ..specs.records import project_measured_files, read_records, shared_data_files
    recs = [r for f in (*shared_data_files(), *project_measured_files()) for r in read_records(f)]
    return frozenset({r.hardware for r in recs} | {r.hardware_b for r in recs if r.hardware_b})


@functools.cache
def _measured() -> dict[str, tuple[float, str]]:
    from ..fileio import load_yaml
    p = catalog.builtin_root() / MEASURED_POWER
    if not p.is_file():
        return {}
    out = {}
    for i, d in enumerate(load_yaml(p) or []):
        try:
            v = float(d["value"])
            out[str(d["hardware"])] = (v, str(d["source"]))
        except (KeyError, TypeError, ValueError):
            raise SpecError("each entry needs hardware, value (W) and source", file=str(p), field=f"[{i}]") from None
        if not (math.isfinite(v) and v > 0):
            raise SpecError(f"must be a positive number of W, got {v!r}", file=str(p), field=f"[{i}].value")
    return out


def power(sysm, basis: str = "board") -> tuple[float, float, float, str]:
    """(W per GPU, low, high, basis text) of a system on a power basis (module docstring)."""
    if basis not in POWER_BASES:
        raise SpecError(f"unknown power basis {basis!r}; choose from {list(POWER_BASES)}", field="--power-basis")
    f = sysm.fields()
    if basis == "measured":
        hw = sysm.hardware_spec().id
        m = _measured().get(hw)
        if m is None:                              # a labelled fallback, not a stop: the board figure
            v, low, high, text = power(sysm, "board")
            return v, low, high, f"FALLBACK board: no measured draw of {hw} in {MEASURED_POWER.as_posix()}; {text}"
        return m[0], m[0], m[0], f"measured {m[0]:g} W ({m[1]})"
    field = "gpu_tdp_w" if basis == "tdp" or not f.get("allin_power_w") else "allin_power_w"
    v = f.get(field)
    if not v:
        raise SpecError(f"{sysm.name} has no {field} in the catalog", field="--power-basis")
    low, high, text = hw_range(sysm, field, float(v))
    return float(v), low, high, text


def hw_range(sysm, field: str, value: float) -> tuple[float, float, str]:
    """(low, high, basis) of a hardware field: the catalog range where the value is an estimate (else the value)."""
    p = getattr(sysm.hardware_spec().specs, field, None)
    status = getattr(p, "status", None) or "catalog"
    low, high = getattr(p, "low", None), getattr(p, "high", None)
    if sysm.hw_overrides.get(field) is not None or low is None or high is None:
        low = high = value
        status = "override" if sysm.hw_overrides.get(field) is not None else status
    return float(low), float(high), f"{field} {value:g} ({status})"


def read_demand_file(path: str) -> tuple[str, list[str], list[float]]:
    """(demand kind, period labels, values) of a demand CSV: a ``period`` column (any labels, e.g. dates or
    hours; optional, default the row number) and one demand column named by its kind (``requests_per_s``,
    ``output_tps``, ``tokens_per_day``, ``users``, ``sessions``). One-line SpecError naming the file and column
    on a missing file, no or two demand columns, or a value that is not a positive number."""
    p = Path(path)
    if not p.is_file():
        raise SpecError("no such file", file=str(p))
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SpecError(f"not a CSV: {str(exc).splitlines()[0][:80]}", file=str(p)) from None
    kinds = [c for c in df.columns if c in DEMAND_KINDS]
    if len(kinds) != 1:
        raise SpecError(f"needs exactly one demand column of {list(DEMAND_KINDS)}, found "
                        f"{kinds or list(df.columns)[:6]}", file=str(p), field="columns")
    other = [str(c) for c in df.columns if c not in kinds and c != "period"]
    if other:
        raise SpecError(f"unknown column {other[0]!r}: a demand file holds 'period' (the labels) and one demand "
                        "column", file=str(p), field="columns")
    kind = kinds[0]
    if not len(df):
        raise SpecError("no rows", file=str(p), field=kind)
    vals = pd.to_numeric(df[kind], errors="coerce").to_numpy(float)
    bad = [i for i, v in enumerate(vals) if not (math.isfinite(v) and v > 0)]
    if bad:
        raise SpecError(f"row {bad[0] + 2}: must be a positive number, got {df[kind].iloc[bad[0]]!r}",
                        file=str(p), field=kind)
    periods = [str(x) for x in df["period"]] if "period" in df.columns else [str(i + 1) for i in range(len(df))]
    return kind, periods, [float(v) for v in vals]
