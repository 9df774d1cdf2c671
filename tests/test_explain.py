from perfmodel import catalog
from perfmodel.explain import explain


def test_explain_prints_the_lambdified_terms():
    text = explain(catalog.model("llama-3.1-70b"))
    # 2 x params x the tokens padded to M_t-row tiles, over the SM waves, at the attention format rate and its GEMM
    # efficiency (e_mm4 where it runs on FP4 tensor cores); weight bytes / tp at HBM bandwidth
    line = next(x for x in text.splitlines() if x.startswith("- `attn_proj` compute:"))
    assert line.startswith("- `attn_proj` compute: `301989888*") and "floor(B*pp*q*tp/(G*M_t))" in line
    assert "ceil(18432/(N_t*tp))" in line and "m_min" in line and "n_sm" in line
    assert "F_a*s_dec*tp*(e_mm + q_a*(-e_mm + e_mm4))" in line
    assert "- `attn_proj` memory: `150994944*b_a/(BW_hbm*e_w*s_dec*tp)`" in text
    assert "| `BW_hbm` | B/s |" in text
    tex = explain(catalog.model("deepseek-v3"), latex=True)
    assert "\\frac" in tex and "experts" in tex


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
