"""Hardware schema: datasheet numbers per GPU, each sourced. No efficiency factor lives here.

Units are in the field names: ``_gb`` = 1e9 bytes, ``_gib`` = 2^30 bytes, ``_tbps`` = 1e12 bytes/s, ``_gbps`` = 1e9 bytes/s
(gigaBYTES per second; a 400 Gbit/s NIC is 50 GB/s), ``_pflops`` = 1e15 FLOP/s (dense, no 2:4
sparsity), ``_us`` = microseconds, ``_w`` = watts. Link bandwidths are per GPU and PER DIRECTION.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError, model_validator

from .common import Sourced, Strict, check_range
from .kernel_fits import KernelFits

# field -> (low, high, unit, required). The sane ranges catch unit mistakes such as GB/s for TB/s.
HARDWARE_FIELDS: dict[str, tuple[float, float, str, bool]] = {
    "hbm_capacity_gb": (8, 4000, "GB per GPU", True),
    "hbm_visible_gib": (8, 4000, "GiB per GPU", False),
    "hbm_bandwidth_tbps": (0.1, 100, "TB/s per GPU", True),
    "bf16_dense_pflops": (0.01, 1000, "PFLOP/s dense", True),
    "fp8_dense_pflops": (0.01, 1000, "PFLOP/s dense", True),
    "fp4_dense_pflops": (0.01, 1000, "PFLOP/s dense", False),
    "sm_count": (1, 4096, "SMs (NVIDIA) or CUs (AMD) per GPU", True),
    "scaleup_bandwidth_gbps": (10, 50000, "GB/s per GPU per direction", True),
    "scaleup_domain_gpus": (1, 4096, "GPUs", True),
    "scaleup_latency_us": (0.05, 1000, "microseconds", True),
    "nic_bandwidth_gbps": (1, 2000, "GB/s per GPU per direction", True),
    "host_link_bandwidth_gbps": (1, 20000, "GB/s per GPU per direction", True),
    "host_memory_gb": (1, 100000, "GB per GPU", True),
    "host_memory_bandwidth_gbps": (1, 50000, "GB/s per GPU", True),
    "gpu_tdp_w": (50, 10000, "W per GPU", True),
    "allin_power_w": (50, 20000, "W per GPU, all-in", False),
    "price_usd_per_gpu_hour": (0.01, 1000, "USD per GPU-hour", False),
}


def power_field(values) -> str:
    """The hardware field per-MW figures divide by: ``allin_power_w`` (all-in power per GPU: host, NICs, cooling share)
    where the catalog gives it, else ``gpu_tdp_w`` (the fallback; outputs flag it as power_basis
    'gpu-tdp-fallback'). ``values``: field -> value (None or 0 where not given)."""
    return "allin_power_w" if values.get("allin_power_w") else "gpu_tdp_w"


class HardwareSpecs(Strict):
    """Per-GPU numbers. Every value is a ``Sourced`` entry: {value, status, source, note}."""

    hbm_capacity_gb: Sourced = Field(description="HBM capacity per GPU, GB (1e9 B)")
    hbm_visible_gib: Sourced | None = Field(
        None, description="Device memory as the CUDA/ROCm runtime reports it to an engine, GiB (2^30 B): what an "
        "engine's memory fraction multiplies. Marketed HBM 'GB' are GiB-like (an 80 GB H100 shows 79.2 GiB), so "
        "it is never above hbm_capacity_gb's number; absent: hbm_capacity_gb x 1e9 bytes")
    hbm_bandwidth_tbps: Sourced = Field(description="HBM bandwidth per GPU, TB/s")
    bf16_dense_pflops: Sourced = Field(description="Dense BF16 tensor FLOP/s, PFLOP/s")
    fp8_dense_pflops: Sourced = Field(description="Dense FP8 tensor FLOP/s, PFLOP/s")
    fp4_dense_pflops: Sourced | None = Field(None, description="Dense FP4 tensor FLOP/s; absent = no native FP4")
    sm_count: Sourced = Field(description="Streaming multiprocessors (NVIDIA) or compute units (AMD) per GPU: the "
                              "units GEMM tiles are scheduled on (wave quantization)")
    scaleup_bandwidth_gbps: Sourced = Field(description="Scale-up (NVLink/IF) bandwidth per GPU per direction, GB/s")
    scaleup_domain_gpus: Sourced = Field(description="GPUs in one scale-up domain")
    scaleup_latency_us: Sourced = Field(description="One-way latency of a small scale-up transfer, us")
    nic_bandwidth_gbps: Sourced = Field(description="Scale-out NIC bandwidth per GPU per direction, GB/s")
    host_link_bandwidth_gbps: Sourced = Field(description="GPU-host link (C2C or PCIe) per GPU per direction, GB/s")
    host_memory_gb: Sourced = Field(description="Host (CPU) memory per GPU, GB")
    host_memory_bandwidth_gbps: Sourced = Field(description="Host memory bandwidth per GPU, GB/s")
    gpu_tdp_w: Sourced = Field(description="GPU board/module TDP, W")
    allin_power_w: Sourced | None = Field(None, description="All-in power per GPU (CPU, network, cooling share), W")
    price_usd_per_gpu_hour: Sourced | None = Field(None, description="Price per GPU-hour, USD (estimate)")

    @model_validator(mode="after")
    def _ranges(self):
        for name, (lo, hi, unit, _req) in HARDWARE_FIELDS.items():
            sv = getattr(self, name)
            if sv is not None:
                try:
                    check_range(name, sv.value, lo, hi, unit)
                except ValueError as exc:
                    raise ValueError(str(exc)) from None
        if self.hbm_visible_gib and self.hbm_visible_gib.value > self.hbm_capacity_gb.value:
            raise ValueError("hbm_visible_gib exceeds the marketed capacity hbm_capacity_gb (read as GiB)")
        return self


class Variant(Strict):
    """An alternative set of values where sources disagree (e.g. Rubin at 20 vs 22 TB/s)."""

    description: str
    specs: dict[str, Sourced] = Field(description="Field name -> replacement sourced value")

    @model_validator(mode="after")
    def _known_fields(self):
        for k in self.specs:
            if k not in HARDWARE_FIELDS:
                raise ValueError(f"variant overrides unknown field {k!r}")
        return self


class HardwareSpec(Strict):
    """One system: a GPU and the scale-up domain it sits in. A rack is GPUs x domain."""

    id: str
    name: str
    vendor: str
    host_link_kind: Literal["nvlink-c2c", "pcie", "infinity-fabric"] = Field(
        description="What connects GPU and host memory")
    host_memory_kind: str = Field(description="e.g. LPDDR5X (Grace/Vera), DDR5")
    specs: HardwareSpecs
    default_variant: str | None = Field(None, description="Variant used when the id names none")
    variants: dict[str, Variant] = Field(default_factory=dict)
    notes: str | None = None
    kernel_fits: KernelFits | None = Field(None, description="Kernel latency curves fitted on this GPU's measured "
                                           "kernel tables (perfmodel kernels --write); absent: none fitted")

    @model_validator(mode="after")
    def _variant_exists(self):
        if self.default_variant and self.default_variant not in self.variants:
            raise ValueError(f"default_variant {self.default_variant!r} is not among variants {sorted(self.variants)}")
        for name, var in self.variants.items():   # values are checked when loaded, not when the variant is used
            try:
                HardwareSpecs.model_validate({**self.specs.model_dump(), **{k: v.model_dump() for k, v in
                                                                           var.specs.items()}})
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ValueError(f"variant {name!r}: {err.get('msg', 'invalid value').removeprefix('Value error, ')}"
                                 ) from None
        return self

    def with_variant(self, variant: str | None) -> "HardwareSpec":
        """Return this spec with the named variant's values applied (None: the default variant)."""
        name = variant or self.default_variant
        if not name:
            return self
        if name not in self.variants:
            from ..errors import SpecError, short
            choices = f"choose one of {', '.join(sorted(self.variants))}" if self.variants else \
                f"{self.id} has no variants"
            raise SpecError(f"unknown variant {short(name)}; {choices}", field="variant")
        specs = self.specs.model_copy(update=dict(self.variants[name].specs))
        try:
            HardwareSpecs.model_validate(specs.model_dump())
        except ValidationError as exc:
            from ..errors import pydantic_to_spec_error
            raise pydantic_to_spec_error(exc, prefix=f"variants.{name}.specs") from None
        return self.model_copy(update={"specs": specs, "id": f"{self.id}@{name}", "default_variant": None})

    def value(self, field: str) -> float | None:
        sv = getattr(self.specs, field)
        return None if sv is None else sv.value
