"""The mean request a workload turns into: input tokens (cached prefix included), output and uncached input tokens."""

from __future__ import annotations

from .. import catalog
from ..specs.deployment import FixedWorkload
from ..specs.workload import WorkloadSpec


def workload_lengths(w: FixedWorkload | WorkloadSpec | str) -> dict[str, float]:
    """isl (incl. cached prefix), osl and uncached input per request for a workload.

    Agentic workloads use MEAN lengths (throughput follows Little's law, which needs means): the mean
    context as isl, the mean output (capped at max_output_tokens) as osl, and the mean new tokens per
    turn as the uncached input, raised where needed so the hit rate 1 - new/isl stays at or below the
    published ceiling ``max_hit_rate``. A harness that starts each session mid-trajectory
    (``replay_start_ratio``) adds the mean context once per replayed session: new + isl / replayed_turns.

    Returns a dict of tokens per request: ``isl`` (input incl. cached prefix), ``osl`` (output), ``new``
    (uncached input).
    """
    spec: FixedWorkload | WorkloadSpec = catalog.workload(w) if isinstance(w, str) else w
    if isinstance(spec, FixedWorkload) or spec.kind == "fixed":
        assert spec.isl is not None and spec.osl is not None  # a fixed workload has both (WorkloadSpec._kind)
        return {"isl": spec.isl, "osl": spec.osl, "new": spec.isl * (1 - spec.prefix_hit)}
    a = spec.agentic
    assert a is not None  # an agentic workload has its agentic block (WorkloadSpec._kind)
    isl = a.context_tokens.mean_value
    osl = a.output_tokens.mean_value
    if a.max_output_tokens:
        osl = min(osl, a.max_output_tokens)
    new = a.new_tokens_per_turn.mean_value
    # Sessions: the context grows by (new + output) tokens a turn, so the mean context over N turns is
    # c0 + (N - 1)/2 (new + osl); the first turn prefills its whole initial context c0 uncached, which
    # adds c0 / N uncached tokens per turn on average. The prefix-hit rate 1 - new/isl follows.
    if a.replayed_turns is not None:
        # replayed from a mid-trajectory start: the first replayed request of each session prefills the context
        # reached there, on average the mean context (linear growth, start fraction at the range's middle)
        new = new + isl / a.replayed_turns
    elif a.turns is not None:
        turns = a.turns.mean_value
        c0 = min(max(isl - (turns - 1) / 2 * (new + osl), 0.0), isl)
        new = new + c0 / turns
    if a.max_hit_rate is not None:
        new = max(new, isl * (1 - a.max_hit_rate))
    return {"isl": isl, "osl": osl, "new": min(new, isl)}
