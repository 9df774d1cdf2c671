"""`perfmodel calibrate` writes where it is told and is a function of the code and the data (issue 25 item 2):
the same records give the same profile files twice, the catalog's profiles/ are left alone, and no destination
is a one-line error before any fitting."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.cli.main import main
from perfmodel.validation import calibrate as cal

ROOT = Path(__file__).resolve().parent.parent


def _slice(tmp_path: Path, n: int = 4) -> Path:
    """n vLLM TPOT/TTFT records of the shipped InferenceX file (every 40th: different layouts)."""
    lines = (ROOT / "data/shared/inferencex-silicon.csv").read_text().splitlines()
    rows = [ln for ln in lines[1:] if ",vllm," in ln][::40][:n]
    f = tmp_path / "slice.csv"
    f.write_text("\n".join([lines[0], *rows]) + "\n")
    return f


def _profiles_state() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((ROOT / "profiles").glob("*.yaml"))}


def test_calibrate_is_deterministic_and_leaves_the_catalog_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cal, "MAX_NFEV", 3)          # a short fit: determinism does not need convergence
    data, before = _slice(tmp_path), _profiles_state()
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run / "profiles"
        assert main(["calibrate", "--data", str(data), "--out-dir", str(out)]) == 0
        outs.append({p.name: p.read_text() for p in sorted(out.glob("*.yaml"))})
    assert "vllm.yaml" in outs[0] and outs[0] == outs[1]
    assert _profiles_state() == before
    # the fit does not start from the catalog's fitted values: other starting profiles, same output
    monkeypatch.setattr(cal, "fit_family", _start_elsewhere(cal.fit_family))
    out = tmp_path / "c" / "profiles"
    assert main(["calibrate", "--data", str(data), "--out-dir", str(out)]) == 0
    assert {p.name: p.read_text() for p in sorted(out.glob("*.yaml"))} == outs[0]


def _start_elsewhere(fit_family):
    """fit_family with the parameters it fits moved to their search range's low end in the starting profiles
    (the others are the starting fit's, and stay)."""
    def wrapped(records, profiles, fit=None, bounds=None, neutral_start=False):
        moved, names = {}, set(fit or cal.default_fit(records))
        for pid, prof in profiles.items():
            d = prof.model_dump()
            for k, (lo, _hi) in cal.FIT_PARAMS.items():
                if k in names and isinstance(d.get(k), dict):
                    d[k] = {**d[k], "value": lo, "low": lo}
            moved[pid] = type(prof).model_validate(d)
        return fit_family(records, moved, fit, bounds, neutral_start)
    return wrapped


def test_calibrate_without_a_destination_is_an_error_before_fitting(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cal, "calibrate", lambda *a, **k: pytest.fail("fitted without a destination"))
    assert main(["calibrate", "--data", str(_slice(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out-dir DIR" in err and "--in-place" in err
