"""The serving reference numbers (benchmarks/serving_reference.json) equal what the code computes now.

History: recorded on main at de3d714 and unchanged at b95223e, the main the integrate branch landed on (40c5a9d:
the landing moved none of its numbers, every physics mechanism switched off); re-recorded on the E refit (issue
47 step 1: every mechanism of perfmodel/specs/mechanisms.py on, the E fit design, profiles refitted), whose
ledger row in docs/accuracy.md gives the gate. Outputs added since a recording (a column the reference does not
record) are not compared; every recorded one is.

The provenance stamp of every committed report hashes that file instead of the package source
(perfmodel/provenance.py): a change that moves a number must re-record it
(``python -m benchmarks.serving_reference --write``), which in turn makes the reports stale until they are
regenerated. This test is what makes that chain hold. rtol 1e-6: the script's own check is 1e-9; a different
numpy build on another machine may move the last digits.
"""

from __future__ import annotations

import json

from benchmarks import serving_reference as ref

RECORDED_AT = "the E refit"    # what recorded benchmarks/serving_reference.json (the history above)


def test_every_serving_path_gives_the_recorded_numbers():
    recorded = json.loads(ref.REF.read_text())
    bad = ref.compare(recorded, ref.all_numbers(), rtol=1e-6)
    assert not bad, (f"{len(bad)} serving outputs moved from the reference recorded at {RECORDED_AT}; if on "
                     f"purpose: python -m benchmarks.serving_reference --write, then scripts/regenerate_reports.sh. "
                     f"First: {bad[:5]}")


def test_a_moved_number_is_caught():
    recorded = {"predict/x": {"step_ms": 10.0, "bound": "hbm_bandwidth"}}
    assert ref.compare(recorded, {"predict/x": {"step_ms": 10.0, "bound": "hbm_bandwidth", "new_col": 1.0}}) == []
    assert ref.compare(recorded, {"predict/x": {"step_ms": 10.1, "bound": "hbm_bandwidth"}})
    assert ref.compare(recorded, {"predict/x": {"bound": "hbm_bandwidth"}})
    assert ref.compare(recorded, {})
