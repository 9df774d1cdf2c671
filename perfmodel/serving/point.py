"""One operating point of aggregated (or decode-only) serving on Python floats: ``aggregated.evaluate_columns``
for one point, without numpy arrays (issue 49: one point in ~0.1 ms).

The same functions as the array path (``aggregated.decode_under_load``, ``finish.finish``) on the float backend
(serving/ops.FLOATS): one code path, so every column equals the array path's bit for bit (tests/test_point_path.py).
This module is the scope check: a fixed batch, no client count and no arrival rate (the closed loop of the clients
the batch needs), an engine that mixes prefill into its decode steps and catalog setups whose symbols are scalars.
Anything else, and any point where float arithmetic raises (x / 0, the root of a negative, overflow: numpy would
give inf or NaN), returns None and the caller takes the array path.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.compiled import compiled
from ..engine.evaluate import OPTIONAL_COLUMNS, POINT_COLUMNS, Setup
from .aggregated import decode_under_load
from .finish import finish
from .ops import FLOATS


def point_columns(setup: Setup, points: dict, vals: dict) -> dict | None:
    """``aggregated.evaluate_columns(setup, points, symbol_values=vals)`` of one point as a mapping of Python
    scalars (None where this path does not apply: the caller evaluates the arrays)."""
    try:
        p = {k: float(points[k]) for k in POINT_COLUMNS}
        for k, default in OPTIONAL_COLUMNS.items():
            p[k] = float(points.get(k, default))
    except (TypeError, ValueError):        # arrays of points, or a missing column: the array path decides
        return None
    fvals = _float_values(vals)
    if (fvals is None or math.isnan(p["batch"]) or not math.isnan(p["concurrency"])
            or not math.isnan(p["arrival_rate"]) or fvals.get("mixed_pf", 1.0) != 1.0):
        return None
    try:
        return _evaluate(setup, p, fvals)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None


_float_vals: dict[int, tuple[dict, dict | None]] = {}   # id(symbol values) -> (them, as Python floats or None)


def _float_values(vals: dict) -> dict | None:
    """The symbol values as Python floats (None where one is an array over points), kept per mapping object
    (api.predict_point binds a catalog setup's values once per process; they are not changed in place)."""
    hit = _float_vals.get(id(vals))
    if hit is not None and hit[0] is vals:
        return hit[1]
    out: dict | None = None
    if not any(isinstance(v, np.ndarray) and v.ndim > 0 for v in vals.values()):
        try:
            out = {k: float(v) for k, v in vals.items()}
        except (TypeError, ValueError):      # a value that is no number: the array path decides
            out = None
    if len(_float_vals) > 256:
        _float_vals.clear()
    _float_vals[id(vals)] = (vals, out)
    return out


def _evaluate(setup: Setup, p: dict, vals: dict) -> dict:
    """``aggregated.evaluate_columns`` of one fixed-batch point: the same functions on the float backend."""
    cm = compiled(setup.model)
    t_pf = float(FLOATS.prefill(cm, p, vals)["prefill_s"])
    d, load = decode_under_load(cm, p, vals, t_pf, FLOATS)
    return finish(setup, p, d, t_pf, vals, load, FLOATS)
