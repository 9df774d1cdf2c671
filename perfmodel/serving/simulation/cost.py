"""Cost oracle of the event simulation: the duration of one engine step, s, read off the step tables
(``steps.StepTables``: the compiled step equations evaluated once on a grid, interpolated).

Rules (b decoding requests, their contexts summing to ``ctx_sum`` tokens, mean L = ctx_sum / b; k prefill tokens
of the busiest rank after a cached prefix of ``cached`` tokens):
  * a step carrying prefill work on a mixed engine (vLLM, TensorRT-LLM) with b > 0: one pass of the decode batch
    plus the k tokens, ``mixed_s(b, L, k)``; the decoders advance in it;
  * otherwise (prefill-first engines such as SGLang, or nothing decoding) a prefill pass alone,
    ``prefill_s(k, cached)``, while decode stalls;
  * a step without prefill work: ``decode_s(b, L)``.
"""

from __future__ import annotations

from .steps import StepTables


class CostOracle:
    """Step durations of one deployment; ``mixed``: prefill chunks ride in the decode pass."""

    __slots__ = ("mixed", "tables")

    def __init__(self, tables: StepTables, mixed: bool):
        self.tables, self.mixed = tables, bool(mixed)

    def prefill_step(self, b: int, ctx_sum: float, k: float, cached: float) -> tuple[float, bool]:
        """(duration s, whether the b decoders advance in it) of a step carrying k prefill tokens."""
        if self.mixed and b > 0:
            return self.tables.mixed_s(b, ctx_sum / b, k), True
        return self.tables.prefill_s(k, cached), False

    def decode_step(self, b: int, ctx_sum: float) -> float:
        """Duration of one decode step of b requests (b > 0) whose contexts sum to ``ctx_sum`` tokens, s."""
        return self.tables.decode_s(b, ctx_sum / b)

    def decode_at(self, b: float, ctx: float) -> float:
        """Duration of one decode step of b requests at mean context ``ctx`` tokens, s."""
        return self.tables.decode_s(b, ctx)
