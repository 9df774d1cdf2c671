"""The chosen deployment of a plan row written out as launch arguments for its engine, from each engine's
documented flags, so a planner can hand it to whoever runs it (``perfmodel plan --launch FILE``).

Layout mapping (a plan instance of G = tp x dp x pp GPUs; ``dp`` attention data-parallel ranks; ``ep`` expert
ranks; ``batch`` sequences in flight per instance):

    vLLM       vllm serve MODEL --tensor-parallel-size tp --data-parallel-size dp --pipeline-parallel-size pp
               [--enable-expert-parallel] --max-num-seqs batch/dp (per engine: each DP rank is one)
               --kv-cache-dtype fp8 [--speculative-config '{"method": "mtp", "num_speculative_tokens": k}']
               P/D: --kv-transfer-config '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'
               https://docs.vllm.ai/en/latest/configuration/engine_args/ ; features/disagg_prefill
    SGLang     python -m sglang.launch_server --model-path MODEL --tp-size G [--dp-size dp --enable-dp-attention]
               [--ep-size ep] --max-running-requests batch (global over DP ranks) --kv-cache-dtype fp8_e4m3
               [--speculative-algorithm EAGLE --speculative-num-steps k --speculative-eagle-topk 1
                --speculative-num-draft-tokens k+1]   P/D: --disaggregation-mode prefill|decode
               https://docs.sglang.io/advanced_features/server_arguments.html
    TRT-LLM    trtllm-serve MODEL --tp_size G --ep_size ep --pp_size pp --max_batch_size batch/dp
               --extra_llm_api_options engine-<role>.yaml  (enable_attention_dp, kv_cache_config.dtype,
               speculative_config {decoding_type: MTP, max_draft_len: k})
               https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve.html
    Dynamo     python -m dynamo.trtllm --model MODEL --tensor-parallel-size G --expert-parallel-size ep
               [--enable-attention-dp] --max-batch-size batch/dp --disaggregation-mode prefill|decode|agg
               (components/src/dynamo/trtllm/backend_args.py); dynamo.vllm / dynamo.sglang take their
               engine's flags above; P/D: dynamo.vllm adds --disaggregation-mode prefill|decode (it requires the
               --kv-transfer-config above on a prefill worker: components/src/dynamo/vllm/args.py), dynamo.sglang
               --disaggregation-transfer-backend nixl (examples/backends/sglang/deploy/disagg.yaml). The whole
               graph as a Kubernetes DynamoGraphDeployment: analyses/plan_graph.py.

A model without an MTP module needs a separate draft model for k > 0: the command names a placeholder
(``DRAFT_MODEL``) and says so. The MODEL path is the Hugging Face repository the model catalog cites (its first
huggingface.co source), else the catalog id with a note.
"""

from __future__ import annotations

import json
import re

from ..errors import SpecError

ENGINES = ("vllm", "sglang", "trtllm", "dynamo-vllm", "dynamo-sglang", "dynamo-trtllm")


def model_path(m) -> tuple[str, str | None]:
    """(the model path to launch, a note when it is not a cited Hugging Face repository)."""
    for s in m.sources:
        hit = re.search(r"huggingface\.co/([\w.-]+/[\w.-]+)", s)
        if hit:
            return hit.group(1), None
    return m.id, f"no Hugging Face repository in the catalog's sources of {m.id}: set the model path"


def _ints(row, *names) -> list[int]:
    out = []
    for n in names:
        v = row.get(n)
        out.append(int(v) if v is not None and v == v else 1)
    return out


def _spec(engine: str, k: int, mtp: bool) -> list[str]:
    """Speculative decoding flags for k draft tokens (MTP heads when the model has them, else a draft model)."""
    if k <= 0:
        return []
    if engine == "vllm":
        cfg = {"method": "mtp", "num_speculative_tokens": k} if mtp else \
            {"method": "eagle3", "model": "DRAFT_MODEL", "num_speculative_tokens": k}
        return ["--speculative-config", f"'{json.dumps(cfg)}'"]
    if engine == "sglang":
        out = ["--speculative-algorithm", "EAGLE" if mtp else "EAGLE3", "--speculative-num-steps", str(k),
               "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(k + 1)]
        return out if mtp else [*out, "--speculative-draft-model-path", "DRAFT_MODEL"]
    return []


def _vllm(model: str, g: int, tp: int, dp: int, ep: int, pp: int, batch: int, k: int, mtp: bool, role: str | None
          ) -> list[str]:
    cmd = ["vllm", "serve", model, "--tensor-parallel-size", str(tp), "--data-parallel-size", str(dp),
           "--pipeline-parallel-size", str(pp)]
    if ep > 1:
        cmd.append("--enable-expert-parallel")
    if batch > 0:
        cmd += ["--max-num-seqs", str(max(1, batch // dp))]
    cmd += ["--kv-cache-dtype", "fp8", *_spec("vllm", k, mtp)]
    if role is not None:
        cmd += ["--kv-transfer-config", "'{\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}'"]
    return cmd


def _sglang(model: str, g: int, tp: int, dp: int, ep: int, pp: int, batch: int, k: int, mtp: bool,
            role: str | None) -> list[str]:
    cmd = ["python", "-m", "sglang.launch_server", "--model-path", model, "--tp-size", str(g)]
    if dp > 1:
        cmd += ["--dp-size", str(dp), "--enable-dp-attention"]
    if ep > 1:
        cmd += ["--ep-size", str(ep)]
    if pp > 1:
        cmd += ["--pp-size", str(pp)]
    if batch > 0:
        cmd += ["--max-running-requests", str(batch)]
    cmd += ["--kv-cache-dtype", "fp8_e4m3", *_spec("sglang", k, mtp)]
    if role is not None:
        cmd += ["--disaggregation-mode", role]
    return cmd


def _trtllm_yaml(dp: int, k: int, mtp: bool) -> str:
    lines = [f"enable_attention_dp: {'true' if dp > 1 else 'false'}", "kv_cache_config:", "  dtype: fp8"]
    if k > 0:
        lines += ["speculative_config:", f"  decoding_type: {'MTP' if mtp else 'Eagle'}", f"  max_draft_len: {k}"]
        if not mtp:
            lines.append("  speculative_model_dir: DRAFT_MODEL")
    return "\n".join(lines)


def _trtllm(model: str, g: int, tp: int, dp: int, ep: int, pp: int, batch: int, k: int, mtp: bool,
            role: str | None, dynamo: bool) -> list[str]:
    per_rank = ["--max-batch-size" if dynamo else "--max_batch_size", str(max(1, batch // dp))] if batch > 0 else []
    if dynamo:
        cmd = ["python", "-m", "dynamo.trtllm", "--model", model, "--tensor-parallel-size", str(g // pp),
               "--pipeline-parallel-size", str(pp)]
        if ep > 1:
            cmd += ["--expert-parallel-size", str(ep)]
        if dp > 1:
            cmd.append("--enable-attention-dp")
        return [*cmd, *per_rank, "--extra-engine-args", f"engine-{role or 'agg'}.yaml", "--disaggregation-mode",
                role or "agg"]
    return ["trtllm-serve", model, "--tp_size", str(g // pp), "--ep_size", str(ep), "--pp_size", str(pp),
            *per_rank, "--extra_llm_api_options", f"engine-{role or 'agg'}.yaml"]


def _command(engine: str, model: str, layout: tuple[int, int, int, int, int], batch: int, k: int, mtp: bool,
             role: str | None) -> list[str]:
    g, tp, dp, ep, pp = layout
    base = engine.removeprefix("dynamo-")
    if base == "trtllm":
        return _trtllm(model, g, tp, dp, ep, pp, batch, k, mtp, role, engine.startswith("dynamo-"))
    cmd = (_vllm if base == "vllm" else _sglang)(model, g, tp, dp, ep, pp, batch, k, mtp, role)
    if engine.startswith("dynamo-"):     # Dynamo's workers take their engine's own flags
        rest = cmd[cmd.index(model) + 1:]
        cmd = ["python", "-m", f"dynamo.{base}", "--model" if base == "vllm" else "--model-path", model, *rest]
        if role is not None and base == "vllm":       # dynamo.vllm: the role, with the NIXL kv-transfer-config
            cmd += ["--disaggregation-mode", role]
        if role is not None and base == "sglang":     # as Dynamo's sglang disagg.yaml: NIXL between the pools
            cmd += ["--disaggregation-transfer-backend", "nixl"]
    return cmd


def launch(row, m) -> dict:
    """{engine, workers: [{role, count, command, engine_yaml (TRT-LLM: the engine-<role>.yaml it names; else
    None)}], notes} for one plan row and its model spec ``m``. ``count``: instances of that role over all the
    plan's units."""
    engine = str(row["profile"])
    if engine not in ENGINES:
        raise SpecError(f"profile {engine!r} is no engine to launch (a bound, not a deployment); launch arguments "
                        f"exist for {', '.join(ENGINES)}", field="--launch")
    model, note = model_path(m)
    mtp = m.mtp is not None
    notes = [note] if note else []
    k = int(row["spec_tokens"])
    if k > 0 and not mtp:
        notes.append(f"{m.id} has no MTP module: {k} draft tokens need a draft model (DRAFT_MODEL)")
    units = int(row["units"])
    g, tp, dp, ep, pp = _ints(row, "gpus_per_instance", "tp", "dp", "ep", "pp")
    batch = int(row["batch"])
    trt = engine.endswith("trtllm")
    workers = []
    if row["serving"] == "disaggregated":
        pg, ptp, pep = _ints(row, "pf_gpus", "pf_tp", "pf_ep")
        pdp = max(1, pg // max(ptp, 1))
        workers.append({"role": "prefill", "count": units * int(row["pf_instances"]),
                        "command": _command(engine, model, (pg, ptp, pdp, pep, 1), 0, 0, mtp, "prefill"),
                        "engine_yaml": _trtllm_yaml(pdp, 0, mtp) if trt else None})
        roles: list[tuple[str | None, int]] = [("decode", units * int(row["instances"]))]
    else:
        roles = [(None, units)]
    for role, count in roles:
        workers.append({"role": role or "aggregated", "count": count,
                        "command": _command(engine, model, (g, tp, dp, ep, pp), batch, k, mtp, role),
                        "engine_yaml": _trtllm_yaml(dp, k, mtp) if trt else None})
    return {"engine": engine, "workers": workers, "notes": notes}


def launch_text(df, models: dict) -> str:
    """A Markdown page of every system's launch arguments at its largest planned row."""
    out = ["# Launch arguments (perfmodel plan --launch)", ""]
    for name, g in df.groupby("system", sort=False):
        row = g.loc[g["gpus"].idxmax()]
        got = launch(row, models[row["model"]])
        out += [f"## {name}: {int(row['units'])} units of {int(row['unit_gpus'])} GPUs ({row['serving']})", ""]
        for w in got["workers"]:
            out += [f"{w['role']}: {w['count']} instance(s)", "", "```bash", " ".join(w["command"]), "```", ""]
            if w["engine_yaml"]:
                out += [f"engine-{w['role'].replace('aggregated', 'agg')}.yaml:", "", "```yaml", w["engine_yaml"],
                        "```", ""]
        out += [f"- {n}" for n in got["notes"]] + ([""] if got["notes"] else [])
    return "\n".join(out)
