"""One default rule across commands (issue 25 item 6: perfmodel/defaults.py)."""

from __future__ import annotations

import json

from perfmodel.cli.main import build_parser, main
from perfmodel.defaults import RULE, default_weights, native_ffn_format


def test_default_weights_is_fp8_or_the_narrower_native_format():
    assert native_ffn_format("mxfp4+fp8") == "mxfp4" and native_ffn_format("int4+bf16") == "int4"
    assert default_weights("deepseek-v4.1-flash") == "mxfp4"      # native mxfp4 experts
    assert default_weights("deepseek-v3") == "fp8"                 # native fp8
    assert default_weights("llama-3.1-70b") == "fp8"               # native bf16: fp8 is narrower


def test_predict_and_analyses_share_the_defaults(capsys):
    assert main(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--batch", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["profile"] == "vllm"
    from perfmodel.cli.analyses_cmd import frontier_kwargs
    args = build_parser().parse_args(["frontier", "--hardware", "gb300-nvl72", "--model", "deepseek-v4.1-flash"])
    assert args.profile == "vllm" and frontier_kwargs(args)["weights"] == ("mxfp4",)
    args = build_parser().parse_args(["attribute", "--from", "a", "--to", "b", "--model", "deepseek-v3", "--peak"])
    assert frontier_kwargs(args, multi_weights=False)["weights"] == ("fp8",)


def test_the_rule_is_in_the_help(capsys):
    for argv in (["--help"], ["predict", "--help"], ["check", "--help"]):
        try:
            main(argv)
        except SystemExit:
            pass
        assert "Defaults (every command)" in " ".join(capsys.readouterr().out.split())
    assert "vllm" in RULE and "native" in RULE
