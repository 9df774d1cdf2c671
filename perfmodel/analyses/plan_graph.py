"""A plan row's Dynamo deployment as a DynamoGraphDeployment (the Kubernetes resource Dynamo's operator runs:
``kubectl apply -f``), in the form Dynamo's own examples use (ai-dynamo/dynamo examples/backends/<engine>/deploy/
agg.yaml, disagg.yaml, disagg-multinode.yaml):

    apiVersion: nvidia.com/v1alpha1
    kind: DynamoGraphDeployment
    spec.services:
      Frontend    componentType frontend, 1 replica, python3 -m dynamo.frontend --http-port 8000
      prefill     componentType worker, subComponentType prefill, replicas = prefill instances of the plan
      decode      componentType worker, subComponentType decode, replicas = decode instances of the plan
      worker      (aggregated) componentType worker, replicas = the plan's instances
    each worker: resources.limits.gpu = GPUs per pod = min(instance GPUs, GPUs per node), multinode.nodeCount =
    ceil(instance GPUs / GPUs per node) when an instance spans nodes; extraPodSpec.mainContainer command
    python3 -m dynamo.<engine> and args = the worker's flags (plan_launch.launch, each engine's documented flags).

GPUs per node (a Kubernetes node): the scale-up domain where it is a node (8-GPU HGX/OAM servers); 4 on a 72-GPU
rack (GB200 NVL72 "72x1" reference configuration: 18 compute trays of 4 GPUs, NVIDIA multi-node NVLink tuning guide
https://docs.nvidia.com/multi-node-nvlink-systems/multi-node-tuning-guide/system.html, datasheet; GB300 NVL72,
Vera Rubin NVL72 and Helios (18 trays of 4 MI455X, hardware/mi455x-helios.yaml) taken the same, estimate).
A TensorRT-LLM worker's engine YAML (plan_launch: engine-<role>.yaml) travels in a ConfigMap mounted at
/workspace/engine, as disagg-multinode.yaml does. The image is Dynamo's runtime image of the engine with its tag
left as ${VERSION} (the examples' placeholder); the Hugging Face token comes from the secret hf-token-secret, as in
the examples.
"""

from __future__ import annotations

import math
import re

import yaml

from ..errors import SpecError
from .plan_launch import launch

IMAGES = {"vllm": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:${VERSION}",
          "sglang": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:${VERSION}",
          "trtllm": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:${VERSION}"}
RACK_TRAY_GPUS = 4
"""GPUs per compute tray (one Kubernetes node) of a 72-GPU rack (module docstring)."""
ENGINE_DIR = "/workspace/engine"


def gpus_per_node(scaleup_domain_gpus: float) -> int:
    """GPUs of one Kubernetes node: the domain where it is a server (<= 8 GPUs), else a rack's compute tray (4)."""
    d = int(scaleup_domain_gpus)
    return d if d <= 8 else RACK_TRAY_GPUS


def _name(row) -> str:
    """A Kubernetes name (lower case, digits, '-', at most 63): model and system, e.g.
    'deepseek-v4-1-flash-gb200-nvl72-dynamo-trtllm'."""
    text = f"{row['model']}-{row['system']}".lower()
    return re.sub(r"[^a-z0-9-]+", "-", text).strip("-")[:63].rstrip("-")


def _count(row, key: str) -> int:
    """An integer column of the row; 0 where blank (NaN or absent)."""
    v = row.get(key)
    return int(v) if v is not None and v == v else 0


def _domain(row) -> float:
    """The row's scale-up domain (GPUs): its ``scaleup_domain_gpus``, else the catalog's for its system."""
    if _count(row, "scaleup_domain_gpus"):
        return float(row["scaleup_domain_gpus"])
    from .. import catalog
    return float(catalog.hardware(str(row["system"]).split(":")[0]).value("scaleup_domain_gpus"))


def _worker(w: dict, engine: str, instance_gpus: int, per_node: int, config_map: str | None) -> dict:
    cmd = list(w["command"])
    module = cmd.index("-m") + 1
    args = cmd[module + 1:]
    if w["engine_yaml"]:
        i = args.index("--extra-engine-args") + 1
        args[i] = f"{ENGINE_DIR}/{args[i]}"
    args = [a[1:-1] if a.startswith("'") and a.endswith("'") else a for a in args]   # no shell quoting in YAML
    svc: dict = {"envFromSecret": "hf-token-secret", "componentType": "worker"}
    if w["role"] in ("prefill", "decode"):
        svc["subComponentType"] = w["role"]
    svc["replicas"] = int(w["count"])
    nodes = math.ceil(instance_gpus / per_node)
    if nodes > 1:
        svc["multinode"] = {"nodeCount": nodes}
    svc["resources"] = {"limits": {"gpu": str(min(instance_gpus, per_node))}}
    container: dict = {"image": IMAGES[engine], "workingDir": "/workspace/", "command": ["python3", "-m", cmd[module]],
                       "args": args}
    pod: dict = {}
    if config_map and w["engine_yaml"]:
        pod["volumes"] = [{"name": "engine-config", "configMap": {"name": config_map}}]
        container["volumeMounts"] = [{"name": "engine-config", "mountPath": ENGINE_DIR, "readOnly": True}]
    svc["extraPodSpec"] = {**pod, "mainContainer": container}
    return svc


def graph(row, m) -> list[dict]:
    """The Kubernetes documents of one plan row (a ``dynamo-*`` profile): [ConfigMap of the engine YAMLs
    (TensorRT-LLM only), DynamoGraphDeployment]; ``m`` the model spec."""
    got = launch(row, m)
    engine = got["engine"].removeprefix("dynamo-")
    if not got["engine"].startswith("dynamo-"):
        raise SpecError(f"profile {got['engine']!r} is not served by Dynamo; a DynamoGraphDeployment needs a "
                        "dynamo-* profile", field="--dynamo-graph")
    name = _name(row)
    per_node = gpus_per_node(_domain(row))
    docs = []
    cm = None
    files = {f"engine-{w['role'].replace('aggregated', 'agg')}.yaml": w["engine_yaml"] + "\n"
             for w in got["workers"] if w["engine_yaml"]}
    if files:
        cm = f"{name}-engine"[:63]
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": cm}, "data": files})
    services: dict = {"Frontend": {"componentType": "frontend", "replicas": 1, "extraPodSpec": {"mainContainer": {
        "image": IMAGES[engine], "command": ["python3", "-m", "dynamo.frontend"], "args": ["--http-port", "8000"]}}}}
    sizes = {"prefill": _count(row, "pf_gpus"), "decode": _count(row, "gpus_per_instance"),
             "aggregated": _count(row, "gpus_per_instance")}
    for w in got["workers"]:
        key = "worker" if w["role"] == "aggregated" else w["role"]
        services[key] = _worker(w, engine, sizes[w["role"]], per_node, cm)
    docs.append({"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": {"name": name},
                 "spec": {"backendFramework": engine, "services": services}})
    return docs


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, text: str):
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)


def graph_yaml(row, m) -> str:
    """``graph`` as YAML documents separated by ``---`` (``kubectl apply -f FILE``)."""
    notes = launch(row, m)["notes"]
    head = "".join(f"# {n}\n" for n in notes)
    return head + "---\n".join(yaml.dump(d, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                                          width=1000) for d in graph(row, m))


def graphs_yaml(df, models: dict) -> str:
    """Every Dynamo system of a plan (``dynamo-*`` profiles), each at its largest planned row, as one YAML stream
    (``perfmodel plan --dynamo-graph FILE.yaml``); a one-line SpecError when the plan has no Dynamo system."""
    parts = []
    for _, g in df.groupby("system", sort=False):
        row = g.loc[g["gpus"].idxmax()]
        if str(row["profile"]).startswith("dynamo-"):
            parts.append(f"# {row['system']}: {int(row['units'])} units of {int(row['unit_gpus'])} GPUs "
                         f"({row['serving']})\n" + graph_yaml(row, models[row["model"]]))
    if not parts:
        raise SpecError("no system of this plan is served by Dynamo (a dynamo-* profile, e.g. "
                        "gb200-nvl72:dynamo-trtllm)", field="--dynamo-graph")
    return "---\n".join(parts)
