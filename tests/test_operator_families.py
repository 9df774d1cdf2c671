"""Operator families own their costs (issue 39): perfmodel/model/ wraps each attention / FFN spec into one family
object, and nothing outside model/ tests a spec's operator type (isinstance, issubclass, ``type(x) is``)."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from perfmodel import catalog
from perfmodel.model import attention_family, ffn_family, is_moe, max_experts, tp_heads, uses_mla
from perfmodel.model.registry import ATTENTION_FAMILIES, FFN_FAMILIES
from perfmodel.specs import model as spec_model

PKG = Path(__file__).resolve().parents[1] / "perfmodel"
OPERATOR_SPECS = frozenset(c.__name__ for c in (*ATTENTION_FAMILIES, *FFN_FAMILIES))


def _names_in(node: ast.AST) -> set[str]:
    """Class names a type argument refers to: Name, dotted Attribute (its last part), tuples of them."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):   # isinstance(x, A | B)
        return _names_in(node.left) | _names_in(node.right)
    return set()


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> operator spec class, for ``from ...specs.model import MoE as X`` (and plain imports)."""
    out = {n: n for n in OPERATOR_SPECS}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and (n.module or "").endswith("specs.model"):
            out.update({a.asname: a.name for a in n.names if a.asname and a.name in OPERATOR_SPECS})
    return out


def operator_type_tests(source: str) -> list[tuple[int, str]]:
    """(line, class) of every isinstance / issubclass / ``type(x) is|==`` test against an operator spec class."""
    tree = ast.parse(source)
    alias = _aliases(tree)
    hits: list[tuple[int, str]] = []

    def note(node: ast.AST, names: set[str]) -> None:
        hits.extend((node.lineno, alias[n]) for n in sorted(names) if n in alias)

    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("isinstance", "issubclass")
                and len(n.args) == 2):
            note(n, _names_in(n.args[1]))
        elif isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.Eq, ast.IsNot, ast.NotEq, ast.In))
                                                for op in n.ops):
            sides = [n.left, *n.comparators]
            if any(isinstance(s, ast.Call) and isinstance(s.func, ast.Name) and s.func.id == "type" for s in sides):
                note(n, set().union(*(_names_in(s) for s in sides)))
    return hits


def test_no_operator_type_tests_outside_model():
    bad = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel.startswith("model/"):
            continue
        bad += [f"{rel}:{line} {cls}" for line, cls in operator_type_tests(p.read_text())]
    assert bad == [], "ask the operator family (perfmodel.model) instead of testing the spec type"


@pytest.mark.parametrize("source, expected", [
    ("from ..specs.model import MLA\ndef f(a):\n    return isinstance(a, MLA)\n", [(3, "MLA")]),
    ("def f(a):\n    if isinstance(a, (GQA, LinearAttention)):\n        return 1\n",
     [(2, "GQA"), (2, "LinearAttention")]),
    ("from perfmodel.specs.model import MoE as Experts\nok = any(isinstance(f, Experts) for f in fs)\n",
     [(2, "MoE")]),
    ("import perfmodel.specs.model as sm\nx = isinstance(f, sm.DenseFFN)\n", [(2, "DenseFFN")]),
    ("x = type(a) is CompressedAttention\n", [(1, "CompressedAttention")]),
    ("x = isinstance(a, MLA | GQA)\n", [(1, "GQA"), (1, "MLA")]),
    ("x = isinstance(w, (dict, WorkloadSpec)) or w.kind == 'agentic'\n", []),
])
def test_the_checker_flags_a_planted_violation(source, expected):
    assert operator_type_tests(source) == expected


def test_every_operator_kind_of_the_schema_has_a_family():
    def members(union_alias):
        return set(typing.get_args(typing.get_args(union_alias)[0]))
    assert members(spec_model.Attention) == set(ATTENTION_FAMILIES)
    assert members(spec_model.FFN) == set(FFN_FAMILIES)


def test_an_unknown_spec_type_is_refused():
    with pytest.raises(TypeError):
        attention_family(spec_model.DenseFFN(intermediate=8))
    with pytest.raises(TypeError):
        ffn_family(spec_model.Indexer(heads=1, head_dim=1, top_k=1), 8)


def test_whole_model_questions():
    v3, llama, qnext = catalog.model("deepseek-v3"), catalog.model("llama-3.1-8b"), catalog.model("qwen3-next-80b-a3b")
    assert is_moe(v3) and not is_moe(llama) and max_experts(v3) == 256 and max_experts(llama) == 0
    assert uses_mla(v3) and not uses_mla(llama) and not uses_mla(qnext)
    assert tp_heads(llama) == [32]
    lin = [a for a in qnext.attention.values() if a.kind == "linear"][0]
    assert lin.v_heads in tp_heads(qnext)
    assert attention_family(lin).has_linear_state and attention_family(lin).kv_per_token("fp8") == 0.0
    assert ffn_family(v3.ffn["moe"], v3.hidden_size).routed() is not None
    assert ffn_family(llama.ffn[next(iter(llama.ffn))], llama.hidden_size).routed() is None
