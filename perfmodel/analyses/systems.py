"""A system under analysis: hardware + software profile (+ overrides), and the names users type for them.

``System.parse("gb200-nvl72@hbm-192gb:sglang")`` reads ``HARDWARE[:PROFILE]``. Short names for hardware
fields (``hbm_bandwidth`` -> ``hbm_bandwidth_tbps``, ``nvlink_bandwidth`` -> ``scaleup_bandwidth_gbps``,
``flops`` -> every tensor rate, ...) serve ``--scale`` / ``--set`` in what-if and the attribution groups.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace

import numpy as np

from .. import catalog
from ..engine.bind import hardware_fields, required
from ..engine.evaluate import Setup
from ..errors import SpecError
from ..serving.lengths import workload_lengths
from ..specs.hardware import HARDWARE_FIELDS, HardwareSpec
from ..specs.model import ModelSpec
from ..specs.profile import PROFILE_PARAMS, ProfileSpec

# short name -> hardware fields it stands for (all present ones are scaled together)
# the profile analyses use when none is given: a calibrated engine (speed-of-light is an upper bound no engine
# reaches; name it explicitly for the roofline)
DEFAULT_PROFILE = "vllm"

HW_ALIASES: dict[str, tuple[str, ...]] = {
    "hbm_bandwidth": ("hbm_bandwidth_tbps",),
    "hbm_capacity": ("hbm_capacity_gb", "hbm_visible_gib"),
    "flops": ("bf16_dense_pflops", "fp8_dense_pflops", "fp4_dense_pflops"),
    "bf16_flops": ("bf16_dense_pflops",),
    "fp8_flops": ("fp8_dense_pflops",),
    "fp4_flops": ("fp4_dense_pflops",),
    "sms": ("sm_count",),
    "nvlink_bandwidth": ("scaleup_bandwidth_gbps",),
    "scaleup_bandwidth": ("scaleup_bandwidth_gbps",),
    "nvlink_latency": ("scaleup_latency_us",),
    "scaleup_latency": ("scaleup_latency_us",),
    "domain": ("scaleup_domain_gpus",),
    "scaleup_domain": ("scaleup_domain_gpus",),
    "nic_bandwidth": ("nic_bandwidth_gbps",),
    "scaleout_bandwidth": ("nic_bandwidth_gbps",),
    "host_link_bandwidth": ("host_link_bandwidth_gbps",),
    "c2c_bandwidth": ("host_link_bandwidth_gbps",),
    "host_memory": ("host_memory_gb",),
    "host_memory_bandwidth": ("host_memory_bandwidth_gbps",),
    "power": ("gpu_tdp_w", "allin_power_w"),
    "tdp": ("gpu_tdp_w",),
    "allin_power": ("allin_power_w",),
    "price": ("price_usd_per_gpu_hour",),
}

# hardware parameter groups (players of the attribution; every HARDWARE_FIELDS entry belongs to one)
HW_GROUPS: dict[str, tuple[str, ...]] = {
    "hbm_bandwidth": ("hbm_bandwidth_tbps",),
    "hbm_capacity": ("hbm_capacity_gb", "hbm_visible_gib"),
    "flops": ("bf16_dense_pflops", "fp8_dense_pflops", "fp4_dense_pflops", "sm_count"),
    "scaleup_link": ("scaleup_bandwidth_gbps", "scaleup_latency_us", "scaleup_domain_gpus"),
    "scaleout_link": ("nic_bandwidth_gbps",),
    "host_link": ("host_link_bandwidth_gbps", "host_memory_gb", "host_memory_bandwidth_gbps"),
    "power": ("gpu_tdp_w", "allin_power_w"),
    "price": ("price_usd_per_gpu_hour",),
}
HW_GROUP_OF = {f: g for g, fs in HW_GROUPS.items() for f in fs}

# profile pseudo-parameters outside PROFILE_PARAMS
ACCEPTANCE = ("acceptance_rate", "spec_acceptance_rate")


@dataclass(frozen=True)
class System:
    """Hardware and software profile, with optional overrides (spec units).

    ``hardware``: catalog id (``id@variant`` works) or HardwareSpec; ``profile``: catalog id or ProfileSpec;
    ``hw_overrides``: hardware field -> value in the field's spec unit (``hbm_bandwidth_tbps`` in TB/s,
    ``hbm_capacity_gb`` in GB, ``*_dense_pflops`` in dense PFLOP/s, ``*_gbps`` in GB/s, ``*_w`` in W,
    ``price_usd_per_gpu_hour`` in USD per GPU-hour); ``profile_overrides``: profile parameter -> value
    (efficiencies and speed-ups dimensionless, ``*_ms`` / ``*_us`` in ms / us, ``workspace_gb`` in GB);
    ``acceptance_rate``: per-draft acceptance probability in [0, 1]; ``label``: the name shown in tables."""

    hardware: str | HardwareSpec
    profile: str | ProfileSpec = DEFAULT_PROFILE
    hw_overrides: dict = field(default_factory=dict)
    profile_overrides: dict = field(default_factory=dict)
    acceptance_rate: float | None = None   # None: the profile's spec_decoding.acceptance_rate
    label: str | None = None

    @classmethod
    def parse(cls, text: str, default_profile: str = DEFAULT_PROFILE) -> "System":
        """``HARDWARE[:PROFILE]`` (hardware ids may carry ``@variant``). Returns a System (profile
        ``default_profile`` when the text names none); raises SpecError on empty text."""
        if not text or not text.strip():
            raise SpecError("empty system; expected HARDWARE[:PROFILE]", field="system")
        hw, _, pr = text.strip().partition(":")
        return cls(hw, pr or default_profile)

    def hardware_spec(self) -> HardwareSpec:
        return catalog.hardware(self.hardware) if isinstance(self.hardware, str) else self.hardware

    def profile_spec(self) -> ProfileSpec:
        return catalog.profile(self.profile) if isinstance(self.profile, str) else self.profile

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        return f"{self.hardware_spec().id}:{self.profile_spec().id}"

    def with_changes(self, hw: dict | None = None, prof: dict | None = None, acceptance_rate=None,
                     label: str | None = None) -> "System":
        """A copy with ``hw`` (hardware field -> value, spec units) and ``prof`` (profile parameter -> value)
        merged into the overrides, and optionally a new acceptance rate (0-1) and label. Returns a new System."""
        return replace(self, hw_overrides={**self.hw_overrides, **(hw or {})},
                       profile_overrides={**self.profile_overrides, **(prof or {})},
                       acceptance_rate=self.acceptance_rate if acceptance_rate is None else acceptance_rate,
                       label=label if label is not None else self.label)

    def setup(self, model: ModelSpec, weights: str = "fp8", kv_cache: str = "fp8",
              attention_weights: str | None = None) -> Setup:
        return Setup(self.hardware_spec(), model, self.profile_spec(), weights=weights, kv_cache=kv_cache,
                     attention_weights=attention_weights, hw_overrides=dict(self.hw_overrides),
                     profile_overrides=dict(self.profile_overrides))

    def fields(self) -> dict[str, float | None]:
        """Hardware field -> value in spec units, overrides applied. Returns a dict: ``hbm_capacity_gb`` /
        ``hbm_usable_gb`` GB per GPU, ``hbm_bandwidth_tbps`` TB/s per GPU, ``*_dense_pflops`` dense PFLOP/s per
        GPU, ``scaleup_bandwidth_gbps`` / ``nic_bandwidth_gbps`` / ``host_link_bandwidth_gbps`` GB/s per GPU per
        direction, ``scaleup_domain_gpus`` GPUs, ``scaleup_latency_us`` us, ``host_memory_gb`` GB per GPU,
        ``gpu_tdp_w`` / ``allin_power_w`` W per GPU, ``price_usd_per_gpu_hour`` USD per GPU-hour (None where the
        catalog has no value)."""
        return hardware_fields(self.hardware_spec(), self.hw_overrides)

    def spec_rate(self) -> float | None:
        """Per-draft acceptance probability (None: this engine does not run speculative decoding)."""
        if self.acceptance_rate is not None:
            return self.acceptance_rate
        rate = self.profile_spec().spec_decoding.acceptance_rate
        return rate.value if rate is not None else None

    def power_w(self) -> float:
        f = self.fields()
        return f.get("allin_power_w") or required(f, "gpu_tdp_w")

    def price(self) -> float | None:
        return self.fields().get("price_usd_per_gpu_hour")


def as_system(x, profile: str | ProfileSpec = DEFAULT_PROFILE) -> System:
    if isinstance(x, System):
        return x
    if isinstance(x, str) and ":" in x:
        return System.parse(x, profile if isinstance(profile, str) else DEFAULT_PROFILE)
    return System(x, profile)


def as_model(m) -> ModelSpec:
    return catalog.model(m) if isinstance(m, str) else m


def lengths_for(workload) -> dict[str, float]:
    """isl / osl / uncached input of a workload id, a WorkloadSpec, or a mapping {isl, osl[, prefix_hit]}."""
    if isinstance(workload, dict):
        isl, osl = float(workload["isl"]), float(workload["osl"])
        return {"isl": isl, "osl": osl, "new": isl * (1 - float(workload.get("prefix_hit", 0.0)))}
    return workload_lengths(workload)


def acceptance_length(rate: float | None, k):
    """Accepted tokens per step with k drafts (perfmodel.spec_decoding); an unknown rate gives NaN for k > 0."""
    from ..spec_decoding import acceptance_length as a
    return a(np.nan if rate is None else rate, k)


# --------------------------------------------------------------------------- what-if changes
# short names that could mean more than one thing: refused with the choices (never a silent guess)
AMBIGUOUS_NAMES: dict[str, tuple[str, ...]] = {
    "hbm": ("hbm_bandwidth (TB/s)", "hbm_capacity (GB)"),
    "nvlink": ("nvlink_bandwidth (GB/s)", "nvlink_latency (us)"),
    "scaleup": ("scaleup_bandwidth (GB/s)", "scaleup_latency (us)", "scaleup_domain (GPUs)"),
    "host": ("host_link_bandwidth (GB/s)", "host_memory (GB)", "host_memory_bandwidth (GB/s)"),
    "bandwidth": ("hbm_bandwidth (TB/s)", "nvlink_bandwidth (GB/s)", "nic_bandwidth (GB/s)"),
}


def hardware_targets(name: str) -> tuple[str, ...]:
    if name in HARDWARE_FIELDS:
        return (name,)
    if name in HW_ALIASES:
        return HW_ALIASES[name]
    return ()


def known_change_names() -> list[str]:
    return sorted(set(HW_ALIASES) | set(HARDWARE_FIELDS) | set(PROFILE_PARAMS) | set(ACCEPTANCE))


def resolve_changes(system: System, scale: dict[str, float] | None = None,
                    set_: dict[str, float] | None = None) -> System:
    """Apply ``--scale NAME=FACTOR`` and ``--set NAME=VALUE`` to a system (hardware fields by full or short
    name, profile parameters by name, ``acceptance_rate``). Returns a new System; errors name the option."""
    hw_ov: dict[str, float] = {}
    pr_ov: dict[str, float] = {}
    acc = None
    fields = system.fields()
    prof = system.profile_spec()
    pvals = {**prof.values(), **system.profile_overrides}
    for opt, changes in (("--scale", scale or {}), ("--set", set_ or {})):
        for name, v in changes.items():
            if not isinstance(v, (int, float)) or v != v:
                raise SpecError(f"{v!r} is not a number", field=f"{opt} {name}")
            if opt == "--scale" and v <= 0:
                raise SpecError(f"scale factor must be > 0, got {v}", field=f"{opt} {name}")
            if name in AMBIGUOUS_NAMES:
                raise SpecError(f"{name!r} is ambiguous: name one of {', '.join(AMBIGUOUS_NAMES[name])}",
                                field=f"{opt} {name}")
            targets = hardware_targets(name)
            if targets:
                present = [f for f in targets if fields.get(f) is not None]
                if opt == "--set":
                    present = [f for f in targets if f in HARDWARE_FIELDS and (fields.get(f) is not None
                                                                               or len(targets) == 1)]
                if not present:
                    hw = system.hardware_spec().id
                    raise SpecError(f"{hw} has no value for {', '.join(targets)}; use --set {targets[0]}=VALUE",
                                    field=f"{opt} {name}")
                for f in present:
                    hw_ov[f] = required(fields, f) * v if opt == "--scale" else float(v)
            elif name in PROFILE_PARAMS:
                pr_ov[name] = pvals[name] * v if opt == "--scale" else float(v)
            elif name in ACCEPTANCE:
                base = system.spec_rate()
                if opt == "--set":
                    acc = float(v)
                elif base is None:
                    raise SpecError(f"profile {prof.id} has no speculative decoding to scale; use --set {name}=P",
                                    field=f"{opt} {name}")
                else:
                    acc = base * v
                if not 0 <= acc < 1:
                    raise SpecError(f"acceptance rate {acc:g} is outside [0, 1)", field=f"{opt} {name}")
            else:
                close = difflib.get_close_matches(name, known_change_names(), n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else \
                    f"; short names: {', '.join(sorted(HW_ALIASES))}"
                raise SpecError(f"unknown parameter {name!r}{hint}", field=f"{opt} {name}")
    # validate now (the engine checks ranges; surface the option in the message)
    try:
        hardware_fields(system.hardware_spec(), {**system.hw_overrides, **hw_ov})
    except SpecError as exc:
        raise SpecError(exc.problem, field=(exc.field or "").replace("overrides.hardware.", "--scale/--set ")) from None
    from ..engine.bind import profile_values
    try:
        profile_values(prof, {**system.profile_overrides, **pr_ov})
    except SpecError as exc:
        raise SpecError(exc.problem, field=(exc.field or "").replace("overrides.profile.", "--scale/--set ")) from None
    return system.with_changes(hw_ov, pr_ov, acc)


def parse_assignments(items: list[str] | None, option: str) -> dict[str, float]:
    """['a=1.5', 'b=2'] -> {'a': 1.5, 'b': 2.0}; one-line errors naming the option."""
    out: dict[str, float] = {}
    for item in items or []:
        if "=" not in item:
            raise SpecError(f"expected NAME=VALUE, got {item!r}", field=option)
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = float(v)
        except ValueError:
            raise SpecError(f"{v!r} is not a number", field=f"{option} {k.strip()}") from None
    return out
