"""TTFT queueing, vectorized: closed-loop (benchmark concurrency) and open-loop (arrival rate) serving.

The expressions are ``perfmodel.equations.queueing`` (sympy, lambdified once); this module evaluates them
over arrays of operating points, with no Python loop per point. An operating point is the running batch
B (requests holding a KV slot: prefilling or decoding); requests queueing for prefill or for a slot do
not hold one.
  * ``closed_loop``: Little's law on the slots, B = X S with S = T_own + osl TPOT, fixes the throughput
    X; TPOT depends on the share f of S spent decoding (the prefill mixed into the steps), a quadratic
    in f solved in closed form. Then rho = X t_s / c, the prefill-queue wait and the clients the batch
    needs, C_B = X (t_req + R + W_pf + S) (Bard-Schweitzer's C - 1 others, three substitutions). With
    C > C_B clients (a benchmark beyond the running capacity) the rest wait (C - C_B) / X.
  * ``open_loop``: X = lambda given; the same TTFT terms at rho = lambda t_s / c (unstable when rho >= 1).
  * ``tpot_quantile``: the tail of a request's TPOT, from the chunk steps it meets (the prefill the queue feeds
    into the decode steps) over its osl / acc steps.
TTFT percentiles: P50, P90 and P99 (``PERCENTILES``), the queue's quantile (equations/queueing.py).
Every input is a numpy array (or scalar) in seconds, requests/s or requests.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .ops import ARRAYS, raw_queue
from .prefill_first import mixed as mixed_share
from .prefill_first import own_and_serve, saturation_time


@lru_cache(maxsize=1)
def compiled_queue() -> dict:
    """The queueing forms of equations/queueing.py, lambdified (numpy) once and read from the disk cache after
    that without importing sympy; each callable as ``f(*args)`` or ``f(*args, cs2=x)`` (cs2: the squared
    coefficient of variation of the prefill service time, default 0: equal requests)."""
    return {k: _cs2_last(f) for k, f in raw_queue().items()}


def _cs2_last(f):
    """``f(*args, cs2)`` callable as ``f(*args)`` (cs2 = 0) or ``f(*args, cs2=x)``."""
    def call(*args, cs2=0.0):
        return f(*args, cs2)
    return call


PERCENTILES = (0.5, 0.9, 0.99)
SATURATED_RHO = 0.99          # prefill servers at their rate: the wait is evaluated here (closed loop: finite)
SEEN_SUBSTITUTIONS = 3
_TTFT_KEYS = tuple((pct, f"ttft_p{pct * 100:.0f}_s") for pct in PERCENTILES)


def _ttft_terms(rho, t_s, c, t_req, w_cap, t_st, t_own, phi=0.0, clients=1.0, cs2=0.0, ops=ARRAYS) -> dict:
    q = ops.queue()
    rho = ops.maximum(rho, 1e-12)                      # rho = 0: no queue (the forms are finite, not 0 * inf)
    with ops.quiet():
        out = {"ttft_mean_s": q["ttft_mean"](t_req, w_cap, t_st, t_own, rho, t_s, c, phi, clients, cs2),
               "prefill_queue_s": q["mean_prefill_wait"](rho, t_s, c, phi, clients, cs2)}
        quantile = q["ttft_quantile"]
        for pct, key in _TTFT_KEYS:
            out[key] = quantile(t_req, w_cap, t_st, t_own, rho, t_s, c, pct, phi, clients, cs2)
    return ops.checked(out)


def decode_share(t_own, step0, step_chunk, chunks, acc, osl, ops=ARRAYS) -> tuple:
    """(f, step): the share f of a slot's time S = T_own + u step spent decoding (u = osl / acc) and the
    mean decode step (s). The steps carry the others' prefill while a request decodes, f of it at f = 1:
        step(f) = step0 + min(f chunks, 1) (step_chunk - step0),   f = u step(f) / (T_own + u step(f)).
    Below the cap, with g = chunks (step_chunk - step0):  u g f^2 + (T_own + u step0 - u g) f - u step0 = 0,
    whose root in [0, 1] is f = 2 u step0 / (b + sqrt(b^2 + 4 u^2 g step0)), b = T_own + u step0 - u g
    (the stable form). Above it (f chunks > 1: the token budget is full) step = step_chunk."""
    u = osl / acc
    g = chunks * (step_chunk - step0)
    b = t_own + u * step0 - u * g
    with ops.quiet():
        f = 2 * u * step0 / (b + ops.sqrt(b * b + 4 * u * u * g * step0))
        full = f * chunks > 1
        step_full = ops.floats(step_chunk) + 0 * f
        f = ops.where(full, u * step_full / (t_own + u * step_full), f)
    step = ops.where(full, step_full, step0 + ops.minimum(f * chunks, 1.0) * (step_chunk - step0))
    return f, step


def closed_loop(clients, b_run, t_req, step0, step_chunk, chunks, acc, osl, t_own, t_s, c,
                phi=0.0, cs2=0.0, t_cap=None, ops=ARRAYS) -> dict:
    """Closed loop whose decoding requests see a running batch ``b_run``, with ``clients`` in the loop
    (NaN: just the clients that batch needs). Decode step from ``decode_share``; slot time
    S = T_own + osl TPOT; a client's cycle T = t_req + R + W + S with R = min(1, C - 1) step / 2 and
    W = (1 - phi) W_pf(rho (C-1)/C) + phi (C - 1) t_s / (2 c) (a share ``phi`` of arrivals in waves). By the arrival theorem a decoding request sees itself plus each of the other C - 1 clients
    holding a slot a share S / T of the time: B = 1 + (C_B - 1) S / T, so the clients the batch needs
    are C_B = 1 + (B - 1) T / S and X = C_B / T (= 1 / T at B = 1, -> B / S at large B); rho = X t_s / c.
    T depends on rho: a few substitutions (SEEN_SUBSTITUTIONS) from X = B / S, C_B = B. If rho >= 1 the
    prefill servers cannot feed the batch: X = c / t_s (``prefill_saturated``; the batch really running
    is X S < B) and the wait is taken at rho = 0.99. Clients beyond C_B wait W_cap = (C - C_B) / X, so
    C = X (E[TTFT] + osl TPOT) (Little). acc: accepted tokens per step; t_own: the request's own prefill
    phase (s); t_s: prefill-server time per request (s) on ``c`` parallel servers. Returns the throughput
    X (requests/s), rho, the decode share f, the chunk-step share, the step, TPOT and slot time S (s), the
    clients C_B and C, the capacity wait and the TTFT mean / P50 / P90 (s). ``ops``: arrays or one point on
    floats (serving/ops.py).
    """
    b_run, c, chunks = ops.floats(b_run), ops.floats(c), ops.floats(chunks)
    t_s = ops.maximum(ops.floats(t_s), 1e-12)
    f, step = decode_share(t_own, step0, step_chunk, chunks, acc, osl, ops)
    slot = t_own + osl * step / acc
    wait = ops.queue()["mean_prefill_wait"]
    x, need = b_run / slot, b_run
    if ops is ARRAYS:
        shape = np.broadcast(b_run, slot, t_s, c, t_req).shape
        x, need = np.broadcast_to(x, shape), np.broadcast_to(need, shape)
    smin, smax = ops.minimum, ops.maximum
    for _ in range(SEEN_SUBSTITUTIONS):
        rho = x * t_s / c
        rho_q = smin(rho, SATURATED_RHO)
        seen = smax(need - 1, 0.0) / smax(need, 1.0)   # arrival theorem: it sees the other C - 1
        resid = smin(1.0, smax(need - 1, 0.0)) / 2
        seen_by = need                             # the clients this pass's waits are taken with
        cycle = t_req + resid * step + wait(smax(rho_q * seen, 1e-12), t_s, c, phi, seen_by, cs2) + slot
        need = 1 + (b_run - 1) * cycle / slot     # a decoding request sees B = 1 + (C - 1) S / cycle
        x = need / cycle
    t_cap = t_s if t_cap is None else ops.maximum(ops.floats(t_cap), t_s)   # prefill_first.saturation_time
    saturated = x * t_cap / c >= 1
    x = ops.where(saturated, c / t_cap, x)
    rho = x * t_s / c
    need = x * cycle                              # = C_B (unchanged unless saturated): Little's law holds
    clients = ops.floats(clients)
    clients = ops.where(ops.isnan(clients), need, ops.maximum(clients, need))
    w_cap = (clients - need) / x
    return {"x_per_s": x, "rho": ops.minimum(rho, 1.0), "decode_share": f,
            "chunk_share": ops.minimum(f * chunks, 1.0), "step_s": step, "tpot_s": step / acc, "slot_s": slot,
            "clients_needed": need, "concurrency": clients, "capacity_wait_s": w_cap, "prefill_saturated": saturated,
            **_ttft_terms(rho_q * seen, t_s, c, t_req, w_cap, 2 * resid * step, t_own, phi, seen_by, cs2, ops)}


def open_loop(rate, t_req, t_st, t_own, t_s, c) -> dict[str, np.ndarray]:
    """Open loop at ``rate`` requests/s: the prefill queue at rho = rate t_s / c; TTFT inf where rho >= 1."""
    rate, t_s, c = (np.asarray(x, float) for x in (rate, t_s, c))
    rho = rate * t_s / c
    stable = rho < 1
    r = np.where(stable, rho, 0.5)
    out = _ttft_terms(r, t_s, c, t_req, 0.0, t_st, t_own)
    out = {k: np.where(stable, v, np.inf) for k, v in out.items()}
    return {"x_per_s": rate * np.ones_like(r), "rho": rho, "capacity_wait_s": np.zeros_like(r), **out}


def serving_load(p: dict, step0, step_chunk, chunks, t_pf, t_budget, vals: dict, ops=ARRAYS) -> dict:
    """Queueing of every operating point: closed loop for aggregated points (mix > 0), decode alone otherwise.

    step0 / step_chunk: the mean decode step (s) without prefill / with the prefill demand of all the
    other running requests mixed in, capped at the token budget; chunks: that demand over the capped one
    (``closed_loop`` solves the share f of it; >= 1 where the budget binds).
    Aggregated (chunked prefill): B = batch running, clients C = ``concurrency`` (NaN: those the batch
    needs); the prefill servers are the c = G / (tp pp) attention-DP ranks; the request's own prefill
    phase spans n_ch = ceil(new / N_ch) steps, each its chunk plus the decode batch riding along:
    T_own = t_pf + n_ch step0. The prefill server is the steps' token budget, N_ch per rank: a full step
    takes step0 + t_budget (``t_budget``: a prefill step of the c N_ch budget tokens, s), so a request
    occupies its rank for t_s = (new / N_ch) (step0 + t_budget) (the decode batch's time amortized over
    the budget: prefill capacity falls as the batch grows); with no other request to mix with (B = 1),
    t_s = t_pf. Decode-only points (a phase measured alone) keep TTFT = t_pf + step0 and
    X = B acc / (osl step0). Returns arrays: x_per_s, rho, decode_share, chunk_share, step_s, tpot_s,
    slot_s, clients_needed, concurrency, capacity_wait_s, prefill_saturated, prefill_queue_s, ttft_mean_s,
    ttft_p50_s, ttft_p90_s, ttft_p99_s, queue_stable.
    Points with a finite ``arrival_rate`` (requests/s per instance) are an open loop instead (``open_loop``).
    ``ops``: arrays, or one point on floats (serving/ops.py: a fixed batch, the clients it needs, no arrival rate).
    """
    batch = p["batch"]
    servers = p["gpus"] / (p["tp"] * p["pp"])
    n_ch = ops.ceil(ops.maximum(p["new"], 1.0) / vals["N_ch"] - 1e-9)
    m = mixed_share(vals, ops)
    t_own, t_serve = own_and_serve(m, t_pf, t_budget, step0, n_ch, chunks, p["new"], vals["N_ch"], ops)
    t_cap = saturation_time(m, t_serve, step0, p, servers, ops)
    if ops is not ARRAYS:          # one point: the closed loop where prefill mixes in, decode alone otherwise
        if not p["mix"] > 0:
            return decode_alone(p, step0, t_pf, 0.0)
        return closed_loop(p["concurrency"], batch, vals["t_req"], step0, step_chunk, chunks, p["acc"], p["osl"],
                           t_own, t_serve, servers, vals["phi"], p.get("prefill_cv2", 0.0), t_cap, ops)
    loop = (p["concurrency"], batch, vals["t_req"], step0, step_chunk, chunks, p["acc"], p["osl"], t_own, t_serve,
            servers, vals["phi"], p.get("prefill_cv2", 0.0), t_cap)
    mixed = p["mix"] > 0
    sub = lambda v: _shaped(v, batch.shape)[mixed]  # noqa: E731  (the closed loop on mixed points only)
    agg = closed_loop(*(sub(v) for v in loop))
    alone = decode_alone(p, step0, t_pf, np.zeros_like(batch))
    out = {}
    for k in alone:
        out[k] = np.array(_shaped(alone[k], batch.shape), dtype=float)
        out[k][mixed] = agg[k]
    out["prefill_saturated"] = out["prefill_saturated"] > 0
    out["queue_stable"] = np.ones(batch.shape, dtype=bool)
    rate = np.broadcast_to(np.asarray(p.get("arrival_rate", np.nan), float), batch.shape)
    opened = mixed & np.isfinite(rate)
    if opened.any():
        _open_loop_into(out, opened, rate, batch, p, vals, t_own, t_serve, servers)
    return out


def decode_alone(p: dict, step0, t_pf, zero) -> dict:
    """``serving_load`` of decode-only points (a phase measured alone): TTFT = t_pf + step0, X = B acc / (osl step0),
    no queue (``zero``: 0.0, or zeros of the points' shape)."""
    batch = p["batch"]
    ttft = t_pf + step0
    return {"x_per_s": batch * p["acc"] / (p["osl"] * step0), "rho": zero, "decode_share": zero + 1.0,
            "chunk_share": zero, "step_s": step0 + zero, "tpot_s": step0 / p["acc"],
            "slot_s": p["osl"] * step0 / p["acc"], "clients_needed": batch, "concurrency": batch,
            "capacity_wait_s": zero, "prefill_saturated": zero > 0, "prefill_queue_s": zero,
            **{k: ttft for k in ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s")}}


def _shaped(v, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(v, shape)``, skipped where ``v`` is an array of that shape already (one-point calls)."""
    return v if isinstance(v, np.ndarray) and v.shape == shape else np.broadcast_to(v, shape)


def _open_loop_into(out: dict, sel, rate, batch, p: dict, vals: dict, t_own, t_serve, servers) -> None:
    """Replace the closed loop by the open loop at ``rate`` requests/s on the points ``sel`` (aggregated).

    The steps, TPOT and slot time are those of the running batch (B = rate S, solved by evaluate); the
    throughput is the arrival rate, the prefill queue is at rho = rate t_s / c with the step in progress as the
    residual (t_st = step), and Little's law gives the requests in the system, rate (E[TTFT] + osl TPOT).
    Stable only if rho < 1 and the batch the rate needs fits (rate S <= B): otherwise the queue grows without
    bound, ``queue_stable`` is False and the TTFT terms are NaN (reported as n/a, never as a number)."""
    b = lambda v: np.broadcast_to(np.asarray(v, float), batch.shape)[sel]  # noqa: E731
    lam = rate[sel]
    ol = open_loop(lam, b(vals["t_req"]), out["step_s"][sel], b(t_own), b(t_serve), b(servers))
    stable = (ol["rho"] < 1) & (lam * out["slot_s"][sel] <= batch[sel] * (1 + 1e-6))
    nan = lambda v: np.where(stable, v, np.nan)  # noqa: E731
    for k in ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "prefill_queue_s"):
        out[k][sel] = nan(ol[k])
    out["x_per_s"][sel] = lam
    out["rho"][sel] = np.minimum(ol["rho"], 1.0)
    out["capacity_wait_s"][sel] = 0.0
    in_system = lam * (ol["ttft_mean_s"] + out["slot_s"][sel] - b(t_own))
    out["concurrency"][sel] = nan(in_system)
    out["clients_needed"][sel] = nan(in_system)
    out["prefill_saturated"][sel] = ol["rho"] >= 1
    out["queue_stable"][sel] = stable


def queue_tail(w_mean, rho, q):
    """The q-quantile of the prefill wait from its mean ``w_mean`` under the queue's exponential tail with
    P(W > 0) = rho (the quantile_wait law of equations/queueing.py, read from a served point's columns):
        W_q = (E[W] / rho) max(0, ln(rho / (1 - q)))
    ``rho`` in (0, 1) (clip it first), ``q`` a fraction (an array of request draws works); units of ``w_mean``."""
    return w_mean / rho * np.maximum(0.0, np.log(rho / (1 - q)))


def tpot_quantile(tpot_s, step0, step_chunk, chunk_share, osl, acc, q, ops=ARRAYS):
    """The q-quantile over requests of TPOT (s): a request's TPOT is the mean of its n = osl / acc decode steps;
    each step carries a prefill chunk with probability w (``chunk_share``, the share of steps the queue fills,
    ``closed_loop``), taking step_chunk instead of step0. With k ~ Binomial(n, w) chunk steps,
        TPOT = (step0 + (k / n) D) / acc,   D = step_chunk - step0,
        sd(TPOT) = D sqrt(w (1 - w) / n) / acc,
        TPOT_q = TPOT_mean + z_q sd(TPOT)      (normal approximation; z_0.99 = 2.326)
    ``tpot_s`` is the mean TPOT (s). Where no prefill mixes in (w = 0 or 1, decode-only, disaggregated pools) the
    steps are alike and TPOT_q = TPOT_mean. Every argument is an array (or scalar) in seconds or tokens."""
    z = _z(float(q))
    f = ops.floats
    n = ops.maximum(f(osl) / f(acc), 1.0)
    w = ops.clip(f(chunk_share), 0.0, 1.0)
    d = ops.maximum(f(step_chunk) - f(step0), 0.0)
    return f(tpot_s) + z * d * ops.sqrt(w * (1 - w) / n) / f(acc)


@lru_cache(maxsize=8)
def _z(q: float) -> float:
    """The standard normal's q-quantile."""
    from statistics import NormalDist
    return NormalDist().inv_cdf(q)
