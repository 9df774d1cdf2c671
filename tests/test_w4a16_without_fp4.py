"""Mechanism ``w4a16_without_fp4`` (perfmodel/specs/mechanisms.py, engine/bind.compute_rate): 4-bit weights on a GPU
without FP4 tensor units compute at the BF16 rate (weight-only W4A16 kernels), as the kernel tables' fits already
read them (kernels/gpu.GpuPeaks.flops), instead of the FP8 rate. Hand check: H200's F_x with MXFP4 experts is its
datasheet BF16 dense peak, 989.4 TFLOP/s; B200's (FP4 units) and FP8 weights anywhere do not move."""

from __future__ import annotations

import pytest

from perfmodel import catalog
from perfmodel.engine.bind import hardware_fields
from perfmodel.engine.evaluate import Setup
from perfmodel.kernels.gpu import GpuPeaks
from perfmodel.specs.profile import ProfileSpec

SWITCH = "w4a16_without_fp4"


def _profile(on: bool) -> ProfileSpec:
    data = catalog.profile("sglang").model_dump(mode="json", exclude_none=True)
    names = [m for m in data.get("mechanisms", []) if m != SWITCH] + ([SWITCH] if on else [])
    return ProfileSpec.model_validate({**data, "mechanisms": names})


def _rates(hardware: str, weights: str, on: bool) -> tuple[float, float]:
    s = Setup(catalog.hardware(hardware), catalog.model("deepseek-v4-flash"), _profile(on), weights=weights)
    v = s.symbol_values()
    return v["F_x"], v["F_a"]


def test_hopper_4bit_experts_compute_at_the_bf16_peak_when_on_and_fp8_when_off():
    f = hardware_fields(catalog.hardware("h200-sxm"), {})
    on, off = _rates("h200-sxm", "mxfp4", True)[0], _rates("h200-sxm", "mxfp4", False)[0]
    assert on == pytest.approx(f["bf16_dense_pflops"] * 1e15)
    assert off == pytest.approx(f["fp8_dense_pflops"] * 1e15)
    assert on == pytest.approx(989.4e12, rel=0.01)           # H200 SXM datasheet BF16 dense
    assert _rates("h200-sxm", "mxfp4", True)[1] == _rates("h200-sxm", "mxfp4", False)[1]   # fp8 attention


@pytest.mark.parametrize("hardware,weights", [("b200", "mxfp4"), ("h200-sxm", "fp8"), ("h100-sxm", "bf16")])
def test_the_switch_moves_nothing_else(hardware, weights):
    assert _rates(hardware, weights, True) == _rates(hardware, weights, False)


def test_the_rule_is_the_kernel_tables_rule():
    """One reading of a weight-only 4-bit kernel: the tables' fit divides by the BF16 peak, so the model multiplies
    by it (a second rule at the FP8 peak counted the format's speed twice)."""
    f = hardware_fields(catalog.hardware("h200-sxm"), {})
    peaks = GpuPeaks("h200-sxm", f["bf16_dense_pflops"] * 1e15, f["fp8_dense_pflops"] * 1e15,
                     f["fp8_dense_pflops"] * 1e15, 1.0, 1, 1.0, 1.0)
    assert peaks.flops("w4a16_mxfp4") == pytest.approx(_rates("h200-sxm", "mxfp4", True)[0])
