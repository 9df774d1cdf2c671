"""Schema of fitted kernel curves kept in the catalog (``perfmodel kernels --write``).

``kernel_fits`` in a hardware file holds, per kernel family, engine and kernel variant, the parameters of
the family's closed-form latency curve (perfmodel/kernels/<family>.py documents each parameter and its unit)
fitted on that GPU's measured kernel table; in a profile it holds the engine's values over all table GPUs
(the median of each parameter), for hardware without tables. Each curve carries its source (the kernel table
at the aiconfigurator commit it came from, Apache-2.0) and status: ``fitted`` (least squares on the table) or
``physics`` (derived for a GPU without tables from a fitted GPU and the catalog's physics, see ``note``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from .common import Sourced, Strict

# Every parameter of each family's latency law (perfmodel/kernels/<family>.py PARAMS; tests/test_kernels.py pins
# the two lists equal). Named here so that loading a hardware file needs neither scipy nor the fitting code.
LAW_PARAMS: dict[str, tuple[str, ...]] = {
    "gemm": ("eff_c", "k_half", "m_half", "beta_c", "eff_b", "beta_b", "act_bytes", "sharp", "t0_us"),
    "moe": ("eff_c", "tpe_half", "tile_m_min", "g_tp", "eff_b", "act_bytes", "tok_bytes", "route_ps", "expert_ns",
            "allpair_bytes", "skew_pl101", "skew_ep_pl101", "cover_pl101", "skew_pl12", "skew_ep_pl12",
            "cover_pl12", "sharp", "t0_us"),
    "attention": ("eff_c", "eff_b", "x_half", "a_s", "tau_ns", "seq_ns", "score_ps", "kv_ps", "reread", "sharp",
                  "t0_us"),
    "prefill_attention": ("eff_c", "y_half", "a_d", "tau_ns", "seq_ns", "eff_b", "sharp", "t0_us"),
    "mla": ("eff_c", "eff_b", "x_half", "a_s", "tau_ns", "seq_ns", "score_ps", "kv_ps", "sharp", "t0_us"),
    "allreduce": ("lat1_us", "g1", "eff1", "lat2_us", "g2", "eff2"),
    "all_gather": ("lat1_us", "g1", "eff1", "lat2_us", "g2", "eff2"),
}


class KernelCurve(Strict):
    """One fitted curve: parameter name -> value (units in perfmodel/kernels/<family>.py)."""

    params: dict[str, float] = Field(description="Curve parameters, named as in perfmodel/kernels/<family>.py")
    status: Literal["fitted", "physics"] = Field(description="fitted on a kernel table | derived from physics")
    source: str = Field(description="Kernel table URL at the aiconfigurator commit (Apache-2.0)")
    held_out_median_abs_err_pct: float | None = Field(None, ge=0, description="Median |error| on held-out shapes, %")
    low: dict[str, float] | None = Field(None, description="Lower ends of physics-derived parameters")
    high: dict[str, float] | None = Field(None, description="Upper ends of physics-derived parameters")
    note: str | None = None

    @field_validator("source")
    @classmethod
    def _url(cls, v: str) -> str:
        if not any(p.strip().startswith(("http://", "https://")) for p in v.split(";")):
            raise ValueError("source must contain an http(s) URL")
        return v


class LaunchCosts(Strict):
    """The fixed cost of one kernel in a replayed CUDA graph on this GPU (perfmodel/kernels/launch.py).

    ``graph_node_us``: the period of one kernel node replayed back to back in a CUDA graph with (next to) no work,
    us: what a graph-replayed decode step pays per kernel it launches, on top of the kernel's own execution.
    ``harness_call_us``: the per-call overhead inside the kernel tables the curves were fitted on (the collectors
    replay the measured call in a CUDA graph, so each row's latency holds one node period), us: the curves'
    small-shape floors t0 are net of it before they count as execution floors."""

    graph_node_us: Sourced = Field(description="Period of one near-empty kernel node in a replayed CUDA graph, us")
    harness_call_us: Sourced = Field(description="Per-call overhead inside the kernel tables' latencies, us")


class KernelFits(Strict):
    """Fitted kernel curves: family -> engine -> kernel variant -> curve."""

    notice: str = Field(description="Licence notice of the kernel tables the curves were fitted on")
    command: str = Field(description="Command that wrote this block")
    launch: LaunchCosts | None = Field(None, description="The GPU's per-kernel graph-replay cost and the tables' "
                                       "per-call overhead (perfmodel kernels launch)")
    families: dict[str, dict[str, dict[str, KernelCurve]]]

    @model_validator(mode="after")
    def _every_law_parameter(self) -> "KernelFits":
        for fam, engines in self.families.items():
            if fam not in LAW_PARAMS:
                raise ValueError(f"families.{fam}: unknown kernel family; choose from {sorted(LAW_PARAMS)}")
            for eng, variants in engines.items():
                for var, curve in variants.items():
                    missing = [p for p in LAW_PARAMS[fam] if p not in curve.params]
                    if missing:
                        raise ValueError(f"families.{fam}.{eng}.{var}.params lacks {', '.join(missing)} "
                                         f"(the {fam} law uses {', '.join(LAW_PARAMS[fam])})")
        return self
