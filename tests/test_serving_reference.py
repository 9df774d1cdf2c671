"""The serving reference numbers (benchmarks/serving_reference.json) equal what the code computes now.

The provenance stamp of every committed report hashes that file instead of the package source
(perfmodel/provenance.py): a change that moves a number must re-record it
(``python -m benchmarks.serving_reference --write``), which in turn makes the reports stale until they are
regenerated. This test is what makes that chain hold. rtol 1e-6: the script's own check is 1e-9; a different
numpy build on another machine may move the last digits.
"""

from __future__ import annotations

import json

from benchmarks import serving_reference as ref


def test_every_serving_path_gives_the_recorded_numbers():
    recorded = json.loads(ref.REF.read_text())
    bad = ref.compare(recorded, ref.all_numbers(), rtol=1e-6)
    assert not bad, (f"{len(bad)} serving outputs moved; if on purpose: python -m benchmarks.serving_reference "
                     f"--write, then scripts/regenerate_reports.sh. First: {bad[:5]}")
