"""TTFT under load: queueing and scheduling in front of the step equations (model-independent).

A request's first token waits for, in order (all times in seconds, per instance):
    t_req                request overhead: API server, tokenization, admission, first-token output (profile)
    W_cap                closed loop with C > B_cap clients: (C - B_cap) / X, the clients beyond the engine's
                         running capacity wait for a slot (slots free at the throughput X; FIFO, the same
                         for every request); plus W_sat when prefill saturates (below)
    R_q = q t_st         the decode step in progress when it arrives (uniform residual; mean t_st / 2)
    W_pf                 the prefill queue: requests ahead of it for the prefill server (M/D/c: Poisson-like
                         arrivals at rate X, deterministic service t_s on c servers). Sakasegawa's M/G/c form
                         with c_s^2 = 0, c_a^2 = 1 (exact M/D/1 mean at c = 1):
                             rho = X t_s / c,   E[W_pf] = rho^(sqrt(2 (c + 1)) - 1) / (c (1 - rho)) t_s / 2
                         quantile q (exponential tail with the right mean, P(W > 0) = rho):
                             W_pf,q = E[W_pf] / rho ln(rho / (1 - q))  if rho > 1 - q, else 0
    An arrival in a closed loop of C clients sees the other C - 1 (the arrival theorem), so the queue it
    finds is the Bard-Schweitzer estimate: utilisation seen rho' = rho (C - 1) / C in W_pf, and a step in
    progress only if another client is in flight (R scaled by min(1, C - 1)): a lone client never queues.
    T_own                its own prefill: t_pf(new tokens after the cached prefix) plus, with chunked prefill,
                         n_ch = ceil(new / chunk) steps of the decode batch riding along (aggregated), or the
                         KV transfer and the first decode step (disaggregated)
    W_wave               a closed-loop benchmark's clients start together and, with equal lengths, stay
                         partly synchronized: a share phi (profile ``arrival_burst``) of requests arrive in
                         waves of all C clients and wait for the wave's prefills ahead of them, uniform on
                         [0, (C - 1) t_s / c]; the prefill wait is the mixture (1 - phi) W_pf + phi W_wave
    TTFT_q = t_req + W_cap + R_q + W_q + T_own       (P50: q = 0.5, P90: q = 0.9, P99: q = 0.99; mean: E[.] terms)

With chunked prefill (aggregated serving) the prefill server is the steps' token budget (N_ch tokens per
attention-DP rank, c ranks): a request holds it for t_s = (new / N_ch) (t_bare + t_budget), its share of a
full step (decode batch + a prefill of c N_ch tokens).

Closed loop (a benchmark at concurrency C: each client sends its next request when the last one ends).
Little's law on the requests holding a running slot, B_run = min(C, B_cap), with slot cycle T:
    B_run = X T,   T = D + W_pf(rho'),   D = t_req + E[R] + T_own + osl TPOT,   rho = X t_s / c.
TPOT depends on the load: a request's decode steps carry the prefill the others do *while it decodes*, a
share f = osl TPOT / T of the cycle (the rest of their prefill happens while it queues or prefills and
is in W_pf): n_pf = f mix (B - 1) acc new / osl, at most the token budget per step. The step is linear
in f up to that cap, so given rho, T = B_run t_s / (rho c) fixes f in closed form and the root in rho of
D(f) + W_pf(rho') = T (increasing in rho) is found by vectorized regula falsi. If even rho -> 1 leaves
D + W_pf < T, prefill is the bottleneck: X = c / t_s and the clients wait W_sat = T - D - W_pf for it.
The clients then satisfy Little's law over the whole loop: C = X (E[TTFT] + osl TPOT).
Open loop (capacity planning at an arrival rate lambda per instance): X = lambda at rho = lambda t_s / c;
past rho = 1 (or the running capacity) the queue grows without bound.
"""

from __future__ import annotations

import sympy as sp

from .roofline import smax

# symbols of the serving layer (seconds, requests/s, clients)
QS = {n: sp.Symbol(n, positive=True)
      for n in ("rho", "t_s", "c", "q", "t_req", "W_cap", "t_st", "T_own", "phi", "C")}
QS["cs2"] = sp.Symbol("cs2", nonnegative=True)   # squared coefficient of variation of the prefill service time


def mean_wait(rho, t_s, c, cs2=0):
    """E[W] of M/G/c (Sakasegawa, c_a^2 = 1): (1 + c_s^2) rho^(sqrt(2(c+1)) - 1) / (c (1 - rho)) t_s / 2, seconds;
    c_s^2 = 0 (M/D/c) for equal requests, larger where the requests' uncached tokens spread (first turns, evicted
    prefixes, a log-normal tail: serving/prefill_spread.py)."""
    return (1 + cs2) * rho ** (sp.sqrt(2 * (c + 1)) - 1) / (c * (1 - rho)) * t_s / 2


def quantile_wait(rho, t_s, c, q, cs2=0):
    """W_q: the q-quantile of the prefill-queue wait (exponential tail, P(W > 0) = rho), seconds."""
    tail_mean = (1 + cs2) * rho ** (sp.sqrt(2 * (c + 1)) - 2) / (c * (1 - rho)) * t_s / 2   # E[W] / rho, finite at 0
    return smax(0, tail_mean * sp.log(rho / (1 - q)))


def wave_wait(C, t_s, c, q):
    """A request of a synchronized wave of C arrivals waits for the prefills ahead of it: uniform on
    [0, (C - 1) t_s / c], so its q-quantile is q (C - 1) t_s / c (mean: q = 1/2), seconds."""
    return q * smax(0, C - 1) * t_s / c


def prefill_wait(rho, t_s, c, q, phi, C, cs2=0):
    """The prefill-queue wait of a closed loop: a share phi of arrivals in waves, the rest at random,
        W_q = (1 - phi) W_pf,q + phi q (C - 1) t_s / c    (the quantile of the mixture approximated by the
    mixture of the quantiles; exact for the mean with E[W_pf] in place of W_pf,q and q = 1/2), seconds."""
    return (1 - phi) * quantile_wait(rho, t_s, c, q, cs2) + phi * wave_wait(C, t_s, c, q)


def mean_prefill_wait(rho, t_s, c, phi, C, cs2=0):
    """E[W] = (1 - phi) E[W_pf] + phi (C - 1) t_s / (2 c), seconds."""
    return (1 - phi) * mean_wait(rho, t_s, c, cs2) + phi * wave_wait(C, t_s, c, sp.Rational(1, 2))


def ttft_quantile():
    """TTFT_q = t_req + W_cap + q t_st + W_q + T_own (seconds)."""
    s = QS
    return (s["t_req"] + s["W_cap"] + s["q"] * s["t_st"]
            + prefill_wait(s["rho"], s["t_s"], s["c"], s["q"], s["phi"], s["C"], s["cs2"]) + s["T_own"])


def ttft_mean():
    """E[TTFT] = t_req + W_cap + t_st / 2 + E[W] + T_own (seconds)."""
    s = QS
    return (s["t_req"] + s["W_cap"] + s["t_st"] / 2
            + mean_prefill_wait(s["rho"], s["t_s"], s["c"], s["phi"], s["C"], s["cs2"]) + s["T_own"])


def lambdified_queue(modules) -> dict:
    """The waits and TTFT forms lambdified with ``modules`` (the engine's NUMPY_MODULES: the equations' own
    functions mapped to numpy), keyed by name, each with the squared coefficient of variation of the prefill
    service time ``cs2`` as its last positional argument. serving/queueing.compiled_queue keeps the generated code
    on disk (engine/compiled.cached_functions) and reads it from there without importing this module or sympy."""
    s = QS
    wait_args = (s["rho"], s["t_s"], s["c"])      # tuples: their lengths are known to the call checks below
    q_args = (*wait_args, s["q"])
    mix_args = (*wait_args, s["phi"], s["C"])
    t_args = [s["t_req"], s["W_cap"], s["t_st"], s["T_own"], *q_args, s["phi"], s["C"]]
    cs2 = s["cs2"]
    fns = {
        "mean_wait": sp.lambdify([*wait_args, cs2], mean_wait(*wait_args, cs2), modules=modules),
        "quantile_wait": sp.lambdify([*q_args, cs2], quantile_wait(*q_args, cs2), modules=modules),
        "mean_prefill_wait": sp.lambdify([*mix_args, cs2], mean_prefill_wait(*mix_args, cs2), modules=modules),
        "ttft_quantile": sp.lambdify(t_args + [cs2], ttft_quantile(), modules=modules),
        "ttft_mean": sp.lambdify([*t_args[:4], *mix_args, cs2], ttft_mean(), modules=modules),
    }
    return fns


def explain_queueing() -> str:
    """The serving-layer TTFT expressions as text (for ``perfmodel explain``)."""
    s = QS
    return "\n".join([
        "## TTFT under load (perfmodel.equations.queueing)", "",
        f"- E[W_pf] = `{sp.sstr(mean_wait(s['rho'], s['t_s'], s['c']))}`",
        f"- W_pf,q = `{sp.sstr(quantile_wait(s['rho'], s['t_s'], s['c'], s['q']))}`",
        f"- W_wave,q = `{sp.sstr(wave_wait(s['C'], s['t_s'], s['c'], s['q']))}`",
        f"- TTFT_q = `{sp.sstr(ttft_quantile())}`",
        f"- E[TTFT] = `{sp.sstr(ttft_mean())}`", ""])
