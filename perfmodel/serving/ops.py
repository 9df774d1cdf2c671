"""The two backends of the serving arithmetic: numpy arrays over many operating points (``ARRAYS``) and Python
floats for one point (``FLOATS``, issue 49: one point in ~0.1 ms, ~10x faster than numpy on 1-element arrays).

The chunk mixture, the decode share, the closed loop, the TPOT tail and the result columns are written once
(serving/aggregated.py, queueing.py, prefill_first.py, finish.py) over a namespace ``ops`` of the few operations
they use: elementwise min / max / where / sqrt / ceil / floor / clip, ``any``, float conversion, the compiled step
equations and queueing forms of this kind of value. Both backends do the same IEEE operations in the same order,
so one point on floats equals the same point in an array, bit for bit (tests/test_point_path.py).

Floats follow numpy's NaN rules (``scalar_min``/``scalar_max``); where float arithmetic raises instead of giving
inf or NaN (x / 0, the root of a negative, overflow), or a form gives a complex or whole number, the float backend
raises and the caller (serving/point.py) takes the array path. ``where`` on floats evaluates both of its values
(as numpy does), so a guard against a division is written as a ``where`` inside the denominator.
"""

from __future__ import annotations

import contextlib
import math
from functools import lru_cache

import numpy as np

from ..engine.compiled import cached_functions, cached_sources, scalar_functions, scalar_max, scalar_min
from ..engine.evaluate import decode_symbols, prefill_inputs, prefill_symbols, symbol_inputs


class Arrays:
    """numpy over arrays of operating points."""

    minimum = staticmethod(np.minimum)
    maximum = staticmethod(np.maximum)
    where = staticmethod(np.where)
    sqrt = staticmethod(np.sqrt)
    ceil = staticmethod(np.ceil)
    floor = staticmethod(np.floor)
    isnan = staticmethod(np.isnan)
    clip = staticmethod(np.clip)
    logical_not = staticmethod(np.logical_not)

    @staticmethod
    def any(x) -> bool:
        return bool(np.any(x))

    @staticmethod
    def floats(x):
        """``x`` as floats (an array)."""
        return np.asarray(x, float)

    @staticmethod
    def ones_like(x):
        return np.ones_like(x)

    @staticmethod
    def full(n: int):
        """x -> ``x`` as a float array of the points' length ``n`` (broadcast only where it is not)."""
        def column(x):
            a = np.asarray(x, dtype=float)
            return a if a.shape == (n,) else np.broadcast_to(a, (n,))
        return column

    @staticmethod
    def fill(value, n: int):
        """A column of ``n`` copies of ``value`` (a string or NaN)."""
        return np.full(n, value, dtype=object if isinstance(value, str) else float)

    @staticmethod
    def zeros(n: int):
        return np.zeros(n)

    @staticmethod
    def argmax_name(values: list, names: tuple):
        """The name of the largest of ``values`` per point (the first maximum; the first NaN where there is one)."""
        return np.array(names)[np.argmax(np.stack(values), axis=0)]

    quiet = staticmethod(lambda: np.errstate(divide="ignore", invalid="ignore", over="ignore"))

    @staticmethod
    def queue() -> dict:
        """The queueing forms (equations/queueing.py), each with cs2 as its last positional argument."""
        return raw_queue()

    @staticmethod
    def checked(out: dict) -> dict:
        return out

    @staticmethod
    def decode(cm, p: dict, vals: dict, mix) -> dict:
        """The compiled decode step at prefill mixture ``mix`` (arrays)."""
        return cm.decode(symbol_inputs({**p, "mix": mix}, vals))

    @staticmethod
    def prefill(cm, p: dict, vals: dict, tokens=None) -> dict:
        """The compiled prefill of one request (or ``tokens`` per step) (arrays)."""
        return cm.prefill(prefill_inputs(p, vals, tokens))


_QUIET = contextlib.nullcontext()


def _where(cond, a, b):
    return a if cond else b


def _float_ceil(x) -> float:
    return float(math.ceil(x))


def _float_floor(x) -> float:
    return float(math.floor(x))


def _float_clip(x, lo, hi):
    return scalar_min(scalar_max(x, lo), hi)


def _floats(out: dict | None) -> dict:
    """The compiled outputs of one point (``Compiled.scalar_over``); TypeError where float arithmetic raised."""
    if out is None:
        raise TypeError("float arithmetic raised: numpy decides")
    return out


class Floats:
    """Python floats, one operating point."""

    minimum = staticmethod(scalar_min)
    maximum = staticmethod(scalar_max)
    where = staticmethod(_where)
    sqrt = staticmethod(math.sqrt)
    ceil = staticmethod(_float_ceil)
    floor = staticmethod(_float_floor)
    isnan = staticmethod(math.isnan)
    clip = staticmethod(_float_clip)
    any = staticmethod(bool)
    floats = staticmethod(float)
    quiet = staticmethod(lambda: _QUIET)

    @staticmethod
    def logical_not(x) -> bool:
        return not x

    @staticmethod
    def ones_like(x) -> float:
        return 1.0

    @staticmethod
    def full(n):
        """x -> ``x`` as a Python float."""
        return float

    @staticmethod
    def fill(value, n):
        return value

    @staticmethod
    def zeros(n) -> float:
        return 0.0

    @staticmethod
    def argmax_name(values: list, names: tuple) -> str:
        """np.argmax over the values: the first maximum, or the first NaN where there is one."""
        for i, v in enumerate(values):
            if v != v:
                return names[i]
        return names[values.index(max(values))]

    @staticmethod
    def queue() -> dict:
        return _float_queue()

    @staticmethod
    def checked(out: dict) -> dict:
        """``out`` if every value is a float; TypeError where a form gave a complex or whole number (numpy decides)."""
        for v in out.values():
            if type(v) is not float:
                raise TypeError("not a float: numpy decides")
        return out

    @staticmethod
    def decode(cm, p: dict, vals: dict, mix: float) -> dict:
        """``Arrays.decode`` of one point on floats (``evaluate.symbol_inputs``)."""
        x = decode_symbols(p, mix)
        if not math.isnan(p["max_running"]):
            x["N_run"] = p["max_running"]
        return _floats(cm.decode.scalar_over(vals, x))

    @staticmethod
    def prefill(cm, p: dict, vals: dict, tokens: float | None = None) -> dict:
        """``Arrays.prefill`` of one point on floats (``evaluate.prefill_inputs``)."""
        return _floats(cm.prefill.scalar_over(vals, prefill_symbols(p, scalar_max(p["new"], 1.0), tokens)))


@lru_cache(maxsize=1)
def raw_queue() -> dict:
    """The queueing forms of equations/queueing.py, lambdified (numpy) once and read from the disk cache after that
    without importing sympy, cs2 (the squared coefficient of variation of the prefill service time) their last
    positional argument (serving/queueing.compiled_queue takes it by keyword)."""
    return cached_functions("queue", _build_queue)


@lru_cache(maxsize=1)
def queue_sources() -> dict[str, str]:
    """The generated source of each queueing form (cs2 its last positional argument)."""
    return cached_sources("queue", _build_queue)


def _build_queue() -> dict:
    from ..engine.compiled import NUMPY_MODULES
    from ..equations.queueing import lambdified_queue
    return lambdified_queue(NUMPY_MODULES)


@lru_cache(maxsize=1)
def _float_queue() -> dict:
    """The queueing forms' generated code on Python floats; cs2 last."""
    return scalar_functions(queue_sources(), {"log": math.log})


ARRAYS = Arrays()
FLOATS = Floats()
