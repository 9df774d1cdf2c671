"""`perfmodel models import` on this autumn's families (issue 55): each new catalog entry is reproduced from its
fixture config (parameters, MTP, KV bytes and fixed state exactly); every field the import assumed or did not read
is named (stderr for the CLI) and an assumption lowers the entry's confidence; the YAML records the revision and
the config's sha256; a row naming an unknown model names the import command. Fixture provenance:
tests/fixtures/hf_configs/SOURCES.md."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from perfmodel import catalog
from perfmodel.arch import kv_bytes_per_token, kv_fixed_bytes_per_sequence, param_counts
from perfmodel.formats import KV_FORMATS
from perfmodel.importers.hf_config import import_hf_config_report
from perfmodel.specs.model import ModelSpec

FIX = Path(__file__).parent / "fixtures" / "hf_configs"
NEW = ["qwen3.5-122b-a10b", "muse-glimmer-30b", "minimax-m3", "glm-5.3-flash", "glm-5.3", "kimi-k2.6", "motif-3"]


def _load(name: str) -> dict:
    return json.loads((FIX / f"{name}.json").read_text())


@pytest.mark.parametrize("name", NEW)
def test_fixture_reproduces_the_catalog_entry(name):
    mapping, report = import_hf_config_report(_load(name), model_id=name)
    got, want = ModelSpec.model_validate(mapping), catalog.model(name)
    pg, pw = param_counts(got), param_counts(want)
    assert (pg.total, pg.active, pg.mtp, pg.residual) == (pw.total, pw.active, pw.mtp, pw.residual)
    for fmt in KV_FORMATS:
        assert kv_bytes_per_token(got, fmt) == kv_bytes_per_token(want, fmt), fmt
        assert kv_fixed_bytes_per_sequence(got, fmt) == kv_fixed_bytes_per_sequence(want, fmt), fmt
    assert got.num_layers == want.num_layers and got.residual == want.residual
    assert not any("assumed" in line for line in report), report   # the fixtures state every field used


def test_hybrid_structures():
    flash, _ = import_hf_config_report(_load("glm-5.3-flash"))
    assert flash["residual"] == {"kind": "mhc", "streams": 4}
    assert flash["attention"]["kda"]["variant"] == "kda" and flash["attention"]["dsa"]["qk_rope_dim"] == 0
    assert flash["attention"]["dsa"]["indexer"]["key_pool"] == 4
    m3, _ = import_hf_config_report(_load("minimax-m3"))
    assert m3["attention"]["msa"]["block_indexer"] == {"heads": 4, "head_dim": 128, "key_heads": 1,
                                                       "block_size": 128, "top_k_blocks": 16, "local_blocks": 1}
    assert {(g["attention"], g["ffn"]): g["count"] for g in m3["layers"]} == {("full", "dense"): 3, ("msa", "moe"): 57}
    muse, _ = import_hf_config_report(_load("muse-glimmer-30b"))
    assert muse["attention"]["swa"] == {"kind": "gqa", "heads": 32, "kv_heads": 2, "head_dim": 128, "window": 2048,
                                        "output_gate": True}
    q, _ = import_hf_config_report(_load("qwen3.5-122b-a10b"))
    assert q["attention"]["full"]["output_gate"] is True and q["mtp"]["layers"] == 1
    motif, _ = import_hf_config_report(_load("motif-3"))
    assert motif["attention"]["swa"]["window"] == 128 + 1 and "window" not in motif["attention"]["global"]
    assert {(g["attention"], g["ffn"]): g["count"] for g in motif["layers"]} == {
        ("global", "dense"): 1, ("swa", "dense"): 1, ("global", "moe"): 13, ("swa", "moe"): 38}
    assert motif["mtp"] == {"layers": 1, "attention": "swa", "ffn": "dense", "mhc": False}
    assert motif["residual"] == {"kind": "mhc", "streams": 4} and motif["family"] == "motif"


def test_motif_schedule_follows_the_config_fields():
    """layer l slides iff l % sliding_window_period != 0 (pattern interleave); 'all' slides every layer; windows
    off give global layers only; MoE from n_dense_first_layers on."""
    cfg = _load("motif-3")
    m, _ = import_hf_config_report(dict(cfg, num_hidden_layers=8, sliding_window_period=2, n_dense_first_layers=3))
    assert [g["where"] for g in m["layers"] if g["attention"] == "global"] == ["even 0-2", "even 4-6"]
    every, _ = import_hf_config_report(dict(cfg, sliding_window_pattern="all"))
    assert set(every["attention"]) == {"swa"}
    off, _ = import_hf_config_report(dict(cfg, use_sliding_window=False))
    assert set(off["attention"]) == {"global"} and off["mtp"]["attention"] == "global"


def test_glm52_style_config_without_indexshare_is_named_and_low_confidence():
    """The issue's new user: a GLM-5.2-style config without the IndexShare fields imports as an indexer on every
    layer; the import now says so on the report and writes confidence: low."""
    cfg = json.loads((FIX / "glm-5.2.json").read_text())
    mapping, report = import_hf_config_report(cfg, model_id="glm-like")
    assert any(line.startswith("index_topk_freq: not in the config; assumed 1") for line in report), report
    assert mapping["confidence"] == "low" and "index_topk_freq" in mapping["confidence_note"]
    shared, report2 = import_hf_config_report(_load("glm-5.3"), model_id="glm-like")
    assert "confidence" not in shared and not any("index_topk_freq" in line for line in report2)
    # +15% KV per token without IndexShare (78 x 1,408 against 21 x 1,408 + 57 x 1,152)
    kv = kv_bytes_per_token(ModelSpec.model_validate(mapping), "bf16")
    assert kv / kv_bytes_per_token(ModelSpec.model_validate(shared), "bf16") == pytest.approx(78 * 1408 / 95232)


def test_a_saved_configs_generation_defaults_are_not_named():
    """A verbatim config.json (Kimi K2.5's, saved by transformers) repeats PretrainedConfig's generation and
    serialisation defaults (num_beams, top_k, max_length, ...): none is an architecture field, none is named."""
    mapping, report = import_hf_config_report(_load("kimi-k2.6"), model_id="kimi-k2.6")
    assert report == [] and mapping["native_weights"] == "int4" and "confidence" not in mapping


def test_glm_mlp_layer_types_state_the_ffn_of_each_layer():
    """GlmMoeDsa configs saved by transformers v5 list mlp_layer_types: the list decides dense vs MoE per layer
    (GLM-5.3: dense 0-2); a wrong entry is one error naming the field."""
    from perfmodel.errors import SpecError
    cfg = _load("glm-5.3")
    mapping, report = import_hf_config_report(cfg)
    assert [(g["ffn"], g["count"]) for g in mapping["layers"] if g["ffn"] == "dense"] == [("dense", 3)]
    assert not any(line.startswith(("mlp_layer_types", "index_topk_freq")) for line in report), report
    five = ["dense"] * 5 + ["sparse"] * 73
    m5, _ = import_hf_config_report(dict(cfg, mlp_layer_types=five))
    assert sum(g["count"] for g in m5["layers"] if g["ffn"] == "dense") == 5
    with pytest.raises(SpecError) as e:
        import_hf_config_report(dict(cfg, mlp_layer_types=["moe"] * 78))
    assert e.value.field == "mlp_layer_types"


def test_unread_architecture_field_is_named():
    cfg = dict(json.loads((FIX / "llama-3.1-8b.json").read_text()), num_hyper_layers=3)
    _, report = import_hf_config_report(cfg)
    assert any(line.startswith("num_hyper_layers: not read") for line in report), report
    assert not any(line.startswith(("rope_theta", "bos_token_id", "rms_norm_eps")) for line in report)


def test_cli_writes_revision_and_hash_and_names_assumptions(tmp_path, capsys):
    from perfmodel.cli.main import main
    src = FIX / "glm-5.2.json"
    out = tmp_path / "models" / "glm-like.yaml"
    assert main(["models", "import", str(src), "--id", "glm-like", "-o", str(out), "--revision", "abc123"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(line.startswith(f"perfmodel: models import: {src}: ") for line in err)
    assert any("index_topk_freq: not in the config; assumed 1" in line for line in err)
    doc = yaml.safe_load(out.read_text())
    assert doc["id"] == "glm-like" and doc["revision"] == "abc123"
    assert doc["config_sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert doc["confidence"] == "low" and catalog.model(str(out)).id == "glm-like"
    assert main(["models", "import", str(FIX / "glm-5.3.json"), "--id", "g53"]) == 0
    cap = capsys.readouterr()
    assert "revision: not recorded (pass --revision" in cap.err and "confidence" not in cap.out
    assert yaml.safe_load(cap.out)["id"] == "g53"


def test_unknown_model_names_the_import_command(capsys):
    from perfmodel.cli.main import main
    assert main(["predict", "--hardware", "h100-sxm", "--model", "motif-9-ultra"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "perfmodel models import CONFIG.json --id ID -o models/ID.yaml" in err


def test_dense_qwen35_hybrid_imports_with_a_dense_mlp():
    """A dense Qwen3.5 size (no num_experts; widths of the slime Qwen3.5-27B launch script, linear heads chosen for
    the test): Gated DeltaNet 3:1 gated full attention, one MLP on every layer."""
    text = {"hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4,
            "head_dim": 256, "intermediate_size": 17408, "vocab_size": 248320, "max_position_embeddings": 262144,
            "full_attention_interval": 4, "attn_output_gate": True, "linear_num_key_heads": 16,
            "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
            "linear_conv_kernel_dim": 4, "tie_word_embeddings": False}
    out, report = import_hf_config_report({"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": text})
    assert {(g["attention"], g["ffn"]): g["count"] for g in out["layers"]} == {("gdn", "mlp"): 48, ("full", "mlp"): 16}
    assert out["ffn"] == {"mlp": {"kind": "dense", "intermediate": 17408}}
    assert out["attention"]["full"]["output_gate"] is True and "confidence" not in out, report


def test_validate_row_naming_an_unknown_model_names_the_import_command(tmp_path, capsys):
    from perfmodel.cli.main import main
    root = Path(__file__).resolve().parent.parent
    header, first = (root / "data" / "shared" / "calibration.csv").read_text().splitlines()[:2]
    cells = first.split(",")
    cells[0], cells[4] = "x01", "acme-lab/Zeta-7"
    rows = tmp_path / "rows.csv"
    rows.write_text(header + "\n" + ",".join(cells) + "\n")
    main(["-q", "validate", str(rows)])
    out = capsys.readouterr().out
    assert "unknown model 'acme-lab/Zeta-7'" in out and "perfmodel models import CONFIG.json" in out
