"""The declared result of a prediction: every output column once, with its unit, meaning and the serving modes
that fill it.

``COLUMNS`` is the one schema of a predicted operating point (``api.predict``'s row, the engine frames behind the
frontier and validation). A name with ``{...}`` is a family (e.g. ``t_{component}_ms``: one column per kernel
component of the model). ``modes`` lists which of ``MODES`` fill the column; ``when`` says when a column of a mode
is present only in some calls (empty: always). ``perfmodel predict --json`` orders its record by this schema and
docs/output-columns.md's column table is generated from it (``readme_block``; tests/test_result_schema.py checks both
and that every column any path produces is declared).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MODES = ("aggregated", "decode_only", "prefill_only", "disaggregated", "agentic", "agentic_disaggregated")
"""Serving modes of a prediction: deployment.serving for a fixed workload; ``agentic`` = sessions of an agentic
workload served aggregated, ``agentic_disaggregated`` = sessions on a prefill and a decode pool."""

ALL = MODES
STEP = MODES                                  # every point evaluates the step equations
POOLS = ("disaggregated", "agentic_disaggregated")
SESSIONS = ("agentic", "agentic_disaggregated")
SESSIONS_AGG = ("agentic",)


@dataclass(frozen=True)
class Column:
    """One output column: ``name`` (``{...}`` marks a family), ``unit``, ``meaning``, the ``modes`` filling it and
    ``when`` it is present in those modes (empty: always)."""

    name: str
    unit: str
    meaning: str
    modes: tuple[str, ...] = ALL
    when: str = ""

    @property
    def family(self) -> bool:
        return "{" in self.name

    def matches(self, column: str) -> bool:
        if not self.family:
            return column == self.name
        return re.fullmatch(re.sub(r"\\\{[a-z_]+\\\}", "[a-z0-9_.]+", re.escape(self.name)), column) is not None


C = Column
COLUMNS: tuple[Column, ...] = (
    # what was predicted
    C("hardware", "id", "hardware catalog id"),
    C("model", "id", "model catalog id"),
    C("profile", "id", "software profile id"),
    C("serving", "mode", "deployment.serving: aggregated, decode_only, prefill_only or disaggregated"),
    # the operating point
    C("batch", "sequences", "running batch per (decode) instance: sequences holding a KV slot"),
    C("gpus", "GPUs", "GPUs per (decode) instance"),
    C("tp", "ranks", "attention tensor-parallel degree"),
    C("ep", "ranks", "expert-parallel degree"),
    C("pp", "stages", "pipeline stages"),
    C("spec_tokens", "tokens", "draft tokens per decode step"),
    C("acceptance_length", "tokens", "mean tokens accepted per decode step, bonus token included"),
    C("isl", "tokens", "input tokens per request, cached prefix included (agentic: the mean context)"),
    C("osl", "tokens", "output tokens per request"),
    C("uncached_input", "tokens", "input tokens per request prefilled (not read from the prefix cache)"),
    C("aggregated", "bool", "prefill is mixed into the decode steps (chunked prefill)"),
    C("concurrency", "requests", "clients in flight per instance in the closed loop (running + waiting)"),
    # latency
    C("step_ms", "ms", "one decode step (every running sequence advances by acceptance_length tokens)"),
    C("tpot_ms", "ms", "time per output token: step_ms / acceptance_length"),
    C("ttft_ms", "ms", "time to first token, P50 (agentic: the median request's)"),
    C("ttft_p90_ms", "ms", "time to first token, P90 of the queue"),
    C("ttft_p99_ms", "ms", "time to first token, P99 of the queue"),
    C("tpot_p99_ms", "ms", "time per output token, P99 over requests (the prefill chunks a request's steps meet)"),
    C("ttft_mean_ms", "ms", "time to first token, mean"),
    C("ttft_mean_request_ms", "ms", "time to first token of the mean request (closed-loop mean)", SESSIONS),
    C("ttft_p{q}_request_ms", "ms", "time to first token, percentile q over sampled requests (lengths and queue)",
      SESSIONS_AGG, "validation rows quoting a P90 / P95 TTFT"),
    C("prefill_ms", "ms", "one request's own prefill"),
    C("prefill_queue_ms", "ms", "mean wait for a prefill server"),
    C("capacity_wait_ms", "ms", "mean wait for a running slot (clients beyond the running capacity)"),
    C("kv_transfer_ms", "ms", "moving one request's KV from the prefill to the decode pool", POOLS),
    C("host_reload_ms", "ms", "reloading a host-resident prefix onto the prefill pool", ("agentic_disaggregated",)),
    # rates
    C("request_rate_per_s", "requests/s", "requests completed per second per (decode) instance"),
    C("prefill_utilization", "share", "utilization of the prefill servers (rho)"),
    C("chunk_step_share", "share", "share of decode steps carrying a prefill chunk"),
    C("tps_per_user", "tokens/s", "output tokens/s per user while decoding: 1000 / tpot_ms"),
    C("intvty", "tokens/s", "InferenceX name of tps_per_user"),
    C("tps_per_user_e2e", "tokens/s", "E2E-normalized interactivity: osl / (mean TTFT + osl TPOT)"),
    C("tps_per_user_e2e_p50", "tokens/s", "osl / (TTFT P50 + osl TPOT)"),
    C("tps_per_user_e2e_p90", "tokens/s", "osl / (TTFT P90 + osl TPOT)"),
    C("tps_per_user_e2e_p{q}", "tokens/s", "E2E-normalized interactivity at the workload's percentile q over "
      "sampled requests", SESSIONS_AGG, "workloads with an interactivity percentile"),
    C("e2e_norm_intvty_p{q}", "tokens/s", "AgentX name of tps_per_user_e2e_p{q}", SESSIONS_AGG,
      "workloads with an interactivity percentile"),
    C("output_tps_per_gpu", "tokens/s/GPU", "output tokens/s per GPU (disaggregated: all GPUs of both pools)"),
    C("output_tput_per_gpu", "tokens/s/GPU", "InferenceX name of output_tps_per_gpu"),
    C("total_tps_per_gpu", "tokens/s/GPU", "input (cached prefix included) + output tokens/s per GPU"),
    C("tput_per_gpu", "tokens/s/GPU", "InferenceX name of total_tps_per_gpu"),
    C("input_tps_per_gpu", "tokens/s/GPU", "prefill throughput per GPU (prefill steps of 8192 tokens per GPU)",
      ("prefill_only",)),
    C("total_tps_per_mw", "tokens/s/MW", "total_tps_per_gpu per MW of all-in power"),
    C("output_tps_per_mw", "tokens/s/MW", "output_tps_per_gpu per MW of all-in power"),
    C("power_basis", "text", "the power behind the _per_mw figures: all-in, or gpu-tdp-fallback"),
    C("total_tokens_per_usd", "tokens/USD", "total tokens per US dollar of GPU-hours (NaN: no price)"),
    # the decode step, broken down
    C("t_{component}_ms", "ms", "one decode step's time in a kernel component or term (the model's components, "
      "link, host_link, latency, overhead, draft)"),
    C("res_compute_ms", "ms", "decode step time bound by compute"),
    C("res_hbm_bandwidth_ms", "ms", "decode step time bound by HBM bandwidth"),
    C("res_link_ms", "ms", "decode step time on the scale-up / scale-out links"),
    C("res_latency_ms", "ms", "decode step latency floors and overheads"),
    C("step_flops_bf16", "FLOP/GPU", "one decode step's FLOPs at the BF16 rate, per GPU"),
    C("step_flops_fp8", "FLOP/GPU", "one decode step's FLOPs at the FP8 rate, per GPU"),
    C("step_flops_fp4", "FLOP/GPU", "one decode step's FLOPs at the FP4 rate, per GPU"),
    C("step_bytes_{kind}_gb", "GB/GPU", "one decode step's bytes of a kind (weights, kv_read, kv_write, link, host, "
      "...), per GPU"),
    C("step_collectives", "count", "collectives per decode step"),
    C("bound", "resource", "binding resource: compute, hbm_bandwidth, link, latency, prefill, prefill_pool, "
      "capacity[:...], pool_budget"),
    # memory
    C("weights_gb_per_gpu", "GB/GPU", "weights held per GPU"),
    C("kv_gb_per_seq_per_gpu", "GB/GPU", "one sequence's KV per GPU"),
    C("kv_gb_per_gpu", "GB/GPU", "the running batch's KV per GPU"),
    C("host_kv_gb_per_gpu", "GB/GPU", "KV held in the host tier per GPU"),
    C("mem_gb_per_gpu", "GB/GPU", "HBM used per GPU"),
    C("max_batch", "sequences", "largest running batch that fits (memory and running-request cap)"),
    C("kv_max_batch", "sequences", "largest running batch the KV memory holds"),
    C("fits", "bool", "the point fits in memory (and its queue is stable)"),
    C("fit_reason", "text", "why the point does not fit; 'fits' otherwise"),
    # disaggregated pools
    C("instances", "instances", "decode instances", POOLS),
    C("pf_instances", "instances", "prefill instances", POOLS),
    C("pf_gpus", "GPUs", "GPUs per prefill instance", POOLS),
    C("pf_tp", "ranks", "prefill instance's attention tensor-parallel degree", POOLS),
    C("pf_ep", "ranks", "prefill instance's expert-parallel degree", POOLS),
    C("pf_dp", "ranks", "prefill instance's attention data-parallel ranks: pf_gpus / pf_tp", POOLS),
    C("prefill_gpus", "GPUs", "GPUs of the prefill pool", POOLS),
    C("decode_gpus", "GPUs", "GPUs of the decode pool", POOLS),
    C("prefill_ratio", "ratio", "prefill_gpus / decode_gpus", POOLS),
    C("pool_fits", "bool", "a split of the pools fits the cluster budget", POOLS,
      "pools chosen by the pool search (frontier, validation frontier rows)"),
    C("note", "text", "the prefill pool cannot keep up with the decode pool", ("disaggregated",),
      "predict, when bound is prefill_pool"),
    # agentic sessions
    C("sessions", "sessions", "live sessions per (decode) instance, generating or paused for a tool", SESSIONS),
    C("sessions_per_gpu", "sessions/GPU", "live sessions per GPU (disaggregated: all GPUs of both pools)", SESSIONS),
    C("kv_in_hbm_share", "share", "sessions whose KV is in this instance's HBM", SESSIONS_AGG),
    C("kv_in_pool_share", "share", "sessions whose KV is parked in other GPUs' spare HBM", SESSIONS_AGG),
    C("kv_in_host_share", "share", "sessions whose KV is in the host tier", SESSIONS),
    C("evicted_share", "share", "sessions whose KV was evicted (re-prefilled on the next turn)", SESSIONS),
    C("prefix_hit", "share", "input read from the prefix cache: 1 - uncached_input / isl", SESSIONS),
    C("cache_working_set_gb_per_gpu", "GB/GPU", "prefix KV the paused sessions compete for, per GPU", SESSIONS),
    C("cache_capacity_gb_per_gpu", "GB/GPU", "prefix-cache capacity (spare HBM, pool, host tier), per GPU", SESSIONS),
    C("host_capacity_gb_per_gpu", "GB/GPU", "host-tier capacity per GPU (0: tier off)", SESSIONS_AGG),
    C("routing", "policy", "how sessions are routed over workers (prefix-affine or not)", SESSIONS),
)
del C


def column(name: str) -> Column:
    """The declared Column of an output column name (families matched by pattern); KeyError if undeclared."""
    for c in COLUMNS:
        if not c.family and c.name == name:
            return c
    for c in COLUMNS:
        if c.family and c.matches(name):
            return c
    raise KeyError(f"output column {name!r} is not declared in perfmodel/serving/result.py")


def undeclared(names) -> list[str]:
    """The names among ``names`` no declared column matches."""
    out = []
    for n in names:
        try:
            column(n)
        except KeyError:
            out.append(n)
    return out


def ordered(names) -> list[str]:
    """``names`` in schema order (a family's members in their given order, at the family's place)."""
    rank = {c.name: i for i, c in enumerate(COLUMNS)}
    names = list(names)
    return sorted(names, key=lambda n: (rank[column(n).name], names.index(n)))


def record(row: dict) -> dict:
    """A predicted row as a JSON-able record in schema order (numpy scalars as Python ones); raises KeyError on
    an undeclared column."""
    return {k: (row[k].item() if hasattr(row[k], "item") else row[k]) for k in ordered(row)}


def csv_columns(names) -> list[str]:
    """The predict CSV's columns: every declared single column (whatever the mode: a column a mode does not fill
    is left blank, so the set is the same for every scenario) in schema order, then the members of the declared
    families (per-component times, per-kind bytes) present in ``names``, which depend on the model's operators."""
    fixed = [c.name for c in COLUMNS if not c.family]
    fams = [n for n in ordered([n for n in names if n not in fixed and n != "overrides"]) if column(n).family]
    return fixed + fams + (["overrides"] if "overrides" in names else [])


def units(names) -> dict[str, str]:
    return {n: column(n).unit for n in names}


BEGIN = "<!-- output columns: generated by python -m perfmodel.serving.result -->"
END = "<!-- end of output columns -->"


def markdown_table() -> str:
    rows = ["| column | unit | meaning | modes |", "|---|---|---|---|"]
    for c in COLUMNS:
        modes = "all" if c.modes == ALL else ", ".join(c.modes)
        when = f" ({c.when})" if c.when else ""
        rows.append(f"| `{c.name}` | {c.unit} | {c.meaning}{when} | {modes} |")
    return "\n".join(rows)


def readme_block() -> str:
    return f"{BEGIN}\n{markdown_table()}\n{END}"


def update_readme(text: str) -> str:
    """``text`` (docs/output-columns.md) with its generated output-columns block replaced by the current one."""
    if BEGIN not in text or END not in text:
        raise ValueError("docs/output-columns.md has no output-columns markers")
    head, rest = text.split(BEGIN, 1)
    return head + readme_block() + rest.split(END, 1)[1]


if __name__ == "__main__":       # python -m perfmodel.serving.result: rewrite the block in docs/output-columns.md
    from pathlib import Path

    from ..fileio import write_whole
    readme = Path(__file__).resolve().parents[2] / "docs" / "output-columns.md"
    write_whole(readme, update_readme(readme.read_text()))
    print(f"updated {readme}")
