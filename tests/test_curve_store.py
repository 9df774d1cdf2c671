"""CurveStore keeps the envelopes' points: the kept rows are exactly the union of the envelopes."""

import numpy as np
import pandas as pd

from perfmodel.analyses.frontier import pareto_index
from perfmodel.claims.curves import AXES, ENVELOPE_METRICS, _envelope_rows


def test_envelope_rows_are_the_union_of_every_envelope():
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 300))
        cols = {}
        for c in [*AXES.values(), *ENVELOPE_METRICS]:
            v = rng.lognormal(size=n)
            if trial % 3 == 0:
                v = np.round(v, 1)                       # ties on the axes
            v[rng.random(n) < 0.05] = np.nan
            v[rng.random(n) < 0.03] = 0.0
            cols[c] = v
        df = pd.DataFrame(cols)
        rows = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False))
        want = set()
        for a in AXES.values():
            for m in ENVELOPE_METRICS:
                want.update(rows[pareto_index(df[a].to_numpy()[rows], df[m].to_numpy()[rows])].tolist())
        assert _envelope_rows(df, rows).tolist() == sorted(want), trial
