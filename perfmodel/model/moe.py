"""Mixture of experts: E routed experts (top-k per token) plus always-on shared experts; latent MoE projects
tokens h -> d_lat before the routed experts. P_e = (3 or 2) d I_e weights per routed expert, d = d_lat or h.

    params       total E P_e + s + r + l, active k P_e + s + r + l; s = shared experts (3 or 2) h I_s each,
                 r = router h E (hash-routed layers keep it too), l = latent projections 2 h d_lat    elements
    distinct     experts touched by T routed tokens (uniform routing): D(T) = E (1 - (1 - k/E)^T)
    busiest rank of ep (E/ep experts each): D_max = min(E/ep, mu + z(ep) sigma), mu = (E/ep) p,
                 sigma^2 = (E/ep) p (1 - p), p = 1 - (1 - k/E)^T; its load relative to T k / ep:
                 1 + z(ep) sqrt((1 - 1/ep) / (T k / ep))   (z = expected_max_normal)
    kernels      MOE_KERNELS = 7 (+3 dense MLP kernels with shared experts)
"""

from __future__ import annotations

from .ffn import FFNFamily

MOE_KERNELS = 7
"""Kernels of the routed MoE block: router GEMM, top-k, dispatch/permute, grouped GEMM 1, activation,
grouped GEMM 2, combine/reduce (the fused-MoE kernel tables time this block as one unit)."""


class MoEFamily(FFNFamily):
    is_moe = True
    kernel_family = "moe"

    def __init__(self, f, hidden: int):
        super().__init__(f, hidden)
        total, _ = self.params()
        self.expert_params = self.one_expert_params()
        self.experts = f.experts
        self.dense_params = total - f.experts * self.expert_params  # shared + router + latent proj

    def one_expert_params(self) -> int:
        """One routed expert: gated MLP on the (latent) hidden size, (3 or 2) d I_e elements."""
        f = self.f
        d_in = f.latent_dim or self.h
        return (3 if f.gated else 2) * d_in * f.expert_intermediate

    def params(self) -> tuple[int, int]:
        f, h = self.f, self.h
        shared = f.shared_experts * (3 if f.gated else 2) * h * (f.shared_intermediate or f.expert_intermediate)
        # router h x E. Hash-routed layers (DeepSeek-V4, first num_hash_layers) keep gate.weight too: the
        # experts come from a token-id table (tid2eid, an index table, not counted) but the scores still do.
        router = h * f.experts
        latent = 2 * h * f.latent_dim if f.latent_dim else 0
        e = self.one_expert_params()
        always = shared + router + latent
        return f.experts * e + always, f.top_k * e + always

    @property
    def kernels(self) -> int:
        """MOE_KERNELS (router GEMM, top-k, dispatch/permute, grouped GEMM 1, activation, grouped GEMM 2,
        combine/reduce) plus the dense MLP kernels of shared experts."""
        return MOE_KERNELS + (3 if self.f.shared_experts else 0)

    @property
    def dispatch_dim(self) -> int:
        return self.f.latent_dim or self.h

    def routed(self) -> MoEFamily:
        return self

    def distinct_experts(self, tokens):
        """Expected distinct routed experts touched by ``tokens`` tokens: E (1 - (1 - k/E)^T)."""
        import sympy as sp
        f = self.f
        return f.experts * (1 - (1 - sp.Rational(f.top_k, f.experts)) ** tokens)

    def busiest_rank_experts(self, tokens, ep):
        """Expected distinct routed experts on the busiest of ep EP ranks (E/ep experts each) for T tokens:
        min(E/ep, mu + z(ep) sigma), mu = (E/ep) p, sigma^2 = (E/ep) p (1 - p), p = 1 - (1 - k/E)^T."""
        import sympy as sp

        from .vocabulary import expected_max_normal, smin
        f = self.f
        n = f.experts / ep
        p = 1 - (1 - sp.Rational(f.top_k, f.experts)) ** tokens
        return smin(n, n * p + expected_max_normal(ep) * sp.sqrt(n * p * (1 - p)))

    def busiest_rank_load(self, tokens, ep):
        """Routed token-expert pairs on the busiest EP rank, relative to the mean T k / ep (before skew):
        1 + z(ep) sqrt((1 - 1/ep) / (T k / ep))   (binomial spread of the rank's share of T k assignments)."""
        import sympy as sp

        from .vocabulary import expected_max_normal, smax
        mean = tokens * self.f.top_k / ep
        return 1 + expected_max_normal(ep) * sp.sqrt((1 - 1 / ep) / smax(mean, 1))
