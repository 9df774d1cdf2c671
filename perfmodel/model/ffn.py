"""The FFN operator family: what every FFN kind states about itself.

A family object wraps one FFN spec ``f`` at hidden size ``h``. Units: parameters in elements. Fields every kind
sets: ``dense_params`` (weights every token runs through: the dense MLP, or shared experts + router + latent
projections), ``expert_params`` (one routed expert, 0 for a dense FFN), ``experts`` (routed experts, 0 for a
dense FFN). The subclasses (dense, moe) state the equations; equations/ffn.py summarises them.
"""

from __future__ import annotations

from typing import Any, Protocol


class RoutedExperts(Protocol):
    """What the step equations ask of a mixture of experts' routed experts (model/moe.py states them)."""

    f: Any
    expert_params: int

    @property
    def dispatch_dim(self) -> int: ...

    def distinct_experts(self, tokens): ...

    def busiest_rank_experts(self, tokens, ep): ...

    def busiest_rank_load(self, tokens, ep): ...


class FFNFamily:
    """Costs and facts of one FFN kind."""

    is_moe = False
    """True for a mixture of experts (routed experts, EP, expert exchange)."""
    kernel_family = "gemm"
    """The kernel-fit family its main block runs on (hardware kernel_fits: 'gemm' or 'moe')."""

    def __init__(self, f, hidden: int):
        self.f = f
        self.spec = f
        self.h = hidden
        self.dense_params = 0
        self.expert_params = 0
        self.experts = 0

    def params(self) -> tuple[int, int]:
        """(total, active per token) weight elements of one FFN block."""
        raise NotImplementedError

    @property
    def kernels(self) -> int:
        """Kernels one pass launches for this FFN (before cross-layer fusion)."""
        raise NotImplementedError

    def routed(self) -> RoutedExperts | None:
        """The routed experts (a mixture of experts: the family itself), None for a dense FFN."""
        return None

    @property
    def dispatch_dim(self) -> int:
        """Width of the activations the block exchanges per token (the hidden size unless latent), elements."""
        return self.h
