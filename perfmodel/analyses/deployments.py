"""Enumerate deployments: one row per way of running one model replica, then a batch grid per row.

A deployment space is a chain of *dimensions*. Each dimension takes the table built so far and returns a
wider/longer one (a cross product with its choices, filtered for validity). Columns named like the engine's
POINT_COLUMNS go straight to ``evaluate``, so a new engine dimension (say a prefill:decode split) is one more
function in ``DIMENSIONS`` that adds its column.

Dimensions now:
- parallelism: GPUs per instance (powers of two up to the scale-up domain, plus the domain), attention TP
  (dividing every attention kind's head count), attention-DP (dp = gpus / (tp pp); only for MoE models, where
  experts shard over all GPUs), EP (MoE only; ep >= dp so expert TP stays inside an attention-TP group, whose
  all-reduce the engine counts), PP;
- speculative decoding: drafts per step, with the acceptance length a = (1 - p^(k+1)) / (1 - p) from the
  profile's per-draft acceptance rate p (no drafts when the engine does no speculative decoding);
- serving: ``aggregated`` (prefill mixed into decode steps, mix = 1); ``disaggregated`` when the profile's
  engine supports it and the workload is fixed-length: the row is the decode instance's layout; the prefill
  pool's own layout (``prefill_layouts``: TP, EP, attention-DP, pp = 1, independent of the decode layout) and
  both pools' integer instance counts are chosen per operating point by rate matching within a GPU budget
  (serving/pools.py); ``decode_only`` (mix = 0, the decode pool alone) is opt-in because it does not pay for
  prefill;
- KV host tier off/on, for agentic workloads (paused sessions' KV) when the engine supports it.
Batch: per attention-DP rank from 1 to the capacity on a log grid (batch = dp x per-rank batch).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..arch.layout import expert_problem, layout_problem
from ..engine.evaluate import POINT_COLUMNS
from ..errors import SpecError
from ..model import max_experts, tp_heads
from ..search import SLO
from ..specs.deployment import ENUMERABLE_MODES
from ..specs.model import ModelSpec

SERVING_MIX = {m: 1.0 if m == "aggregated" else 0.0 for m in ENUMERABLE_MODES}   # prefill mixed into decode steps
LAYOUT_COLUMNS = ["serving", "gpus", "tp", "dp", "ep", "pp", "spec_tokens", "prefill_ratio", "kv_host_tier",
                  "pf_gpus", "pf_tp", "pf_ep", "pf_dp", "instances", "pf_instances"]


@dataclass(frozen=True)
class DeploymentSpace:
    """Choices to enumerate. ``None`` means: every valid choice.

    Counts are GPUs (``gpus``, ``max_gpus``, ``pf_gpus``, ``max_disagg_gpus``), parallel widths (``tp``,
    ``ep``, ``pp``, ``pf_tp``, ``pf_ep``), draft tokens per step (``spec_tokens``), batch-grid points per
    deployment (``batch_points``) and sequences in flight per instance (``max_batch``); ``max_ttft_ms`` is a
    P50 time-to-first-token limit in ms (of the closed loop); ``slo`` the service-level objective at its
    percentiles, judged under Poisson arrivals inside the search (search/cut.py): points failing it do not
    count, before the Pareto cut. Raises SpecError on an invalid choice."""

    gpus: tuple[int, ...] | None = None
    max_gpus: int | None = None              # default: the scale-up domain
    tp: tuple[int, ...] | None = None
    ep: tuple[int, ...] | None = None
    pp: tuple[int, ...] = (1,)
    attention_dp: bool = True
    spec_tokens: tuple[int, ...] = (0, 1, 2, 3, 4)
    serving: tuple[str, ...] = ("aggregated",)
    disaggregation: bool = True              # enumerate it when the profile supports it
    pf_gpus: tuple[int, ...] | None = None   # prefill instance sizes to search (None: as for decode)
    pf_tp: tuple[int, ...] | None = None
    pf_ep: tuple[int, ...] | None = None
    max_disagg_gpus: int | None = None       # GPUs of both pools (None: serving/pools.cluster_budget)
    max_ttft_ms: float | None = None         # TTFT SLO (P50): points above it do not count; prefill pools keep up
    kv_host_tier: bool = True                # enumerate on (and off) when the profile supports it
    batch_points: int = 64                   # log-grid points per deployment, 1 .. capacity
    max_batch: int | None = None             # optional cap on sequences in flight per instance
    slo: SLO | None = None                   # SLO at its percentiles, inside the search (search/)

    def __post_init__(self):
        for s in self.serving:
            if s not in SERVING_MIX:
                raise SpecError(f"serving {s!r} is not enumerable yet; choose from {sorted(SERVING_MIX)}",
                                field="serving")
        if self.batch_points < 1:
            raise SpecError("batch_points must be >= 1", field="batch_points")
        if any(k < 0 or k > 16 for k in self.spec_tokens):
            raise SpecError("spec_tokens must lie in 0..16", field="spec_tokens")
        if self.max_ttft_ms is not None and not (np.isfinite(self.max_ttft_ms) and self.max_ttft_ms > 0):
            raise SpecError(f"max_ttft_ms must be a positive number of ms, got {self.max_ttft_ms!r}",
                            field="max_ttft_ms")
        if self.slo is not None:
            self.slo.check_served()
        if self.max_disagg_gpus is not None and self.max_disagg_gpus < 2:
            raise SpecError(f"max_disagg_gpus={self.max_disagg_gpus}: a prefill and a decode instance need at "
                            "least 2 GPUs", field="max_disagg_gpus")
        for name in ("pf_gpus", "pf_tp", "pf_ep"):
            v = getattr(self, name)
            if v is not None and (not v or any(int(x) < 1 for x in v)):
                raise SpecError(f"{name} must list positive integers, got {v!r}", field=name)


@dataclass
class Context:
    model: ModelSpec
    domain: int
    spec_rate: float | None
    space: DeploymentSpace
    disaggregation: bool = False             # the engine (profile features) supports it
    kv_host_tier: bool = False
    agentic: bool = False                    # agentic sessions (pauses keep KV resident)
    notes: list[str] = field(default_factory=list)


def _pow2_divisors(n: int) -> list[int]:
    out, d = [], 1
    while d <= n:
        if n % d == 0:
            out.append(d)
        d *= 2
    return out


def _heads(m: ModelSpec) -> list[int]:
    return tp_heads(m)


def _tp_ok(m: ModelSpec, tp: int) -> bool:
    """Attention TP splits heads: it must divide every attention kind's head count."""
    return all(h % tp == 0 for h in _heads(m))


def _experts(m: ModelSpec) -> int:
    return max_experts(m)


def gpu_choices(ctx: Context) -> list[int]:
    sp = ctx.space
    top = sp.max_gpus or ctx.domain
    if sp.gpus:
        return sorted({int(g) for g in sp.gpus if g >= 1})
    out = {g for g in (2 ** i for i in range(0, 13)) if g <= top}
    out.add(int(top))
    return sorted(out)


# ------------------------------------------------------------------ dimensions
def parallelism(rows: pd.DataFrame | None, ctx: Context) -> pd.DataFrame:
    m, sp = ctx.model, ctx.space
    moe = _experts(m) > 0
    n_layers = sum(g.count for g in m.layers)
    recs = []
    for g in gpu_choices(ctx):
        for pp in sp.pp:
            if g % pp or pp > n_layers:
                continue
            per_stage = g // pp
            tps = [t for t in (sp.tp or _pow2_divisors(per_stage) + [per_stage]) if per_stage % t == 0]
            for tp in sorted(set(tps)):
                if not _tp_ok(m, tp):
                    continue
                dp = per_stage // tp
                if dp > 1 and not (moe and sp.attention_dp):
                    continue  # dense model: DP ranks are independent replicas, counted at gpus = tp x pp
                if moe:
                    eps = [e for e in (sp.ep or _pow2_divisors(per_stage) + [per_stage]) if per_stage % e == 0]
                    # expert TP (per_stage / ep) must stay within the attention-TP group: the engine's links
                    # carry no all-gather across attention-DP ranks, so ep >= dp keeps the cost honest
                    eps = sorted({e for e in eps if e <= _experts(m) and e >= dp})
                else:
                    eps = [1]
                for ep in eps:
                    if layout_problem(m, g, tp, ep, pp) or expert_problem(m, ep):
                        continue          # the rules predict applies (arch/layout.py)
                    recs.append((g, tp, dp, ep, pp))
    return pd.DataFrame(recs, columns=["gpus", "tp", "dp", "ep", "pp"], dtype=float)


def speculative(rows: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    from .systems import acceptance_length
    ks = sorted(set(ctx.space.spec_tokens)) or [0]
    if ctx.spec_rate is None:
        if any(k > 0 for k in ks):
            ctx.notes.append("speculative decoding off: the profile has no spec_decoding.acceptance_rate")
        ks = [0]
    spec = pd.DataFrame({"spec_tokens": np.asarray(ks, dtype=float)})
    spec["acc"] = acceptance_length(ctx.spec_rate, spec["spec_tokens"].to_numpy()) if ctx.spec_rate is not None \
        else 1.0
    return rows.merge(spec, how="cross")


def serving(rows: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    sp = ctx.space
    modes = [m for m in sp.serving if m != "disaggregated"]
    base = rows.merge(pd.DataFrame({"serving": modes, "mix": [SERVING_MIX[x] for x in modes]}), how="cross")
    base["prefill_ratio"] = 0.0
    want_disagg = sp.disaggregation or "disaggregated" in sp.serving
    if not want_disagg:
        return base
    if not ctx.disaggregation:
        ctx.notes.append("disaggregation off: the profile's engine does not support it")
        return base
    # the decode instance's layout; the prefill pool and both counts are chosen per point (serving/pools.py)
    dis = rows[rows["pp"] == 1].assign(serving="disaggregated", mix=0.0, prefill_ratio=np.nan)
    return pd.concat([base, dis], ignore_index=True)


def kv_tier(rows: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    rows = rows.assign(kv_host_tier=False)
    if not (ctx.agentic and ctx.space.kv_host_tier):
        return rows
    if not ctx.kv_host_tier:
        ctx.notes.append("KV host tier off: the profile's engine does not support it")
        return rows
    on = rows[rows["serving"].isin(("aggregated", "disaggregated"))].assign(kv_host_tier=True)
    return pd.concat([rows, on], ignore_index=True)


# Order matters only for column order. Add new deployment dimensions here (each adds its own columns).
DIMENSIONS = [parallelism, speculative, serving, kv_tier]


def layouts(model: ModelSpec, domain: int, spec_rate: float | None, space: DeploymentSpace | None = None, *,
            disaggregation: bool = False, kv_host_tier: bool = False,
            agentic: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """Every deployment (without batch) of ``model`` in a scale-up domain of ``domain`` GPUs.

    ``disaggregation`` / ``kv_host_tier``: the engine supports the feature (profile ``features``).
    """
    ctx = Context(model, int(domain), spec_rate, space or DeploymentSpace(), disaggregation, kv_host_tier, agentic)
    rows = None
    for dim in DIMENSIONS:
        rows = dim(rows, ctx)
    if rows is None or rows.empty:
        if not space_or_default(space).serving and ctx.notes:
            raise SpecError(f"--serving disaggregated alone, but {ctx.notes[-1]}", field="serving")
        raise SpecError(f"no deployment of {model.id} to enumerate (domain {domain} GPUs)", field="deployment")
    return rows.reset_index(drop=True), ctx.notes


def prefill_layouts(model: ModelSpec, domain: int, space: DeploymentSpace | None = None) -> pd.DataFrame:
    """Every prefill instance layout (gpus, tp, dp, ep; pp = 1) in a scale-up domain, by the ``parallelism``
    rules, restricted by the space's ``pf_gpus`` / ``pf_tp`` / ``pf_ep`` (not by the decode choices)."""
    sp = space or DeploymentSpace()
    pspace = DeploymentSpace(gpus=sp.pf_gpus, max_gpus=sp.max_gpus, tp=sp.pf_tp, ep=sp.pf_ep, pp=(1,),
                             attention_dp=sp.attention_dp)
    out = parallelism(None, Context(model, int(domain), None, pspace))
    if out.empty:
        raise SpecError(f"no prefill layout of {model.id} within pf_gpus={sp.pf_gpus} pf_tp={sp.pf_tp} "
                        f"pf_ep={sp.pf_ep} (domain {domain} GPUs)",
                        field=next((f for f in ("pf_tp", "pf_ep", "pf_gpus") if getattr(sp, f)), "pf_gpus"))
    return out


def space_or_default(space: DeploymentSpace | None) -> DeploymentSpace:
    return space or DeploymentSpace()


def points(rows: pd.DataFrame, lengths: dict[str, float]) -> dict:
    """Deployment rows -> the ``points`` mapping of ``evaluate`` (columns it knows, plus the lengths)."""
    out = {c: rows[c].to_numpy(dtype=float) for c in rows.columns if c in POINT_COLUMNS}
    out.update({k: float(v) for k, v in lengths.items()})
    return out


def batch_grid(rows: pd.DataFrame, capacity: np.ndarray, n: int, max_batch: int | None = None) -> pd.DataFrame:
    """Expand each row over a log grid of batch sizes: per DP rank 1 .. floor(capacity / dp), unique.

    Rows whose capacity is below one sequence per rank are dropped. Adds ``batch`` (per instance).
    """
    dp = rows["dp"].to_numpy()
    per_rank = np.floor(capacity / dp)
    if max_batch:
        per_rank = np.minimum(per_rank, np.floor(max_batch / dp))
    ok = per_rank >= 1
    rows, dp, per_rank = rows[ok], dp[ok], per_rank[ok]
    if rows.empty:
        return rows.assign(batch=[])
    u = np.linspace(0.0, 1.0, n) if n > 1 else np.ones(1)
    grid = np.round(np.exp(np.log(per_rank)[:, None] * u[None, :]))      # (rows, n)
    grid = np.clip(grid, 1, per_rank[:, None])
    keep = np.ones_like(grid, dtype=bool)
    keep[:, 1:] = grid[:, 1:] != grid[:, :-1]
    r, c = np.nonzero(keep)
    out = rows.iloc[r].reset_index(drop=True)
    out["batch"] = grid[r, c] * dp[r]
    return out
