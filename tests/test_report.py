"""The report's Markdown renderer: verdict table and assumptions from check results (no model evaluation)."""

import pandas as pd

from perfmodel.claims import check
from perfmodel.report.text import render


def test_render_lists_every_claim_and_the_assumptions():
    results = [check("spec-hbm-bandwidth-2.4x"), check("spec-nvfp4-2.3x")]
    attr = pd.DataFrame(columns=["at", "total_ratio", "name", "factor"])
    md = render(results, None, attr, [], [], [], ["model X is low-confidence"])
    assert "| `spec-hbm-bandwidth-2.4x` |" in md and "| `spec-nvfp4-2.3x` |" in md
    assert "2.75x (22/8)" in md
    assert "model X is low-confidence" in md
    assert "1 consistent," in md and "1 consistent only under" in md and "0 implausible" in md
