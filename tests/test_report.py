"""The report's Markdown renderer: verdict table and assumptions from check results (no model evaluation)."""

from pathlib import Path

import pandas as pd
import pytest

from perfmodel.claims import check
from perfmodel.claims.verdict import CATEGORIES, SPEC_INCONSISTENT
from perfmodel.report.text import render


def test_render_lists_every_claim_and_the_assumptions():
    results = [check("spec-hbm-bandwidth-2.4x"), check("spec-nvfp4-2.3x")]
    attr = pd.DataFrame(columns=["at", "total_ratio", "name", "factor"])
    md = render(results, None, attr, [], [], [], ["model X is low-confidence"])
    assert "| `spec-hbm-bandwidth-2.4x` |" in md and "| `spec-nvfp4-2.3x` |" in md
    assert "2.75x (22/8)" in md
    assert "model X is low-confidence" in md
    assert "1 consistent," in md and "0 implausible" in md and "1 inconsistent with the published specs" in md
    assert "0 not decidable by this model" in md and "0 not checkable" in md


REPORTS = Path(__file__).resolve().parent.parent / "reports"


@pytest.mark.skipif(not (REPORTS / "claims" / "claims.csv").is_file(), reason="report not generated")
def test_every_verdict_of_the_report_is_one_of_the_categories_with_what_decides_it():
    df = pd.read_csv(REPORTS / "claims" / "claims.csv")
    assert set(df["verdict"]) <= {*CATEGORIES, SPEC_INCONSISTENT}
    for r in df.itertuples():
        if r.verdict in ("consistent only if", "not decidable by this model", SPEC_INCONSISTENT):
            assert isinstance(r.condition, str) and r.condition, r.id
        if r.verdict == "not decidable by this model":
            assert "turns on where" in r.condition or "the interval spans" in r.condition, r.id
        if r.verdict == "implausible":
            assert isinstance(r.would_have_to_be_true, str) and r.would_have_to_be_true, r.id
        if r.verdict == "consistent":     # never on an interval wider than 3x
            assert not (r.interval_width > 3), r.id
