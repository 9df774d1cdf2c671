"""Lambdified (numpy) versions of the sympy equations, built once per model structure and cached.

``compiled(model)`` returns a ``CompiledModel`` whose ``decode(**arrays)`` / ``prefill(**arrays)``
evaluate every output expression at once (common subexpressions shared), vectorized over arrays.

Two caches: in memory (per process) and on disk (the generated numpy source, keyed by the model's content
and a hash of the equations' source code), so a new process skips the sympy build and lambdify. The sympy
expressions themselves are rebuilt on demand (``Compiled.exprs``: derivatives, explain). The disk cache lives
in ``$PERFMODEL_CACHE`` (default ``~/.cache/perfmodel``; ``off`` disables it); file names are
``model-<content hash>-<code hash>.json``, never built from the model's id.

A process whose equations all come from the disk cache never imports sympy (nor perfmodel/equations, which
builds sympy terms at import): the generated code runs in a namespace of numpy names (``_namespace``, the one
lambdify gives it), and the code hash reads sympy's version from its files, not from the imported package.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.util
import inspect
import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..specs.model import ModelSpec

if TYPE_CHECKING:
    import sympy as sp

    from ..equations.step import StepBuilder


@dataclass
class Compiled:
    """One lambdified function: ``names`` outputs of ``args`` inputs."""

    args: list[str]
    names: list[str]
    fn: Callable[..., Any]
    _exprs: list[sp.Expr] | Callable[[], list[sp.Expr]] = field(repr=False, default_factory=list)
    source: str = field(repr=False, default="")     # the generated code of ``fn`` (the fused kernel's input)
    _scalar_fn: Callable[..., Any] | None = field(repr=False, default=None)
    _bases: dict = field(repr=False, default_factory=dict)    # id(base values) -> (them, their argument list)
    _slots: dict = field(repr=False, default_factory=dict)    # point symbols -> their (position, name) pairs

    @property
    def exprs(self) -> list[sp.Expr]:
        """The sympy expressions (rebuilt on first use when the function came from the disk cache)."""
        if callable(self._exprs):
            self._exprs = self._exprs()
        return self._exprs

    def __call__(self, values: dict, kernel: str | None = None) -> dict[str, np.ndarray | float]:
        """Every output at the points of ``values`` (symbol -> scalar or array): arrays, or floats for one point.

        ``kernel`` (default ``$PERFMODEL_KERNEL``, else ``auto``): ``numpy`` evaluates the lambdified code,
        inputs of more than NUMPY_CHUNK points in cache-sized chunks (same results, elementwise); ``fused``
        runs the fused kernel (``engine/fused.py``, numba); ``auto`` takes the fused kernel for calls of at
        least FUSED_MIN_POINTS points when numba is installed, else numpy."""
        try:
            argv = [values[a] for a in self.args]
        except KeyError as exc:
            raise KeyError(f"missing input {exc.args[0]!r} for the compiled equations") from None
        n, flat = 1, True
        for v in argv:
            if isinstance(v, np.ndarray):
                n, flat = max(n, v.size), flat and v.ndim <= 1
        mode = kernel or os.environ.get("PERFMODEL_KERNEL") or "auto"
        if mode not in ("auto", "numpy", "fused"):
            raise ValueError(f"PERFMODEL_KERNEL={mode!r}: choose auto, numpy or fused")
        if flat and mode == "fused":
            return self.fused(values)
        if flat and mode == "auto" and n >= FUSED_MIN_POINTS and _fused_available():
            try:
                return self.fused(values)
            except Exception as exc:  # noqa: BLE001 - a kernel numba cannot build: the numpy path decides
                _fused_failed(exc)
        if n == 1 and flat and mode == "auto":
            one = self._one_point(argv)
            if one is not None:
                return one
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if n <= NUMPY_CHUNK or not flat:
                return dict(zip(self.names, self.fn(*argv)))
            out = np.empty((len(self.names), n))
            for i in range(0, n, NUMPY_CHUNK):
                part = [v[i:i + NUMPY_CHUNK] if np.ndim(v) and np.size(v) == n else v for v in argv]
                for j, col in enumerate(self.fn(*part)):
                    out[j, i:i + NUMPY_CHUNK] = col
        return dict(zip(self.names, out))

    def _scalar_function(self) -> Callable[..., Any]:
        """The generated code run on Python floats (built on first use)."""
        if self._scalar_fn is None:
            ns: dict[str, Any] = dict(SCALAR_NAMESPACE)
            exec(scalar_code(self.source or inspect.getsource(self.fn), "<perfmodel one point>"), ns)  # noqa: S102
            self._scalar_fn = ns["_lambdifygenerated"]
        return self._scalar_fn

    def _one_point(self, argv: list) -> dict[str, np.ndarray | float] | None:
        """One operating point on Python floats (the same code, ~10x faster than numpy on 1-element arrays);
        None where Python float arithmetic raises (x / 0, sqrt of a negative, overflow): numpy decides."""
        return self._on_floats([float(v[0]) if isinstance(v, np.ndarray) and v.ndim else float(v) for v in argv])

    def scalar_over(self, base: dict, point: dict) -> dict[str, float] | None:
        """``scalar({**base, **point})`` without building the merged mapping: the argument list of ``base`` is kept
        per base mapping object (the one-point path binds a setup's symbol values once and never changes them in
        place) and the ``point`` symbols are written into a copy of it. A symbol in neither is None (float
        arithmetic then raises TypeError: the caller takes the array path)."""
        hit = self._bases.get(id(base))
        if hit is None or hit[0] is not base:
            if len(self._bases) > 64:
                self._bases.clear()
            hit = self._bases[id(base)] = (base, [base.get(a) for a in self.args])
        names = tuple(point)
        slots = self._slots.get(names)
        if slots is None:
            where = {a: i for i, a in enumerate(self.args)}
            slots = self._slots[names] = tuple((where[k], k) for k in names if k in where)
        argv = list(hit[1])
        for i, k in slots:
            argv[i] = point[k]
        return self._on_floats(argv)

    def _on_floats(self, args: list) -> dict | None:
        """The generated code on the Python floats ``args`` (in ``self.args`` order); None where it raises."""
        try:
            out = self._scalar_function()(*args)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return dict(zip(self.names, out))

    def fused(self, values: dict) -> dict[str, np.ndarray | float]:
        """The same outputs from the fused per-point kernel (``engine/fused.py``; numba required): one pass
        over the points, each output an array of the points' length."""
        from . import fused
        if not fused.available():
            raise ModuleNotFoundError("the fused kernel needs numba: pip install 'perfmodel[fast]' "
                                      "(or PERFMODEL_KERNEL=numpy)")
        try:
            vals = {a: values[a] for a in self.args}
        except KeyError as exc:
            raise KeyError(f"missing input {exc.args[0]!r} for the compiled equations") from None
        n = max((np.size(v) for v in vals.values()), default=1)
        out = fused.evaluate(self.source or inspect.getsource(self.fn), self.args, len(self.names), vals, n,
                             _cache_dir(), _namespace())
        return dict(zip(self.names, out))


NUMPY_CHUNK = 8192
"""Points per numpy pass: the temporaries of ~450 operations per decode point stay in cache (measured with
benchmarks/bench_decode.py --kernel numpy: 1.3x the throughput of one 250k-point pass)."""

FUSED_MIN_POINTS = 100_000
"""Calls of at least this many points take the fused kernel under ``auto``: a sweep where it is 3-4x faster
and its one-off compile (seconds per model structure and input pattern, then cached on disk) pays off;
frontiers and the report (calls of ~5,000 points) stay on the numpy path. Both give the same numbers."""


_fused_off: list[str] = []   # why the fused kernel failed in this process (auto mode then keeps to numpy)


def _fused_available() -> bool:
    from .fused import available
    return available() and not _fused_off


def _fused_failed(exc: Exception) -> None:
    import warnings
    _fused_off.append(f"{type(exc).__name__}: {exc}")
    warnings.warn(f"fused kernel unavailable, numpy path used ({_fused_off[-1].splitlines()[0][:200]})",
                  RuntimeWarning, stacklevel=3)


def scalar_max(a, b):
    return a if (a >= b or a != a) else b     # np.maximum: NaN if either is NaN


def scalar_min(a, b):
    return a if (a <= b or a != a) else b     # np.minimum: NaN if either is NaN


def _heaviside(x, h0=0.5):
    return 0.0 if x < 0 else (1.0 if x > 0 else (h0 if x == 0 else x))


class _Inline(ast.NodeTransformer):
    """``SMax(a, b)``, ``SMin(a, b)`` and ``Heaviside(x, h0)`` of the generated code written out as conditional
    expressions: the same comparisons as ``scalar_max``, ``scalar_min`` and ``_heaviside`` on the same values,
    so the same floats bit for bit, without a Python call each (a decode point makes ~200 of them); ``ceiling``,
    ``Ceil`` and ``Floor`` as ``float(math.ceil(x))`` / ``float(math.floor(x))`` (SCALAR_NAMESPACE's lambdas). An
    argument that is not a name or a number is evaluated once, in order, into a temporary (``:=``)."""

    def __init__(self) -> None:
        self.n = 0

    def _once(self, node: ast.expr) -> tuple[str, str]:
        """(the text that evaluates ``node`` first, the text that reads it again)."""
        text = ast.unparse(node)
        if isinstance(node, (ast.Name, ast.Constant)):
            return text, text
        self.n += 1
        return f"(_inl{self.n} := {text})", f"_inl{self.n}"

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if node.keywords or name not in ("SMax", "SMin", "Heaviside", "ceiling", "Ceil", "Floor"):
            return node
        if name in ("ceiling", "Ceil", "Floor") and len(node.args) == 1:
            return ast.parse(f"float({'_floor' if name == 'Floor' else '_ceil'}({ast.unparse(node.args[0])}))",
                             mode="eval").body
        if name in ("SMax", "SMin") and len(node.args) == 2:
            (a1, a), (b1, b) = self._once(node.args[0]), self._once(node.args[1])
            op = ">=" if name == "SMax" else "<="
            text = f"({a} if ({a1} {op} {b1} or {a} != {a}) else {b})"
        elif name == "Heaviside" and len(node.args) in (1, 2):
            h0 = node.args[1] if len(node.args) == 2 else ast.Constant(0.5)
            if any(isinstance(n, ast.Name) for n in ast.walk(h0)):
                return node
            x1, x = self._once(node.args[0])
            text = f"(0.0 if {x1} < 0 else (1.0 if {x} > 0 else ({ast.unparse(h0)} if {x} == 0 else {x})))"
        else:
            return node
        return ast.parse(text, mode="eval").body


def scalar_code(source: str, label: str) -> CodeType:
    """Generated ``source`` compiled for Python floats, its SMax, SMin and Heaviside calls inlined (``_Inline``)."""
    tree = ast.fix_missing_locations(_Inline().visit(ast.parse(source)))
    return compile(tree, label, "exec")


SCALAR_NAMESPACE = {"SMax": scalar_max, "SMin": scalar_min, "Heaviside": _heaviside, "sqrt": math.sqrt,
                    "_ceil": math.ceil, "_floor": math.floor,
                    "ceiling": lambda x: float(math.ceil(x)), "Ceil": lambda x: float(math.ceil(x)),
                    "Floor": lambda x: float(math.floor(x))}
"""The generated code's functions on Python floats (numpy's NaN rules; math raises where numpy gives inf/NaN,
and the caller falls back to numpy)."""


NUMPY_FUNCTIONS: dict[str, Any] = {
    "ceiling": np.ceil, "Heaviside": lambda x, h0=0.5: np.heaviside(x, h0), "SMax": np.maximum, "Ceil": np.ceil,
    "Floor": np.floor, "SMin": np.minimum}
NUMPY_MODULES = [NUMPY_FUNCTIONS, "numpy"]
"""lambdify ``modules`` that map the equations' own functions to numpy (for derivatives compiled elsewhere)."""


def _compile(exprs: dict[str, sp.Expr]) -> Compiled:
    import sympy as sp
    names = list(exprs)
    ex = [sp.sympify(exprs[n]) for n in names]
    syms = sorted(set().union(*(e.free_symbols for e in ex)), key=lambda s: s.name)
    fn = sp.lambdify(syms, ex, modules=NUMPY_MODULES, cse=True)
    return Compiled([s.name for s in syms], names, fn, ex, inspect.getsource(fn))


@dataclass
class CompiledModel:
    model: ModelSpec
    decode: Compiled
    prefill: Compiled

    @property
    def builder(self) -> StepBuilder:
        from ..equations.step import StepBuilder
        return StepBuilder(self.model)


def _key(m: ModelSpec) -> str:
    return hashlib.sha1(json.dumps(m.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


@lru_cache(maxsize=1)
def _code_version() -> str:
    """Hash of everything that shapes the generated code: the equations, the operator families (model/), this
    module, sympy's version."""
    here = Path(__file__).resolve().parent
    files = sorted((here.parent / "equations").glob("*.py")) + sorted((here.parent / "model").glob("*.py")) + [
        Path(__file__).resolve(), here.parent / "arch" / "params.py"]
    h = hashlib.sha1(_sympy_version())
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _cache_dir() -> Path | None:
    from ..fileio import cache_dir
    return cache_dir()


def _sympy_version() -> bytes:
    """sympy's release file (its ``__version__``), read without importing sympy (a fresh process whose equations
    come from the disk cache never imports it); the imported package's version where the file is not found."""
    spec = importlib.util.find_spec("sympy")
    release = Path(spec.origin).parent / "release.py" if spec is not None and spec.origin else None
    if release is not None and release.is_file():
        return release.read_bytes()
    import sympy
    return sympy.__version__.encode()


LAMBDIFY_EXTRAS = {"I": 1j, "Abs": abs, "builtins": builtins, "range": range}
"""What lambdify adds to the numpy names for ``modules=NUMPY_MODULES`` besides our own mappings (sympy's numpy
translations and its printer's helpers; tests/test_compiled_cache.py pins the namespace to lambdify's)."""


@lru_cache(maxsize=1)
def _namespace() -> dict:
    """The globals lambdify gives its functions for NUMPY_MODULES (numpy names and our mappings), built without
    sympy: ``import numpy; from numpy import *; from numpy.linalg import *`` (lambdify's import lines for numpy),
    LAMBDIFY_EXTRAS, then our mappings over them."""
    ns: dict = {}
    exec("import numpy; from numpy import *; from numpy.linalg import *", ns)  # noqa: S102 - fixed text
    ns.update(LAMBDIFY_EXTRAS)
    ns.update(NUMPY_FUNCTIONS)
    return ns


def _lambdify_namespace() -> dict:
    """The namespace sympy's lambdify itself builds for NUMPY_MODULES (imports sympy; the tests' reference)."""
    import sympy as sp
    return dict(sp.lambdify([], 0, modules=NUMPY_MODULES).__globals__)


def _save(path: Path, parts: dict[str, Compiled]) -> None:
    _write_json(path, {k: {"args": c.args, "names": c.names, "source": c.source} for k, c in parts.items()})


def _write_json(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` whole (``fileio.write_whole``: readers never see half a file); a file that
    cannot be written is an OSError (the callers then keep the cache in memory only)."""
    from ..errors import SpecError
    from ..fileio import write_whole
    try:
        write_whole(path, json.dumps(data))
    except SpecError as exc:
        raise OSError(str(exc)) from None


def _load(path: Path, exprs: Callable[[str], Callable[[], list]]) -> dict[str, Compiled]:
    data = json.loads(path.read_text())
    return {k: Compiled(d["args"], d["names"], _exec_source(d["source"], f"<perfmodel {k}>"), exprs(k), d["source"])
            for k, d in data.items()}


def cached_functions(name: str, build: Callable[[], dict[str, Callable[..., Any]]]) -> dict[str, Callable[..., Any]]:
    """Functions lambdify generates (``build()``: name -> lambdified function, numpy modules NUMPY_MODULES),
    kept on disk as their generated source (``cached_sources``), so a new process runs the same code without
    building it, or importing sympy."""
    return {k: _exec_source(src, f"<perfmodel {name} {k}>") for k, src in cached_sources(name, build).items()}


def cached_sources(name: str, build: Callable[[], dict[str, Callable[..., Any]]]) -> dict[str, str]:
    """The generated source of each function ``build()`` lambdifies, read from ``<name>-<code hash>.json`` in the
    cache directory (the code hash covers perfmodel/equations), else built and written there."""
    d = _cache_dir()
    path = d / f"{name}-{_code_version()}.json" if d else None
    if path is not None and path.is_file():
        try:
            sources = json.loads(path.read_text())
            if isinstance(sources, dict) and all(isinstance(v, str) for v in sources.values()):
                return sources
        except (OSError, ValueError):      # a damaged cache file is rebuilt
            pass
    sources = {k: inspect.getsource(fn) for k, fn in build().items()}
    if path is not None:
        try:
            _write_json(path, sources)
        except (OSError, TypeError, ValueError):
            pass
    return sources


def scalar_functions(sources: dict[str, str], extra: dict | None = None) -> dict[str, Callable[..., Any]]:
    """Generated functions (name -> source) run on Python floats: the source executed with SCALAR_NAMESPACE
    (and ``extra``, e.g. ``math.log``) for numpy's functions. They raise where numpy would return inf or NaN
    (x / 0, the log of 0); the caller then takes the numpy version."""
    out = {}
    for k, src in sources.items():
        ns: dict[str, Any] = {**SCALAR_NAMESPACE, **(extra or {})}
        exec(scalar_code(src, f"<perfmodel scalar {k}>"), ns)  # noqa: S102 - our own generated code
        out[k] = ns["_lambdifygenerated"]
    return out


def _exec_source(source: str, label: str) -> Callable[..., Any]:
    """The function ``_lambdifygenerated`` of lambdify's generated ``source``, run in lambdify's namespace (the
    names of it the code reads: ``namespace_for``)."""
    code = compile(source, label, "exec")
    ns = namespace_for(code)
    exec(code, ns)  # noqa: S102 - our own generated code, keyed by hash
    return ns["_lambdifygenerated"]


def _code_names(code: CodeType) -> set[str]:
    """Every name ``code`` and the code objects inside it read (globals and attributes alike)."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, CodeType):
            names |= _code_names(c)
    return names


def namespace_for(code: CodeType) -> dict:
    """The entries of lambdify's namespace (``_namespace``) that ``code`` reads, resolved one name at a time in
    the namespace's order (our functions, LAMBDIFY_EXTRAS, numpy.linalg's and numpy's public names, the numpy
    module): the same objects, without ``from numpy import *`` (which imports numpy's f2py and testing packages,
    ~40 ms of a fresh process). A name in none of them is left to the builtins, as in lambdify's namespace."""
    linalg = np.linalg
    ns: dict = {}
    for name in _code_names(code):
        if name in NUMPY_FUNCTIONS:
            ns[name] = NUMPY_FUNCTIONS[name]
        elif name in LAMBDIFY_EXTRAS:
            ns[name] = LAMBDIFY_EXTRAS[name]
        elif name in linalg.__all__:
            ns[name] = getattr(linalg, name)
        elif name in np.__all__:
            ns[name] = getattr(np, name)
        elif name == "numpy":
            ns[name] = np
    return ns


def _expressions(m: ModelSpec) -> dict[str, dict[str, sp.Expr]]:
    from ..equations.memory import memory
    from ..equations.step import StepBuilder
    b = StepBuilder(m)
    dec = b.decode()
    dec.update(memory(b))
    return {"decode": dec, "prefill": b.prefill()}


_cache: dict[str, CompiledModel] = {}


_by_object: dict[int, tuple[ModelSpec, str]] = {}   # id(spec) -> (spec, its content key)


def compiled(m: ModelSpec) -> CompiledModel:
    """Build and lambdify the equations of ``m`` (cached in memory and on disk by the model's content; the
    same spec object again skips hashing its content: specs are not changed in place)."""
    hit = _by_object.get(id(m))
    if hit is not None and hit[0] is m and hit[1] in _cache:
        return _cache[hit[1]]
    k = _key(m)
    _by_object[id(m)] = (m, k)
    if k in _cache:
        return _cache[k]
    d = _cache_dir()
    # the name comes from hashes only, never from the model's id (user text: '../x', '/tmp/x', NUL, 300 chars)
    path = d / f"model-{k[:24]}-{_code_version()}.json" if d else None
    parts = None
    if path is not None and path.is_file():
        try:
            def lazy(part):
                def exprs():
                    import sympy as sp
                    return [sp.sympify(e) for e in _expressions(m)[part].values()]
                return exprs
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
