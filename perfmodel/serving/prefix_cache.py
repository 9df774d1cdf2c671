"""Prefix-cache residency of agentic sessions: which share of requests finds its prefix cached, and where.

Notation (per serving instance, i.e. per worker; all arrays vectorized over operating points):

    S        live sessions: clients holding a reusable prefix (running, waiting for a slot, or paused at a tool)
    B        running batch (sequences holding a KV slot and decoding)
    P = S-B  non-running sessions whose prefix must survive until their next request
    k        cache bytes of one session's prefix per GPU (its KV, plus state snapshots, below)
    n_t      capacity of cache tier t (spare HBM, pooled HBM, host memory) in session prefixes, tiers in order
    h_c      the trace's prefix-hit ceiling: 1 - new / isl with a perfect cache

Survival (LRU with exponentially distributed reuse gaps). A non-running prefix is touched again after a gap
tau ~ Exp(lambda). In that gap each other non-running session is touched with probability 1 - exp(-lambda tau),
so the LRU stack distance of the prefix is d = (P - 1)(1 - exp(-lambda tau)) prefixes. It survives in a cache
of n prefixes iff d < n, i.e. 1 - exp(-lambda tau) < c with c = n / (P - 1); for an exponential gap
P(1 - exp(-lambda tau) < c) = c. So, with P >> 1,

    survive(n) = min(1, n / P)                                     (the working-set law: capacity / working set)

and the tiers of an LRU hierarchy (HBM, then pooled HBM, then host) hold the stack-distance bands
[0, n_1), [n_1, n_1 + n_2), ...: share_t = min(1, N_t / P) - min(1, N_(t-1) / P), N_t = n_1 + ... + n_t;
evicted = 1 - min(1, N_last / P). Deterministic gaps (a strict round robin) give the cliff 1[P <= n] instead;
the exponential law sits between that cliff and the optimum, and is what a random interleaving of sessions
gives. Every request arrives from a non-running session, so ``evicted`` is the share of requests that
re-prefill their whole context.

Idle gaps that are not exponential (Che's approximation for renewal reuse; Fricker, Robert and Roberts 2012, "A
versatile and accurate approximation for LRU cache performance"). A session alternates a busy period (its
prefix pinned in the running batch) and an idle gap G (tool pause, then the wait for admission). Under LRU a
prefix idle for longer than the cache's characteristic time T has been pushed out; so, with P idle prefixes
and n slots,

    P E[min(G, T)] / E[G] = n        (the idle prefixes younger than T fill the cache: Little's law per prefix)
    survive = P(G <= T)              (a prefix is hit iff its gap ended before it aged out)

Exponential G gives E[min(G, T)] / E[G] = 1 - exp(-T / E[G]) = P(G <= T), so survive = n / P: the working-set law
above, exactly. A deterministic gap gives the cliff (survive = 1 if n >= P, else 0); a heavy-tailed gap
(log-normal pauses: most sessions return fast, a few think long) keeps more hits than n / P, as the few long
gaps age out first. G = w + X: X the tool pause (log-normal with the workload's median and mean; exponential
where only a mean is published, as the simulation draws it; cut at the harness's gap cap), w >= 0 the mean
wait for admission, taken as fixed (``ReuseGaps``). Tiers of an LRU hierarchy stack as before with
N_t in place of n.

Routing over W workers of one pool:
    session-aware  a session's next turn goes to the worker holding its prefix: each worker serves P / W
                   of the non-running sessions (the per-instance P above), cached prefix isl - new
    random         a turn lands on any worker: every worker sees all W P non-running sessions (its per-
                   instance P times W), and the copy it holds is from the session's last visit there, j turns
                   back with j ~ Geometric(1/W), E[j] = W; the context grew (new + osl) a turn since, so the
                   cached prefix is max(0, isl - new - (W - 1)(new + osl)) tokens

State snapshots (models with per-sequence fixed state F_s of kind s: linear-attention recurrent state,
sliding-window rings; each kind with its own interval I_s). Such state cannot be rolled back to a prefix
boundary, so reusing a prefix needs a stored snapshot at that boundary:
    interval I     the engine snapshots every I tokens: a cached prefix of L tokens keeps ceil(L / I) snapshots,
                   and a hit is truncated to the last snapshot boundary, losing I / 2 tokens on average
    boundary only  (I = None) one snapshot at the end of each request's prompt: the previous turn's output is
                   past it, so a hit loses osl tokens
    bytes          k = K (sum_s n_s F_s + kv_tok L) / (sum_s F_s + kv_tok L), K the plain KV bytes of one
                   sequence per GPU
    reconciled     the hit is the shortest over the kinds (and full attention), so the loss is the largest
Models with F = 0 (full attention, MLA) need no snapshots: factor 1, nothing lost.

Check against the published recipe of issue 12 (42.7% measured where the trace allows 90%, "the working set was
18x the GPU KV"): the law gives 0.9 / 18 = 5% if 18x is the live working set, and 0.9 / 2.1 = 43% if the live
set was ~2.1x the KV. The measurement is consistent with the law only if "18x" counts the trace's whole
footprint rather than the prefixes live at once; it is a check, not a fit target, and stays unverified here.

Units: tokens, bytes, sessions; shares in [0, 1].
"""

from __future__ import annotations

import numpy as np

ROUTING = ("session", "random")


def snapshot_count(context, interval) -> np.ndarray:
    """Snapshots a cached prefix of ``context`` tokens keeps: ceil(L / I), or 1 when I is None."""
    if interval is None:
        return np.ones_like(np.asarray(context, float))
    return np.maximum(np.ceil(np.asarray(context, float) / float(interval)), 1.0)


def fixed_states(model, fmt: str, window_interval=None, linear_interval=None) -> list[tuple[float, int | None]]:
    """[(fixed bytes per sequence, snapshot interval)] of the model's fixed-state kinds: sliding-window rings
    (GQA windows, DeepSeek-V4 window entries) and linear-attention recurrent + conv state (whole model)."""
    from ..model import attention_families
    fams = attention_families(model)
    win = lin = 0.0
    for g in model.layers:
        A = fams[g.attention]
        b = g.count * A.kv_fixed(fmt)
        if A.has_linear_state:
            lin += b
        else:
            win += b
    return [(win, window_interval), (lin, linear_interval)]


def snapshot_factor(kv_per_token: float, states, context) -> np.ndarray:
    """Cache bytes of one prefix over the plain KV of one sequence:
    (sum_s n_s F_s + kv_tok L) / (sum_s F_s + kv_tok L), n_s = snapshot_count(L, I_s); ``states`` as
    ``fixed_states`` returns."""
    L = np.asarray(context, float)
    plain = sum(F for F, _ in states) + kv_per_token * L
    snap = sum(snapshot_count(L, I) * F for F, I in states if F > 0) + kv_per_token * L
    return np.where(plain > 0, snap / np.maximum(plain, 1e-300), 1.0)


def snapshot_lost_tokens(states, osl) -> np.ndarray:
    """Tokens of a cached prefix recomputed because a state snapshot sits before the boundary: per state kind
    I / 2 with a snapshot interval, osl with boundary-only snapshots, 0 without that state; the reconciled hit
    is the shortest over kinds, so the loss is the largest."""
    osl = np.asarray(osl, float)
    lost = np.zeros_like(osl)
    for F, I in states:
        if F > 0:
            lost = np.maximum(lost, osl if I is None else np.full_like(osl, float(I) / 2.0))
    return lost


def competing(waiting, workers, routing: str) -> np.ndarray:
    """Non-running prefixes competing for one worker's cache: P (session-aware) or W P (random)."""
    if routing not in ROUTING:
        raise ValueError(f"routing {routing!r}: choose from {ROUTING}")
    w = np.asarray(waiting, float)
    return w * np.asarray(workers, float) if routing == "random" else w


class ReuseGaps:
    """The idle gap G = w + X of a session's prefix between two of its requests, s (vectorized over points).

    X: the tool pause, log-normal (``median``, ``sigma`` > 0), or exponential with mean ``median`` where
    ``sigma`` is 0 (a pause published without spread, drawn so by the simulation), cut at ``cap`` (the
    harness's idle-gap cap, None: uncut); w = ``wait`` (the mean wait for admission, fixed)."""

    def __init__(self, median, sigma, wait=0.0, cap=None):
        self.median = np.asarray(median, float)
        self.sigma = np.asarray(sigma, float)
        self.wait = np.maximum(np.asarray(wait, float), 0.0)
        self.cap = np.inf if cap is None else np.asarray(cap, float)

    def _pause(self, t, cdf: bool = True):
        """(P(X <= t), E[min(X, t)]) of the cut pause at t >= 0 (``cdf`` False: (None, E[min(X, t)]))."""
        from scipy.special import ndtr
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            return self._pause_at(np.maximum(np.asarray(t, float), 0.0), ndtr, cdf)

    def _pause_at(self, t, ndtr, want_cdf: bool = True):
        tc = np.minimum(t, self.cap)
        m, s = np.maximum(self.median, 1e-12), np.maximum(self.sigma, 1e-9)
        ln = self.sigma > 0
        # each branch only where some point takes it (np.where of an all-true / all-false mask picks one side)
        has_ln, has_ex = bool(ln.any()), not bool(ln.all())
        part_ln = cdf_ln = part_ex = cdf_ex = 0.0
        if has_ln:
            z = np.log(np.maximum(tc, 1e-300) / m) / s
            mean_ln = m * np.exp(s * s / 2)
            cdf_ln = ndtr(z)
            tail = np.where(np.isfinite(tc), tc * (1 - cdf_ln), 0.0)
            part_ln = mean_ln * ndtr(z - s) + tail                      # E[min(X, tc)], log-normal
        if has_ex:
            cdf_ex = -np.expm1(-tc / m)
            part_ex = m * cdf_ex                                        # E[min(X, tc)], exponential
        part = np.where(ln, part_ln, part_ex)
        if not want_cdf:
            return None, part
        cdf = np.where(ln, cdf_ln, cdf_ex)
        return np.where(t >= self.cap, 1.0, cdf), part

    def mean(self):
        """E[G], s."""
        return self.wait + self._pause(np.inf)[1]

    def cdf_and_partial(self, t):
        """(P(G <= t), E[min(G, t)]) at t."""
        t = np.asarray(t, float)
        cdf, part = self._pause(t - self.wait)
        return np.where(t >= self.wait, cdf, 0.0), np.minimum(t, self.wait) + part

    def partial(self, t):
        """E[min(G, t)] at t (``cdf_and_partial``'s second value, the CDF not computed)."""
        t = np.asarray(t, float)
        return np.minimum(t, self.wait) + self._pause(t - self.wait, cdf=False)[1]

    def survival(self, ratio, iterations: int = 80):
        """P(G <= T) where E[min(G, T)] / E[G] = ``ratio`` (capacity / idle prefixes), 1 at ratio >= 1: the
        renewal Che law (module docstring). T by a vectorized bisection in log T (no loop per point), stopped once
        no bracket moves: (lo, hi) then stay as they are for every later step (floating point can split them no
        further), so stopping there gives the same T as running all ``iterations`` (about 50 of the 80 suffice)."""
        r = np.asarray(ratio, float)
        mean = self.mean()
        shape = np.broadcast_shapes(r.shape, mean.shape)
        lo = np.full(shape, -30.0)
        hi = np.broadcast_to(np.log(np.maximum(mean, 1e-12)) + np.log(1e6), shape).copy()
        for _ in range(iterations):
            mid = (lo + hi) / 2
            below = self.partial(np.exp(mid)) / mean < r
            new_lo, new_hi = np.where(below, mid, lo), np.where(below, hi, mid)
            if np.array_equal(new_lo, lo, equal_nan=True) and np.array_equal(new_hi, hi, equal_nan=True):
                break
            lo, hi = new_lo, new_hi
        return np.where(r >= 1.0, 1.0, np.clip(self.cdf_and_partial(np.exp(hi))[0], 0.0, 1.0))


def tier_shares(waiting, capacities: list, gaps: ReuseGaps | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """LRU stack-distance bands: (share held by each tier, evicted share) of the ``waiting`` prefixes.

    share_t = s(N_t / P) - s(N_(t-1) / P) with N_t the cumulative capacity (prefixes), s the survival:
    min(1, ratio) (exponential gaps, ``gaps`` None) or the renewal Che law of ``gaps`` (``ReuseGaps.survival``);
    P = 0 gives no shares and nothing evicted.
    """
    P = np.asarray(waiting, float)
    safe = np.where(P > 0, P, 1.0)
    shares, cum, prev = [], 0.0, np.zeros_like(safe)
    last: tuple | None = None          # (ratio, survival) of the tier before
    for cap in capacities:
        cum = cum + np.maximum(np.asarray(cap, float), 0.0)
        ratio = cum / safe
        if last is not None and np.array_equal(ratio, last[0], equal_nan=True):
            surv = last[1]              # a tier adding no capacity (no pool, no host tier): the same survival
        else:
            surv = np.minimum(1.0, ratio) if gaps is None else gaps.survival(ratio)
        last = (ratio, surv)
        now = np.where(P > 0, surv, 1.0)
        shares.append(np.where(P > 0, now - prev, 0.0))
        prev = now
    evicted = np.where(P > 0, 1.0 - prev, 0.0)
    return shares, evicted


def cached_prefix_tokens(isl, new, osl, workers, routing: str) -> np.ndarray:
    """Tokens a surviving prefix covers: isl - new (session-aware) or max(0, isl - new - (W-1)(new+osl))."""
    isl, new, osl = (np.asarray(x, float) for x in (isl, new, osl))
    base = np.maximum(isl - new, 0.0)
    if routing == "random":
        return np.maximum(base - (np.asarray(workers, float) - 1.0) * (new + osl), 0.0)
    return base


def uncached_input(isl, new, osl, evicted, workers=1.0, routing: str = "session", lost=0.0) -> np.ndarray:
    """Tokens prefilled per request: isl - (1 - evicted) max(0, cached prefix - lost)."""
    cached = np.maximum(cached_prefix_tokens(isl, new, osl, workers, routing) - np.asarray(lost, float), 0.0)
    return np.asarray(isl, float) - (1.0 - np.asarray(evicted, float)) * cached


def working_set_hit(ceiling, capacity, working_set) -> np.ndarray:
    """The closed form in one line: hit = h_c min(1, capacity / working set) (session-aware, one tier)."""
    ws = np.asarray(working_set, float)
    return np.asarray(ceiling, float) * np.where(ws > 0, np.minimum(1.0, np.asarray(capacity, float)
                                                                    / np.where(ws > 0, ws, 1.0)), 1.0)


__all__ = ["ROUTING", "ReuseGaps", "cached_prefix_tokens", "competing", "fixed_states", "snapshot_count", "snapshot_factor",
           "snapshot_lost_tokens", "tier_shares", "uncached_input", "working_set_hit"]
