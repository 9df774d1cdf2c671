import pytest

from perfmodel import catalog
from perfmodel.explain import explain


def _joined(text: str) -> list[str]:
    """explain's lines with wrapped continuation lines joined back."""
    lines = []
    for ln in text.splitlines():
        if ln.startswith("      ") and lines:
            lines[-1] += " " + ln.strip()
        else:
            lines.append(ln)
    return lines


def _terms_of_group(text, group):
    """{term name: sympy expression} read back from explain's text for one layer group, named subexpressions
    (u0 = ...) substituted."""
    import sympy as sp

    from perfmodel.equations.symbols import S
    lines = _joined(text)
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"## {group.count} x layer ({group.attention}"))
    loc = {**S, "max": sp.Max, "min": sp.Min, "floor": sp.floor, "ceil": sp.ceiling}
    terms = {}
    for ln in lines[start + 1:]:
        if ln.startswith("## "):
            break
        ln = ln.strip()
        if ln.startswith("- `u") and " = " in ln:
            name, e = ln[3:-1].split(" = ", 1)
            loc[name] = sp.sympify(e, locals=loc)
        elif ln.startswith("- `") and ": `" in ln:
            name, e = ln[2:].split(": `", 1)
            terms[name] = sp.sympify(e[:-1], locals=loc)
    return terms


def _engine_terms(model, group):
    import sympy as sp

    from perfmodel.equations.roofline import Tally
    from perfmodel.equations.step import Phase, StepBuilder
    from perfmodel.equations.symbols import S as s
    ph = Phase(seqs=s["B"], dec_tokens=s["B"] * s["q"], pf_tokens=0, L_dec=s["L"], L_pf=0, kv_ctx=s["L"],
               logits=s["B"] * s["q"], speedup=s["s_dec"])
    tally = Tally()
    StepBuilder(model).layer(group.attention, group.ffn, ph, tally, 1)
    return {f"`{k.name}` {part}": sp.sympify(getattr(k, part)) for k in tally.kernels for part in ("compute", "memory")}


def test_explain_prints_the_lambdified_terms():
    text = explain(catalog.model("llama-3.1-70b"))
    flat = "\n".join(_joined(text))
    # 2 x params x the tokens padded to M_t-row tiles, over the SM waves, at the attention format rate and its GEMM
    # efficiency (e_mm4 where it runs on FP4 tensor cores); weight bytes / tp at HBM bandwidth
    line = next(x for x in _joined(text) if x.startswith("- `attn_proj` compute:"))
    assert line.startswith("- `attn_proj` compute: `301989888*") and "m_min" in flat and "n_sm" in flat
    assert "floor(" in flat and "F_a" in line and "e_mm4" in flat
    assert "- `attn_proj` memory: `150994944*b_a" in flat and "BW_hbm" in flat
    assert "| `BW_hbm` | B/s |" in text
    tex = explain(catalog.model("deepseek-v3"), latex=True)
    assert "\\frac" in tex and "experts" in tex


def test_explain_names_subexpressions_and_reproduces_the_engine_terms():
    """Issue 25: MoE expressions ran to 2,199-character lines. Now repeated subexpressions are named (u0 = ...)
    and lines wrap at LINE; substituted back, every kernel term equals the engine's, at random symbol values."""
    import random

    import sympy as sp

    from perfmodel.explain import LINE
    m = catalog.model("deepseek-v3")
    text = explain(m)
    terms = [ln for ln in text.splitlines() if ln.startswith(("- `", "  - `", "      "))]
    assert len(terms) > 50 and max(len(ln) for ln in terms) <= LINE + 40
    random.seed(0)
    for g in m.layers:
        shown, engine = _terms_of_group(text, g), _engine_terms(m, g)
        assert set(engine) <= set(shown)
        for name, e in engine.items():
            by_name = {str(x): random.uniform(1.5, 9.0) for x in e.free_symbols | shown[name].free_symbols}
            at = lambda expr: float(expr.xreplace({x: sp.Float(by_name[str(x)]) for x in expr.free_symbols}))  # noqa: E731
            assert at(shown[name]) == pytest.approx(at(e), rel=1e-9), name


def test_equations_doc_is_current():
    """docs/equations.md is what `perfmodel explain` prints (regenerate it when the equations change)."""
    from pathlib import Path

    from perfmodel.explain import equations_doc
    doc = Path(__file__).resolve().parent.parent / "docs" / "equations.md"
    assert doc.read_text().strip() == equations_doc().strip()


def test_latex_reads_names_literally_and_extrema_print_as_min_max():
    tex = explain(catalog.model("deepseek-v3"), latex=True)
    assert r"\mathrm{BW}_{\mathrm{hbm}}" in tex and "boldsymbol" not in tex
    assert "SMax" not in tex and "SMin" not in tex and r"\max\left(" in tex
    text = explain(catalog.model("llama-3.1-8b"))
    assert "SMin" not in text and "SMax" not in text and "min(" in text
