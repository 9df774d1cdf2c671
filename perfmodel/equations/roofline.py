"""Roofline building blocks.

A kernel with FLOPs f at rate F (efficiency e_F) and bytes m at bandwidth W (efficiency e_W) takes
    t = max(f / (F e_F), m / (W e_W)).
A collective moving m bytes per GPU over an instance of G GPUs in domains of D_dom GPUs takes
    t = m / (BW_coll e_ln) + latency,  1/BW_coll = (1 - f_out)/BW_link + f_out/BW_nic,
    f_out = max(0, 1 - D_dom/G)  (share of peers outside the scale-up domain).
A ring all-reduce of x bytes sends 2 (n-1)/n x bytes per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from .symbols import S


class _Extremum(sp.Function):
    """max/min of two arguments that sympy does not try to simplify at construction (fast to build,
    cse and lambdify). Numeric arguments evaluate; the derivative is the Heaviside selection of the
    winning argument, so sensitivities work."""

    nargs = 2
    _numeric = staticmethod(sp.Max)
    _sign = 1

    @classmethod
    def eval(cls, a, b):
        if a.is_Number and b.is_Number:
            return cls._numeric(a, b)
        return None

    def fdiff(self, argindex=1):
        a, b = self.args
        diff = (a - b) if argindex == 1 else (b - a)
        return sp.Heaviside(self._sign * diff, sp.S.Half)

    _word = "max"

    def _sympystr(self, printer):
        return f"{self._word}({printer._print(self.args[0])}, {printer._print(self.args[1])})"

    def _latex(self, printer):
        return rf"\{self._word}\left({printer._print(self.args[0])}, {printer._print(self.args[1])}\right)"


class SMax(_Extremum):
    """max(a, b); lambdified to numpy.maximum."""


class SMin(_Extremum):
    """min(a, b); lambdified to numpy.minimum."""

    _numeric = staticmethod(sp.Min)
    _sign = -1
    _word = "min"


class _Step(sp.Function):
    """ceil/floor that sympy keeps unevaluated for symbols and differentiates as 0 (piecewise constant, so
    sensitivities see the smooth terms); lambdified to numpy.ceil / numpy.floor."""

    nargs = 1
    _numeric = staticmethod(sp.ceiling)
    _word, _left, _right = "ceil", r"\lceil ", r" \rceil"

    @classmethod
    def eval(cls, a):
        if a.is_Number:
            return cls._numeric(a)
        return None

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _sympystr(self, printer):
        return f"{self._word}({printer._print(self.args[0])})"

    def _latex(self, printer):
        return rf"{self._left}{printer._print(self.args[0])}{self._right}"


class Ceil(_Step):
    """ceil(a); lambdified to numpy.ceil."""


class Floor(_Step):
    """floor(a); lambdified to numpy.floor."""

    _numeric = staticmethod(sp.floor)
    _word, _left, _right = "floor", r"\lfloor ", r" \rfloor"


def ceil_(a):
    return Ceil(sp.sympify(a))


def floor_(a):
    return Floor(sp.sympify(a))


def smax(a, b):
    return SMax(sp.sympify(a), sp.sympify(b))


def smin(a, b):
    return SMin(sp.sympify(a), sp.sympify(b))


def expected_max_normal(n):
    """E[max of n iid standard normals], n >= 1 (z(1) = 0, z(2) = 0.564, z(8) = 1.424, z(256) = 2.80).

    Blom's order-statistic position p = (n - 0.375) / (n + 0.25) through Tukey's lambda approximation of the
    normal quantile, Phi^-1(p) ~ 4.91 (p^0.14 - (1 - p)^0.14): within 5% of the exact value for n in 2..1024.
    """
    p = (n - sp.Rational(3, 8)) / (n + sp.Rational(1, 4))
    lam = sp.Float(0.14)
    return sp.Float(4.91) * (p ** lam - (1 - p) ** lam)


def indicator_gt1(n):
    """1 if the integer degree n > 1 else 0 (n >= 1): min(1, n - 1)."""
    return smin(1, n - 1)


@dataclass
class Kernel:
    """One kernel's demand: compute time and memory time (already divided by rates)."""

    name: str
    compute: sp.Expr
    memory: sp.Expr

    @property
    def time(self):
        return smax(self.compute, self.memory)


@dataclass
class Tally:
    """Accumulates kernels, link bytes and collective counts of one step."""

    kernels: list[Kernel] = field(default_factory=list)
    counts: dict = field(default_factory=dict)   # per-GPU FLOPs / bytes / collectives per step, by kind

    def count(self, key: str, expr, weight=1):
        self.counts[key] = self.counts.get(key, 0) + weight * expr

    def add(self, name: str, compute, memory, weight=1):
        self.kernels.append(Kernel(name, weight * compute, weight * memory))

    def time(self):
        return sp.Add(*[k.time for k in self.kernels])

    def by_name(self) -> dict[str, sp.Expr]:
        out: dict[str, sp.Expr] = {}
        for k in self.kernels:
            out[k.name] = out.get(k.name, 0) + k.time
        return out

    def by_resource(self) -> tuple[sp.Expr, sp.Expr]:
        """(compute-bound time, memory-bound time): each kernel's time goes to its binding resource."""
        c = sp.Add(*[k.time * sp.Heaviside(k.compute - k.memory, sp.Rational(1, 2)) for k in self.kernels])
        m = sp.Add(*[k.time * sp.Heaviside(k.memory - k.compute, sp.Rational(1, 2)) for k in self.kernels])
        return c, m


def collective_bandwidth():
    """Effective per-GPU collective bandwidth (B/s) given the instance size and the domain size."""
    f_out = smax(0, 1 - S["D_dom"] / S["G"])
    return 1 / ((1 - f_out) / S["BW_link"] + f_out / S["BW_nic"])


def allreduce_bytes(n, payload):
    """Bytes sent per GPU by a ring all-reduce of ``payload`` bytes over n GPUs."""
    return 2 * (n - 1) / n * payload
