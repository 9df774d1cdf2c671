"""Committed generated reports match the code, catalog and data they came from (issue 25 item 4).

Each report's first line holds a hash of its inputs (perfmodel/provenance.py). This fails after any change of the
package source, the catalog or a data file the report read, until ``scripts/regenerate_reports.sh`` (or the
command the failure names) has run; the README accuracy table must equal what the committed CSVs give.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from perfmodel import provenance
from perfmodel.validation import readme_table

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ["reports/claims.md", "reports/validation.md", "reports/crossval.md"]


@pytest.mark.parametrize("report", REPORTS)
def test_committed_report_is_generated_from_the_current_inputs(report):
    reason = provenance.stale_reason(ROOT / report)
    assert reason is None, reason


def test_readme_accuracy_table_is_generated_from_the_committed_reports():
    tbl = readme_table.generated(ROOT / "reports")
    text = (ROOT / "docs/accuracy.md").read_text()
    assert readme_table.render(text, tbl) == text, \
        "docs/accuracy.md accuracy table differs from reports/*.csv: python -m perfmodel.validation.readme_table --write"


def test_header_hash_follows_the_data_file_and_names_the_command(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a\n1\n")
    rep = tmp_path / "r.md"
    rep.write_text(provenance.header("perfmodel validate d.csv --report r.md", [data]) + "\n# report\n")
    info = provenance.parse(rep.read_text())
    assert info["command"] == "perfmodel validate d.csv --report r.md" and len(info["sha"]) == provenance.DIGITS
    assert provenance.stale_reason(rep) is None
    data.write_text("a\n2\n")
    reason = provenance.stale_reason(rep)
    assert reason and "`perfmodel validate d.csv --report r.md`" in reason
    rep.write_text("# no header\n")
    assert "no perfmodel-inputs header" in provenance.stale_reason(rep)


def test_crossval_report_also_writes_the_csv_beside_it(tmp_path, monkeypatch, capsys):
    from perfmodel.cli.main import main
    from perfmodel.validation import crossval
    lines = (ROOT / "data/shared/calibration.csv").read_text().splitlines()[:3]
    f = tmp_path / "two.csv"
    f.write_text("\n".join(lines) + "\n")

    def fake(targets, k, progress=None, by="config"):
        return pd.DataFrame({"id": [r.id for r in targets], "config": ["c"] * len(targets), "family": "f", "fold": 0,
                             "kind": "point", "hardware": "h100-sxm", "model": "m", "engine": "sglang",
                             "metric": [r.metric for r in targets], "measured": [r.value for r in targets],
                             "predicted": [r.value * 1.1 for r in targets], "error_pct": 10.0, "status": "ok"})
    monkeypatch.setattr(crossval, "cross_validate", fake)
    out = tmp_path / "cv" / "crossval.md"
    assert main(["crossval", "--data", str(f), "--report", str(out)]) == 0
    assert provenance.parse(out.read_text())["command"].startswith("perfmodel crossval --data")
    assert list(pd.read_csv(out.with_suffix(".csv"))["id"]) == ["c01", "c02"]
