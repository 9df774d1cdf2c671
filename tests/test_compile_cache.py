"""The on-disk cache of generated numpy code gives exactly the freshly compiled results."""

import numpy as np

from perfmodel import catalog
from perfmodel.engine import compiled as C
from perfmodel.engine.evaluate import Setup
from perfmodel.serving.aggregated import evaluate


def test_disk_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path))
    m = catalog.model("deepseek-v4.1-flash")
    s = Setup(catalog.hardware("gb300-nvl72"), m, catalog.profile("vllm"), weights="nvfp4", kv_cache="fp8")
    pts = dict(batch=np.array([1.0, 37, 900]), gpus=8, tp=8, ep=8, pp=1, spec_tokens=3, acc=2.5, isl=30000,
               osl=500, new=900, mix=1.0)
    C._cache.clear()
    fresh = evaluate(s, pts)
    files = list(tmp_path.glob("model-*.json"))
    assert len(files) == 1
    C._cache.clear()
    cached_model = C.compiled(m)
    assert not isinstance(cached_model.decode._exprs, list)       # came from disk: expressions not built yet
    again = evaluate(s, pts)
    num = fresh.select_dtypes("number").columns
    np.testing.assert_array_equal(fresh[num].to_numpy(), again[num].to_numpy())
    assert len(cached_model.decode.exprs) == len(cached_model.decode.names)   # rebuilt on demand


def test_damaged_cache_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path))
    m = catalog.model("llama-3.1-8b")
    C._cache.clear()
    C.compiled(m)
    (f,) = tmp_path.glob("model-*.json")
    f.write_text("{not json")
    C._cache.clear()
    cm = C.compiled(m)
    assert "step_s" in cm.decode.names and isinstance(cm.decode._exprs, list)
