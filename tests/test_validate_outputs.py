"""`perfmodel validate --report`: duplicate row ids across files and the held-out extras plot fine (issue 25 item 1),
and every output is written at the end, so a failure leaves no file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def _slice(tmp_path: Path, n: int = 3, name: str = "slice.csv") -> Path:
    lines = (ROOT / "data/shared/calibration.csv").read_text().splitlines()
    f = tmp_path / name
    f.write_text("\n".join(lines[: n + 1]) + "\n")
    return f


def test_validate_report_with_repeated_ids_writes_md_csv_png(tmp_path, capsys):
    a, b = _slice(tmp_path, name="a.csv"), _slice(tmp_path, name="b.csv")     # the same ids in two files
    out = tmp_path / "out" / "validation.md"
    assert main(["validate", str(a), str(b), "--report", str(out), "--samples", "8"]) == 0
    assert out.exists() and out.with_suffix(".csv").exists()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert "8 Monte Carlo draws per row (seed 0)" in out.read_text()
    from perfmodel import provenance
    head = provenance.parse(out.read_text())        # the inputs' hash: both files and the project's record files
    assert any(f.endswith("a.csv") for f in head["files"]) and any("data/holdout/" in f for f in head["files"])
    assert head["command"].endswith("--samples 8") and provenance.stale_reason(out) is None


def test_validate_writes_nothing_when_rendering_fails(tmp_path, monkeypatch, capsys):
    from perfmodel.validation import report
    f = _slice(tmp_path)
    monkeypatch.setattr(report, "render_png", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(RuntimeError):
        main(["validate", str(f), "--out", str(tmp_path / "rows.csv"), "--report", str(tmp_path / "r.md"),
              "--samples", "4"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slice.csv"]
