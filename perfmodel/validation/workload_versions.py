"""What a record says about the run beyond its columns: the workload version it ran, the statistic it quotes,
the KV host tier, the speculative-decoding method. Read from the record's workload, date and notes.

Workload versions (``workload_version``): AgentX changed under the same name. A row with workload ``agentx`` is
mapped to the catalog entry of the version it ran:
  * ``agentx-062126-256k``  notes name the 256k-truncated trace (``cc-traces-weka-062126-256k``, "truncated 256k")
  * ``agentx-062126``       dated before the harness switch of 2026-07-29 (``AGENTX_HARNESS``), or notes placing
                            it before the AIPerf/AgentX harness update ("predates", "before the 2026-07-29 switch",
                            a July 2026 bring-up)
  * ``agentx-062126-0730``  every other AgentX row (the harness from 2026-07-29 on, full trace)
Other workload ids are used as given.

Harness versions (``AGENTX_HARNESS``, ``record_harness``): what a lane does between its requests, per the
InferenceX harness history read in data/shared/AUDIT.md section 1.1 (data, never fitted).

Interactivity (``record_interactivity``): AgentX tables quote two per-user speeds. ``intvty`` = 1 / the ITL
statistic (InferenceX utils/agentic/aggregation/request_metrics.py l. 198; ITL = (E2E - TTFT) / (OSL - 1), so
prefill stalls are in it, TTFT is not); ``e2e_norm_intvty`` = 1 / (E2E / OSL) (l. 159-184, the dashboard axis).
A row whose notes quote ``intvty`` without E2E normalisation is the ITL one; otherwise the workload's own.

Statistic (``record_statistic``): ``mean`` where the notes say the source's latencies are means (InferenceX API
tables: "'Mean latency'", "MEANS"; "mean TTFT" / "mean TPOT" for that metric), ``p90`` / ``p95`` / ``p50`` where the
notes name that percentile for the metric, else ``p50`` (the record format's default, data/shared/README.md) and,
for AgentX interactivity, the workload's percentile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HARNESS_UPDATE = "2026-07-29"
"""InferenceX ddeb02eb9 (PR #2415, 2026-07-29): AgentX moved to upstream AIPerf main (AUDIT.md 1.1)."""
AGENTX_256K = "agentx-062126-256k"
AGENTX_PRE = "agentx-062126"
AGENTX_POST = "agentx-062126-0730"

_TRUNC = re.compile(r"cc-traces-weka-062126-256k|truncated 256k|256k-truncated", re.IGNORECASE)
_PRE = re.compile(r"predates the AIPerf|before the 2026-07-30|before the 2026-07-29|July 2026 harness|image pushed 2026-07-|"
                  r"PR of (early|mid|late) July 2026", re.IGNORECASE)
_HOST = re.compile(r"HiCache|LMCache|DRAM offload|DRAM arm|CPU tier|host[- ]memory offload|kv offload|"
                   r"host-DRAM|CPUOffload|\boffload\b", re.IGNORECASE)
_GPU_ONLY = re.compile(r"GPU-resident", re.IGNORECASE)
_MAX_LEN = re.compile(r"max[-_ ]model[-_ ]len(?: capped at)? ([0-9][0-9,]*)", re.IGNORECASE)
_SPEC = re.compile(r"\b(MTP|NEXTN|EAGLE|DSpark)\b", re.IGNORECASE)
_NO_SPEC = re.compile(r"no spec(ulative)?[ -]decod|no speculative|non-MTP|spec(ulative)? decoding: none",
                      re.IGNORECASE)
_MEAN_TABLE = re.compile(r"'Mean latency'|are MEANS", re.IGNORECASE)
_METRIC_WORDS = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "tps_per_user": "intvty|interactivity|user"}


@dataclass(frozen=True)
class Harness:
    """One AgentX harness version: what ``concurrency`` lanes do between requests (AUDIT.md 1.1, 1.2).

    A lane is one live session tree (a root trace plus its subagents); it waits the trace's recorded end-to-start
    gap before its next turn, each gap cut at ``gap_cap_s`` (None: as recorded), and all lanes' timers skip
    ahead once the whole system has idled ``system_idle_cap_s``. Warmup requests are excluded from the
    figures; the measurement window runs from the first profiled start to the last profiled end (the drain of
    requests in flight at the end is included)."""

    since: str                         # first date (ISO) of runs on this harness ("": the first AgentX runs)
    gap_cap_s: float | None            # idle gap cap, s (None: gaps as recorded)
    cap_scope: str                     # what the cap applies to: "trace" (per trace), "tree" (per session tree)
    system_idle_cap_s: float           # all lanes idle: timers skip ahead after this long, s
    warmup: str                        # how the caches are warmed (excluded from the figures)
    workload: str                      # the catalog workload (lengths, pause) of the full trace on this harness
    source: str


AGENTX_HARNESS = (
    Harness("", 10.0, "trace", 10.0, "600 s agentic cache warmup, one-token outputs, no idle delays",
            AGENTX_PRE, "InferenceX benchmarks/benchmark_lib.sh at 20030666b (PR #2268, 2026-07-18) l. 1740, 1781: "
            "--trace-idle-gap-cap-seconds 10 against parent + subagent request starts; lanes ~91-95% busy "
            "(PR #2275)"),
    Harness(HARNESS_UPDATE, None, "trace", 10.0, "10 warmup requests per lane", AGENTX_POST,
            "InferenceX ddeb02eb9 (PR #2415, 2026-07-29): upstream AIPerf main, per-lane warmup, no per-trace cap"),
    Harness("2026-08-02", 300.0, "tree", 10.0, "10 warmup requests per lane", AGENTX_POST,
            "InferenceX ce8a34e4d (PR #2457, 2026-08-02): 300 s whole-trajectory idle cap for every AgentX "
            "replay; benchmark_lib.sh at 843c6254 l. 1797, 2038 (default 300)"),
)
"""AgentX harness versions in date order (``record_harness`` picks the last one started by a row's date)."""


def harness_on(date: str | None, notes: str | None = None) -> Harness:
    """The AgentX harness a run used: the last version started on or before ``date``; an undated row whose
    notes place it before the 2026-07-29 switch gets the first, any other undated row the current one."""
    if not date:
        return AGENTX_HARNESS[0] if _PRE.search(notes or "") else AGENTX_HARNESS[-1]
    started = [h for h in AGENTX_HARNESS if h.since <= date]
    return started[-1] if started else AGENTX_HARNESS[0]


def record_harness(rec) -> Harness | None:
    """The AgentX harness of a record (None for other workloads)."""
    return harness_on(rec.date, rec.notes) if (rec.workload or "").startswith("agentx") else None


_INTVTY = re.compile(r"\bintvty\b", re.IGNORECASE)
_E2E_NORM = re.compile(r"e2e[_ -]?norm|E2E-normali[sz]ed|normali[sz]ed by E2E|OSL / E2E", re.IGNORECASE)


def record_interactivity(rec, workload) -> str:
    """'itl' or 'e2e': what a per-user speed record is (module docstring). The notes quoting AgentX's ``intvty``
    (1 / the ITL statistic) without E2E normalisation -> 'itl'; else the workload's ``interactivity``."""
    n = rec.notes or ""
    if _INTVTY.search(n) and not _E2E_NORM.search(n):
        return "itl"
    return getattr(workload, "interactivity", "itl")


def workload_version(workload: str | None, date: str | None, notes: str | None) -> str | None:
    """The catalog workload a record ran (see the module docstring); None for fixed-length rows."""
    if workload != "agentx":
        return workload
    n = notes or ""
    if _TRUNC.search(n):
        return AGENTX_256K
    if _PRE.search(n):
        return AGENTX_PRE
    return harness_on(date, n).workload


def record_workload(rec) -> str | None:
    return workload_version(rec.workload, rec.date, rec.notes)


def record_statistic(rec) -> str:
    """'mean', 'p50', 'p90' or 'p95': the statistic the record's value is, for latency and per-user metrics."""
    n = rec.notes or ""
    if rec.metric not in _METRIC_WORDS:
        return "mean"
    words = _METRIC_WORDS[rec.metric]
    if _MEAN_TABLE.search(n):
        return "mean"
    if rec.metric == "tps_per_user" and re.search(r"intvty mean \(p50\)", n, re.IGNORECASE):
        return "p50"          # "intvty mean (p50) 19.5 (24.3)": the value is the bracketed P50
    # the statistic named next to the metric's own word in the notes, first match wins
    m = re.search(rf"(?:{words})[^.;,()]{{0,12}}?\b(mean|p50|p90|p95|median)\b|\b(mean|p50|p90|p95|median)\b "
                  rf"(?:{words})", n, re.IGNORECASE)
    if m:
        s = (m.group(1) or m.group(2)).lower()
        return "p50" if s == "median" else s
    return "p50"


def record_host_tier(rec) -> bool:
    """The run offloaded KV to host memory (SGLang HiCache, vLLM LMCache / a DRAM offload connector), per its
    notes; the notes' first sentence (what this row is) decides when it names a GPU-resident or a host arm."""
    n = rec.notes or ""
    first = n.split(". ", 1)[0]
    if _GPU_ONLY.search(first):
        return False
    return bool(_HOST.search(first) or _HOST.search(n))


_GLOBAL_CAP = re.compile(r"max[-_ ]running(?:[-_ ]requests)?[\s=:]*(\d[\d,]*)", re.I)
_ENGINE_CAP = re.compile(r"max[-_ ]num[-_ ]seqs[\s=:]*(\d[\d,]*)", re.I)


def record_running_cap(rec, dp_ranks: float) -> float | None:
    """The running-request cap per scheduler (attention-DP rank) that the record states: its
    ``max_running_requests`` field (per scheduler) where filled; else a cap its notes quote from the serve flags,
    SGLang's ``--max-running-requests N`` (global: the engine gives each of its ``dp_ranks`` attention-DP
    schedulers N // dp_ranks, ServerArgs and the KV-cache configurator's ReqToTokenPool) or vLLM's
    ``--max-num-seqs N`` (per engine core, i.e. per scheduler); None when it states none."""
    if rec.max_running_requests is not None:
        return float(rec.max_running_requests)
    notes = rec.notes or ""
    if (m := _GLOBAL_CAP.search(notes)) is not None:
        return float(max(int(m.group(1).replace(",", "")) // max(int(round(dp_ranks)), 1), 1))
    if (m := _ENGINE_CAP.search(notes)) is not None:
        return float(m.group(1).replace(",", ""))
    return None


def record_max_context(rec) -> float | None:
    """The engine's max_model_len when the notes give one (requests above it are rejected, not served)."""
    m = _MAX_LEN.search(rec.notes or "")
    return float(m.group(1).replace(",", "")) if m else None


def served_workload(w, max_context: float | None):
    """The workload the engine served when it rejects requests above ``max_context`` tokens: the context
    distribution truncated there (log-normal median m, sigma s, cut c, z = ln(c/m)/s):
        served mean   = mean Phi(z - s) / Phi(z),     served median = m exp(s Phi^-1(Phi(z)/2)),
    the new tokens per turn scaled by the same mean ratio (a fixed reuse share), outputs unchanged. A cut above
    the whole distribution (Phi(z) ~ 1) leaves the workload as it is."""
    if max_context is None or w.kind != "agentic" or w.agentic.context_tokens.sigma == 0:
        return w
    import math
    from statistics import NormalDist
    N = NormalDist()
    ctx = w.agentic.context_tokens
    z = math.log(max_context / ctx.median) / ctx.sigma
    kept = N.cdf(z)
    if kept > 0.999:
        return w
    mean = ctx.mean_value * N.cdf(z - ctx.sigma) / kept
    median = ctx.median * math.exp(ctx.sigma * N.inv_cdf(kept / 2))
    scale = mean / ctx.mean_value
    nt = w.agentic.new_tokens_per_turn
    src = f"served below max_model_len {max_context:,.0f} ({kept:.0%} of requests kept)"
    new_ctx = ctx.model_copy(update={"median": median, "mean": max(mean, median), "source": src})
    new_nt = nt.model_copy(update={"median": nt.median * scale, "mean": nt.mean * scale if nt.mean else None})
    ag = w.agentic.model_copy(update={"context_tokens": new_ctx, "new_tokens_per_turn": new_nt})
    return w.model_copy(update={"id": f"{w.id}@max{max_context:.0f}", "agentic": ag})


def record_drafts_unstated(rec) -> bool:
    """The record names a speculative-decoding method (MTP, NEXTN, EAGLE, DSpark) but not its draft depth."""
    n = rec.notes or ""
    return rec.spec_tokens is None and bool(_SPEC.search(n)) and not _NO_SPEC.search(n)


__all__ = ["AGENTX_256K", "AGENTX_HARNESS", "AGENTX_POST", "AGENTX_PRE", "HARNESS_UPDATE", "Harness", "harness_on",
           "record_drafts_unstated", "record_harness", "record_interactivity",
           "record_host_tier", "record_statistic", "record_workload", "workload_version"]


UNSTATED_DRAFTS = 3
"""Draft depth of a point record that names its speculative method but not the depth: 3, the depth of the SGLang
MTP recipes these sources run (NEXTN / EAGLE 3-1-4: 3 steps, topk 1, 4 draft tokens; SGLang cookbook
qwen3.5-benchmarks.jsx, quoted in data/shared/agentic.csv rows a275-a316) and the deepest of the engines' MTP
recipes (FRONTIER_SPEC_DEPTHS in frontier_rows.py). Its acceptance is the prior or the profile's rate
(acceptance_priors.record_acceptance)."""

def _native_four_bit(model_id: str) -> str | None:
    from .. import catalog
    try:
        first = catalog.model(model_id).native_weights.split("+")[0]
    except Exception:          # unknown model: reported unsupported by the predictor
        return None
    return first if first in ("mxfp4", "nvfp4", "int4") else None


_LOST_REUSE = re.compile(r"lost (its |the )?prefix[- ](reuse|cach)|prefix[- ]reuse (was |is )?lost|"
                         r"lost (its |the )?(KV|cache) reuse|thrash", re.IGNORECASE)
_HIT = re.compile(r"(?:prefix[- ]cache |KV |cache |GPU KV |GPU )?hit(?: rate)?(?: of| at| fell to| collapsed to| =)?"
                  r"\s*([0-9]+(?:\.[0-9]+)?)\s*(%)?", re.IGNORECASE)


def record_lost_reuse_hit(rec) -> float | None:
    """The measured prefix hit of a run whose source says it lost prefix reuse (notes: 'lost prefix reuse',
    'thrashes'), from its notes ('hit rate 2.7%', 'GPU KV hit 0.29'); None without such a flag or figure."""
    n = rec.notes or ""
    if not _LOST_REUSE.search(n) or _HOST.search(n.split(". ", 1)[0]):
        return None          # no flag, or the row is the host-tier arm beside a thrashing GPU-resident one
    for m in _HIT.finditer(n):
        v = float(m.group(1)) / (100.0 if m.group(2) else 1.0)
        if 0 <= v < 1 and (m.group(2) or "." in m.group(1)):
            return v
    return None


_ACCEPT = re.compile(r"accept(?:ance)?[ _-]length\s*[~=:]?\s*~?([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_POOL_LABEL = re.compile(r"PTP(\d+)x(\d+)/DTP(\d+)x(\d+)")


def resolve_record(rec):
    """The record as the predictor reads it: ``workload`` -> its version (``workload_version``); a point row
    naming a speculative method without a depth -> ``spec_tokens`` = UNSTATED_DRAFTS (and the acceptance
    length its notes quote, "Accept length ~3.5", if any); a disaggregated row whose
    notes give the InferenceX point label ``PTP{tp}x{n}/DTP{tp}x{n}`` (n prefill workers at TP tp, n decode
    workers at TP tp) and no GPU split -> prefill/decode GPUs, workers and TP from the label; a blank
    ``prefix_hit`` on an agentic run the source says lost prefix reuse -> the hit its notes measure
    (``record_lost_reuse_hit``: the case is expressed, not fitted); blank ``weights``
    on a model published with 4-bit experts (``native_weights`` mxfp4+fp8, nvfp4+...) -> that 4-bit format (the
    checkpoint a run serves unless it says otherwise; an fp8 default would not even fit DeepSeek-V4-Pro on 8
    H200)."""
    up: dict[str, str | float | int | None] = {}    # Record field -> its new value
    if rec.weights is None:
        native = _native_four_bit(rec.model)
        if native:
            up["weights"] = native
    if rec.prefix_hit is None and rec.workload:
        hit = record_lost_reuse_hit(rec)
        if hit is not None:
            up["prefix_hit"] = hit
    wl = record_workload(rec)
    if wl != rec.workload:
        up["workload"] = wl
    if rec.kind == "point" and record_drafts_unstated(rec):
        up["spec_tokens"] = UNSTATED_DRAFTS
        m = _ACCEPT.search(rec.notes or "")
        if rec.acceptance_length is None and m and 1.0 <= float(m.group(1)) <= UNSTATED_DRAFTS + 1:
            up["acceptance_length"] = float(m.group(1))      # "Accept length ~3.5": the run's own figure
    if rec.serving == "disaggregated" and not (rec.prefill_gpus and rec.decode_gpus):
        m = _POOL_LABEL.search(rec.notes or "")
        if m:
            ptp, pn, dtp, dn = (int(g) for g in m.groups())
            up.update(prefill_gpus=ptp * pn, prefill_workers=pn, prefill_tp=ptp, decode_gpus=dtp * dn,
                      decode_workers=dn, tp=dtp)
    return rec.model_copy(update=up) if up else rec


def record_workload_spec(rec):
    """The catalog workload of a (resolved) record as its engine served it (``served_workload``), or None."""
    from .. import catalog
    if not rec.workload:
        return None
    return served_workload(catalog.workload(rec.workload), record_max_context(rec))


__all__ += ["UNSTATED_DRAFTS", "record_lost_reuse_hit", "record_max_context", "record_workload_spec", "resolve_record", "served_workload"]
