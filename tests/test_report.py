"""The report's Markdown renderer: verdict table and assumptions from check results (no model evaluation)."""

from pathlib import Path

import pandas as pd
import pytest

from perfmodel.claims import check
from perfmodel.claims.shared import solve
from perfmodel.claims.verdict import CATEGORIES, SPEC_INCONSISTENT
from perfmodel.report.text import CELL, render_compact, verdict_cell


def test_render_groups_claims_by_source_with_cells_of_at_most_CELL_characters():
    results = [check("spec-hbm-bandwidth-2.4x"), check("spec-nvlink-1.7x")]
    long = {**results[1], "condition": "x" * 500}
    md = render_compact([results[0], long], [])
    assert "## aa-agentperf-rubin" in md
    assert "| `spec-hbm-bandwidth-2.4x` |" in md and "| `spec-nvlink-1.7x` |" in md
    assert "2.75x (22/8)" in md
    assert "1 consistent only if, 1 inconsistent with the published specs" in md
    row = next(li for li in md.splitlines() if li.startswith("| `spec-nvlink-1.7x`"))
    assert len(verdict_cell(long)) <= CELL and row.endswith("... |")
    assert "x" * 500 in md       # the full condition moves to the per-claim section


def test_a_single_claim_source_states_its_verdict_and_figures_in_one_line():
    """A source with one claim: its id, verdict, claimed and modeled figures on the source's first line, no table
    and no story (the story of one claim is its verdict); a URL source is headed by its URL alone."""
    r = {"id": "c1", "kind": "ratio", "verdict": "implausible", "implausible": "on the evidence", "claimed": 3.5,
         "qualifier": "about", "source": "https://example.org/post (a blog draft, read via a mirror)",
         "model": {"value": 0.646, "central": 0.646, "interval": [0.531, 0.785]}}
    md = render_compact([r], [], stories={"https://example.org/post (a blog draft, read via a mirror)":
                                          {"text": "**One story for this source** ..."}})
    assert "## https://example.org/post\n" in md and "One story" not in md and "| `c1` |" not in md
    assert "1 claim, `c1`: implausible on the evidence (claimed 3.5, model 0.646 (0.531 - 0.785))." in md
    assert "- Verdict: **implausible on the evidence**." in md


def test_error_table_lists_the_rows_the_intervals_read():
    from perfmodel.report.text import error_rows_read
    res = [{"interval": {"model_error": [{"workload": "agentic", "quantity": "rate-ratio", "region": "all"}]}},
           {"interval": {"model_error": [{"quantity": "rate-ratio", "region": "middle"}]}}, {"interval": None}]
    assert error_rows_read(res) == {("agentic", "rate-ratio", "all"), ("all", "rate-ratio", "middle")}


def test_shared_conditions_appear_once_per_source_with_their_solved_value():
    res = [{"id": f"c{i}", "kind": "ratio", "verdict": "consistent only if", "condition": "c", "claimed": 1.0,
            "qualifier": "about", "source": "AA, as reported in seeds/aa.txt", "model": {"value": 2.0},
            "conditions": [{"kind": "all-in power", "key": "A/B all-in power ratio", "range_needed": rg,
                            "allowed": True, "catalog": 1.27, "evidence": "unknown but checkable",
                            "claimed": c, "model": 2.0, "error": [0.2, 0.2]}]}
           for i, (rg, c) in enumerate((([1.6, 3.0], 1.2), ([1.3, 2.5], 0.5)))]
    md = render_compact(res, [], shared=solve(res))
    assert md.count("A/B all-in power ratio:") == 1 and "1.6-2.5x" in md and "catalog 1.27x" in md
    # the cross-claim arithmetic at the solved ratio: per GPU = per MW x R against the model's per-GPU figure
    # (2.0 x 1.27 = 2.54): 1.2 x 1.6-2.5 = 1.9-3 meets it, 0.5 x 1.6-2.5 = 0.8-1.25 does not
    assert "`c0` 1.9-3x (model 2.5x: inside its error)" in md and "`c1` 0.8-1.2x (model 2.5x: outside its error)" in md


REPORTS = Path(__file__).resolve().parent.parent / "reports"


@pytest.mark.skipif(not (REPORTS / "claims" / "claims.csv").is_file(), reason="report not generated")
def test_every_verdict_of_the_report_is_one_of_the_categories_with_what_decides_it():
    df = pd.read_csv(REPORTS / "claims" / "claims.csv")
    assert set(df["verdict"]) <= {*CATEGORIES, SPEC_INCONSISTENT}
    for r in df.itertuples():
        if r.verdict in ("consistent only if", "not decidable by this model", SPEC_INCONSISTENT):
            assert isinstance(r.condition, str) and r.condition, r.id
        if r.verdict == "implausible":
            assert isinstance(r.would_have_to_be_true, str) and r.would_have_to_be_true, r.id
