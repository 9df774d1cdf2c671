"""Disaggregated pool search: the prefill pool's layout and both pools' instance counts, vectorized.

A disaggregated deployment is ``instances`` (n_d) decode instances of D GPUs each (the decode layout of the
operating point) fed by ``pf_instances`` (n_p) prefill instances of P GPUs each with their own layout
(pf_tp, pf_ep, attention-DP pf_dp = P / pf_tp). Units: seconds, requests/s, GPUs.

Prefill layouts (``prefill_capability``): per candidate layout j,
    r_j   = T_j / (new t_pf(T_j))            requests/s one prefill instance serves, T_j = max(8192 P_j, new)
                                              tokens per prefill step taking t_pf(T_j) s (engine/evaluate.py)
    l_j   = t_pf(new)                        one request's prefill alone (its share of TTFT)
    fits  = weights plus one sequence's KV per attention-DP rank fit in HBM (the decode probe at batch = dp)
Only layouts no other layout beats on both r_j / P_j (up) and P_j (down) are searched (``prefill_front``;
among equals the lowest l_j): a layout with lower throughput per GPU and no finer granularity never gives a
higher throughput per GPU.

Rate matching (``size_pools``), per decode operating point (batch B per instance, step s, acc accepted
tokens per step) and prefill layout j:
    S     = l_j + t_kv + osl s / acc         a request's slot time in the decode pool (t_kv: KV transfer)
    a     = B / S                            requests/s one decode instance consumes
    n_p   = floor(n_d a / r_j) or ceil(...)  (at least 1): the prefill instances bracketing the demand
    X     = min(n_d a, n_p r_j)              requests/s of the deployment: the slower pool sets it
    y     = X (isl + osl) / (n_d D + n_p P_j)   tokens/s per GPU (all GPUs of both pools)
n_d runs over DECODE_COUNTS, (n_d, n_p, j) must satisfy n_d D + n_p P_j <= the GPU budget (and, under a TTFT
limit T, n_p r_j >= n_d a and l_j + t_kv + s <= T, with latency a third criterion of ``prefill_front``; the
queue then may still hold TTFT above T, so n_p + 1, 2, 4, 8 are tried through the closed loop until it is met,
TTFT_EXTRA_PREFILL), and the choice
with the highest y is kept (ties: the lower l_j + t_kv, then the fewer GPUs). Rate matching is therefore
enforced by construction: the prefill pool is the integer count closest to the decode demand on either
side (only the ceiling, n_p r >= n_d a, under a TTFT limit: ``PoolSearch.keep_up``); when it is the floor,
the deployment runs at the prefill pool's rate, and the closed loop
(serving/queueing.closed_loop, called once on the chosen counts) reports it as bound ``prefill_pool``.
The x axis of the frontier (tokens/s per user = acc / s) does not depend on the prefill pool, so keeping
only the best y per decode point loses no point of the envelope for any per-GPU metric (they are all
proportional to y on one system).

GPU budget: both pools inside the scale-up domain when it is large (an NVL72 rack: KV moves over NVLink),
else up to ``budget`` GPUs across nodes (KV over the NIC: serving/disaggregated._pool_transfer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engine.compiled import compiled
from ..engine.evaluate import Setup, point_arrays, prefill_inputs, prefill_step
from ..errors import SpecError
from .aggregated import evaluate
from .disaggregated import closed_loop_pools, request_kv_bytes, transfer_bandwidth

if TYPE_CHECKING:
    import pandas as pd

DECODE_COUNTS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)
TTFT_EXTRA_PREFILL = (1, 2, 4, 8)   # prefill instances added, in turn, until the closed-loop TTFT meets a limit
DEFAULT_CLUSTER_GPUS = 64     # across nodes over the NIC when the scale-up domain is smaller (8 nodes of 8)


@dataclass(frozen=True)
class PoolSearch:
    """Prefill layouts to choose from (columns gpus, tp, ep; pp = 1) and the GPU budget of both pools."""

    layouts: pd.DataFrame
    budget: int
    keep_up: bool = False      # only splits whose prefill pool keeps up with decode (n_p r >= n_d a): a TTFT SLO
    max_ttft_s: float | None = None   # TTFT SLO: prefill layouts are searched on latency too, and a split whose
                                      # own prefill + KV transfer alone exceeds it is dropped

    def __post_init__(self):
        if self.layouts.empty:
            raise SpecError("no prefill layout to search", field="prefill")
        if self.budget < 2:
            raise SpecError(f"a disaggregated deployment needs at least 2 GPUs (budget {self.budget})",
                            field="max_disagg_gpus")


def cluster_budget(domain: int, max_gpus: int | None = None) -> int:
    """GPUs both pools may use: ``max_gpus`` if given, else the domain or DEFAULT_CLUSTER_GPUS if larger."""
    return int(max_gpus) if max_gpus else max(int(domain), DEFAULT_CLUSTER_GPUS)


def prefill_capability(setup: Setup, layouts: pd.DataFrame, lengths: dict, vals: dict | None = None) -> pd.DataFrame:
    """Per prefill layout: ``rate_per_s`` (r_j, one instance), ``latency_s`` (l_j) and ``fits``."""
    vals = vals if vals is not None else setup.symbol_values()
    n = len(layouts)
    g, tp, ep = (layouts[c].to_numpy(float) for c in ("gpus", "tp", "ep"))
    pts = point_arrays({"batch": g / tp, "gpus": g, "tp": tp, "ep": ep, "pp": 1.0, "spec_tokens": 0.0, "acc": 1.0,
                   "mix": 0.0, **lengths})
    probe = evaluate(setup, pts, symbol_values=vals)
    one = np.broadcast_to(np.asarray(compiled(setup.model).prefill(prefill_inputs(pts, vals))["prefill_s"], float),
                          (n,))
    tok, step = prefill_step(setup, pts, vals)
    rate = tok / np.maximum(pts["new"], 1.0) / step
    return layouts.assign(rate_per_s=np.broadcast_to(rate, (n,)), latency_s=one,
                          fits=probe["fits"].to_numpy()).reset_index(drop=True)


def prefill_front(cap: pd.DataFrame, latency: bool = False) -> pd.DataFrame:
    """Fitting layouts not dominated on (rate per GPU up, GPUs down), ties broken by the lower latency; with
    ``latency`` (a TTFT limit) on (rate per GPU up, GPUs down, latency down).

    Throughput per GPU and granularity (the integer counts round in steps of P GPUs) set an operating point's
    throughput; the latency only adds to the slot time and TTFT, so without a TTFT limit it picks among equals.
    Exact O(n^2) on a small table (the layouts of one domain)."""
    c = cap[cap["fits"]].sort_values(["gpus", "latency_s"])
    c = c.drop_duplicates(["gpus", "rate_per_s"] + (["latency_s"] if latency else [])).reset_index(drop=True)
    if c.empty:
        return c
    crit = [c["rate_per_s"].to_numpy() / c["gpus"].to_numpy(), -c["gpus"].to_numpy()]
    if latency:
        crit.append(-c["latency_s"].to_numpy())
    ge = np.logical_and.reduce([v[None, :] >= v[:, None] for v in crit])
    gt = np.logical_or.reduce([v[None, :] > v[:, None] for v in crit])
    return c[~(ge & gt).any(axis=1)].reset_index(drop=True)


def size_pools(D, front: pd.DataFrame, demand, tokens, domain: float, budget: int, keep_up: bool = False,
               max_own=np.inf):
    """Best (layout index j, n_d, n_p, y) per point (``size_pools`` in the module docstring).

    ``demand(j)`` -> (a_in, a_out, own_in, own_out): requests/s one decode instance consumes and the request's
    prefill + KV transfer (s), per point, with both pools inside one scale-up domain (transfer over the link) or
    not (over the NIC). ``tokens``: isl + osl per point. ``keep_up``: drop the splits whose prefill pool is the
    slower (its queue, and TTFT, grow with the load); ``max_own``: drop splits whose prefill + transfer alone
    exceed it (s, per point). Loops over the few prefill layouts, never over points."""
    D = np.asarray(D, float)
    n = len(D)
    rows = np.arange(n)
    tokens = np.broadcast_to(np.asarray(tokens, float), (n,))[:, None]
    nd = np.asarray(DECODE_COUNTS, float)[None, :]                     # (1, c)
    best_y, best_own = np.full(n, -np.inf), np.full(n, np.inf)
    best = np.zeros((n, 3))                                            # j, n_d, n_p
    for j, (P, r) in enumerate(zip(front["gpus"].to_numpy(float), front["rate_per_s"].to_numpy(float))):
        a_in, a_out, own_in, own_out = demand(j)
        need = nd * a_in[:, None] / r                                  # prefill instances the demand needs
        for npf in (np.maximum(np.floor(need + 1e-9), 1.0), np.ceil(need - 1e-9)):
            total = nd * D[:, None] + npf * P
            inside = total <= domain
            x = np.minimum(nd * np.where(inside, a_in[:, None], a_out[:, None]), npf * r)
            allowed = (total <= budget) & (npf >= 1)
            if keep_up:
                allowed &= npf * r >= nd * np.where(inside, a_in[:, None], a_out[:, None]) * (1 - 1e-9)
            allowed &= np.where(inside, own_in[:, None], own_out[:, None]) <= np.reshape(max_own, (-1, 1))
            y = np.where(allowed, x * tokens / total, -np.inf)
            k = np.argmax(y, axis=1)                                   # first max: the fewest decode instances
            yk = y[rows, k]
            ownk = np.where(inside[rows, k], own_in, own_out)
            better = np.isfinite(yk) & ((yk > best_y * (1 + 1e-9)) | ((yk >= best_y * (1 - 1e-9)) & (ownk < best_own)))
            best_y, best_own = np.where(better, yk, best_y), np.where(better, ownk, best_own)
            best[better] = np.stack([np.full(n, j), nd[0, k], npf[rows, k]], 1)[better]
    return best[:, 0].astype(int), best[:, 1], best[:, 2], best_y


def disaggregated_search(setup: Setup, points: dict, search: PoolSearch, symbol_values: dict | None = None
                         ) -> pd.DataFrame:
    """Decode operating points (``points``: the decode layout and batch per point) with the prefill layout and both
    pools' counts chosen by ``size_pools``; TTFT, throughput and bound from the closed loop on the chosen counts.
    Adds ``pool_fits`` (a split within the budget exists) and folds it into ``fits``/``fit_reason``."""
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    p = point_arrays({**points, "mix": 0.0})
    dec = evaluate(setup, p, symbol_values=vals)
    p["batch"] = dec["batch"].to_numpy(float)
    lengths = {k: float(np.asarray(p[k]).flat[0]) for k in ("isl", "osl", "new")}
    # the prefill table is per layout: with per-point parameter arrays (a Monte Carlo band) the pool is chosen
    # at the profile's central values and then evaluated at every point's own
    scalar = all(np.ndim(v) == 0 for v in vals.values())
    front = prefill_front(prefill_capability(setup, search.layouts, lengths, vals if scalar else None),
                          latency=search.max_ttft_s is not None)
    if front.empty:
        raise SpecError(f"{setup.model.id} fits in no prefill layout on {setup.hardware.id}", field="prefill")
    osl_t = p["osl"] * dec["step_ms"].to_numpy() / 1e3 / p["acc"]
    kvb = request_kv_bytes(setup, p["isl"])
    lat, gp = front["latency_s"].to_numpy(float), front["gpus"].to_numpy(float)
    per_bw = lambda bw: kvb / (bw * vals["e_ln"])                      # noqa: E731  (s per GPU of links)

    def demand(j):
        own_in = lat[j] + per_bw(transfer_bandwidth(setup, vals, True)) / gp[j]
        own_out = lat[j] + per_bw(vals["BW_nic"]) / gp[j]
        return p["batch"] / (own_in + osl_t), p["batch"] / (own_out + osl_t), own_in, own_out

    step = dec["step_ms"].to_numpy() / 1e3
    max_own = np.inf if search.max_ttft_s is None else search.max_ttft_s - step   # TTFT >= own + one step
    j, nd, npf, y = size_pools(p["gpus"], front, demand, p["isl"] + p["osl"], float(np.max(vals["D_dom"])),
                               search.budget, search.keep_up, max_own)
    ok = np.isfinite(y)
    nd, npf = np.where(ok, nd, 1.0), np.where(ok, npf, 1.0)
    pf = {k: front[k].to_numpy(float)[j] for k in ("gpus", "tp", "ep")}
    out = closed_loop_pools(setup, p, dec, pf, nd, npf, vals)
    if search.max_ttft_s is not None:
        # the prefill queue grows as rho -> 1: try a few more prefill instances (within the budget) and keep,
        # per point, the highest throughput per GPU whose closed-loop TTFT meets the limit
        limit_ms = search.max_ttft_s * 1e3
        meets = out["ttft_ms"].to_numpy() <= limit_ms
        for extra in TTFT_EXTRA_PREFILL:
            more = npf + extra
            room = nd * p["gpus"] + more * pf["gpus"] <= search.budget
            if not (room & ~meets).any():
                continue
            alt = closed_loop_pools(setup, p, dec, pf, nd, np.where(room, more, npf), vals)
            take = room & ~meets & (alt["ttft_ms"].to_numpy() <= limit_ms)
            if take.any():
                import pandas as pd
                out = out.where(~pd.Series(take, index=out.index), alt, axis=0)
                npf = np.where(take, more, npf)
                meets = meets | take
    fits = out["fits"].to_numpy() & ok
    reason = out["fit_reason"].to_numpy(object).copy()
    small = ~ok & out["fits"].to_numpy()
    if small.any() and search.max_ttft_s is None:
        reason[small] = [f"decode instance of {g:.0f} GPUs plus the smallest fitting prefill instance "
                         f"({gp.min():.0f} GPUs) exceed the {search.budget}-GPU budget" for g in p["gpus"][small]]
    elif small.any() and search.max_ttft_s is not None:
        reason[small] = (f"no split within the {search.budget}-GPU budget whose prefill pool keeps up and whose "
                         f"prefill + KV transfer leave TTFT under {search.max_ttft_s * 1e3:g} ms")
    out["pool_fits"], out["fits"], out["fit_reason"] = ok, fits, reason
    out["bound"] = np.where(ok, out["bound"], "pool_budget")
    return out
