"""The spread of agentic requests' prefill work: the squared coefficient of variation c_s^2 the prefill queue needs.

Mechanism: the prefill queue's mean wait grows with the spread of the service times, (1 + c_s^2) / 2 times the
exponential-service wait (Sakasegawa's M/G/c form, equations/queueing.py). The mean request hides the tail
that sets it: a session's first turn prefills its whole initial context (tens of thousands of tokens, vs a few
thousand new tokens on a later turn), an evicted prefix re-prefills the whole context, and the new tokens per
turn are log-normal. Checked against the reference simulation (serving/simulation), where these requests queue
behind each other in the engine's FIFO prefill queue (vLLM's waiting queue, SGLang's prefill batches).

The prefill-server time of a request is taken proportional to its uncached tokens u (t_s = (u / N_ch) x a
budget step), so c_s^2 = E[u^2] / E[u]^2 - 1 over the request mixture (weights sum to 1):
    first turns        w_1 = 1 / T (1 / replayed turns with a mid-trajectory replay start)
                       u = c0 = max(E[ctx] - (T - 1)/2 (E[new] + E[osl]), E[new])   (lengths.py; replay: E[ctx])
    evicted prefixes   w_2 = (1 - w_1) ev         u ~ the context distribution (whole context re-prefilled)
    hits               w_3 = (1 - w_1)(1 - ev)    u ~ the new-tokens distribution (log-normal)
A log-normal of median m and sigma s has E[u] = m e^(s^2/2), E[u^2] = m^2 e^(2 s^2). Tokens; c_s^2 >= 0.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SpecError


def _moments(dist, field: str) -> tuple[float, float]:
    """(E[u], E[u^2]) of a log-normal Dist: E[u] = m e^(s^2/2), E[u^2] = m^2 e^(2 s^2) = E[u]^4 / m^2. A spread too
    wide for floating point (E[u^2] above 1.8e308) is a one-line SpecError naming ``field``."""
    m, s = dist.median, dist.sigma
    log2 = 2 * math.log(m) + 2 * s * s                   # ln E[u^2]
    if not log2 < math.log(1e300):
        raise SpecError(f"median {m:g}, mean {dist.mean_value:g} tokens: the spread's second moment overflows; "
                        "give a mean below about 1e150", field=f"workload.agentic.{field}")
    return m * math.exp(s * s / 2), math.exp(log2)


def prefill_cv2(agentic, evicted) -> np.ndarray:
    """c_s^2 of the uncached tokens per request for an ``Agentic`` workload block at the evicted share(s)."""
    ev = np.clip(np.asarray(evicted, float), 0.0, 1.0)
    n1, n2 = _moments(agentic.new_tokens_per_turn, "new_tokens_per_turn")
    c1, c2 = _moments(agentic.context_tokens, "context_tokens")
    osl = agentic.output_tokens.mean_value
    if agentic.max_output_tokens:
        osl = min(osl, agentic.max_output_tokens)
    if agentic.replayed_turns is not None:
        w1, first = 1.0 / agentic.replayed_turns, c1
    elif agentic.turns is not None:
        t = max(agentic.turns.mean_value, 1.0)
        w1, first = 1.0 / t, max(c1 - (t - 1) / 2 * (n1 + osl), n1)
    else:
        w1, first = 0.0, n1
    w2, w3 = (1 - w1) * ev, (1 - w1) * (1 - ev)
    m1 = w1 * first + w2 * c1 + w3 * n1
    m2 = w1 * first * first + w2 * c2 + w3 * n2
    return np.maximum(m2 / np.maximum(m1 * m1, 1e-300) - 1.0, 0.0)


__all__ = ["prefill_cv2"]
