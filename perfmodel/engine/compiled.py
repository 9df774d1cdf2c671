"""Lambdified (numpy) versions of the sympy equations, built once per model structure and cached.

``compiled(model)`` returns a ``CompiledModel`` whose ``decode(**arrays)`` / ``prefill(**arrays)``
evaluate every output expression at once (common subexpressions shared), vectorized over arrays.

Two caches: in memory (per process) and on disk (the generated numpy source, keyed by the model's content
and a hash of the equations' source code), so a new process skips the sympy build and lambdify. The sympy
expressions themselves are rebuilt on demand (``Compiled.exprs``: derivatives, explain). The disk cache lives
in ``$PERFMODEL_CACHE`` (default ``~/.cache/perfmodel``; ``off`` disables it); file names are
``model-<content hash>-<code hash>.json``, never built from the model's id.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

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
    fn: object
    _exprs: list[sp.Expr] | Callable[[], list[sp.Expr]] = field(repr=False, default_factory=list)

    @property
    def exprs(self) -> list[sp.Expr]:
        """The sympy expressions (rebuilt on first use when the function came from the disk cache)."""
        if callable(self._exprs):
            self._exprs = self._exprs()
        return self._exprs

    def __call__(self, values: dict) -> dict[str, np.ndarray]:
        try:
            argv = [values[a] for a in self.args]
        except KeyError as exc:
            raise KeyError(f"missing input {exc.args[0]!r} for the compiled equations") from None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = self.fn(*argv)
        return dict(zip(self.names, out))


NUMPY_MODULES = [{"ceiling": np.ceil, "Heaviside": lambda x, h0=0.5: np.heaviside(x, h0), "SMax": np.maximum, "Ceil": np.ceil, "Floor": np.floor,
                  "SMin": np.minimum}, "numpy"]
"""lambdify ``modules`` that map the equations' own functions to numpy (for derivatives compiled elsewhere)."""


def _compile(exprs: dict[str, sp.Expr]) -> Compiled:
    names = list(exprs)
    ex = [sp.sympify(exprs[n]) for n in names]
    syms = sorted(set().union(*(e.free_symbols for e in ex)), key=lambda s: s.name)
    fn = sp.lambdify(syms, ex, modules=NUMPY_MODULES, cse=True)
    return Compiled([s.name for s in syms], names, fn, ex)


@dataclass
class CompiledModel:
    model: ModelSpec
    decode: Compiled
    prefill: Compiled

    @property
    def builder(self) -> StepBuilder:
        return StepBuilder(self.model)


def _key(m: ModelSpec) -> str:
    return hashlib.sha1(json.dumps(m.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


@lru_cache(maxsize=1)
def _code_version() -> str:
    """Hash of everything that shapes the generated code: the equations, this module, sympy's version."""
    here = Path(__file__).resolve().parent
    files = sorted((here.parent / "equations").glob("*.py")) + [Path(__file__).resolve(),
                                                                 here.parent / "arch" / "params.py"]
    h = hashlib.sha1(sp.__version__.encode())
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _cache_dir() -> Path | None:
    d = os.environ.get("PERFMODEL_CACHE", "")
    if d.lower() == "off":
        return None
    return Path(d) if d else Path.home() / ".cache" / "perfmodel"


@lru_cache(maxsize=1)
def _namespace() -> dict:
    """The globals lambdify gives its functions for NUMPY_MODULES (numpy names and our mappings)."""
    return dict(sp.lambdify([], 0, modules=NUMPY_MODULES).__globals__)


def _save(path: Path, parts: dict[str, Compiled]) -> None:
    data = {k: {"args": c.args, "names": c.names, "source": inspect.getsource(c.fn)} for k, c in parts.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _load(path: Path, exprs: Callable[[str], Callable[[], list]]) -> dict[str, Compiled]:
    data = json.loads(path.read_text())
    out = {}
    for k, d in data.items():
        ns = dict(_namespace())
        exec(compile(d["source"], f"<perfmodel {k}>", "exec"), ns)  # our own generated code, keyed by hash
        out[k] = Compiled(d["args"], d["names"], ns["_lambdifygenerated"], exprs(k))
    return out


def _expressions(m: ModelSpec) -> dict[str, dict[str, sp.Expr]]:
    b = StepBuilder(m)
    dec = b.decode()
    dec.update(memory(b))
    return {"decode": dec, "prefill": b.prefill()}


_cache: dict[str, CompiledModel] = {}


def compiled(m: ModelSpec) -> CompiledModel:
    """Build and lambdify the equations of ``m`` (cached in memory and on disk by the model's content)."""
    k = _key(m)
    if k in _cache:
        return _cache[k]
    d = _cache_dir()
    # the name comes from hashes only, never from the model's id (user text: '../x', '/tmp/x', NUL, 300 chars)
    path = d / f"model-{k[:24]}-{_code_version()}.json" if d else None
    parts = None
    if path is not None and path.is_file():
        try:
            def lazy(part):
                return lambda: [sp.sympify(e) for e in _expressions(m)[part].values()]
            parts = _load(path, lazy)
        except Exception:  # noqa: BLE001 - a damaged cache file is rebuilt
            parts = None
    if parts is None:
        ex = _expressions(m)
        parts = {name: _compile(e) for name, e in ex.items()}
        if path is not None:
            try:
                _save(path, parts)
            except (OSError, ValueError):
                pass
    _cache[k] = CompiledModel(m, parts["decode"], parts["prefill"])
    return _cache[k]
