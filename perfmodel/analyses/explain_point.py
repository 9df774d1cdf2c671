"""One frontier point, term by term: the deployment the envelope picks at a per-user speed, and why.

``point_at(front, x)`` is the frontier's reading at ``x`` tokens/s per user (``frontier.read_at``: the best
throughput at a speed of at least x), i.e. the first envelope point with tps_per_user >= x. ``terms(row)`` lays
that row out in five groups, every value read from the serving layer's own columns (docs/output-columns.md) or a
ratio of two of them, with the columns named beside it:

- deployment: decode instance (gpus, tp, dp, ep, drafts), instances, prefill pool (pf_instances x pf_gpus =
  prefill_gpus), running batch per instance and per GPU (batch / gpus), against max_batch and kv_max_batch;
- sessions: live sessions per decode instance (``sessions``) and per GPU of both pools (``sessions_per_gpu``),
  clients in the serving loop (``concurrency``);
- KV residency: aggregated points give the shares of all sessions (kv_in_hbm_share, kv_in_pool_share,
  kv_in_host_share, evicted_share); disaggregated points give the decoding share batch / sessions (their KV in
  the decode pool's HBM) and, for the sessions - batch others, the shares of their prefixes in the prefill pool's
  cache (kv_in_host_share, evicted_share, the rest in its HBM: serving/sessions.agentic_disaggregated reports
  these two over the non-decoding prefixes), the cache's working set and capacity, prefix_hit, uncached_input;
- prefill and transfer: own prefill, queue wait, utilization, KV transfer and host reload per request, their
  share of the mean TTFT, the prefill pool's share of all GPUs prefill_gpus / (prefill_gpus + decode_gpus);
- step and limit: step_ms = tpot_ms x acceptance_length, the step's resource parts res_*_ms, throughput, and
  ``bound``, the binding limit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..errors import SpecError

TERM_COLUMNS = ["group", "term", "value", "unit", "from"]


def point_at(front: pd.DataFrame, tps_per_user: float) -> pd.Series:
    """The frontier row read at ``tps_per_user`` (tok/s/user): the first point with tps_per_user >= it (the best
    throughput at that speed or faster). SpecError when the curve ends below it."""
    if not (math.isfinite(tps_per_user) and tps_per_user > 0):
        raise SpecError(f"must be a positive number of tok/s/user, got {tps_per_user!r}", field="--explain-at")
    at = front[front["tps_per_user"].to_numpy(float) >= tps_per_user]
    if at.empty:
        raise SpecError(f"the frontier of {front.attrs.get('system', 'this system')} ends at "
                        f"{front['tps_per_user'].max():.1f} tok/s/user, below {tps_per_user:g}", field="--explain-at")
    return at.sort_values("tps_per_user", kind="stable").iloc[0]


def _v(row: Mapping, key: str) -> float:
    try:
        return float(row.get(key))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _ratio(a: float, b: float) -> float:
    return a / b if math.isfinite(a) and math.isfinite(b) and b != 0 else math.nan


Term = tuple[str, Any, str, str]   # (term, value: a number or text, unit, the columns it is read from)


def _deployment(row: Mapping, disagg: bool) -> list[tuple]:
    out: list[Term] = [("serving", row.get("serving"), "mode", "serving"),
           ("GPUs per (decode) instance", _v(row, "gpus"), "GPUs", "gpus"),
           ("attention TP x DP", f"{_v(row, 'tp'):g} x {_v(row, 'dp'):g}", "ranks", "tp, dp"),
           ("expert-parallel width", _v(row, "ep"), "ranks", "ep"),
           ("draft tokens / accepted per step", f"{_v(row, 'spec_tokens'):g} / {_v(row, 'acceptance_length'):.3g}",
            "tokens", "spec_tokens, acceptance_length")]
    if disagg:
        out += [("decode instances", _v(row, "instances"), "instances", "instances"),
                ("decode pool", _v(row, "decode_gpus"), "GPUs", "decode_gpus"),
                ("prefill instances x GPUs each", f"{_v(row, 'pf_instances'):g} x {_v(row, 'pf_gpus'):g} "
                 f"(TP {_v(row, 'pf_tp'):g}, EP {_v(row, 'pf_ep'):g})", "GPUs", "pf_instances, pf_gpus, pf_tp, pf_ep"),
                ("prefill pool", _v(row, "prefill_gpus"), "GPUs", "prefill_gpus")]
    out += [("KV host tier", bool(row.get("kv_host_tier")), "bool", "kv_host_tier"),
            ("running batch per (decode) instance", _v(row, "batch"), "sequences", "batch"),
            ("running batch per (decode) GPU", _ratio(_v(row, "batch"), _v(row, "gpus")), "sequences/GPU",
             "batch / gpus"),
            ("largest batch that fits (KV / running cap)", f"{_v(row, 'kv_max_batch'):g} / {_v(row, 'max_batch'):g}",
             "sequences", "kv_max_batch, max_batch")]
    return [("deployment", *t) for t in out]


def _sessions(row: Mapping) -> list[tuple]:
    out: list[Term] = [("live sessions per (decode) instance", _v(row, "sessions"), "sessions", "sessions"),
           ("live sessions per GPU (both pools)", _v(row, "sessions_per_gpu"), "sessions/GPU", "sessions_per_gpu"),
           ("clients in the serving loop per instance", _v(row, "concurrency"), "requests", "concurrency"),
           ("mean context / uncached input per turn", f"{_v(row, 'isl'):,.0f} / {_v(row, 'uncached_input'):,.0f}",
            "tokens", "isl, uncached_input"),
           ("prefix hit", _v(row, "prefix_hit"), "share", "prefix_hit")]
    return [("sessions", *t) for t in out]


def _residency(row: Mapping, disagg: bool) -> list[tuple]:
    out: list[Term]
    if not disagg:
        out = [("in this instance's HBM", _v(row, "kv_in_hbm_share"), "share of sessions", "kv_in_hbm_share"),
               ("in other GPUs' spare HBM (pool)", _v(row, "kv_in_pool_share"), "share of sessions",
                "kv_in_pool_share"),
               ("in the host tier", _v(row, "kv_in_host_share"), "share of sessions", "kv_in_host_share"),
               ("evicted (re-prefilled next turn)", _v(row, "evicted_share"), "share of sessions", "evicted_share")]
    else:
        host, ev = _v(row, "kv_in_host_share"), _v(row, "evicted_share")
        decoding = _ratio(_v(row, "batch"), _v(row, "sessions"))
        out = [("decoding: KV in the decode pool's HBM", decoding, "share of sessions", "batch / sessions"),
               ("others' prefixes in the prefill pool's HBM", 1 - host - ev, "share of the others",
                "1 - kv_in_host_share - evicted_share"),
               ("others' prefixes in the host tier", host, "share of the others", "kv_in_host_share"),
               ("others' prefixes evicted (re-prefilled next turn)", ev, "share of the others", "evicted_share")]
    out += [("KV of the running batch per GPU / HBM used", f"{_v(row, 'kv_gb_per_gpu'):.4g} / "
             f"{_v(row, 'mem_gb_per_gpu'):.4g}", "GB/GPU", "kv_gb_per_gpu, mem_gb_per_gpu"),
            ("prefix cache: working set / capacity", f"{_v(row, 'cache_working_set_gb_per_gpu'):.4g} / "
             f"{_v(row, 'cache_capacity_gb_per_gpu'):.4g}", "GB/GPU",
             "cache_working_set_gb_per_gpu, cache_capacity_gb_per_gpu"),
            ("KV in the host tier", _v(row, "host_kv_gb_per_gpu"), "GB/GPU", "host_kv_gb_per_gpu")]
    return [("KV residency", *t) for t in out]


def _prefill(row: Mapping, disagg: bool) -> list[tuple]:
    mean = _v(row, "ttft_mean_ms")
    out: list[Term] = [("own prefill per request", _v(row, "prefill_ms"), "ms", "prefill_ms"),
           ("wait for a prefill server", _v(row, "prefill_queue_ms"), "ms", "prefill_queue_ms"),
           ("wait for a running slot", _v(row, "capacity_wait_ms"), "ms", "capacity_wait_ms"),
           ("prefill servers' utilization", _v(row, "prefill_utilization"), "share", "prefill_utilization")]
    if disagg:
        pf, dec = _v(row, "prefill_gpus"), _v(row, "decode_gpus")
        out += [("KV transfer prefill -> decode per request", _v(row, "kv_transfer_ms"), "ms", "kv_transfer_ms"),
                ("KV transfer share of mean TTFT", _ratio(_v(row, "kv_transfer_ms"), mean), "share",
                 "kv_transfer_ms / ttft_mean_ms"),
                ("host-tier reload per request", _v(row, "host_reload_ms"), "ms", "host_reload_ms"),
                ("prefill pool share of all GPUs", _ratio(pf, pf + dec), "share",
                 "prefill_gpus / (prefill_gpus + decode_gpus)")]
    out += [("TTFT mean / P50 / P90", f"{mean:,.0f} / {_v(row, 'ttft_ms'):,.0f} / {_v(row, 'ttft_p90_ms'):,.0f}",
             "ms", "ttft_mean_ms, ttft_ms, ttft_p90_ms")]
    return [("prefill and transfer", *t) for t in out]


def _step(row: Mapping) -> list[tuple]:
    parts = " + ".join(f"{k} {_v(row, f'res_{k}_ms'):.3g}" for k in ("compute", "hbm_bandwidth", "link", "latency"))
    out: list[Term] = [("decode step / TPOT", f"{_v(row, 'step_ms'):.4g} / {_v(row, 'tpot_ms'):.4g}", "ms", "step_ms, tpot_ms"),
           ("step by resource", parts, "ms", "res_compute_ms, res_hbm_bandwidth_ms, res_link_ms, res_latency_ms"),
           ("per-user speed", _v(row, "tps_per_user"), "tok/s/user", "tps_per_user"),
           ("output / total tokens per GPU", f"{_v(row, 'output_tps_per_gpu'):,.0f} / "
            f"{_v(row, 'total_tps_per_gpu'):,.0f}", "tok/s/GPU", "output_tps_per_gpu, total_tps_per_gpu"),
           ("binding limit", row.get("bound"), "resource", "bound")]
    return [("step and limit", *t) for t in out]


def terms(row: Mapping) -> pd.DataFrame:
    """The point's terms (module docstring): columns group, term, value (a number or text), unit, from (the
    serving-layer columns the value is read from)."""
    disagg = str(row.get("serving")) == "disaggregated"
    agentic = math.isfinite(_v(row, "sessions"))
    rows = _deployment(row, disagg)
    if agentic:
        rows += _sessions(row) + _residency(row, disagg)
    rows += _prefill(row, disagg) + _step(row)
    return pd.DataFrame(rows, columns=TERM_COLUMNS)
