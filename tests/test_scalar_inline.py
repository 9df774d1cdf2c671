"""The one-point path's generated code with SMax, SMin, Heaviside, ceiling and Floor written inline
(engine/compiled._Inline, issue 58 item 4): the same floats bit for bit as the calls of SCALAR_NAMESPACE, the same
exceptions, each argument evaluated once and in order."""

from __future__ import annotations

import itertools
import math

from perfmodel.engine.compiled import SCALAR_NAMESPACE, _Inline, scalar_code

SOURCE = '''def _lambdifygenerated(a, b, c):
    x0 = SMax(a, b - c)
    x1 = SMin(SMax(x0, 1), a*c)
    x2 = Heaviside(a - b, 1/2) + Heaviside(-c)
    x3 = ceiling(a/c) + Floor(b) - Ceil(SMin(a, -b))
    x4 = SMax(SMin(a, b), SMax(c, a - b))
    return [x0, x1, x2, x3, x4]
'''
VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, 1, math.nan, math.inf, -math.inf, 1e308]


def _run(code) -> object:
    ns = dict(SCALAR_NAMESPACE)
    exec(code, ns)  # noqa: S102 - the test's own source
    return ns["_lambdifygenerated"]


def _same(x, y) -> bool:
    """Equal floats bit for bit (NaN equal to NaN, 0.0 apart from -0.0), of the same type."""
    return type(x) is type(y) and (x == y and math.copysign(1, x) == math.copysign(1, y) or (x != x and y != y))


def test_inlined_code_gives_the_calls_floats_bit_for_bit():
    plain, inline = _run(compile(SOURCE, "<plain>", "exec")), _run(scalar_code(SOURCE, "<inline>"))
    checked = 0
    for a, b, c in itertools.product(VALUES, repeat=3):
        try:
            want = plain(a, b, c)
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            try:
                inline(a, b, c)
            except type(exc):
                continue
            raise AssertionError(f"{a, b, c}: the calls raise {type(exc).__name__}, the inlined code does not")
        got = inline(a, b, c)
        assert all(_same(x, y) for x, y in zip(want, got)), (a, b, c, want, got)
        checked += 1
    assert checked > 100


def test_every_call_is_written_inline_and_each_argument_evaluated_once():
    import ast
    tree = _Inline().visit(ast.parse(SOURCE))
    text = ast.unparse(tree)
    assert not any(f"{f}(" in text for f in ("SMax", "SMin", "Heaviside", "ceiling", "Ceil", "Floor")), text
    # a planted argument with a side effect: evaluated once, a before b, as by the call
    seen: list[str] = []
    ns = dict(SCALAR_NAMESPACE, note=lambda tag, v: seen.append(tag) or v)
    exec(scalar_code("def f(x, y):\n    return SMax(note('a', x), note('b', y))\n", "<t>"), ns)  # noqa: S102
    assert ns["f"](1.0, 2.0) == 2.0 and seen == ["a", "b"]
