"""FFN cost per operator family.

Dense (gated) MLP with P = 3 h I weights: 2 P FLOPs per token, P weight elements streamed per step.

MoE with E routed experts, top-k, P_e weights per expert (3 d I_e, d = latent dim or h):
- expected distinct experts touched by T routed tokens (uniform routing):
      D(T) = E (1 - (1 - k/E)^T)
  so the expert weights streamed per GPU per step are D(T)/ep experts x P_e / moe_tp elements;
- expert FLOPs per GPU: 2 P_e T k imb / (ep moe_tp), imb = busiest-GPU load factor;
- shared experts, router and latent projections run on every token like a dense layer;
- EP dispatch + combine: each GPU sends T_gpu k (1 - 1/ep) d elements each way
  (dispatch in b_dsp bytes, combine in b_act bytes), T_gpu = tokens it owns.
"""

from __future__ import annotations

import sympy as sp

from ..arch.params import expert_params, ffn_params
from ..specs.model import DenseFFN, MoE


class FFNCost:
    def __init__(self, f, hidden: int):
        self.f = f
        self.h = hidden
        total, active = ffn_params(f, hidden)
        if isinstance(f, DenseFFN):
            self.dense_params = total          # always-on weights
            self.expert_params = 0
            self.experts = 0
        else:
            self.expert_params = expert_params(f, hidden)
            self.experts = f.experts
            self.dense_params = total - f.experts * self.expert_params  # shared + router + latent proj

    @property
    def is_moe(self) -> bool:
        return isinstance(self.f, MoE)

    def distinct_experts(self, tokens):
        """Expected distinct routed experts touched by ``tokens`` tokens: E (1 - (1 - k/E)^T)."""
        f = self.f
        return f.experts * (1 - (1 - sp.Rational(f.top_k, f.experts)) ** tokens)

    @property
    def dispatch_dim(self) -> int:
        return (self.f.latent_dim or self.h) if self.is_moe else self.h
