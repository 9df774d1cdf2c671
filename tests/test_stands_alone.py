"""The project stands alone (issue 55 item 5): a clone has no ../shared, so no link or path in README.md or docs/
points outside the repository, the reference pages users need ship in docs/ with their provenance, and
`perfmodel kernels` without the kernel tables stops with one line that names where to get them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)")


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_no_link_or_path_leaves_the_repository(doc):
    text = doc.read_text()
    assert "../shared" not in text and "../seeds" not in text, doc
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://|mailto:", target):
            continue   # a public source, not a file of the checkout
        resolved = (doc.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc.name}: {target} points outside the repository"
        assert resolved.exists(), f"{doc.name}: {target} does not exist"


@pytest.mark.parametrize("page", ["docs/design.md", "docs/reference/models.md", "docs/reference/hardware.md",
                                  "docs/reference/metrics-and-claims.md"])
def test_reference_pages_ship_with_their_provenance(page):
    first = (ROOT / page).read_text().splitlines()[0]
    assert first.startswith("<!-- Copied into the repository from the project's shared") and "2026-12-07" in first


def test_kernels_without_tables_is_one_line_naming_the_source(tmp_path, capsys):
    from perfmodel.cli.main import main
    from perfmodel.kernels.loader import SOURCE_COMMIT, SOURCE_REPO
    assert main(["kernels", "--data", str(tmp_path / "no-tables")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("perfmodel: error: ")
    assert SOURCE_REPO in err and SOURCE_COMMIT in err and "--data DIR" in err and "docs/kernels.md" in err
