"""Every generated comparison or share sentence of reports/claims.md agrees with the values it names (read back
from claims/sentences.csv and the CSV / JSON they come from), and the relation word follows from those values."""

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from perfmodel.report.sentences import Sentences, relation

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def test_relation_words_follow_from_the_values():
    assert relation(0.23, 0.03) == "higher than" and relation(0.03, 0.23) == "lower than"
    assert relation(1.05, 1.0) == "about the same as" and relation(1.2, 1.0) == "higher than"
    s = Sentences()
    text = s.share("gb300", 0.23, "x", 0.03, "y")
    assert "23%" in text and "higher than" in text and "few percent" not in text


def _source(src: str, claims: pd.DataFrame, js: dict) -> float:
    kind, cid, *rest = src.split(":", 2)
    if kind == "claims.csv":
        return float(claims.loc[cid, rest[0]])
    _, expr = rest[0].split(":", 1)
    return next(a["computed"] for a in js[cid]["arithmetic"] if a["expression"] == expr)


@pytest.mark.skipif(not (REPORTS / "claims" / "sentences.csv").is_file(), reason="report not generated")
def test_report_sentences_agree_with_their_csv():
    md = (REPORTS / "claims.md").read_text()
    rows = pd.read_csv(REPORTS / "claims" / "sentences.csv")
    claims = pd.read_csv(REPORTS / "claims" / "claims.csv").set_index("id")
    js = {r["id"]: r for r in json.loads((REPORTS / "claims" / "claims.json").read_text())}
    assert len(rows) > 0
    for r in rows.itertuples():
        assert r.sentence in md, r.sentence
        a, b = _source(r.a_source, claims, js), _source(r.b_source, claims, js)
        assert math.isclose(a, r.a_value, rel_tol=1e-6) and math.isclose(b, r.b_value, rel_tol=1e-6)
        assert r.relation == relation(a, b) and f" {r.relation} " in r.sentence
    # every 'N% of its own peak' in the report is a generated share of the headline's CSV row
    shares = [v * 100 for v in claims[["a_share_of_peak", "b_share_of_peak"]].stack().dropna()]
    for m in re.finditer(r"([\d.]+)% of its own peak", md):
        x = float(m.group(1))
        assert any(abs(x - v) <= 0.5 * 10 ** -(len(m.group(1).split(".")[1]) if "." in m.group(1) else 0) + 1e-9
                   for v in shares), m.group(0)
    assert "few percent" not in md
