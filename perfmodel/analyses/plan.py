"""Capacity planning: demand and SLOs -> the deployment, GPUs, scale-up domains, MW and dollars per system.

For each candidate system the ONE frontier search (analyses/frontier.frontier) gives the Pareto points (throughput
per GPU against tokens/s per user, each with its deployment). Each point is then read as a service under Poisson
arrivals (``serve_points``): an aggregated fixed-length point is offered its own request rate as an open loop
(serving/queueing.py: the batch B = lambda S, the prefill queue, TTFT P50/P90/P99 and the TPOT tail); a
disaggregated point keeps its pools and closed loop; an agentic point its sessions. The rate, and so the
throughput per GPU, is the frontier's (a plan agrees with ``frontier`` at its chosen point by construction).

Symbols (per system, per frontier point j):
    y_j      output tokens/s per GPU (the frontier's output_tps_per_gpu)
    u_j      GPUs of one deployment unit: an instance (aggregated), or a disaggregated split (prefill_gpus +
             decode_gpus)
    r_j      = y_j u_j / osl             requests/s one unit serves
    h        headroom share (the units run at most 1 - h of r_j)
Demand as a request rate lambda_j (``Demand``; the ONE served-capacity law, search/served.py): requests/s as
given; output tokens/s T -> T / osl; output tokens per day -> T / 86400 / osl; N concurrent users -> N / R_j and
N live agent sessions -> N / (R_j + Z) (Little's law), R_j = E[TTFT] + osl E[TPOT] the point's mean response time,
Z the workload's mean tool pause. One unit holds r_j R_j users, r_j (R_j + Z) sessions (both pools of a split).
    n_j      = ceil(lambda_j / (r_j (1 - h)))   units;  G_j = n_j u_j GPUs
The SLO (search.SLO, the search's own) keeps the points whose TTFT, TPOT (or per-user speed) and E2E at the named percentiles meet
it; among them the plan takes the fewest GPUs (ties: the higher y_j). Then
    domains  = ceil(G / D_dom)                     whole scale-up domains (nodes, or NVL racks)
    MW       = G P_allin / 1e6                     all-in W per GPU (hardware allin_power_w; GPU TDP if absent)
    USD/h    = G price;   USD/month = USD/h x 730  (hardware price_usd_per_gpu_hour)
    util     = lambda / (n r)
``*_low`` / ``*_high`` carry the catalog's range where power or price is an estimate, and the 80% band of the
model's held-out error (plan_error.band), whose ends widen where the chosen deployment lies beyond the measured
envelope by the held-out error's growth with distance (envelope_error.band_widening: ``envelope_distance``,
``envelope_widening_low`` / ``_high``, ``envelope``). Without a demand and with a
GPU, MW or USD/h limit, the plan reports what the limit serves (the most units that fit, at the best SLO point).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SpecError
from ..search import SERVED_COLUMNS, SLO, best_index, fewest_index, poisson, slo_infeasible
from ..search.served import demand_rate, response_s, unit_rate, units_needed
from ..serving.dispatch import Pools, Sessions, serve
from .deployments import SERVING_MIX, DeploymentSpace, points
from .evaluation import workload_info
from .frontier import frontier, usual_columns
from .plan_error import DEMAND_KINDS, POWER_BASES, hw_range
from .plan_racks import domains_for, racks_to_add, units_in_domains
from .systems import as_model, as_system

HOURS_PER_MONTH = 730.0

PLAN_COLUMNS = [
    "system", "hardware", "profile", "model", "workload", "status", "period", "demand_scale", "demand_kind",
    "demand_value", "demand_requests_per_s", "demand_output_tps", "serving", "weights", "gpus_per_instance", "tp",
    "dp", "ep", "pp", "spec_tokens", "batch", "pf_gpus", "pf_tp", "pf_ep", "prefill_gpus", "decode_gpus",
    "instances", "pf_instances", "unit_gpus", "units", "gpus", "gpus_low", "gpus_high", "gpus_bias_corrected", "model_over_true",
    "scaleup_domain_gpus",
    "scaleup_domains", "domains_to_add", "gpus_bought", "packing",
    "output_tps_per_gpu", "tps_per_user", "tps_per_user_e2e_p50", "tps_per_user_e2e_p90", "tpot_mean_ms",
    "tpot_p90_ms", "tpot_p99_ms", "ttft_p50_ms", "ttft_p90_ms", "ttft_p99_ms", "e2e_p50_s",
    "ttft_mean_ms", "response_mean_s", "pause_mean_s", "users_per_unit", "sessions_per_unit",
    "serving_sessions_per_gpu",
    "capacity_requests_per_s", "capacity_output_tps", "capacity_output_tps_low", "capacity_output_tps_high",
    "utilization", "mw", "mw_low", "mw_high", "power_w_per_gpu", "power_field", "power_status", "power_basis",
    "usd_per_hour", "usd_per_hour_low", "usd_per_hour_high", "usd_per_month", "price_usd_per_gpu_hour", "price_field",
    "price_status", "price_basis", "usd_per_m_output_tokens",
    "usd_per_m_output_tokens_low", "usd_per_m_output_tokens_high", "usd_per_m_tokens", "joules_per_output_token",
    "error_basis", "envelope_distance", "envelope_widening_low", "envelope_widening_high", "envelope", "slo_margin", "slo_margin_min", "binding"]
"""The plan CSV (``perfmodel plan --csv``): these columns in this order on every run (docs/plan.md gives units)."""


@dataclass(frozen=True)
class Demand:
    """What the service must carry: ``kind`` one of DEMAND_KINDS (requests_per_s: requests/s; output_tps: output
    tokens/s; tokens_per_day: output tokens per day; users: concurrent users, each with one request in flight;
    sessions: live agent sessions of an agentic workload) and its ``value``."""

    kind: str
    value: float

    def __post_init__(self):
        if self.kind not in DEMAND_KINDS:
            raise SpecError(f"unknown demand kind {self.kind!r}; choose from {list(DEMAND_KINDS)}", field="demand")
        if not (math.isfinite(self.value) and self.value > 0):
            raise SpecError(f"must be a positive number, got {self.value!r}", field=f"demand.{self.kind}")


@dataclass(frozen=True)
class Limits:
    """Optional caps on the whole plan: ``gpus``, ``mw`` (all-in MW), ``usd_per_hour``; ``headroom`` the share of
    each unit's rate kept free (0 <= headroom < 1)."""

    gpus: int | None = None
    mw: float | None = None
    usd_per_hour: float | None = None
    headroom: float = 0.0

    def __post_init__(self):
        if not 0 <= self.headroom < 1:
            raise SpecError(f"must lie in [0, 1), got {self.headroom!r}", field="headroom")
        for name in ("gpus", "mw", "usd_per_hour"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v > 0):
                raise SpecError(f"must be a positive number, got {v!r}", field=f"limits.{name}")

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.gpus, self.mw, self.usd_per_hour))


def serve_points(sysm, m, workload, front: pd.DataFrame, kv_cache: str) -> pd.DataFrame:
    """The frontier's points served under Poisson arrivals (search/served.poisson, the function the search's
    SLO cut uses): TTFT P50/P90/P99 and mean, TPOT mean/P90/P99, the E2E-normalised speeds, at each point's own
    request rate. An agentic point is evaluated again as sessions on its own pools (``Sessions``, as the frontier
    evaluates it), a disaggregated fixed-length one on its pools. One
    call per weight format, serving mode and KV host tier; returns a frame aligned with ``front``."""
    wl = workload_info(workload)
    out = pd.DataFrame(index=front.index, columns=list(SERVED_COLUMNS), dtype=float)
    rows = front.rename(columns={"acceptance_length": "acc"})
    if "kv_host_tier" not in rows:
        rows = rows.assign(kv_host_tier=False)
    for (weights, serving, tier), idx in rows.groupby(["weights", "serving", "kv_host_tier"], sort=False
                                                      ).groups.items():
        sub = rows.loc[idx]
        setup = sysm.setup(m, weights=weights, kv_cache=kv_cache,
                           attention_weights=sub["attention_weights"].iloc[0])
        pts = {**points(sub, wl.lengths), "mix": SERVING_MIX[serving]}
        pools = None
        if serving == "disaggregated":       # the pools as the frontier chose them
            pools = Pools(*(sub[c].to_numpy(float) for c in ("pf_gpus", "pf_tp", "pf_ep", "instances",
                                                              "pf_instances")))
        if wl.agentic and serving != "decode_only":
            closed = serve(setup, pts, serving, pools=pools, sessions=Sessions(wl.pause_s, bool(tier), wl.dists))
        elif serving == "disaggregated":
            closed = serve(setup, pts, "disaggregated", pools=pools)
        else:
            closed = sub.reset_index(drop=True)
        got = poisson(setup, pts, closed, serving, wl.agentic, sub["gpus"].to_numpy(float), wl.lengths["osl"])
        for c in out.columns:
            out.loc[idx, c] = got[c].to_numpy(float)
    return out


def _unit_gpus(front: pd.DataFrame) -> np.ndarray:
    """GPUs of one deployment unit: the instance, or both pools of a disaggregated split."""
    g = front["gpus"].to_numpy(float)
    if "prefill_gpus" in front:
        split = front["prefill_gpus"].to_numpy(float) + front["decode_gpus"].to_numpy(float)
        g = np.where(np.isfinite(split) & (front["serving"] == "disaggregated").to_numpy(), split, g)
    return g


def plan(model, workload, systems, demand: Demand | None = None, slo: SLO = SLO(),
         scales=(1.0,), limits: Limits = Limits(), *, weights=("fp8",), kv_cache: str = "fp8",
         space: DeploymentSpace | None = None, power_basis: str = "board",
         periods: list[str] | None = None) -> pd.DataFrame:
    """One row per (system, demand scale): PLAN_COLUMNS (module docstring). ``systems``: ``System`` objects or
    ``HARDWARE[:PROFILE]`` strings. Without ``demand`` a limit (GPUs, MW or USD/h) is required and each row is
    what that limit serves. ``power_basis``: board (all-in per GPU), tdp or measured (``plan_error.power``);
    ``periods``: one label per scale (a demand over time, ``--demand-file``). Raises SpecError (one line) when no
    system meets the SLO, naming it and the best value any deployment reaches."""
    if power_basis not in POWER_BASES:
        raise SpecError(f"unknown power basis {power_basis!r}; choose from {list(POWER_BASES)}", field="power_basis")
    if periods is not None and len(periods) != len(scales):
        raise SpecError(f"{len(periods)} periods for {len(scales)} demand values", field="periods")
    if demand is None and not limits.any:
        raise SpecError("give a demand (requests/s, output tokens/s, tokens/day, users or sessions) or a limit "
                        "(GPUs, MW or USD/h) to fill", field="demand")
    scales = tuple(float(s) for s in scales)
    if not scales or any(not (math.isfinite(s) and s > 0) for s in scales):
        raise SpecError(f"demand scales must be positive numbers, got {scales!r}", field="demand_scale")
    m = as_model(model)
    wl = workload_info(workload)
    if demand is not None and demand.kind == "sessions" and not wl.agentic:
        raise SpecError("live sessions need an agentic workload; for a fixed workload give users",
                        field="demand.sessions")
    osl = wl.lengths["osl"]
    slo_space = DeploymentSpace(**{**(space or DeploymentSpace()).__dict__, "slo": slo})
    rows, errors = [], []
    for s in systems:
        sysm = as_system(s)
        try:
            full = frontier(sysm, m, workload, weights=weights, kv_cache=kv_cache, space=slo_space,
                            metric="output_tps_per_gpu", all_columns=True).reset_index(drop=True)
        except SpecError as exc:
            errors.append(exc.problem if exc.field == "slo" else exc.line())
            continue
        front = usual_columns(full)         # the points as frontier gives them; ``full`` adds the serving columns
        served = serve_points(sysm, m, workload, front, kv_cache)
        ok, terms = slo.mask(served, osl)   # the search kept only points meeting it: re-served, the same values
        if not ok.any():
            errors.append(slo_infeasible(slo, {k: {"best": np.nanmin(v) if np.isfinite(v).any() else np.inf}
                                               for k, (v, _lim) in terms.items()}, sysm.name))
            continue
        got = _rows_for(sysm, m, wl, front, served, ok, terms, demand, scales, limits, slo, power_basis, full)
        for row, per in zip(got, list(periods) if periods is not None else [None] * len(got)):
            row["period"] = per
        if periods is not None:
            for row, add in zip(got, racks_to_add([row["scaleup_domains"] for row in got])):
                row["domains_to_add"] = add
        rows += got
    if not rows:
        raise SpecError(" | ".join(errors) if errors else "no system to plan", field="slo")
    out = pd.DataFrame(rows)
    for c in PLAN_COLUMNS:
        if c not in out:
            out[c] = np.nan
    out = out[PLAN_COLUMNS]
    out.attrs.update(slo=slo.text(), errors=errors, workload=wl.name)
    return out


def _rows_for(sysm, m, wl, front, served, ok, terms, demand, scales, limits, slo, power_basis="board",
              full=None) -> list[dict]:
    """One row per demand scale: the demand as a request rate per point (search/served.demand_rate, the one
    served-capacity law), the fewest GPUs in whole units among the points meeting the SLO. ``full``: the same
    frontier with its serving columns (``frontier(..., all_columns=True)``), which the measured envelope reads."""
    from .plan_error import power as power_of
    osl = wl.lengths["osl"]
    y = front["output_tps_per_gpu"].to_numpy(float)
    u = _unit_gpus(front)
    r = unit_rate(y, u, osl)                                     # requests/s per unit
    resp = response_s(served["ttft_mean_ms"].to_numpy(float), served["tpot_ms"].to_numpy(float), osl)
    fields = sysm.fields()
    domain = float(fields["scaleup_domain_gpus"])
    power, p_low, p_high, p_basis = power_of(sysm, power_basis)
    price = sysm.price()
    if price is not None:
        c_low, c_high, c_basis = hw_range(sysm, "price_usd_per_gpu_hour", float(price))
    else:
        c_low = c_high = np.nan
        c_basis = "no price in the hardware catalog"
    best_y = np.nanmax(np.where(ok, y, np.nan))
    per_gpu = _per_gpu_capacity(demand, y, r, u, resp, wl.pause_s)
    out = []
    for scale in scales:
        if demand is None:
            units, req = _units_within(limits, u, power, price, domain), None
        else:
            req = np.broadcast_to(demand_rate(demand.kind, demand.value * scale, osl, resp, wl.pause_s),
                                  r.shape).astype(float)
            units = units_needed(req, r, limits.headroom)
        gpus = units * u
        cand = ok & np.isfinite(gpus) & (units >= 1)
        if not cand.any():
            raise SpecError(f"{sysm.name}: no point meeting the SLO has a finite mean response time to size "
                            f"{demand.kind if demand else 'the limit'} on", field="demand")
        if demand is None:
            j = best_index(units * r, cand)                           # the most traffic within the limit
        else:
            j = fewest_index(gpus - 1e-6 * y / max(best_y, 1e-300), cand)
        g = float(gpus[j])
        row = _row(sysm, front.iloc[j], served.iloc[j], wl, demand, scale, units[j], u[j], g, domain, r[j])
        bought = row["gpus_bought"]                      # MW and $ follow the domains bought (plan_racks.py)
        dem_req = float(req[j]) if req is not None else float(units[j] * r[j])
        row.update(demand_requests_per_s=dem_req, demand_output_tps=dem_req * osl,
                   utilization=dem_req / (units[j] * r[j]) if units[j] > 0 else np.nan,
                   mw=bought * power / 1e6, power_basis=p_basis, usd_per_hour=bought * price if price else np.nan,
                   usd_per_month=bought * price * HOURS_PER_MONTH if price else np.nan, price_basis=c_basis,
                   **_basis_fields("power", power, p_basis), **_basis_fields("price", price, c_basis))
        row.update(_little(r[j], resp[j], wl))
        row.update(_per_token(row, wl))
        row.update(_interval(row, front if full is None else full, j, wl, demand, req, u[j], r[j],
                             limits.headroom, (p_low, p_high), (c_low, c_high), domain))
        row.update(_margin(terms, j))
        row["binding"] = _binding(j, per_gpu, ok, terms, front)
        row["status"] = _limit_status(row, limits) if demand is not None else "ok"
        out.append(row)
    return out


def _basis_fields(kind: str, value, text: str) -> dict:
    """A basis split into value, field and status: 'allin_power_w 1972 (estimate)' -> 1972, allin_power_w,
    estimate; a fallback or measured basis keeps its text in ``*_basis`` and names its status here."""
    key = "power_w_per_gpu" if kind == "power" else "price_usd_per_gpu_hour"
    v = float(value) if value is not None else np.nan
    m = re.search(r"([a-z_]+) [0-9.e+]+ \(([^)]*)\)\s*$", text)
    if text.startswith("measured"):
        field, status = "measured-power/power.yaml", "measured"
    elif m is not None:
        field, status = m.group(1), m.group(2)
    else:
        field, status = "", text
    if text.startswith("FALLBACK"):
        status = f"fallback: {status}"
    return {key: v, f"{kind}_field": field, f"{kind}_status": status}


def _margin(terms: dict, j: int) -> dict:
    """The chosen point's SLO margin: per term (lim - v) / lim, the share of each limit left unused (a speed floor
    read as ms per token); ``slo_margin_min`` the smallest (NaN without an SLO)."""
    m = {k: (lim - float(v[j])) / lim for k, (v, lim) in terms.items()}
    return {"slo_margin": ", ".join(f"{k} {x:.1%}" for k, x in m.items()) or "no SLO",
            "slo_margin_min": min(m.values()) if m else np.nan}


def _per_gpu_capacity(demand, y, r, u, resp, pause_s) -> np.ndarray:
    """Capacity per GPU in the demand's own unit at each point: output tokens/s (a rate demand or a limit), users
    r R / u, or sessions r (R + Z) / u (search/served.py)."""
    if demand is None or demand.kind not in ("users", "sessions"):
        return y
    from ..search.served import cycle_s
    return r * cycle_s(demand.kind, resp, pause_s) / u


def _little(r_j: float, resp_j: float, wl) -> dict:
    """The Little's-law columns of the chosen point: mean response time R, the mean pause Z (agentic), and what
    one unit holds at capacity: r R users (requests in flight), r (R + Z) sessions (agentic workloads)."""
    pause = wl.pause_s if wl.agentic else 0.0
    return {"response_mean_s": resp_j, "pause_mean_s": pause, "users_per_unit": r_j * resp_j,
            "sessions_per_unit": r_j * (resp_j + pause) if wl.agentic else np.nan}


def _interval(row: dict, front, j, wl, demand, req, u_j, r_j, headroom, p_rng, c_rng, domain) -> dict:
    """The 80% interval of the model's cross-validated throughput error on GPUs, capacity, MW and $/M output
    tokens (``plan_error``: true throughput in [y lo, y hi]; the units at each end re-sized by the same law for
    the same request rate, ``units_needed(lambda, r k)``). Beyond the measured envelope the band is
    [lo / W_low, hi W_high] (envelope_error.band_widening: the held-out error's growth with distance); the central
    count and the count to sign do not read them."""
    from .envelope_error import band_widening
    from .plan_error import band, measured_hardware
    f = front.iloc[j]
    b = band(float(f["batch"]) if "batch" in f.index else None, wl.agentic,
             str(row["hardware"]) in measured_hardware())
    dist, w_low, w_high, outside = band_widening(f)
    b = {**b, "lo": b["lo"] / w_low, "hi": b["hi"] * w_high}
    cap = row["capacity_output_tps"]
    if demand is None:
        n_lo = n_hi = n_mid = row["units"]
    else:
        n_lo = float(units_needed(req[j], r_j * b["hi"], headroom))
        n_hi = float(units_needed(req[j], r_j * b["lo"], headroom))
        n_mid = float(units_needed(req[j], r_j * b["mid"], headroom))
    inst = _instance_sizes(row)
    bought_lo = domains_for(n_lo, u_j, domain, inst)[0] * domain       # the racks each end buys
    bought_hi = domains_for(n_hi, u_j, domain, inst)[0] * domain
    t_out = row["demand_output_tps"]
    out = {"gpus_low": int(n_lo * u_j), "gpus_high": int(n_hi * u_j), "gpus_bias_corrected": int(n_mid * u_j),
           "model_over_true": 1.0 / b["mid"], "capacity_output_tps_low": cap * b["lo"],
           "capacity_output_tps_high": cap * b["hi"], "mw_low": bought_lo * p_rng[0] / 1e6,
           "mw_high": bought_hi * p_rng[1] / 1e6, "usd_per_hour_low": bought_lo * c_rng[0],
           "usd_per_hour_high": bought_hi * c_rng[1], "error_basis": b["text"], "envelope_distance": dist,
           "envelope_widening_low": w_low, "envelope_widening_high": w_high, "envelope": outside}
    ok = t_out > 0 and np.isfinite(c_rng[0])
    out["usd_per_m_output_tokens_low"] = bought_lo * c_rng[0] / (3600.0 * t_out) * 1e6 if ok else np.nan
    out["usd_per_m_output_tokens_high"] = bought_hi * c_rng[1] / (3600.0 * t_out) * 1e6 if ok else np.nan
    return out


def _per_token(row: dict, wl) -> dict:
    """Cost and energy per token served at the demand (idle headroom included, as it is paid for):
        usd_per_m_output_tokens = USD/h / (3600 T_out) x 1e6          T_out output tokens/s of the demand
        usd_per_m_tokens        = USD/h / (3600 T_out (isl + osl) / osl) x 1e6   input + output tokens
        joules_per_output_token = MW x 1e6 / T_out                    all-in W over output tokens/s"""
    t_out = row["demand_output_tps"]
    both = t_out * (wl.lengths["isl"] + wl.lengths["osl"]) / wl.lengths["osl"]
    usd = row["usd_per_hour"]
    return {"usd_per_m_output_tokens": usd / (3600.0 * t_out) * 1e6 if t_out > 0 else np.nan,
            "usd_per_m_tokens": usd / (3600.0 * both) * 1e6 if both > 0 else np.nan,
            "joules_per_output_token": row["mw"] * 1e6 / t_out if t_out > 0 else np.nan}


def _units_within(limits: Limits, u, power, price, domain: float) -> np.ndarray:
    """Units of each point that fit under every given limit (GPUs, MW, USD/h), counted on the whole domains they
    are bought in (plan_racks.units_in_domains; a unit larger than a domain takes at least ceil(u / D) of them)."""
    caps = []
    if limits.gpus is not None:
        caps.append(limits.gpus)
    if limits.mw is not None:
        caps.append(limits.mw * 1e6 / power)
    if limits.usd_per_hour is not None and price:
        caps.append(limits.usd_per_hour / price)
    if not caps:
        raise SpecError("the system has no price_usd_per_gpu_hour: a USD/h limit cannot be filled",
                        field="limits.usd_per_hour")
    u = np.asarray(u, float)
    return units_in_domains(np.floor(min(caps) / domain + 1e-9), u, domain, np.ceil(u / domain - 1e-9))


def _limit_status(row: dict, limits: Limits) -> str:
    over = [name for name, v, lim in (("gpus", row["gpus_bought"], limits.gpus), ("mw", row["mw"], limits.mw),
                                      ("usd_per_hour", row["usd_per_hour"], limits.usd_per_hour))
            if lim is not None and v > lim * (1 + 1e-9)]
    return "ok" if not over else "over limit: " + ", ".join(over)


def _binding(j, y, ok, terms, front) -> str:
    """What binds at the chosen point: instance granularity (a point of higher capacity per GPU meets the SLO but
    needs more GPUs in whole units); an SLO term (the search dropped a point of higher output tokens/s per GPU
    for failing it: ``slo:<term>``; ``queue`` when that point has no steady state under Poisson arrivals); or
    the peak; with the point's binding resource. ``y``: capacity per GPU in the demand's unit at each point."""
    resource = str(front["bound"].iloc[j]) if "bound" in front else ""
    higher = y > y[j] * (1 + 1e-9)
    if (higher & ok).any():
        return f"granularity (whole instances); {resource}"
    here = float(front["output_tps_per_gpu"].iloc[j])
    stats = front.attrs.get("slo_stats", {})
    fail = [k for k, s in stats.items() if k != "queue" and s["dropped"] > here * (1 + 1e-9)]
    if "queue" in stats and stats["queue"]["dropped"] > here * (1 + 1e-9) and \
            stats["queue"]["dropped"] >= max([stats[k]["dropped"] for k in fail], default=-np.inf):
        return f"queue (no steady state under Poisson arrivals at a higher rate); {resource}"
    if fail:
        return "slo:" + ",".join(fail) + f"; {resource}"
    return f"peak; {resource}"


def _row(sysm, f, s, wl, demand, scale, units, unit_gpus, gpus, domain, r) -> dict:
    get = lambda c: f[c] if c in f.index else np.nan  # noqa: E731
    row = _row_fields(sysm, f, s, wl, demand, scale, units, unit_gpus, gpus, domain, r, get)
    n, rule = domains_for(float(units), float(unit_gpus), domain, _instance_sizes(row))
    row.update(scaleup_domains=n, gpus_bought=int(n * domain), packing=rule)
    return row


def _instance_sizes(row: dict) -> tuple[tuple[float, float], ...]:
    """(GPUs per instance, instances per unit) of a split's pools; () for an aggregated unit."""
    if row["serving"] != "disaggregated" or not np.isfinite(row.get("instances", np.nan)):
        return ()
    return ((float(row["gpus_per_instance"]), float(row["instances"])),
            (float(row["pf_gpus"]), float(row["pf_instances"])))


def _row_fields(sysm, f, s, wl, demand, scale, units, unit_gpus, gpus, domain, r, get) -> dict:
    return {
        "system": sysm.name, "hardware": f["hardware"], "profile": f["profile"], "model": f["model"],
        "workload": wl.name, "demand_scale": scale,
        "demand_kind": demand.kind if demand is not None else "limit",
        "demand_value": demand.value * scale if demand is not None else np.nan,
        "serving": f["serving"], "weights": f["weights"], "gpus_per_instance": f["gpus"], "tp": f["tp"],
        "dp": get("dp"), "ep": f["ep"], "pp": f["pp"], "spec_tokens": f["spec_tokens"], "batch": f["batch"],
        "pf_gpus": get("pf_gpus"), "pf_tp": get("pf_tp"), "pf_ep": get("pf_ep"),
        "prefill_gpus": get("prefill_gpus"), "decode_gpus": get("decode_gpus"), "unit_gpus": unit_gpus,
        "units": int(units), "gpus": int(gpus), "scaleup_domain_gpus": domain,
        "instances": get("instances") if f["serving"] == "disaggregated" else np.nan,
        "pf_instances": get("pf_instances") if f["serving"] == "disaggregated" else np.nan,
        "output_tps_per_gpu": f["output_tps_per_gpu"], "tps_per_user": 1000.0 / s["tpot_ms"],
        "tps_per_user_e2e_p50": s["tps_per_user_e2e_p50"], "tps_per_user_e2e_p90": s["tps_per_user_e2e_p90"],
        "tpot_mean_ms": s["tpot_ms"], "tpot_p90_ms": s["tpot_p90_ms"], "tpot_p99_ms": s["tpot_p99_ms"],
        "ttft_p50_ms": s["ttft_ms"],
        "ttft_p90_ms": s["ttft_p90_ms"], "ttft_p99_ms": s["ttft_p99_ms"], "ttft_mean_ms": s["ttft_mean_ms"],
        "e2e_p50_s": s["ttft_ms"] / 1e3 + wl.lengths["osl"] * s["tpot_ms"] / 1e3,
        "serving_sessions_per_gpu": get("sessions_per_gpu"),
        "capacity_requests_per_s": float(units) * r, "capacity_output_tps": float(units) * r * wl.lengths["osl"],
    }
