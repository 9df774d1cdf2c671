"""`perfmodel validate --explain`: what the model runs at each point row, read off the serving layer's own columns;
its prediction is the one validate prints (one path), and each derived column is the hand formula."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfmodel.cli.main import main
from perfmodel.specs.records import Record, read_records
from perfmodel.validation.explain import band_summary, explain_rows, limit_of
from perfmodel.validation.predict_rows import predict_rows


def _records():
    rows = [r for r in read_records("data/shared/agentic.csv") if r.id in ("a395", "a398", "a399", "a081", "a446")]
    fixed = Record.model_validate(dict(id="h1", kind="point", hardware="h100-sxm", model="llama-3.3-70b",
                                       engine="vllm", gpus=8, tp=8, isl=1000, osl=1000, concurrency=512,
                                       max_running_requests=64, metric="tpot_ms", value=30.0))
    return [*rows, fixed]


def test_explain_predicts_what_validate_predicts_and_derives_by_hand():
    recs = _records()
    t = explain_rows(recs).set_index("id")
    v = predict_rows(recs, n_samples=1).set_index("id")
    ok = t[t["status"] == "ok"]
    assert len(ok) == 5 and t.loc["a446", "status"] == "frontier row: no single operating point"
    assert np.allclose(ok["predicted"], v.loc[ok.index, "predicted"], rtol=1e-9)
    # decode tokens = running x (1 + draft tokens): a395 runs 1 draft token
    assert np.isclose(ok.loc["a395", "decode_tokens"], 2 * ok.loc["a395", "running"])
    # prefill tokens per step = request rate x uncached tokens x step time (Little's law on the prefill stream)
    r = ok.loc["h1"]
    assert r["uncached_input"] == 1000 and r["decode_tokens"] == r["running"]
    # the vLLM row caps 64 running per scheduler and puts 512 clients on it: the cap binds
    assert r["running"] <= 64 + 1e-9 and r["limit"] == "running_cap" and r["clients"] == 512


def test_limit_reads_the_cap_only_when_the_batch_fills_it():
    d = pd.Series(dict(batch=238.0, max_batch=6887.0, kv_max_batch=6887.0, capacity_wait_ms=400.0,
                       ttft_ms=5000.0, bound="compute"))
    assert limit_of(d) == "compute"                         # waits come from prefill, not from a full batch
    assert limit_of(pd.Series({**d, "batch": 6887.0})) == "kv_pool"
    assert limit_of(pd.Series({**d, "batch": 64.0, "max_batch": 64.0})) == "running_cap"


def test_band_summary_counts_rows_by_the_records_concurrency():
    t = pd.DataFrame(dict(status=["ok"] * 4, concurrency=[8, 64, 65, 512], clients=[8, 64, 65, 512],
                          metric=["tpot_ms", "tpot_ms", "total_tps_per_gpu", "ttft_ms"],
                          error_pct=[10.0, -20.0, 50.0, 100.0], running=[8, 60, 60, 200],
                          prefill_share=[0.1, 0.2, 0.3, 0.4], limit=["latency", "compute", "kv_pool", "kv_pool"]))
    s = band_summary(t).set_index("concurrency")
    assert list(s.index) == ["1-16", "17-64", "65-256", ">256"]
    assert s.loc["17-64", "tpot_signed_pct"] == -20.0 and s.loc["65-256", "throughput_signed_pct"] == 50.0


def test_cli_explain_writes_the_table(tmp_path, capsys):
    src = tmp_path / "rows.csv"
    full = pd.read_csv("data/shared/agentic.csv")
    full[full["id"].isin(["a395", "a396", "a397"])].to_csv(src, index=False)
    out = tmp_path / "explain.csv"
    assert main(["validate", str(src), "--samples", "1", "--explain", str(out)]) == 0
    t = pd.read_csv(out)
    assert list(t["id"]) == ["a395", "a396", "a397"] and (t["status"] == "ok").all()
    assert "by client band" in capsys.readouterr().out
