"""Datasheet numbers of a table GPU from the hardware catalog (peaks, bandwidths, SMs)."""

from __future__ import annotations

from dataclasses import dataclass

from ..formats import table_element_bytes
from .loader import HARDWARE_ID


@dataclass(frozen=True)
class GpuPeaks:
    """Per-GPU peaks in base units: FLOP/s, bytes/s, SM count, scale-up bytes/s per direction, latency s."""

    hardware_id: str
    bf16_flops: float
    fp8_flops: float
    fp4_flops: float
    hbm_bw: float
    n_sm: int
    link_bw: float
    link_latency_s: float

    def flops(self, dtype: str) -> float:
        """Dense tensor FLOP/s of the format a kernel computes in (4-bit formats without FP4 units: FP8 rate)."""
        d = str(dtype).lower()
        if "a16" in d or d.endswith("_wo") or d in ("bfloat16", "float16", "half"):
            return self.bf16_flops          # weight-only quantization computes at the 16-bit rate
        if "a8" in d or "fp8" in d or "int8" in d:
            return self.fp8_flops
        if "fp4" in d:
            return self.fp4_flops
        return self.bf16_flops


def peaks(gpu: str, hardware_id: str | None = None) -> GpuPeaks:
    """Peaks of table GPU ``gpu`` (or of catalog ``hardware_id``)."""
    from .. import catalog
    hw = catalog.hardware(hardware_id or HARDWARE_ID[gpu])
    v = hw.value
    fp8 = v("fp8_dense_pflops") * 1e15
    return GpuPeaks(hw.id, v("bf16_dense_pflops") * 1e15, fp8, (v("fp4_dense_pflops") or v("fp8_dense_pflops")) * 1e15,
                    v("hbm_bandwidth_tbps") * 1e12, int(v("sm_count")), v("scaleup_bandwidth_gbps") * 1e9,
                    v("scaleup_latency_us") * 1e-6)


def bytes_per_element(dtype: str) -> float:
    """Storage bytes per weight/activation element of a kernel table's dtype (formats.table_element_bytes)."""
    return table_element_bytes(dtype)
