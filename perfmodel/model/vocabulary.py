"""The sympy vocabulary the operator families state their terms in (perfmodel/model/), below the equations that
build on them: max / min / ceil / floor that sympy keeps unevaluated (the compiled code maps them to numpy, or to
Python floats on one point: engine/compiled.py), the expected busiest of n normal loads, the 0/1 indicator of a
degree above 1, and the per-attention-kind KV byte symbols. equations/roofline.py and equations/symbols.py
re-export them (one definition).
"""

from __future__ import annotations

import sympy as sp


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

    def _latex(self, printer, exp=None):
        """LaTeX; ``exp``: the power it is raised to (sympy's printer passes it for a function as a base)."""
        tex = rf"\{self._word}\left({printer._print(self.args[0])}, {printer._print(self.args[1])}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


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

    def _latex(self, printer, exp=None):
        tex = rf"{self._left}{printer._print(self.args[0])}{self._right}"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"


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


def kv_symbols(attn_name: str) -> dict[str, sp.Symbol]:
    """Per attention kind j: entry bytes E_j, indexer-key bytes I_j, fixed state bytes R_j (format-dependent)."""
    return {k: sp.Symbol(f"{k}_{attn_name}", nonnegative=True) for k in ("E", "I", "R")}
