"""A plan's Dynamo deployment as a DynamoGraphDeployment (analyses/plan_graph.py): the services, replicas, GPUs per
pod and node counts worked by hand on rows whose layout is known, the workers' flags those of plan_launch, and the
YAML in the form of Dynamo's own examples (examples/backends/<engine>/deploy/*.yaml)."""

from __future__ import annotations

import contextlib
import io

import pytest
import yaml

from perfmodel import catalog
from perfmodel.analyses.plan_graph import gpus_per_node, graph, graph_yaml, graphs_yaml
from perfmodel.errors import SpecError

M = "deepseek-v4.1-flash"
PD = {"profile": "dynamo-trtllm", "serving": "disaggregated", "units": 2, "gpus_per_instance": 16, "tp": 1,
      "dp": 16, "ep": 16, "pp": 1, "batch": 1024, "spec_tokens": 2, "pf_gpus": 2, "pf_tp": 2, "pf_ep": 1,
      "instances": 1, "pf_instances": 18, "model": M, "hardware": "gb200-nvl72", "system": "gb200-nvl72:dynamo-trtllm",
      "unit_gpus": 52, "gpus": 104, "scaleup_domain_gpus": 72}
AGG = {**PD, "profile": "dynamo-sglang", "serving": "aggregated", "units": 3, "gpus_per_instance": 8, "tp": 2, "dp": 4,
       "ep": 8, "batch": 256, "hardware": "b200", "system": "b200:dynamo-sglang", "unit_gpus": 8, "gpus": 24,
       "scaleup_domain_gpus": 8}


def _flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_gpus_per_node():
    assert gpus_per_node(8) == 8 and gpus_per_node(72) == 4 and gpus_per_node(4) == 4


def test_trtllm_split_on_nvl72_by_hand():
    """2 units x 18 prefill instances of 2 GPUs = 36 prefill replicas of 2 GPUs on one tray; 2 units x 1 decode
    instance of 16 GPUs = 2 decode replicas, each 16 / 4 = 4 trays of 4 GPUs; each role's engine YAML in the
    ConfigMap, named by --extra-engine-args under /workspace/engine."""
    cm, dgd = graph(PD, catalog.model(M))
    assert cm["kind"] == "ConfigMap" and set(cm["data"]) == {"engine-prefill.yaml", "engine-decode.yaml"}
    assert "max_draft_len: 2" in cm["data"]["engine-decode.yaml"] and "enable_attention_dp: true" in \
        cm["data"]["engine-decode.yaml"]
    assert dgd["apiVersion"] == "nvidia.com/v1alpha1" and dgd["kind"] == "DynamoGraphDeployment"
    s = dgd["spec"]["services"]
    assert list(s) == ["Frontend", "prefill", "decode"] and s["Frontend"]["componentType"] == "frontend"
    pre, dec = s["prefill"], s["decode"]
    assert (pre["subComponentType"], pre["replicas"], pre["resources"]["limits"]["gpu"]) == ("prefill", 36, "2")
    assert "multinode" not in pre
    assert (dec["subComponentType"], dec["replicas"], dec["resources"]["limits"]["gpu"]) == ("decode", 2, "4")
    assert dec["multinode"] == {"nodeCount": 4}
    c = dec["extraPodSpec"]["mainContainer"]
    assert c["command"] == ["python3", "-m", "dynamo.trtllm"] and c["image"].endswith("tensorrtllm-runtime:${VERSION}")
    a = c["args"]
    assert (_flag(a, "--tensor-parallel-size"), _flag(a, "--expert-parallel-size"), _flag(a, "--max-batch-size")) \
        == ("16", "16", "64")
    assert _flag(a, "--disaggregation-mode") == "decode" and "--enable-attention-dp" in a
    assert _flag(a, "--extra-engine-args") == "/workspace/engine/engine-decode.yaml"
    assert dec["extraPodSpec"]["volumes"][0]["configMap"]["name"] == cm["metadata"]["name"]
    assert c["volumeMounts"][0]["mountPath"] == "/workspace/engine"


def test_sglang_aggregated_on_8_gpu_nodes():
    (dgd,) = graph(AGG, catalog.model(M))
    w = dgd["spec"]["services"]["worker"]
    assert (w["componentType"], w["replicas"], w["resources"]["limits"]["gpu"]) == ("worker", 3, "8")
    assert "multinode" not in w and "subComponentType" not in w
    a = w["extraPodSpec"]["mainContainer"]["args"]
    assert (_flag(a, "--tp-size"), _flag(a, "--dp-size"), _flag(a, "--max-running-requests")) == ("8", "4", "256")
    assert w["extraPodSpec"]["mainContainer"]["command"] == ["python3", "-m", "dynamo.sglang"]


def test_vllm_split_names_the_role_and_the_transfer_without_shell_quotes():
    row = {**PD, "profile": "dynamo-vllm", "tp": 2, "dp": 8}
    (dgd,) = graph(row, catalog.model(M))
    pre = dgd["spec"]["services"]["prefill"]["extraPodSpec"]["mainContainer"]["args"]
    assert _flag(pre, "--disaggregation-mode") == "prefill"
    assert yaml.safe_load(_flag(pre, "--kv-transfer-config")) == {"kv_connector": "NixlConnector",
                                                                   "kv_role": "kv_both"}


def test_the_yaml_is_kubectl_input_and_a_non_dynamo_plan_is_refused():
    docs = list(yaml.safe_load_all(graph_yaml(PD, catalog.model(M))))
    assert [d["kind"] for d in docs] == ["ConfigMap", "DynamoGraphDeployment"]
    assert docs[1]["metadata"]["name"] == "deepseek-v4-1-flash-gb200-nvl72-dynamo-trtllm"
    import pandas as pd
    with pytest.raises(SpecError, match="served by Dynamo"):
        graphs_yaml(pd.DataFrame([{**AGG, "profile": "sglang"}]), {M: catalog.model(M)})
    with pytest.raises(SpecError, match="not served by Dynamo"):
        graph({**AGG, "profile": "vllm"}, catalog.model(M))


def _plan_writing(flag: str, out) -> list[str]:
    """A small dynamo-sglang plan on H200 that writes ``out`` with ``flag`` (``--dynamo-graph`` or ``--launch``),
    run once (exit 0); its argv."""
    from perfmodel.cli.main import main
    argv = ["plan", "--model", "llama-3.3-70b", "--workload", "fixed-1k1k", "--system", "h200-sxm:dynamo-sglang",
            "--rate", "10", "--spec-tokens", "0", "--batch-points", "6", "--max-gpus", "8", "--no-disaggregation",
            flag, str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    return argv


def test_plan_cli_writes_the_graph(tmp_path):
    from perfmodel.cli.main import main
    out = tmp_path / "graph.yaml"
    argv = _plan_writing("--dynamo-graph", out)
    docs = [d for d in yaml.safe_load_all(out.read_text()) if d]
    assert docs[-1]["kind"] == "DynamoGraphDeployment" and "worker" in docs[-1]["spec"]["services"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv[:-1], str(tmp_path / "g.txt")]) == 2
    assert "--dynamo-graph" in err.getvalue()


def test_the_launch_page_carries_the_graph(tmp_path):
    out = tmp_path / "launch.md"
    _plan_writing("--launch", out)
    text = out.read_text()
    assert "python -m dynamo.sglang" in text and "## Dynamo graph" in text and "kind: DynamoGraphDeployment" in text
