"""Latency claims read on the latency quantity: TTFT, TPOT (= ITL) and E2E, each named with its percentile.

As the record format defines them (data/shared/README.md): ``ttft_ms`` time to first token, ``tpot_ms`` time per
output token = 1000 / tps_per_user (per accepted token with speculative decoding); medians, P50, unless the source
says otherwise.

Quantities (``metric.quantity``) and the model's columns they read at percentile q (``metric.percentile``;
unstated: P50, the record format's default):

- ``ttft_s``: TTFT_q, s = ``ttft_ms`` (q 50), ``ttft_p90_ms`` (90), ``ttft_p99_ms`` (99), / 1e3 (the queue's);
- ``tpot_ms``: TPOT_q, ms = ``tpot_ms`` (q 50: the model's one TPOT of an operating point) or ``tpot_p99_ms``
  (99: with the prefill chunks a request's steps meet);
- ``e2e_s``: E2E_q, s, one request's end-to-end latency = osl / ``tps_per_user_e2e_p{q}`` = TTFT_q + osl x TPOT
  (q 50 or 90; ``osl`` the row's output tokens).

A percentile the model does not carry is read at the nearest one it does, said in the assumptions.

**At a stated load** (``load``): one request in flight is the curve end's row (batch 1, ``reading.Figure``'s
``max_speed``); N > 1 requests in flight read the envelope's deployment at that load: ln(latency) interpolated in
ln(concurrency) between the envelope rows around N (NaN above the envelope's highest concurrency: the model has
no point there; below its lowest, the lowest's latency).

**The error term** of a latency figure (``error_part``): TTFT the held-out TTFT error; TPOT the speed error
flipped (TPOT = 1 / speed: a speed too high is a TPOT too low); E2E the sum of its parts with each part's band,
comonotone (the two ends add): E2E in [T e^-dT + D e^-dD, T e^uT + D e^uD], T = TTFT_q, D = E2E_q - T, (dT, uT)
the TTFT band and (dD, uD) the flipped speed band, as ln half-widths around E2E = T + D.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

LATENCY = ("ttft_s", "tpot_ms", "e2e_s")
NAME = {"ttft_s": ("TTFT", "s"), "tpot_ms": ("TPOT (ITL)", "ms"), "e2e_s": ("E2E latency", "s")}
CARRIED = {"ttft_s": (50, 90, 99), "tpot_ms": (50, 99), "e2e_s": (50, 90)}


def is_latency(col: str) -> bool:
    return col in LATENCY


def carried(col: str, q: float | None) -> float:
    """The percentile the model reads for a claim at q (None: P50): q itself, else the nearest one it carries."""
    q = 50.0 if q is None else float(q)
    return float(min(CARRIED[col], key=lambda c: (abs(c - q), -c)))


def name(col: str, q: float | None) -> str:
    """'TTFT P50, s': the quantity with its percentile and unit."""
    what, unit = NAME[col]
    return f"{what} P{50.0 if q is None else q:g}, {unit}"


def values(rows: pd.DataFrame | pd.Series, col: str, q: float | None, k: float = 1.0) -> np.ndarray:
    """The latency of each row (array; a Series is one row) in the claim's unit at percentile q (see the module
    docstring for the columns). ``k``: the system's decode steps k times the modeled ones (a speed error,
    ``reading.py``): TPOT x k, E2E = TTFT + k (E2E - TTFT), TTFT as modeled."""
    df = rows.to_frame().T if isinstance(rows, pd.Series) else rows
    p = carried(col, q)

    def c(name: str) -> np.ndarray:
        return df[name].to_numpy(float) if name in df else np.full(len(df), np.nan)
    if col == "ttft_s":
        return c({50.0: "ttft_ms", 90.0: "ttft_p90_ms", 99.0: "ttft_p99_ms"}[p]) / 1e3
    if col == "tpot_ms":
        return c("tpot_ms" if p == 50.0 else "tpot_p99_ms") * k
    e2e = c("osl") / c(f"tps_per_user_e2e_p{p:.0f}")
    if k == 1.0:
        return e2e
    t = c({50.0: "ttft_ms", 90.0: "ttft_p90_ms"}[p]) / 1e3
    return t + k * (e2e - t)


def value(row: pd.Series, col: str, q: float | None) -> float:
    return float(values(row, col, q)[0])


def at_load(env: pd.DataFrame, col: str, q: float | None, n: float,
            k: float = 1.0) -> tuple[float, pd.Series | None]:
    """(latency, the envelope row nearest the load) at n requests in flight: ln(latency) interpolated in
    ln(concurrency) over the envelope's rows sorted by concurrency; NaN above its highest concurrency."""
    if not len(env) or "concurrency" not in env:
        return math.nan, None
    e = env[np.isfinite(env["concurrency"].to_numpy(float))].sort_values("concurrency", kind="stable")
    v = values(e, col, q, k)
    ok = np.isfinite(v) & (v > 0)
    e, v = e[ok], v[ok]
    if not len(e):
        return math.nan, None
    cx = e["concurrency"].to_numpy(float)
    row = e.iloc[int(np.argmin(np.abs(np.log(cx / n))))]
    if n > cx[-1] * (1 + 1e-9):
        return math.nan, row
    return float(np.exp(np.interp(math.log(n), np.log(cx), np.log(v)))), row


def error_part(col: str, row: pd.Series, q: float | None, band) -> dict:
    """The model's error of one latency figure as ln half-widths around it (see the module docstring).
    ``band(quantity)`` -> (down, up) ln half-widths of the held-out error of 'ttft' or 'speed' (of the speed
    itself, unflipped). Returns {down, up, quantity}."""
    if col == "ttft_s":
        d, u = band("ttft")
        return {"down": d, "up": u, "quantity": "ttft"}
    sd, su = band("speed")
    if col == "tpot_ms":               # TPOT = 1 / speed: the speed band flipped
        return {"down": su, "up": sd, "quantity": "speed (as 1/TPOT)"}
    e2e, t = value(row, "e2e_s", q), value(row, "ttft_s", q)
    if not (math.isfinite(e2e) and e2e > 0 and math.isfinite(t)):
        return {"down": su, "up": sd, "quantity": "speed (as 1/TPOT)"}
    t = min(max(t, 0.0), e2e)
    dt, ut = band("ttft")
    dec = e2e - t
    lo, hi = t * math.exp(-dt) + dec * math.exp(-su), t * math.exp(ut) + dec * math.exp(sd)
    return {"down": math.log(e2e / lo), "up": math.log(hi / e2e),
            "quantity": f"e2e (ttft {t / e2e:.0%} + decode {dec / e2e:.0%})"}
