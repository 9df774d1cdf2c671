"""Re-evaluating only the changed points gives every column exactly as evaluating all points."""

import numpy as np

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup, evaluate_columns
from perfmodel.engine.reevaluate import reevaluate


def test_reevaluate_changed_points_equals_full_evaluation():
    m = catalog.model("deepseek-v3")
    s = Setup(catalog.hardware("gb200-nvl72"), m, catalog.profile("vllm"), weights="fp8", kv_cache="fp8")
    vals = s.symbol_values()
    n = 40
    batch = np.geomspace(1, 4000, n).round()         # the large batches do not fit: text columns change
    pts = dict(batch=batch, gpus=8, tp=8, ep=8, pp=1, spec_tokens=1, acc=1.7, isl=8000.0, osl=1000.0,
               new=np.full(n, 2000.0), mix=1.0, reload=np.zeros(n), pool_reload=0.0)
    first = evaluate_columns(s, pts, symbol_values=vals)
    again = {**pts, "new": pts["new"].copy(), "reload": pts["reload"].copy()}
    again["new"][::7] = 8000.0                       # a few points evicted: their whole prefix again
    again["reload"][3] = 0.5
    got = reevaluate(s, again, vals, first, pts, ("new", "reload", "pool_reload"))
    want = evaluate_columns(s, again, symbol_values=vals)
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(np.broadcast_to(want[k], (n,)), got[k], err_msg=k)
    assert not np.array_equal(got["ttft_ms"], np.broadcast_to(first["ttft_ms"], (n,)))
    assert reevaluate(s, pts, vals, first, pts, ("new",)) is first     # nothing changed: nothing evaluated
