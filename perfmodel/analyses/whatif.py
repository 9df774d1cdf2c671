"""What-if: scale or set hardware fields and profile parameters, and compare the new frontier with the baseline.

``whatif("gb200-nvl72", "deepseek-v3", scale={"hbm_bandwidth": 2.4})`` returns a ``Comparison`` whose A is the
changed system and B the baseline, so ``curve.ratio`` is new / baseline along the interactivity axis.
Names: full hardware fields (``hbm_bandwidth_tbps``), short names (``systems.HW_ALIASES``: ``hbm_bandwidth``,
``nvlink_bandwidth``, ``fp4_flops``, ``flops``, ...), profile parameters (``decode_speedup``,
``step_overhead_ms``, ...) and ``acceptance_rate``.

**Jumps.** A multiple new / baseline read at an interactivity x is smooth in the changed input only while both
frontiers serve x with one deployment layout (``compare.LAYOUT_KEYS``: serving, weights, GPUs, TP, DP, EP, PP,
drafts, P/D instances, KV host tier; the batch moves continuously along a segment). ``jump`` names why it is
not: ``deployment`` (the change moved the point at x to another layout: A's row at or just above x has another
layout than B's), ``A segment edge`` / ``B segment edge`` (x lies between two frontier points of different
layouts on that curve, so the value read there interpolates across a change of layout); '' otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import SpecError
from .compare import LAYOUT_KEYS, Comparison, compare_frontiers
from .frontier import THROUGHPUT_METRICS, X, frontier, read_at
from .systems import DEFAULT_PROFILE, System, as_system, resolve_changes


def describe_changes(scale: dict | None, set_: dict | None) -> str:
    parts = [f"{k} x{v:g}" for k, v in (scale or {}).items()] + [f"{k}={v:g}" for k, v in (set_ or {}).items()]
    return ", ".join(parts) or "no change"


def changed_system(system: System, scale: dict | None = None, set_: dict | None = None) -> System:
    new = resolve_changes(system, scale, set_)
    return new.with_changes(label=f"{system.name} [{describe_changes(scale, set_)}]")


def whatif(hardware, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *, scale: dict | None = None,
           set_: dict | None = None, points: int = 60, metric: str = "total_tps_per_gpu",
           **frontier_kw) -> Comparison:
    """New frontier (A) against the baseline (B) and their ratio along the curve.

    ``scale``: name -> factor (dimensionless: ``{"hbm_bandwidth": 2.4}`` multiplies the TB/s by 2.4);
    ``set_``: name -> value in the field's spec unit (``hbm_capacity_gb`` GB, ``step_overhead_ms`` ms, ...);
    names as in the module docstring. ``metric``: the throughput both frontiers maximise and the curve compares
    (``frontier.THROUGHPUT_METRICS``). ``frontier_kw`` go to ``frontier``. Returns a ``Comparison`` whose
    ``curve.ratio`` and ``summary.ratio`` are new / baseline (dimensionless); ``curve.jump`` flags the grid points
    where the multiple is not smooth (module docstring)."""
    if metric not in THROUGHPUT_METRICS:
        raise SpecError(f"unknown metric {metric!r}; choose from {list(THROUGHPUT_METRICS)}", field="metric")
    base = as_system(hardware, profile)
    new = changed_system(base, scale, set_)
    base = base.with_changes(label=f"{base.name} [baseline]")
    fb = frontier(base, model, workload, profile, metric=metric, **frontier_kw)
    fa = frontier(new, model, workload, profile, metric=metric, **frontier_kw)
    cmp = compare_frontiers(fa, fb, points, metric)
    cmp.curve["jump"] = jumps(fa, fb, cmp.curve[X].to_numpy(float))
    return cmp


def _bracket(front: pd.DataFrame, x: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The frontier rows just below and at or just above each interactivity of ``x`` (below the first point:
    the first point for both)."""
    order = np.argsort(front[X].to_numpy(float), kind="stable")
    fx = front[X].to_numpy(float)[order]
    hi = np.searchsorted(fx, x * (1 - 1e-12)).clip(0, len(fx) - 1)
    lo = (hi - 1).clip(0)
    rows = front.iloc[order]
    return rows.iloc[lo].reset_index(drop=True), rows.iloc[hi].reset_index(drop=True)


def _differs(p: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """Per row, whether the layouts of ``p`` and ``q`` differ (LAYOUT_KEYS both have; NaN equals NaN)."""
    out = np.zeros(len(p), bool)
    for c in (c for c in LAYOUT_KEYS if c in p and c in q):
        u, v = p[c].to_numpy(object), q[c].to_numpy(object)
        same = (u == v) | (pd.isna(u) & pd.isna(v))
        out |= ~np.asarray(same, bool)
    return out


def jumps(a: pd.DataFrame, b: pd.DataFrame, x) -> np.ndarray:
    """Per interactivity of ``x`` (tok/s/user): '' where the multiple A/B is smooth, else the reasons joined by
    ', ': 'deployment' (A's layout at x differs from B's), 'A segment edge', 'B segment edge' (module
    docstring). An object array shaped like ``x``."""
    x = np.atleast_1d(np.asarray(x, float))
    a_lo, a_hi = _bracket(a, x)
    b_lo, b_hi = _bracket(b, x)
    flags = [("deployment", _differs(a_hi, b_hi)), ("A segment edge", _differs(a_lo, a_hi)),
             ("B segment edge", _differs(b_lo, b_hi))]
    out = np.full(len(x), "", dtype=object)
    for name, hit in flags:
        out = np.where(hit, np.where(out == "", name, out + ", " + name), out)
    return out


def layout_text(row: pd.Series) -> str:
    """A deployment layout in one phrase: 'aggregated fp8 TP4 DP1 EP1 PP1, 1 draft, batch 64' (a P/D split adds
    its instances)."""
    val = {c: row[c] for c in row.index if pd.notna(row[c])}
    num = {c: int(v) for c, v in val.items() if c in ("tp", "dp", "ep", "pp", "instances", "pf_instances",
                                                       "pf_gpus", "gpus", "spec_tokens")}
    parts = [str(val[c]) for c in ("serving", "weights") if c in val]
    parts.append(" ".join(f"{k.upper()}{num[k]}" for k in ("tp", "dp", "ep", "pp") if k in num))
    if val.get("serving") == "disaggregated" and {"instances", "pf_instances", "pf_gpus", "gpus"} <= set(num):
        parts.append(f"{num['pf_instances']}x{num['pf_gpus']} prefill + {num['instances']}x{num['gpus']} decode GPUs")
    text = " ".join(p for p in parts if p)
    if "spec_tokens" in num:
        text += f", {num['spec_tokens']} draft{'s' if num['spec_tokens'] != 1 else ''}"
    if bool(val.get("kv_host_tier", False)):
        text += ", KV host tier"
    return text + (f", batch {float(val['batch']):g}" if "batch" in val else "")


def multiple_at(cmp: Comparison, x: float, metric: str = "total_tps_per_gpu") -> dict:
    """The what-if's answer at one interactivity ``x`` (tok/s/user): {tps_per_user, a, b (``metric`` read on each
    frontier, frontier.read_at), ratio = a / b, a_deployment, b_deployment (the rows at or just above x),
    jump (module docstring; '' when smooth), text}. Beyond a curve's end its value is NaN and the text says so."""
    xs = np.array([float(x)])
    a, b = float(read_at(cmp.a, xs, metric)[0]), float(read_at(cmp.b, xs, metric)[0])
    (_, a_row), (_, b_row) = _bracket(cmp.a, xs), _bracket(cmp.b, xs)
    jump = str(jumps(cmp.a, cmp.b, xs)[0])
    na, nb = cmp.names
    out = {"tps_per_user": float(x), "metric": metric, "a": a, "b": b, "ratio": a / b if b else np.nan,
           "a_deployment": layout_text(a_row.iloc[0]), "b_deployment": layout_text(b_row.iloc[0]), "jump": jump}
    ends = [f"{n} ends at {float(f[X].max()):.4g} tok/s/user" for n, f, v in ((na, cmp.a, a), (nb, cmp.b, b))
            if not np.isfinite(v)]
    if ends:
        out["text"] = f"at {x:g} tok/s/user: no multiple ({'; '.join(ends)})"
        return out
    out["text"] = (f"at {x:g} tok/s/user: {metric} A {a:.4g}, B {b:.4g}, A/B {out['ratio']:.3f}; A: "
                   f"{out['a_deployment']}; B: {out['b_deployment']}" +
                   (f"; JUMP ({jump}): the multiple is not smooth in the change (a change of deployment layout, "
                    "not a scaling of one deployment)" if jump else "; smooth (one layout on both curves)"))
    return out
