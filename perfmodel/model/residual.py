"""The residual-stream operator family: a standard residual (one stream, no cost of its own) or mHC
(manifold-constrained hyper-connections, DeepSeek-V4, Motif-3, GLM-5.3-Flash) with n parallel streams of the
hidden size h mixed around each sublayer.

    params      per layer 2 (2 + n) n (n h): each of a block's two sublayers maps the n h stream concatenation to
                (2 + n) n mixing logits (pre, post and the n x n residual mix); the output head combiner n (n h)
                elements (DeepSeek-V4 ``hc_*_fn``; Motif-3 ``mhc_fused_projection`` [24, 16384] per site at
                n = 4, h = 4096)
    traffic     per token and layer (n - 1) 4 h b_act bytes: the n - 1 extra streams read and written around
                attention and around the FFN (b_act bytes per activation element)
    kernels     MHC_KERNELS = 2 per layer: the stream mixing before attention and before the FFN
A standard residual has none of these (0 parameters, 0 bytes, 0 kernels).
"""

from __future__ import annotations

MHC_KERNELS = 2    # mHC stream mixing around attention and around the FFN


class ResidualFamily:
    """Costs of one model's residual stream ``r`` (perfmodel.specs.model.Residual) at hidden size ``hidden``."""

    def __init__(self, r, hidden: int):
        self.r = r
        self.h = hidden
        self.is_mhc = r.kind == "mhc"
        self.streams = r.streams if self.is_mhc else 1

    def params(self) -> tuple[int, int]:
        """(per layer, output head) mixing weights, elements: (2 (2 + n) n (n h), n (n h)); (0, 0) standard."""
        if not self.is_mhc:
            return 0, 0
        n, h = self.streams, self.h
        return 2 * (2 + n) * n * n * h, n * n * h

    @property
    def kernels(self) -> int:
        """Kernels one layer launches for the stream mixing: MHC_KERNELS with mHC, else 0."""
        return MHC_KERNELS if self.is_mhc else 0

    def extra_bytes_per_token(self, b_act):
        """Extra activation traffic of one layer per token, B: (n - 1) 4 h b_act (0 for a standard residual)."""
        return (self.streams - 1) * 4 * self.h * b_act
