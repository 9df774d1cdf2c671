"""Dense (gated) MLP: P = 3 h I weights (2 h I ungated), 2 P FLOPs per token, P weight elements streamed per step.

    params   (3 or 2) h I total and active                                                      elements
    kernels  3: gate-up GEMM, activation, down GEMM
"""

from __future__ import annotations

from .ffn import FFNFamily


class DenseFamily(FFNFamily):
    def __init__(self, f, hidden: int):
        super().__init__(f, hidden)
        self.dense_params = self.params()[0]   # always-on weights

    def params(self) -> tuple[int, int]:
        f = self.f
        n = (3 if f.gated else 2) * self.h * f.intermediate
        return n, n

    @property
    def kernels(self) -> int:
        return 3
