"""A fused per-point kernel generated from the same lambdified code as the numpy path (numba, optional).

The numpy path evaluates a compiled equation set one array operation at a time: ~450 operations per decode
point, each writing a temporary array. Here the lambdified source (printed from the sympy expressions, the
single source of truth) is rewritten into one loop over the points, which LLVM vectorizes:

- temporaries that read only scalar inputs (hardware, profile, formats) are computed once, before the loop;
- powers of varying operands with an exponent other than -1, 2 or 1/2 (a ``pow`` call stops vectorization)
  are *lifted*: numpy evaluates them (and the few statements they read) over the chunk first, vectorized,
  and the loop reads them as extra input rows;
- the rest run per point in the loop; output j of point i is stored into ``out[j, i]``.

Inputs per call: each array value is one argument ``v0, v1, ...`` (contiguous, read-only: one signature), the
lifted powers follow them, and the scalars form the vector ``S``.
One kernel is generated per (equation source, which inputs are arrays), compiled by numba
(``error_model="numpy"``: x / 0 is inf as in numpy) and cached on disk under ``$PERFMODEL_CACHE/kernels``
(file names from hashes only). Every other operation is IEEE arithmetic in the numpy path's order, so the
results are the numpy path's bit for bit on the tested models (tests/test_fused_kernel.py checks 1e-12
relative). All times in the equations stay in seconds, sizes in bytes.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import SpecError
from ..fileio import write_whole

HELPERS = '''
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_JIT = dict(cache={cache}, error_model="numpy", nogil=True)


@intrinsic
def _sqrt(typingctx, x):
    """IEEE square root as the llvm.sqrt intrinsic (vectorizable; np.sqrt lowers to a libm call)."""
    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.sqrt", [ir.DoubleType()])
        return builder.call(fn, args)
    return types.float64(types.float64), codegen


@njit(**_JIT)
def SMax(a, b):
    """np.maximum: NaN if either is NaN (one select, no branch)."""
    return a + 0.0 if (a >= b) | (a != a) else b + 0.0


@njit(**_JIT)
def SMin(a, b):
    """np.minimum: NaN if either is NaN (one select, no branch)."""
    return a + 0.0 if (a <= b) | (a != a) else b + 0.0


@njit(**_JIT)
def Heaviside(x, h0=0.5):
    """np.heaviside(x, h0)."""
    return 0.0 if x < 0 else (1.0 if x > 0 else (h0 + 0.0 if x == 0 else x))


@njit(**_JIT)
def ceiling(x):
    return np.ceil(x)


@njit(**_JIT)
def Ceil(x):  # noqa: N802  (the equations' own ceil)
    return np.ceil(x)


@njit(**_JIT)
def Floor(x):  # noqa: N802
    return np.floor(x)


@njit(**_JIT)
def sqrt(x):
    return _sqrt(x + 0.0)


@njit(**_JIT)
def _pow(a, b):
    return a ** float(b)
'''


def _const(node):
    """The value of a numeric literal (``-1.0`` parses as a unary minus), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _const(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    return None


class _Pow(ast.NodeTransformer):
    """a ** b in the loop. Exponents -1, 2 and 0.5 become 1 / a, a * a and sqrt(a) (numpy's fast paths for an
    array base, exact in IEEE arithmetic); any other power of a varying operand (libm or SIMD pow, a call that
    stops vectorization) is taken out of the loop: ``lifted`` collects it, numpy evaluates it before the
    kernel runs, exactly as the numpy path does, and the loop reads it as the next input row. Powers of
    loop-invariant operands call libm's pow, as Python's float power does."""

    def __init__(self, dyn: set[str], first_row: int):
        self.dyn, self.row = dyn, first_row
        self.lifted: list[ast.expr] = []

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow):
            return node
        if not (_names(node) & self.dyn):        # Python floats in the numpy path: libm pow, whatever b is
            return ast.Call(ast.Name("_pow", ast.Load()), [node.left, node.right], [])
        e = _const(node.right)
        if e == -1:
            return ast.BinOp(ast.Constant(1.0), ast.Div(), node.left)
        if e == 2:
            return ast.BinOp(node.left, ast.Mult(), node.left)
        if e == 0.5:
            return ast.Call(ast.Name("sqrt", ast.Load()), [node.left], [])
        if any(isinstance(x, ast.Subscript) for x in ast.walk(node)):     # holds a lifted power: stays
            return ast.Call(ast.Name("_pow", ast.Load()), [node.left, node.right], [])
        self.lifted.append(node)
        self.row += 1
        return ast.Subscript(ast.Name(f"v{self.row - 1}", ast.Load()), ast.Name("i", ast.Load()), ast.Load())


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def kernel_source(source: str, varying: list[bool], cache: bool = True) -> tuple[str, str]:
    """Rewrite a lambdified function (``def _lambdifygenerated(a, b, ...): x0 = ...; return [...]``) for the
    inputs marked ``varying`` (arrays; the rest scalars) into (numba module source of
    ``kernel(v0, v1, ..., S, out, start, n)``: points ``start .. start + n`` of ``out``, numpy source of
    ``lifted(a, b, ...)``: the varying powers the kernel reads as its last rows ``v``)."""
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise ValueError("generated code is not one function")
    args = [a.arg for a in fn.args.args]
    dyn = {a for a, v in zip(args, varying) if v}
    head, loop = [], []
    for j, a in enumerate(x for x, v in zip(args, varying) if v):
        loop.append(f"{a} = v{j}[i]")
    for j, a in enumerate(x for x, v in zip(args, varying) if not v):
        head.append(f"{a} = S[{j}]")
    *body, ret = fn.body
    if not isinstance(ret, ast.Return) or not isinstance(ret.value, (ast.List, ast.Tuple)):
        raise ValueError("generated code does not return a list")
    pw = _Pow(dyn, len(dyn))
    assigned: dict[str, ast.Assign] = {}
    order: list[tuple[str, ast.Assign]] = []     # (target, statement) in the generated code's order
    for st in body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            raise ValueError(f"unexpected statement in generated code: {ast.unparse(st)}")
        target = st.targets[0].id
        assigned[target] = st
        order.append((target, st))
        varies = bool(_names(st.value) & dyn)
        line = ast.unparse(pw.visit(ast.parse(ast.unparse(st)).body[0]))
        if varies:
            dyn.add(target)
            loop.append(line)
        else:
            head.append(line)
    for j, e in enumerate(ret.value.elts):
        loop.append(f"out[{j}, k] = {ast.unparse(pw.visit(ast.parse(ast.unparse(e), mode='eval').body))}")
    ind, ind2 = "\n    ", "\n        "
    # unsigned indices: numba then emits no negative-index wraparound, and the stores stay contiguous
    rows = ", ".join(f"v{j}" for j in range(pw.row))
    kern = (HELPERS.format(cache=cache) + f"\n\n@njit(**_JIT)\ndef kernel({rows + ', ' if rows else ''}S, out, start, n):"
            + ind + ind.join(["start = np.uint64(start)", *head, "for i in range(np.uint64(n)):"])
            + ind2 + ind2.join(["k = start + i", *loop]) + "\n")
    # the lifted powers with the statements they read (their cone), in the original order, as numpy code
    need, todo = set(), [n for p in pw.lifted for n in _names(p)]
    while todo:
        n = todo.pop()
        if n in assigned and n not in need:
            need.add(n)
            todo += list(_names(assigned[n].value))
    cone = [ast.unparse(st) for target, st in order if target in need]
    lifted = (f"def lifted({', '.join(args)}):" + ind + ind.join(cone + [
        "return [" + ", ".join(ast.unparse(p) for p in pw.lifted) + "]"]) + "\n")
    return kern, lifted


@lru_cache(maxsize=1)
def available() -> bool:
    """True when numba is installed (``pip install perfmodel[fast]``)."""
    return importlib.util.find_spec("numba") is not None


_kernels: dict[str, object] = {}


@lru_cache(maxsize=1)
def _generator_version() -> str:
    """Hash of this module and numba's version: a changed generator never reuses an old kernel file."""
    import numba
    return hashlib.sha1(Path(__file__).read_bytes() + numba.__version__.encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def _llvm_options() -> None:
    """Let LLVM vectorize a loop with many input and output rows: its default allows 8 runtime alias
    checks, and a decode kernel reads ~20 rows and writes ~30 (checked once per call, not per point)."""
    import llvmlite.binding as llvm
    llvm.set_option("", "-runtime-memory-check-threshold=100000")
    llvm.set_option("", "-vectorize-memory-check-threshold=100000")


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the fused kernel module {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod           # numba's cache locator finds functions by their module
    spec.loader.exec_module(mod)
    return mod


def kernel(source: str, varying: list[bool], cache_dir: Path | None, namespace: dict):
    """(numba kernel, numpy ``lifted`` function) for ``source`` with these inputs varying (from memory, the
    disk cache or a fresh compile). ``namespace``: the globals of the numpy code (compiled._namespace)."""
    key = hashlib.sha1((_generator_version() + source + "|" + "".join("1" if v else "0" for v in varying))
                       .encode()).hexdigest()[:24]
    if key in _kernels:
        return _kernels[key]
    name = f"perfmodel_kernel_{key}"
    _llvm_options()
    kern = None
    kern_src, lifted_src = kernel_source(source, varying, cache=cache_dir is not None)
    if cache_dir is not None:
        try:
            d = cache_dir / "kernels"
            path = d / f"{name}.py"
            if not path.is_file():
                try:
                    write_whole(path, kern_src)
                except SpecError as exc:
                    raise OSError(str(exc)) from None
            kern = _import(path, name).kernel
        except OSError:
            kern_src, _ = kernel_source(source, varying, cache=False)
    if kern is None:
        ns: dict = {}
        exec(compile(kern_src, f"<{name}>", "exec"), ns)  # noqa: S102 - our own generated code
        kern = ns["kernel"]
    ns = dict(namespace)
    exec(compile(lifted_src, f"<{name} lifted>", "exec"), ns)  # noqa: S102 - our own generated code
    _kernels[key] = (kern, ns["lifted"])
    return _kernels[key]


CHUNK = 32768
"""Points per kernel call: the numpy pre-pass's temporaries and the packed inputs stay in cache (measured:
8k-32k points per chunk are equally fast, 250k is 1.5x slower)."""


def _row(x, m: int) -> np.ndarray:
    """One input row as the kernel takes every row: contiguous float64, read-only (one numba signature)."""
    r = np.ascontiguousarray(np.broadcast_to(np.asarray(x, dtype=np.float64), (m,))).view()
    r.flags.writeable = False
    return r


def evaluate(source: str, args: list[str], n_out: int, values: dict, n: int, cache_dir: Path | None,
             namespace: dict) -> np.ndarray:
    """Evaluate the kernel of ``source`` over ``n`` points: ``values`` maps each of ``args`` to a scalar or
    an array broadcastable to (n,), in CHUNK-point passes. Returns the outputs as an (n_out, n) array."""
    varying = [np.ndim(values[a]) > 0 for a in args]
    kern, lifted = kernel(source, varying, cache_dir, namespace)
    S = np.array([float(values[a]) for a, v in zip(args, varying) if not v])
    out = np.empty((n_out, n))
    for i in range(0, n, CHUNK):
        m = min(CHUNK, n - i)
        part = [np.broadcast_to(values[a], (n,))[i:i + m] if v else values[a] for a, v in zip(args, varying)]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            extra = lifted(*part)
        kern(*[_row(x, m) for x in [x for x, v in zip(part, varying) if v] + extra], S, out, i, m)
    return out
