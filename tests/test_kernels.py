"""perfmodel kernels: closed-form kernel curves, held-out split, CLI lines and errors, --write."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfmodel.cli.main import main
from perfmodel.kernels import attention, collectives, write
from perfmodel.kernels.fitting import fit_curve, held_out_mask
from perfmodel.kernels.gpu import peaks
from perfmodel.kernels.shape_physics import dense_issued_flops

FIXTURE = Path(__file__).parent / "fixtures" / "kernels"
ROOT = Path(__file__).resolve().parents[1]


def test_dense_issued_flops_hand_check():
    # 1 token pads to the 16-row minimum tile; 4096 x 4096 has 32 x 32 = 1024 tiles at 128 rows... here 1 x 32
    # tiles (<= 132 SMs: u = 1): 2 * 4096 * 4096 * 16
    assert dense_issued_flops([1], [4096], [4096], 132)[0] == pytest.approx(2 * 4096 * 4096 * 16)
    # 129 rows = one 128-row tile + a 16-row tile: 144 rows
    assert dense_issued_flops([129], [4096], [4096], 132)[0] == pytest.approx(2 * 4096 * 4096 * 144)


def test_collective_hand_check():
    """n = 4, 1 MB all-reduce, link 900 GB/s: one-shot 3 + 3 MB / (0.5 x 900 GB/s) vs two-shot 8 x 4^0 + 1.5 MB /
    (1.0 x 900 GB/s); the faster wins."""
    pk = peaks("gb200")
    f = collectives.features([4], [0.5e6], 2.0, "all_reduce", pk)
    p = {"lat1_us": 3, "g1": 0.0, "eff1": 0.5, "lat2_us": 8, "g2": 0.0, "eff2": 1.0}
    one = 3e-6 + 3 * 1e6 / (0.5 * pk.link_bw)
    two = 8e-6 + 1.5 * 1e6 / pk.link_bw
    assert pk.link_bw == pytest.approx(900e9)
    assert collectives.latency_ms(p, f)[0] == pytest.approx(min(one, two) * 1e3)


def test_fit_recovers_known_collective_parameters():
    pk = peaks("h100_sxm")
    n = np.repeat([2.0, 4.0, 8.0], 40)
    size = np.tile(np.logspace(2, 8, 40), 3)
    f = collectives.features(n, size, 2.0, "all_reduce", pk)
    truth = {"lat1_us": 4.0, "g1": 0.3, "eff1": 0.4, "lat2_us": 12.0, "g2": 0.5, "eff2": 0.7}
    lat = collectives.latency_ms(truth, f)
    got = fit_curve(collectives.latency_ms, collectives.PARAMS, f, lat, np.ones(lat.size, bool))
    for k, v in truth.items():
        assert got[k] == pytest.approx(v, rel=0.03, abs=0.01), k


def test_fit_recovers_known_decode_attention_parameters():
    pk = peaks("gb200")
    b, s, cfg = np.meshgrid([1, 4, 16, 64, 256, 1024], np.logspace(0, 17, 18, base=2), [0, 1, 2])
    b, s, cfg = b.ravel(), s.ravel(), cfg.ravel()
    h, hkv, d = (np.array(x)[cfg] for x in ([32, 8, 64], [8, 1, 8], [128, 64, 256]))   # three head configs
    f = attention.decode_features(b, s, h, hkv, d, np.zeros(b.size), "bfloat16", pk)
    truth = {"eff_c": 0.5, "eff_b": 0.8, "x_half": 20.0, "a_s": 0.4, "tau_ns": 2.0, "seq_ns": 3.0, "score_ps": 0.5,
             "kv_ps": 0.02, "reread": 0.0, "sharp": 4.0,
             "t0_us": 9.0}
    lat = attention.latency_ms(truth, f)
    got = fit_curve(attention.latency_ms, attention.PARAMS, f, lat, np.ones(lat.size, bool))
    for k in ("eff_b", "x_half", "tau_ns", "t0_us"):
        assert got[k] == pytest.approx(truth[k], rel=0.05), k
    assert np.allclose(attention.latency_ms(got, f), lat, rtol=0.01)


def test_held_out_split_keeps_groups_whole_and_is_deterministic():
    rng = np.random.default_rng(0)
    keys = pd.DataFrame({"n": rng.integers(0, 40, 5000), "k": rng.integers(0, 10, 5000)})
    held = held_out_mask(keys)
    frac = keys.assign(h=held).groupby(["n", "k"]).h.agg(["min", "max"])
    assert (frac["min"] == frac["max"]).all()          # a group is all held out or all kept
    share = frac["min"].mean()
    assert 0.15 < share < 0.25
    assert (held_out_mask(keys.sample(frac=1, random_state=1)).sum() == held.sum())
    assert np.array_equal(held_out_mask(keys), held)


def _catalog_digest() -> str:
    h = hashlib.sha256()
    for p in sorted([*(ROOT / "hardware").glob("*.yaml"), *(ROOT / "profiles").glob("*.yaml")]):
        h.update(p.read_bytes())
    return h.hexdigest()


def test_cli_prints_kernel_fit_lines_and_changes_nothing(capsys):
    before = _catalog_digest()
    assert main(["kernels", "--data", str(FIXTURE), "--workers", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    pat = re.compile(r"^kernel_fit family=(\S+) gpu=(\S+) held_out=(\d+) median_abs_err_pct=(\d+\.\d)$")
    parsed = {m.group(1): (m.group(2), int(m.group(3)), float(m.group(4))) for m in map(pat.match, out) if m}
    assert len(parsed) == len(out)
    for fam in ("gemm", "moe", "attention", "mla", "allreduce"):
        gpu, n, err = parsed[fam]
        assert gpu == "gb200" and n > 0 and 0 <= err < 40, (fam, parsed[fam])
    assert _catalog_digest() == before


def test_cli_missing_table_is_one_line_error(tmp_path, capsys):
    data = tmp_path / "kernels"
    shutil.copytree(FIXTURE, data)
    (data / "gb200" / "trtllm" / "gemm.csv.gz").unlink()
    assert main(["kernels", "--data", str(data), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gemm.csv.gz" in err[0] and "'gemm'" in err[0] and "missing" in err[0]
    assert main(["kernels", "--data", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "index.csv" in err[0]


def test_write_stores_sourced_fits(tmp_path, monkeypatch, capsys):
    before = _catalog_digest()
    monkeypatch.setattr(write, "CATALOG_ROOT", tmp_path)
    assert main(["kernels", "--data", str(FIXTURE), "--workers", "1", "--write"]) == 0
    capsys.readouterr()
    assert _catalog_digest() == before                   # the built-in catalog is untouched in this test
    from perfmodel import catalog
    hw = catalog.load_yaml(tmp_path / "hardware" / "gb200-nvl72.yaml")
    kf = catalog.validate("hardware", hw).kernel_fits
    curve = next(iter(kf.families["gemm"]["trtllm"].values()))
    assert curve.status == "fitted" and "095f58a51c4ca8e61b66ec108d86f223f8d559ce" in curve.source
    assert "Apache-2.0" in kf.notice and curve.params["t0_us"] > 0
    # the rest of the file is unchanged
    orig = (ROOT / "hardware" / "gb200-nvl72.yaml").read_text()
    assert (tmp_path / "hardware" / "gb200-nvl72.yaml").read_text().startswith(orig.split("\nkernel_fits:")[0])
    prof = catalog.validate("profiles", catalog.load_yaml(tmp_path / "profiles" / "trtllm.yaml"))
    assert "gemm" in prof.kernel_fits.families
    assert not (tmp_path / "hardware" / "vr200-nvl72.yaml").exists()    # derived from GB300, not in the slice
    # writing twice replaces the block, never duplicates it
    assert main(["kernels", "--data", str(FIXTURE), "--workers", "1", "--write"]) == 0
    assert (tmp_path / "hardware" / "gb200-nvl72.yaml").read_text().count("\nkernel_fits:") == 1


def test_rubin_from_physics(tmp_path):
    block = {"notice": "n Apache-2.0", "command": "c", "families": {"allreduce": {"trtllm": {"custom:x": {
        "params": {"lat1_us": 3.0, "g1": 0.1, "eff1": 0.5, "lat2_us": 9.0, "g2": 0.2, "eff2": 0.7},
        "status": "fitted", "source": "https://github.com/ai-dynamo/aiconfigurator"}}}}}
    out = write.derive_physics(block, "vr200-nvl72", "gb300")
    c = out["families"]["allreduce"]["trtllm"]["custom:x"]
    # scale-up latency 1.5 us on both (range 1.0-2.0 us on VR200): value kept, range scaled
    assert c["status"] == "physics" and c["params"]["lat1_us"] == pytest.approx(3.0)
    assert c["low"]["lat1_us"] == pytest.approx(2.0) and c["high"]["lat1_us"] == pytest.approx(4.0)
    assert c["params"]["eff2"] == 0.7 and "vr200-nvl72" in c["note"]


def test_the_kernel_fit_schema_requires_each_family_law_parameters():
    """specs/kernel_fits.LAW_PARAMS (what a hardware file must give) equals the fitted laws' parameters."""
    from perfmodel.kernels import attention, collectives, gemm, mla, moe
    from perfmodel.specs.kernel_fits import LAW_PARAMS
    laws = {"gemm": gemm.PARAMS, "moe": moe.PARAMS, "attention": attention.PARAMS,
            "prefill_attention": attention.PREFILL_PARAMS, "mla": mla.PARAMS, "allreduce": collectives.PARAMS,
            "all_gather": collectives.PARAMS}
    assert {f: tuple(p.name for p in ps) for f, ps in laws.items()} == LAW_PARAMS
