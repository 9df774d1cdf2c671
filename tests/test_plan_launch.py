"""Launch arguments of a plan row (analyses/plan_launch.py): the layout mapped onto each engine's documented flags,
by hand on rows whose layout is known."""

from __future__ import annotations

import pytest

from perfmodel import catalog
from perfmodel.analyses.plan_launch import launch, launch_text
from perfmodel.errors import SpecError

AGG = {"profile": "vllm", "serving": "aggregated", "units": 3, "gpus_per_instance": 8, "tp": 2, "dp": 4, "ep": 8,
       "pp": 1, "batch": 256, "spec_tokens": 2, "model": "deepseek-v4.1-flash", "system": "b200:vllm",
       "unit_gpus": 8, "gpus": 24}
PD = {**AGG, "profile": "dynamo-trtllm", "serving": "disaggregated", "units": 2, "gpus_per_instance": 16, "tp": 1,
      "dp": 16, "ep": 16, "batch": 1024, "pf_gpus": 2, "pf_tp": 2, "pf_ep": 1, "instances": 1, "pf_instances": 18}


def _flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_vllm_aggregated_by_hand():
    """TP2 x DP4 = 8 GPUs, EP over them, 256 in flight: 64 per DP engine; MTP with 2 draft tokens."""
    got = launch(AGG, catalog.model("deepseek-v4.1-flash"))
    (w,) = got["workers"]
    cmd = w["command"]
    assert w["count"] == 3 and cmd[:3] == ["vllm", "serve", "deepseek-ai/DeepSeek-V4.1-Flash"]
    assert (_flag(cmd, "--tensor-parallel-size"), _flag(cmd, "--data-parallel-size")) == ("2", "4")
    assert "--enable-expert-parallel" in cmd and _flag(cmd, "--max-num-seqs") == "64"
    assert '"num_speculative_tokens": 2' in _flag(cmd, "--speculative-config") and "mtp" in cmd[-1]


def test_sglang_counts_the_running_requests_globally():
    got = launch({**AGG, "profile": "sglang"}, catalog.model("deepseek-v4.1-flash"))
    cmd = got["workers"][0]["command"]
    assert (_flag(cmd, "--tp-size"), _flag(cmd, "--dp-size"), _flag(cmd, "--ep-size")) == ("8", "4", "8")
    assert "--enable-dp-attention" in cmd and _flag(cmd, "--max-running-requests") == "256"
    assert (_flag(cmd, "--speculative-num-steps"), _flag(cmd, "--speculative-num-draft-tokens")) == ("2", "3")


def test_dynamo_trtllm_split_by_hand():
    """2 units of 18 prefill instances (TP2) and 1 decode instance (16 GPUs, attention DP 16, EP 16): 36 prefill
    and 2 decode workers; 1,024 in flight over 16 ranks is 64 a rank; each role's engine YAML."""
    got = launch(PD, catalog.model("deepseek-v4.1-flash"))
    pre, dec = got["workers"]
    assert (pre["role"], pre["count"], dec["role"], dec["count"]) == ("prefill", 36, "decode", 2)
    assert _flag(pre["command"], "--tensor-parallel-size") == "2" and "--enable-attention-dp" not in pre["command"]
    assert _flag(pre["command"], "--disaggregation-mode") == "prefill"
    d = dec["command"]
    assert (_flag(d, "--tensor-parallel-size"), _flag(d, "--expert-parallel-size"), _flag(d, "--max-batch-size")) \
        == ("16", "16", "64")
    assert "--enable-attention-dp" in d and _flag(d, "--disaggregation-mode") == "decode"
    assert "max_draft_len: 2" in dec["engine_yaml"] and "speculative_config" not in pre["engine_yaml"]


def test_no_mtp_module_names_the_draft_model_and_no_engine_is_refused():
    got = launch({**AGG, "model": "llama-3.3-70b"}, catalog.model("llama-3.3-70b"))
    assert "DRAFT_MODEL" in " ".join(got["workers"][0]["command"]) and any("draft model" in n for n in got["notes"])
    with pytest.raises(SpecError, match="no engine to launch"):
        launch({**AGG, "profile": "speed-of-light"}, catalog.model("llama-3.3-70b"))


def test_the_page_lists_every_system():
    import pandas as pd
    text = launch_text(pd.DataFrame([AGG, {**PD, "system": "gb300-nvl72:dynamo-trtllm"}]),
                       {"deepseek-v4.1-flash": catalog.model("deepseek-v4.1-flash")})
    assert "## b200:vllm: 3 units of 8 GPUs" in text and "engine-decode.yaml" in text


def test_cli_writes_the_launch_page(tmp_path, capsys):
    from perfmodel.cli.main import main
    out = tmp_path / "launch.md"
    code = main(["plan", "--model", "llama-3.3-70b", "--system", "b200:vllm", "--rate", "20", "--spec-tokens", "0",
                 "--batch-points", "8", "--max-gpus", "8", "--no-disaggregation", "--launch", str(out)])
    assert code == 0, capsys.readouterr().err
    text = out.read_text()
    assert "## b200:vllm" in text and "vllm serve meta-llama/" in text
    code = main(["plan", "--model", "llama-3.3-70b", "--system", "b200:vllm", "--rate", "20", "--launch",
                 str(tmp_path / "x.txt")])
    err = capsys.readouterr().err
    assert code == 2 and "--launch" in err and err.strip().count("\n") == 0
