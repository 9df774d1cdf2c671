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


def _compile(exprs: dict[str, sp.Expr]) -> Compiled:
    names = list(exprs)
    ex = [sp.sympify(exprs[n]) for n in names]
    syms = sorted(set().union(*(e.free_symbols for e in ex)), key=lambda s: s.name)
    fn = sp.lambdify(syms, ex, modules=[{"ceiling": np.ceil, "Heaviside": _heaviside, "SMax": np.maximum,
                                         "SMin": np.minimum}, "numpy"], cse=True)
    return Compiled([s.name for s in syms], names, ex, fn)


def _heaviside(x, h0=0.5):
    return np.heaviside(x, h0)


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
