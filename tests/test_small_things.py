"""Small things a reader trips on (issue 25 item 8)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from perfmodel.claims.check import json_safe
from perfmodel.cli.main import main, relative_paths
from perfmodel.numfmt import fmt_number

ROOT = Path(__file__).resolve().parent.parent


def test_tiny_values_print_as_about_zero():
    assert fmt_number(7.449e-11) == "~0" and fmt_number(-3e-9) == "~0"
    assert fmt_number(0.0000123) == "0.0000123" and fmt_number(0.0523) == "0.0523"


def test_check_json_has_null_and_a_reason_for_an_unbounded_ratio():
    out = json.loads(json.dumps(json_safe({"ratio": math.inf, "z": float("nan"), "ok": 1.5}), allow_nan=False))
    assert out["ratio"] is None and out["ratio_reason"].startswith("unbounded") and out["z"] is None
    assert "z_reason" not in out and out["ok"] == 1.5


def test_errors_name_files_relative_to_the_checkout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert relative_paths(f"{ROOT}/models/x.yaml: field: bad") == "models/x.yaml: field: bad"
    bad = tmp_path / "sub" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("id: [\n")
    assert main(["show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) not in err and "sub/bad.yaml" in err


def test_model_error_table_command_runs_without_a_runtime_warning(tmp_path):
    """`python -m perfmodel.claims.error_table` (the command) is not a module the package imports, so runpy never
    warns that it was imported before being run; a missing input is a one-line error."""
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "perfmodel.claims.error_table",
                        str(tmp_path / "missing.csv")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "RuntimeWarning" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "missing.csv" in r.stderr


def test_readme_examples_write_into_ignored_out_folder():
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    assert "out/" in (ROOT / ".gitignore").read_text().split()
    for flag in ("--plot ", "--csv "):
        for part in text.split(flag)[1:]:
            target = part.split()[0]
            if target.endswith((".png", ".csv")):
                assert target.startswith(("out/", "reports/")), f"README writes {target} into the tree"


def test_the_readme_stays_short_and_links_pages_that_exist():
    """Issue 34: the README holds the two commands, the concepts and a tour (at most 200 lines); the reference
    lives in docs/, and every docs/ page the README links exists."""
    import re as _re
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    links = _re.findall(r"\]\((docs/[^)#]+)\)", text)
    assert len(links) >= 6 and all((ROOT / link).exists() for link in links), links
