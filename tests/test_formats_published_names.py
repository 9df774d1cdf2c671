"""Formats and engines as this autumn's published results name them (issue 55 item 4): MXFP8 and W4AFP8 weights,
the engines' spellings of an FP8 or FP4 KV cache, InferenceX's engine spellings and AMD's ATOM. Byte counts checked
by hand; the formats already in the catalog keep their bytes and rates (no prediction moves)."""

from __future__ import annotations

import pytest

from perfmodel.engine.bind import compute_rate
from perfmodel.formats import COMPUTE_RATE, WEIGHT_BYTES, weight_bytes
from perfmodel.specs.records import read_records
from perfmodel.validation.predict_rows import ENGINE_PROFILE, profile_id

HEADER = "id,kind,hardware,model,weights,kv_cache,engine,isl,osl,metric,value\n"


def test_new_weight_formats_by_hand():
    # MXFP8: 32 e4m3 values (32 B) + one e8m0 scale (1 B) per block = 33/32 B per element
    assert weight_bytes("mxfp8") == 33 / 32
    # W4AFP8: 128 int4 values (64 B) + one bf16 scale (2 B) per group = 66/128 B per element, as int4 (W4A16)
    assert weight_bytes("w4afp8") == 66 / 128 == weight_bytes("int4")
    # both run their GEMMs on FP8 tensor cores (int4 W4A16 stays on BF16)
    assert COMPUTE_RATE["mxfp8"] == COMPUTE_RATE["w4afp8"] == "fp8" and COMPUTE_RATE["int4"] == "bf16"
    fields = {"fp8_dense_pflops": 4.5, "bf16_dense_pflops": 2.25, "fp4_dense_pflops": 9.0}
    assert compute_rate(fields, "w4afp8") == 4.5e15 == compute_rate(fields, "mxfp8")


def test_existing_formats_unchanged():
    assert WEIGHT_BYTES["bf16"] == 2 and WEIGHT_BYTES["fp8"] == 1 and WEIGHT_BYTES["nvfp4"] == 0.5625
    assert WEIGHT_BYTES["mxfp4"] == 0.53125 and WEIGHT_BYTES["int4"] == 0.515625
    assert {k: COMPUTE_RATE[k] for k in ("bf16", "fp16", "fp8", "nvfp4", "mxfp4", "fp4", "int4")} == {
        "bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "nvfp4": "fp4", "mxfp4": "fp4", "fp4": "fp4", "int4": "bf16"}


@pytest.mark.parametrize("weights,kv,want", [
    ("MXFP8", "fp8_e4m3", ("mxfp8", "fp8")), ("w4afp8", "FP8_E5M2", ("w4afp8", "fp8")),
    ("w4a16", "nvfp4", ("int4", "fp4")), ("BF16", "fp16", ("bf16", "bf16")), ("fp8", "fp8", ("fp8", "fp8")),
])
def test_records_read_published_spellings(tmp_path, weights, kv, want):
    f = tmp_path / "r.csv"
    f.write_text(HEADER + f"a,point,b200,minimax-m3,{weights},{kv},sglang,8192,1024,tpot_ms,20\n")
    (rec,) = read_records(f)
    assert (rec.weights, rec.kv_cache) == want


def test_unknown_format_still_one_line(tmp_path):
    from perfmodel.errors import SpecError
    f = tmp_path / "r.csv"
    f.write_text(HEADER + "a,point,b200,minimax-m3,int3,fp8,sglang,8192,1024,tpot_ms,20\n")
    with pytest.raises(SpecError) as e:
        read_records(f)
    assert "line 2: weights" in str(e.value) and "unknown weight format" in str(e.value)


@pytest.mark.parametrize("engine,profile", [
    ("trt", "trtllm"), ("TensorRT-LLM", "trtllm"), ("dynamo-trt", "dynamo-trtllm"), ("atom", "vllm"),
    ("vllm-atom", "vllm"), ("sglang", "sglang"), ("", "trtllm"),
])
def test_engine_spellings(tmp_path, engine, profile):
    f = tmp_path / "r.csv"
    f.write_text(HEADER + f"a,point,b200,minimax-m3,fp8,fp8,{engine},8192,1024,tpot_ms,20\n")
    (rec,) = read_records(f)
    assert profile_id(rec) == profile and profile in ENGINE_PROFILE.values()


def test_records_read_catalog_entries_as_results_spell_them(tmp_path):
    """Hardware, model and workload ids in any case, a model by its Hugging Face repository id, a hardware variant
    kept; an unknown name is kept as written (the row is reported unsupported when predicted, not at reading)."""
    f = tmp_path / "r.csv"
    f.write_text("id,kind,hardware,model,workload,isl,osl,metric,value\n"
                 "a,point,B200,MiniMaxAI/MiniMax-M3,,1024,1024,tpot_ms,10\n"
                 "b,frontier,GB300-NVL72,GLM-5.3,AgentX,,,total_tps_per_gpu,100\n"
                 "c,point,B200@marketed-192gb,zai-org/GLM-5.3-FP8,,1,1,tpot_ms,1\n"
                 "d,point,b300,some-lab/unknown-model,,1,1,tpot_ms,1\n")
    got = [(r.hardware, r.model, r.workload) for r in read_records(f)]
    assert got == [("b200", "minimax-m3", None), ("gb300-nvl72", "glm-5.3", "agentx"),
                   ("b200@marketed-192gb", "glm-5.3", None), ("b300", "some-lab/unknown-model", None)]


def test_catalog_ids_any_case():
    from perfmodel import catalog
    assert catalog.hardware("GB300-NVL72").id == "gb300-nvl72" and catalog.workload("AgentX").id == "agentx"
    assert catalog.profile("SGLang").id == "sglang"
    from perfmodel.errors import SpecError
    with pytest.raises(SpecError) as e:
        catalog.hardware("B2000")
    assert "unknown hardware id 'B2000'" in str(e.value)


@pytest.mark.parametrize("weights,kv,want", [
    ("modelopt_fp4", "auto", ("nvfp4", "bf16")), ("modelopt", "bfloat16", ("fp8", "bf16")),
    ("AWQ", "fp8", ("int4", "fp8")), ("gptq", "float16", ("int4", "bf16")), ("fp8_block", "fp8", ("fp8", "fp8")),
])
def test_records_read_engine_flag_spellings(tmp_path, weights, kv, want):
    """SGLang/vLLM flag values as recipes print them: --quantization modelopt_fp4 (NVFP4), modelopt (FP8), AWQ/GPTQ
    4-bit (W4A16); --kv-cache-dtype auto keeps the model's activation dtype (BF16)."""
    f = tmp_path / "r.csv"
    f.write_text(HEADER + f"a,point,b200,kimi-k2.6,{weights},{kv},sglang,8192,1024,tpot_ms,20\n")
    (rec,) = read_records(f)
    assert (rec.weights, rec.kv_cache) == want


@pytest.mark.parametrize("name,want", [
    ("nvidia/Kimi-K2.6-NVFP4", "kimi-k2.6"), ("MiniMaxAI/MiniMax-M3-MXFP8", "minimax-m3"),
    ("Qwen/Qwen3.5-122B-A10B-FP8", "qwen3.5-122b-a10b"), ("RedHatAI/Qwen3.5-122B-A10B-FP8-dynamic",
                                                          "qwen3.5-122b-a10b"),
    ("nvidia/GLM-5.3-NVFP4", "glm-5.3"), ("zai-org/GLM-5.3-Flash-FP8", "glm-5.3-flash"),
    ("glm-5.3-flash-bf16", "glm-5.3-flash-bf16"),        # an alias is kept as written (it resolves itself)
    ("some-lab/unknown-model-FP8", "some-lab/unknown-model-FP8"),   # no entry under the suffix: left unknown
    ("nvidia/DeepSeek-V3-FP8-X", "nvidia/DeepSeek-V3-FP8-X"),       # only a trailing suffix is read
])
def test_quantized_checkpoint_names_read_as_their_model(name, want):
    from perfmodel import catalog
    assert catalog.canonical_id("models", name) == want


def test_quantized_checkpoint_name_keeps_the_row_format(tmp_path):
    """The suffix picks the architecture only: the row's weights column keeps the format it states."""
    f = tmp_path / "r.csv"
    f.write_text(HEADER + "a,point,b200,nvidia/Kimi-K2.6-NVFP4,nvfp4,fp8,sglang,8192,1024,tpot_ms,20\n"
                 "b,point,b200,nvidia/Kimi-K2.6-NVFP4,,fp8,sglang,8192,1024,tpot_ms,20\n")
    a, b = read_records(f)
    assert (a.model, a.weights) == ("kimi-k2.6", "nvfp4") and (b.model, b.weights) == ("kimi-k2.6", None)
