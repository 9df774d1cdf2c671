"""Curves for claim checks: each system's operating points evaluated once, then read on any axis and metric.

A ``Side`` is one system as a claim check needs it: hardware, software profile, a corner of the profile's
ranges (``value``, ``pess`` = every parameter at its slow end, ``opt`` = at its fast end), optional feature
switches (KV host tier) and kernel speed-ups. ``CurveStore`` evaluates a side's deployments once (the
analyses' ``candidates``) and caches them, so every claim, plot and CSV of a report reuses the same points.
Envelopes are taken on the interactivity axis the claim names:

- ``itl``: ``tps_per_user`` = accepted tokens / decode step time (InferenceX ``intvty``, 1/ITL);
- ``e2e``: ``tps_per_user_e2e`` = OSL / (E[TTFT] + OSL x TPOT), TPOT per output token, the E2E-normalised axis;
- ``e2e_p50`` / ``e2e_p90``: ``tps_per_user_e2e_p50`` / ``_p90`` = OSL / (P50 or P90 TTFT + OSL x TPOT), the
  axes a claim at P50 or P90 is read on (AgentX quotes P90).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import catalog
from ..analyses.deployments import DeploymentSpace
from ..analyses.frontier import THROUGHPUT_METRICS, candidates, pareto, pareto_index
from ..analyses.systems import System
from ..specs.profile import PROFILE_PARAMS

AXES = {"itl": "tps_per_user", "e2e": "tps_per_user_e2e", "e2e_p50": "tps_per_user_e2e_p50",
        "e2e_p90": "tps_per_user_e2e_p90"}
AXIS_TEXT = {"itl": "tokens/s per user = 1 / inter-token latency (decode only)",
             "e2e": "tokens/s per user = OSL / end-to-end latency (incl. TTFT and queueing)",
             "e2e_p50": "P50 tokens/s per user = OSL / P50 end-to-end latency (the queue's P50 TTFT)",
             "e2e_p90": "P90 tokens/s per user = OSL / P90 end-to-end latency (the queue's P90 TTFT)"}

# which end of a profile range is the slow one (True: the low end is slow, e.g. an efficiency)
LOW_IS_SLOW = {name: not (name.endswith("_us") or name.endswith("_ms") or name in ("moe_imbalance", "workspace_gb"))
               for name in PROFILE_PARAMS}

ENVELOPE_METRICS = THROUGHPUT_METRICS    # the metrics whose envelopes the store keeps the points for
DEFAULT_WEIGHTS = "nvfp4"
DEFAULT_SPACE = dict(batch_points=16, spec_tokens=(0, 1, 3, 7))


@dataclass(frozen=True)
class Side:
    """One system of a check: hardware (id[@variant]), profile id, corner and software changes."""

    hardware: str
    profile: str
    corner: str = "value"                 # value | pess | opt
    host_tier: bool | None = None         # None: the profile's own feature switch
    speedup: float = 1.0                  # decode and prefill kernels this much faster than the profile's
    prefill_speedup: float | None = None  # prefill kernels this much faster (None: ``speedup``)
    gpus: tuple[int, ...] | None = None   # restrict GPUs per instance (deployment hints)
    spec_tokens: tuple[int, ...] | None = None  # draft tokens the source states (None: the store's space)
    serving: tuple[str, ...] | None = None      # serving modes the source states (None: the store's space)
    weights: str | None = None            # this side's weight format where a claim compares two (None: the store's)

    def but(self, **kw) -> "Side":
        return Side(**{**self.__dict__, **kw})

    @property
    def name(self) -> str:
        s = f"{self.hardware}:{self.profile}"
        if self.host_tier is not None:
            s += "+kvtier" if self.host_tier else "-kvtier"
        if self.speedup != 1.0 or self.prefill_speedup not in (None, self.speedup):
            s += (f" x{self.speedup:g} kernels" if self.prefill_speedup in (None, self.speedup) else
                  f" x{self.speedup:g} decode / x{self.prefill_speedup:g} prefill kernels")
        if self.corner != "value":
            s += f" [{self.corner}]"
        if self.gpus:
            s += f" ({','.join(map(str, self.gpus))} GPUs)"
        if self.spec_tokens is not None:
            s += f" ({','.join(map(str, self.spec_tokens))} drafts)"
        if self.serving is not None:
            s += f" ({','.join(self.serving)})"
        if self.weights is not None:
            s += f" [{self.weights}]"
        return s

    def system(self) -> System:
        prof = catalog.profile(self.profile)
        if self.host_tier is not None and prof.features.kv_host_tier != self.host_tier:
            prof = prof.model_copy(update={"features": prof.features.model_copy(
                update={"kv_host_tier": self.host_tier})})
        over: dict[str, float] = {}
        acc = None
        if self.corner != "value":
            slow = self.corner == "pess"
            for name in PROFILE_PARAMS:
                p = getattr(prof, name)
                over[name] = p.low if LOW_IS_SLOW[name] == slow else p.high
            r = prof.spec_decoding.acceptance_rate
            if r is not None:
                acc = r.low if slow else r.high
        pf = self.speedup if self.prefill_speedup is None else self.prefill_speedup
        if self.speedup != 1.0 or pf != 1.0:
            base = {**prof.values(), **over}
            over["decode_speedup"] = min(base["decode_speedup"] * self.speedup, PROFILE_PARAMS["decode_speedup"][2])
            over["prefill_speedup"] = min(base["prefill_speedup"] * pf, PROFILE_PARAMS["prefill_speedup"][2])
        return System(self.hardware, prof, profile_overrides=over, acceptance_rate=acc, label=self.name)


@dataclass
class CurveStore:
    """Envelopes per (side, model, workload, axis, metric), each side's operating points evaluated once.

    Of the evaluated points the store keeps those on an envelope of an ENVELOPE_METRICS metric against
    either axis (a few hundred of ~5,000 per side): every such envelope is taken from them exactly as from
    all the points (each envelope point is kept, and pruned points beat none of them). An envelope of any
    other metric evaluates the side again. ``evaluations`` counts the evaluations."""

    weights: str = DEFAULT_WEIGHTS
    space: dict = field(default_factory=lambda: dict(DEFAULT_SPACE))
    _points: dict = field(default_factory=dict)
    _env: dict = field(default_factory=dict)
    evaluations: int = 0

    def points(self, side: Side, model: str, workload: str, keep=None) -> pd.DataFrame:
        """Every operating point of the side (evaluated again: the store keeps the envelopes' points)."""
        space = DeploymentSpace(**{**self.space, **({"gpus": side.gpus} if side.gpus else {}),
                                   **({"spec_tokens": side.spec_tokens} if side.spec_tokens is not None else {}),
                                   **({"serving": side.serving} if side.serving is not None else {})})
        self.evaluations += 1
        return candidates(side.system(), model, workload, weights=(side.weights or self.weights,), space=space,
                          keep=keep)

    def _envelope_points(self, side: Side, model: str, workload: str) -> pd.DataFrame:
        key = (side, model, workload)
        if key not in self._points:
            self._points[key] = self.points(side, model, workload, keep=_envelope_rows)
        return self._points[key]

    def envelope(self, side: Side, model: str, workload: str, axis: str = "itl",
                 metric: str = "total_tps_per_gpu") -> pd.DataFrame:
        """Pareto envelope of ``metric`` against the axis column (sorted by the axis, metric falling)."""
        key = (side, model, workload, axis, metric)
        if key not in self._env:
            pts = (self._envelope_points(side, model, workload) if metric in ENVELOPE_METRICS
                   else self.points(side, model, workload))
            env = pareto(pts, x=AXES[axis], y=metric).copy()
            env.attrs.update(system=side.name, axis=axis, metric=metric, model=model, workload=workload)
            self._env[key] = env
        return self._env[key]


def _envelope_rows(df: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Those of ``rows`` on an envelope of an ENVELOPE_METRICS metric against either axis (ascending).

    Without ties in the axis values every metric's envelope sweep visits the points in the same order (axis
    descending), so it is sorted once per axis; with ties, ``pareto_index`` orders each metric itself."""
    keep = np.zeros(len(df), bool)
    for axis in AXES.values():
        if axis not in df:
            continue
        x = df[axis].to_numpy()[rows]
        order = np.argsort(-x, kind="stable")
        xs = x[order]
        ties = bool(np.any(xs[1:] == xs[:-1]))
        for metric in ENVELOPE_METRICS:
            if metric not in df:
                continue
            y = df[metric].to_numpy()[rows]
            if ties:
                keep[rows[pareto_index(x, y)]] = True
                continue
            o = order[np.isfinite(xs) & (xs > 0) & np.isfinite(y[order])]
            ys = y[o]
            best_before = np.concatenate(([-np.inf], np.maximum.accumulate(ys)[:-1]))
            keep[rows[o[ys > best_before]]] = True
    return np.nonzero(keep)[0]


def curve_end(env: pd.DataFrame, axis: str) -> float:
    """The highest per-user speed the curve reaches (tokens/s/user)."""
    return float(env[AXES[axis]].max()) if len(env) else float("nan")


END_FIELDS = ("serving", "gpus", "tp", "dp", "ep", "spec_tokens", "batch", "bound")


# the parts of a decode step that add up to it (ms columns of the evaluation): kernels by group, the latency split
# (collective latencies, gaps between kernels as the engine launches them, the kernels' execution floors fitted on
# the GPU's kernel tables, layer-floor excess), scheduler, link, draft
STEP_PARTS = {"t_attn_proj_ms": "attention projections", "t_attn_core_ms": "attention core",
              "t_experts_ms": "routed experts", "t_ffn_ms": "dense FFN / shared experts", "t_lm_head_ms": "LM head",
              "t_mhc_ms": "mHC residual streams", "t_indexer_ms": "sparse-attention indexer",
              "t_collective_latency_ms": "collective latencies", "t_kernel_gap_ms": "gaps between kernels",
              "t_kernel_floor_ms": "kernel execution floors",
              "t_layer_floor_ms": "layer floors", "t_overhead_ms": "scheduler (per step and per sequence)",
              "t_link_ms": "link transfers", "t_draft_ms": "draft passes"}


def step_contributors(row, top: int = 3) -> list[dict]:
    """The ``top`` largest parts of one operating point's decode step (STEP_PARTS present in the row), largest
    first: [{part, ms, share of the step}]."""
    step = float(row.get("step_ms", float("nan")))
    parts = [(label, float(row[k])) for k, label in STEP_PARTS.items() if k in row and np.isfinite(row[k])]
    parts.sort(key=lambda kv: -kv[1])
    return [{"part": lab, "ms": ms, "share": ms / step if step > 0 else float("nan")} for lab, ms in parts[:top]]


def end_deployment(env: pd.DataFrame, axis: str) -> dict:
    """The deployment at the curve's end (the envelope point with the highest per-user speed): its layout,
    batch and binding resource (the ``bound`` column: the resource whose time dominates the step), and the three
    largest parts of its step (``contributors``: what sets where the curve ends)."""
    if not len(env):
        return {}
    row = env.loc[env[AXES[axis]].idxmax()]
    out = {k: (row[k].item() if hasattr(row[k], "item") else row[k]) for k in END_FIELDS if k in env.columns}
    out["contributors"] = step_contributors(row)
    if "step_ms" in env.columns:
        out["step_ms"] = float(row["step_ms"])
    return out


def peak(env: pd.DataFrame, metric: str) -> float:
    return float(env[metric].max()) if len(env) else float("nan")


def read(env: pd.DataFrame, x, axis: str, metric: str) -> np.ndarray:
    """Best ``metric`` at a per-user speed of at least ``x`` (log-log interpolation between envelope points;
    the peak below the curve's start; NaN beyond its end)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    if not len(env):
        return np.full(x.shape, np.nan)
    fx, fy = env[AXES[axis]].to_numpy(float), env[metric].to_numpy(float)
    o = np.argsort(fx)
    fx, fy = fx[o], fy[o]
    out = np.exp(np.interp(np.log(x), np.log(fx), np.log(np.maximum(fy, 1e-300))))
    out[x > fx[-1] * (1 + 1e-9)] = np.nan
    out[x <= fx[0]] = fy.max()
    return out


def first_at(env: pd.DataFrame, x_min: float, axis: str) -> pd.Series | None:
    """The row with the lowest per-user speed of at least ``x_min`` (None: none): the first row of
    ``env[env[col] >= x_min].sort_values(col)``, found without building those frames (the same sort, so the same
    row among equal speeds)."""
    v = env[AXES[axis]].to_numpy(float)
    idx = np.flatnonzero(v >= x_min)
    if not idx.size:
        return None
    return env.iloc[int(idx[np.argsort(v[idx], kind="quicksort")[0]])]


