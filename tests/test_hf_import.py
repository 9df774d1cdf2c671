"""perfmodel.importers.hf_config: real config.json fixtures -> specs that match the catalog entries.

Fixture provenance: tests/fixtures/hf_configs/SOURCES.md. A catalog entry that another change has not added
yet is skipped, not failed; the figures from ../shared/reference/models.md are checked without the catalog.
"""

import json
from pathlib import Path

import pytest
import yaml

from perfmodel import catalog
from perfmodel.arch import kv_bytes_per_token, kv_fixed_bytes_per_sequence, model_summary, param_counts
from perfmodel.errors import SpecError
from perfmodel.formats import KV_FORMATS
from perfmodel.importers import SUPPORTED_ARCHITECTURES, import_hf_config, import_hf_config_file, to_yaml
from perfmodel.specs.model import ModelSpec

FIX = Path(__file__).parent / "fixtures" / "hf_configs"


def load_fixture(name: str) -> dict:
    cfg = json.loads((FIX / f"{name}.json").read_text())
    if name == "qwen3-coder-next":  # the stored copy is a subset without these two keys (SOURCES.md)
        cfg = {"architectures": ["Qwen3NextForCausalLM"], "max_position_embeddings": 262144, **cfg}
    if name == "llama-4-maverick-2layer":  # undo the TensorRT-LLM test's cut: 48 layers, NoPE every 4th
        text = dict(cfg["text_config"], num_hidden_layers=48)
        text.pop("no_rope_layer_interval")
        cfg = dict(cfg, text_config=text)
    return cfg


def imported(name: str) -> ModelSpec:
    return ModelSpec.model_validate(import_hf_config(load_fixture(name), model_id=name))


def catalog_or_skip(mid: str) -> ModelSpec:
    try:
        return catalog.model(mid)
    except SpecError:
        pytest.skip(f"catalog entry {mid!r} not present yet")


# (fixture, catalog id, tolerance on parameter counts: 0 = exact)
PAIRS = [
    ("llama-3.1-8b", "llama-3.1-8b", 0),
    ("llama-3.1-70b", "llama-3.1-70b", 0),
    ("mixtral-8x7b", "mixtral-8x7b", 0),
    ("qwen3-235b-a22b", "qwen3-235b-a22b", 0),
    ("qwen3-coder-next", "qwen3-next-80b-a3b", 0),
    ("gpt-oss-120b", "gpt-oss-120b", 0),
    ("llama-4-maverick-2layer", "llama-4-maverick", 0),
    ("deepseek-v3", "deepseek-v3", 0),
    ("deepseek-v3.2", "deepseek-v3.2", 0),
    ("glm-4.6", "glm-4.5", 0),   # same architecture as GLM-4.5 (context length aside)
    ("glm-5.2", "glm-5", 0),     # GLM-5 and GLM-5.2 share the backbone; GLM-5 has no IndexShare
]


@pytest.mark.parametrize("fixture,mid,tol", PAIRS, ids=[p[0] for p in PAIRS])
def test_import_matches_catalog(fixture, mid, tol):
    got, want = imported(fixture), catalog_or_skip(mid)
    pg, pw = param_counts(got), param_counts(want)
    for key in ("total", "active", "mtp"):
        a, b = getattr(pg, key), getattr(pw, key)
        if tol == 0:
            assert a == b, f"{fixture} {key}: imported {a:,} vs catalog {b:,}"
        else:
            assert a == pytest.approx(b, rel=tol), f"{fixture} {key}"
    for fmt in KV_FORMATS:
        assert kv_bytes_per_token(got, fmt) == kv_bytes_per_token(want, fmt), (fixture, fmt)
        assert kv_fixed_bytes_per_sequence(got, fmt) == kv_fixed_bytes_per_sequence(want, fmt), (fixture, fmt)
    assert got.num_layers == want.num_layers and got.hidden_size == want.hidden_size


# IndexShare fields of the GLM-5.2/5.3 config.json (stored ids 61178896515, 69417055875); the stored GLM-5.2-FP8
# copy used as the fixture predates them.
GLM52_INDEXSHARE = {"index_topk_freq": 4, "index_skip_topk_offset": 3, "index_share_for_mtp_iteration": True}


def test_glm52_with_indexshare_fields_matches_catalog_exactly():
    got = ModelSpec.model_validate(import_hf_config({**load_fixture("glm-5.2"), **GLM52_INDEXSHARE}))
    want = catalog_or_skip("glm-5.2")
    pg, pw = param_counts(got), param_counts(want)
    assert (pg.total, pg.active, pg.mtp) == (pw.total, pw.active, pw.mtp)
    for fmt in KV_FORMATS:
        assert kv_bytes_per_token(got, fmt) == kv_bytes_per_token(want, fmt)
    full = [i for i, g in enumerate(got.layers) for _ in range(g.count) if not got.attention[g.attention].indexer.shared]
    assert len(full) == 21 and got.mtp.attention == "dsa_shared"
    # indexer_types spelled out gives the same schedule as the freq/offset rule
    types = ["shared" if max(i - 2, 0) % 4 else "full" for i in range(78)]
    alt = import_hf_config({**load_fixture("glm-5.2"), "indexer_types": types, "index_share_for_mtp_iteration": True})
    assert param_counts(ModelSpec.model_validate(alt)).total == pg.total


def test_glm52_without_indexshare_fields_differs_by_the_shared_indexers():
    """Without IndexShare fields every layer gets an indexer: total within 0.5%; the active difference is exactly
    the indexer weights of the 57 sharing layers (9.4M each), 1.3% of active."""
    got, want = imported("glm-5.2"), catalog_or_skip("glm-5.2")
    pg, pw = param_counts(got), param_counts(want)
    assert pg.total == pytest.approx(pw.total, rel=0.005)
    per = 2048 * 32 * 128 + 6144 * 128 + 6144 * 32
    assert pg.active - pw.active == 57 * per
    assert kv_bytes_per_token(got, "fp8") > kv_bytes_per_token(want, "fp8")
    assert "IndexShare" in import_hf_config(load_fixture("glm-5.2"))["notes"]


def test_reference_kv_figures_without_catalog():
    """../shared/reference/models.md KV goldens, straight from the imported configs."""
    v3 = model_summary(imported("deepseek-v3"))["kv_bytes_per_token"]
    assert (v3["bf16"], v3["fp8"]) == (70272, 40016)
    assert model_summary(imported("deepseek-v3.2"))["kv_bytes_per_token"]["fp8"] == 48068
    assert kv_bytes_per_token(imported("llama-3.1-70b"), "bf16") == 327680
    oss = imported("gpt-oss-120b")
    assert kv_bytes_per_token(oss, "bf16") == 18 * 2048
    assert kv_fixed_bytes_per_sequence(oss, "bf16") == 18 * 128 * 2048
    qn = imported("qwen3-coder-next")
    assert kv_fixed_bytes_per_sequence(qn, "bf16") / 2**20 == pytest.approx(73.7, abs=0.05)


def test_glm_imports_match_published_totals_without_catalog():
    """GLM-4.5/4.6: 355B total; GLM-5/5.2: 744B total (models.md S19, S21). Their active figures (32B, 40B)
    leave out the embedding and the LM head: derived active minus both is within 1% of them."""
    for name, total, active in (("glm-4.6", 355e9, 32e9), ("glm-5.2", 744e9, 40e9)):
        p = param_counts(imported(name))
        assert p.total == pytest.approx(total, rel=0.01), name
        assert p.active - p.embedding - p.lm_head == pytest.approx(active, rel=0.01), name


def test_imported_structure():
    ds = import_hf_config(load_fixture("deepseek-v3.2"))
    assert ds["family"] == "deepseek" and ds["native_weights"] == "fp8"
    assert [(g["count"], g["ffn"]) for g in ds["layers"]] == [(3, "dense"), (58, "moe")]
    assert ds["attention"]["dsa"]["indexer"] == {"heads": 64, "head_dim": 128, "top_k": 2048}
    assert ds["mtp"] == {"layers": 1, "attention": "dsa", "ffn": "moe"}
    assert ds["ffn"]["moe"] == {"kind": "moe", "experts": 256, "top_k": 8, "expert_intermediate": 2048,
                                "shared_experts": 1}
    oss = import_hf_config(load_fixture("gpt-oss-120b"))
    assert oss["native_weights"] == "mxfp4+bf16"
    assert oss["attention"]["swa"] == {"kind": "gqa", "heads": 64, "kv_heads": 8, "head_dim": 64, "window": 128,
                                       "sinks": True}
    assert [g["where"] for g in oss["layers"]] == ["even 0-34", "odd 1-35"]
    mav = import_hf_config(load_fixture("llama-4-maverick-2layer"))
    assert {(g["attention"], g["ffn"]): g["count"] for g in mav["layers"]} == {
        ("chunked", "dense"): 24, ("chunked", "moe"): 12, ("global", "moe"): 12}
    assert mav["attention"]["chunked"]["window"] == 8192 and "chunked attention" in mav["notes"]
    glm = import_hf_config(load_fixture("glm-4.6"))
    assert glm["family"] == "glm" and glm["attention"]["gqa"]["head_dim"] == 128
    qn = import_hf_config(load_fixture("qwen3-coder-next"))
    assert {g["attention"]: g["count"] for g in qn["layers"]} == {"gdn": 36, "full": 12}
    assert qn["ffn"]["moe"]["shared_experts"] == 1


def test_kimi_style_deepseek_config_is_family_kimi():
    cfg = dict(load_fixture("deepseek-v3"), model_type="kimi_k2", first_k_dense_replace=1, n_routed_experts=384,
               num_attention_heads=64, vocab_size=163840, num_nextn_predict_layers=0)
    out = import_hf_config(cfg, model_id="kimi-like")
    assert out["family"] == "kimi" and "mtp" not in out
    assert [g["count"] for g in out["layers"]] == [1, 60]


@pytest.mark.parametrize("name", sorted(p.stem for p in FIX.glob("*.json")))
def test_yaml_round_trip(name):
    mapping = import_hf_config(load_fixture(name), model_id=name)
    text = to_yaml(mapping)
    assert yaml.safe_load(text) == mapping
    ModelSpec.model_validate(yaml.safe_load(text))


def test_file_import_loads_through_the_catalog(tmp_path):
    d = tmp_path / "Mixtral-8x7B-v0.1"
    d.mkdir()
    (d / "config.json").write_text((FIX / "mixtral-8x7b.json").read_text())
    text = import_hf_config_file(str(d / "config.json"))
    out = tmp_path / "mixtral.yaml"
    out.write_text(text)
    m = catalog.model(str(out))
    assert m.id == "mixtral-8x7b-v0.1"
    assert param_counts(m).total == param_counts(catalog.model("mixtral-8x7b")).total
    assert import_hf_config_file(str(d / "config.json"), model_id="mx").startswith("# Generated")


def test_unknown_architecture_is_a_one_line_spec_error():
    with pytest.raises(SpecError) as e:
        import_hf_config({"architectures": ["MambaForCausalLM"], "hidden_size": 8})
    assert e.value.field == "architectures"
    assert "MambaForCausalLM" in str(e.value) and "\n" not in str(e.value)
    assert set(SUPPORTED_ARCHITECTURES) >= {"LlamaForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV32ForCausalLM",
                                            "Glm4MoeForCausalLM", "GptOssForCausalLM", "MixtralForCausalLM"}


def test_file_errors_name_file_and_field(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(SpecError) as e:
        import_hf_config_file(str(bad))
    assert e.value.file == str(bad) and e.value.field == "architectures"
    cfg = load_fixture("llama-3.1-8b")
    del cfg["hidden_size"]
    bad.write_text(json.dumps(cfg))
    with pytest.raises(SpecError) as e:
        import_hf_config_file(str(bad))
    assert (e.value.file, e.value.field) == (str(bad), "hidden_size")
    bad.write_text("{not json")
    with pytest.raises(SpecError) as e:
        import_hf_config_file(str(bad))
    assert e.value.file == str(bad) and e.value.field == "line 1"
    with pytest.raises(SpecError) as e:
        import_hf_config({"architectures": ["MixtralForCausalLM"], **{k: v for k, v in load_fixture(
            "mixtral-8x7b").items() if k != "architectures"}, "num_experts_per_tok": 9})
    assert e.value.field == "num_experts_per_tok"
    with pytest.raises(SpecError) as e:
        import_hf_config({"hidden_size": 8})
    assert e.value.field == "architectures"
