"""Lambdified (numpy) versions of the sympy equations, built once per model structure and cached.

``compiled(model)`` returns a ``CompiledModel`` whose ``decode(**arrays)`` / ``prefill(**arrays)``
evaluate every output expression at once (common subexpressions shared), vectorized over arrays.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from ..equations.memory import memory
from ..equations.step import StepBuilder
from ..specs.model import ModelSpec


@dataclass
class Compiled:
    """One lambdified function: ``names`` outputs of ``args`` inputs."""

    args: list[str]
    names: list[str]
    exprs: list[sp.Expr]
    fn: object

    def __call__(self, values: dict) -> dict[str, np.ndarray]:
        try:
            argv = [values[a] for a in self.args]
        except KeyError as exc:
            raise KeyError(f"missing input {exc.args[0]!r} for the compiled equations") from None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = self.fn(*argv)
        return dict(zip(self.names, out))


    def call_unique(self, values: dict, n: int) -> dict[str, np.ndarray]:
        """Like __call__, but evaluates each distinct input row once and expands (same results).

        Inputs that are arrays of length n form the row key; scalars are shared. Worth it where many
        points share inputs (e.g. a prefill pool shared by many decode points).
        """
        arrays = {a: np.asarray(values[a], dtype=float) for a in self.args}
        varying = [a for a, v in arrays.items() if v.ndim == 1 and v.size == n and n > 1]
        first, inverse = unique_rows([arrays[a] for a in varying]) if varying else (None, None)
        if first is None or len(first) > 0.5 * n:
            out = self(values)
            return {k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in out.items()}
        sub = dict(values)
        sub.update({a: arrays[a][first] for a in varying})
        out = self(sub)
        return {k: np.broadcast_to(np.asarray(v, float), (len(first),))[inverse] for k, v in out.items()}


def unique_rows(cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(index of each distinct row's first occurrence, row -> distinct-row index) for equal-length columns.

    Column by column: 1-D unique codes combined in mixed radix and re-compressed, so it stays fast (no
    structured-row sort) and never overflows.
    """
    code = np.zeros(len(cols[0]), dtype=np.int64)
    for c in cols:
        _, inv = np.unique(c, return_inverse=True)
        _, code = np.unique(code * (int(inv.max()) + 1) + inv, return_inverse=True)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first, inverse.ravel()


NUMPY_MODULES = [{"ceiling": np.ceil, "Heaviside": lambda x, h0=0.5: np.heaviside(x, h0), "SMax": np.maximum,
                  "SMin": np.minimum}, "numpy"]
"""lambdify ``modules`` that map the equations' own functions to numpy (for derivatives compiled elsewhere)."""


def _compile(exprs: dict[str, sp.Expr]) -> Compiled:
    names = list(exprs)
    ex = [sp.sympify(exprs[n]) for n in names]
    syms = sorted(set().union(*(e.free_symbols for e in ex)), key=lambda s: s.name)
    fn = sp.lambdify(syms, ex, modules=NUMPY_MODULES, cse=True)
    return Compiled([s.name for s in syms], names, ex, fn)


@dataclass
class CompiledModel:
    model: ModelSpec
    builder: StepBuilder
    decode: Compiled
    prefill: Compiled


def _key(m: ModelSpec) -> str:
    return hashlib.sha1(json.dumps(m.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


_cache: dict[str, CompiledModel] = {}


def compiled(m: ModelSpec) -> CompiledModel:
    """Build and lambdify the equations of ``m`` (cached by the model's content)."""
    k = _key(m)
    if k not in _cache:
        b = StepBuilder(m)
        dec = b.decode()
        dec.update(memory(b))
        _cache[k] = CompiledModel(m, b, _compile(dec), _compile(b.prefill()))
    return _cache[k]
