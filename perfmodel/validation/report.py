"""Summary text, the predicted-vs-measured plot and the Markdown validation report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TARGETS = {"median_abs_error_pct": ("<=", 15.0), "within_25pct": (">=", 0.80), "inside_band": (">=", 0.80)}


def summary_text(s: dict) -> str:
    return (f"{s['predicted']}/{s['rows']} rows predicted ({s['unsupported']} unsupported); "
            f"median |error| {s['median_abs_error_pct']:.1f}%, mean |error| {s['mean_abs_error_pct']:.1f}%, "
            f"within ±25%: {s['within_25pct']:.0%}, measured inside band: {s['inside_band']:.0%}")


def table_text(df: pd.DataFrame) -> str:
    cols = ["id", "hardware", "model", "metric", "measured", "predicted", "low", "high", "error_pct", "status"]
    return df[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")


def plot(df: pd.DataFrame, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ok = df[df["status"] == "ok"]
    fig, ax = plt.subplots(figsize=(6.5, 6))
    markers = "osD^v<>ph*X"
    for i, (hw, g) in enumerate(ok.groupby("hardware")):
        yerr = np.vstack([g["predicted"] - g["low"], g["high"] - g["predicted"]]).clip(0)
        ax.errorbar(g["measured"], g["predicted"], yerr=yerr, fmt=markers[i % len(markers)], label=hw,
                    capsize=2, alpha=0.85)
        for _, r in g.iterrows():
            ax.annotate(r["id"], (r["measured"], r["predicted"]), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
    lo = min(ok["measured"].min(), ok["low"].min()) * 0.7
    hi = max(ok["measured"].max(), ok["high"].max()) * 1.4
    x = np.array([lo, hi])
    ax.plot(x, x, "k-", lw=0.8)
    ax.plot(x, x * 1.25, "k:", lw=0.6)
    ax.plot(x, x * 0.75, "k:", lw=0.6)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="measured", ylabel="predicted",
           title="perfmodel: predicted vs measured (bars: 5-95% band; dotted: ±25%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _md_table(df: pd.DataFrame) -> str:
    cols = ["id", "kind", "hardware", "model", "engine", "metric", "measured", "predicted", "low", "high",
            "error_pct", "status"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float):
                v = "" if np.isnan(v) else (f"{v:+.1f}" if c == "error_pct" else f"{v:.4g}")
            cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(df: pd.DataFrame, s: dict, path: Path, data_file: str, recs=None, discussion: str | None = None):
    """reports/validation.md plus reports/validation.csv and reports/validation.png beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = path.with_suffix(".csv"), path.with_suffix(".png")
    df.to_csv(csv_path, index=False, float_format="%.6g")
    plot(df, png_path)
    met = []
    for k, (op, t) in TARGETS.items():
        v = s[k]
        good = v <= t if op == "<=" else v >= t
        shown = f"{v:.1f}%" if k == "median_abs_error_pct" else f"{v:.0%}"
        tgt = f"{t:.0f}%" if k == "median_abs_error_pct" else f"{t:.0%}"
        met.append(f"| {k} | {shown} | {op} {tgt} | {'met' if good else 'NOT met'} |")
    ok = df[df["status"] == "ok"].copy()
    ok["abs"] = ok["error_pct"].abs()
    worst = ok.sort_values("abs", ascending=False).head(6)
    notes = {r.id: r.notes for r in (recs or [])}
    worst_lines = [f"- **{r.id}** ({r.hardware}, {r.model}, {r.metric}): measured {r.measured:.4g}, predicted "
                   f"{r.predicted:.4g} ({r.error_pct:+.0f}%), band [{r.low:.4g}, {r.high:.4g}]. Setup: "
                   f"{notes.get(r.id, '')}" + (f" Model note: {r.note}." if r.note else "")
                   for r in worst.itertuples()]
    unsup = df[df["status"] != "ok"]
    text = f"""# Validation: predicted vs measured

Regenerate with one command (after `perfmodel calibrate`):

    perfmodel validate {data_file} --report {path}

Data: `{data_file}` ({s['rows']} records). Profiles: the catalog profile of each row's engine
(`perfmodel.validation.predict_rows.ENGINE_PROFILE`; `deepseek` -> `sglang`, `tilert` -> `trtllm`).
Band: {200} Monte Carlo draws per row (seed 0), every profile parameter uniform in its [low, high] range,
propagated through the compiled equations; low/high are the 5th/95th percentiles. Rules for blank cells and for
frontier/ratio rows: the module docstring of `perfmodel/validation/predict_rows.py`.

**These are in-sample numbers**: the profiles were fitted on these same records (few shared parameters per
engine family, none per row), so they overstate accuracy on unseen data.

## Summary

{summary_text(s)}

| statistic | value | target (issue 6) | |
|---|---|---|---|
{chr(10).join(met)}

![predicted vs measured]({png_path.name})

Per-row CSV: [{csv_path.name}]({csv_path.name}).

## Rows

{_md_table(df)}

## Worst rows

{chr(10).join(worst_lines)}

{"## Unsupported rows" + chr(10) + chr(10) + chr(10).join(f"- {r.id}: {r.status}" for r in unsup.itertuples()) if len(unsup) else "No row is unsupported."}

## Discussion

{discussion or DISCUSSION}
"""
    path.write_text(text)
    return path


DISCUSSION = """\
Calibration (`perfmodel calibrate`: grid search over eff_weights, eff_gemm, kernel_overhead_us, moe_imbalance per
family; trtllm and dynamo-trtllm fitted jointly on 18 records; sglang on 5 records incl. the `deepseek` row;
vllm has one record and takes the pooled fit over all 24). step_overhead_ms is no longer fitted: it is a
documented prior (0.5 ms, range 0.2-1.5 ms, `calibrate.PRIORS`).

**What changed since the first pass** (median |error| 21.4% -> 12.1% after items 1-5; within +-25% 58% -> 71%;
measured inside band 75% -> 88%; then item 6, a physics correction, moved the in-sample numbers to those in the
summary above: it is kept because it is right, not because it fits):

1. *Prefill EP all-to-all in throughput form* (perfmodel/equations/step.py). The prefill all-to-all (DeepEP normal
   mode) sends each token once per remote scale-up domain over the NIC and fans it out over NVLink inside the
   domain, instead of k copies at a blended link bandwidth. Group-limited routing (DeepSeek-V3/R1/V3.2:
   n_group 8, topk_group 4, now optional MoE fields `expert_groups` / `route_groups` taken from the configs)
   bounds the domains per token: expected remote domains (n-1)(1-(1-1/n)^m), m = min(k, route_groups max(1,
   n/expert_groups)); link time max(NIC, NVLink). For c02/c03 (EP32 on 4 H100 nodes) the NIC bytes drop ~3x;
   the rows went from -45%/-39% to within 10%, and sglang no longer needs eff_gemm = 1. Decode keeps the
   low-latency form (direct per-expert copies).
2. *Attention-DP prefill placement.* A prefill request runs on one DP rank, and the ranks synchronize at every
   MoE all-to-all, so mixed-in prefill tokens split over min(dp, max(1, requests per step)) ranks, not dp.
   This makes the aggregated max-throughput DP8 rows (c07, c08) slower (c07 +50% -> +18%) and a single
   request's TTFT is no longer divided over DP ranks.
3. *Fixed cost per layer* (`kernel_overhead_us`, added to every layer of every pass) replaces the fitted
   per-step constant: launch gaps and kernel tails scale with depth, so the 36-layer gpt-oss-120b no longer
   pays the overhead the 80-layer Llama-70B needs (c22 -37% -> within 10%; c23 -43% -> -28%).
4. *Queueing above capacity.* A published concurrency above the modeled KV capacity (c08: 7168 > ~5800 at full
   isl+osl, TensorRT-LLM's default no-evict admission) is evaluated at the capacity; the excess queues.
5. *Bands.* Fitted ranges are now the 90% profile-likelihood region (sigma^2 = residual loss / (n - k)), the same
   nominal level as the 5th-95th percentile band, instead of 68%. This is still parameter uncertainty propagated
   through the equations, scaled by the fit's own residual spread, not a fudge factor.
6. *EP exchange under TP attention* (perfmodel/equations/step.py). With attention TP (dp = 1) every GPU already
   holds every token after the attention all-reduce, so MoE layers need no dispatch: only the FFN all-reduce.
   With attention-DP each GPU receives the non-local tokens routed to its expert group,
   T (1 - (1 - 1/ep)^k)(1 - 1/dp) d bytes, one copy per distinct rank (DeepEP deduplicates), which also covers
   expert-TP layouts (ep < G) that previously exchanged nothing. The min-latency TP8 rows (c05, c06) lost two
   collectives per MoE layer and got faster: c06 moved from +30% to +47%, i.e. the TensorRT-LLM min-latency
   path costs more than its collectives' physics (or MTP accepts fewer tokens than the assumed 0.7 per draft).

7. *MTP acceptance is fitted* where a family's records draft tokens without publishing the acceptance (the
   per-draft rate, as one more shared parameter of the family). sglang's fit (driven by c25, DeepSeek's own MTP
   with one draft) lands at ~0.89 per draft, inside the 85-90% second-token acceptance the DeepSeek-V3 technical
   report (arXiv 2412.19437) publishes, and its eff_weights is no longer pinned at 1.0; trtllm's lands at ~0.63
   for three chained drafts. Overall error fell (mean |error| 20.7% -> 19.4%, band coverage 88% -> 92%) but one
   more row crossed the 25% line (c11 came inside, c07 / c12 / c23 went just outside): the fit minimises squared
   log error, not a count at a threshold, and we report the count as it falls.
8. *Disaggregated decode workers.* A disaggregated row's decode GPUs are read as workers of ep GPUs when attention
   is data-parallel (P12 / D20 EP4 = five DEP4 workers: one 20-GPU instance would need expert-TP 5, which does not
   divide the expert width), with the concurrency spread over them.

**Remaining gaps (rows outside +-25%), and why we think they miss:**

- **c10 (dynamo-trtllm, GB200 disagg, concurrency 180).** The interactivity target (164 tok/s/user) sits near the
  end of the modeled frontier of a 32-GPU EP decode pool at low load; the model's decode at ~6 sequences per GPU
  is too fast (latency floors of the wide-EP all-to-all and MTP at low batch are under-modeled). Its band is very
  wide for the same reason.
- **c15 (vLLM, H100, Llama-70B 8K/1K).** The only vLLM record: it uses the pooled (mostly TensorRT-LLM) fit. vLLM
  is slower; one record cannot calibrate a family without fitting to that row, which we refuse to do.
- **c04 (sglang, GB200 decode).** The batch is not published ("saturated"); the model reads the largest batch that
  fits (~850 sequences per GPU). The real run was very likely capped by the engine (DeepEP low-latency dispatch
  buffer / CUDA-graph batch, 256 per GPU in the H100 sibling run c01), which the profile does not model.
- **c08 / c07 (trtllm, DP8+EP8 max throughput) and c06 (H200 min-latency, MTP).** c08 stays over after the
  capacity cap and the DP-rank prefill term; moe_imbalance for trtllm still goes to the top of its range (3.0), a
  sign that it absorbs other costs of these EP rows (load imbalance across attention-DP ranks is not modeled).
- **c12 / c09 (dynamo-trtllm disagg with MTP) and c23 (gpt-oss-120b on H200)** are under-predicted by 20-31%; all
  three are inside their bands. The fitted trtllm acceptance (0.63) is shared by the min-latency and the
  disaggregated rows; one rate for every TensorRT-LLM deployment is a simplification.

Frontier rows use the published concurrency as a cap on the batch search (the README allows hints as
constraints). Without it (FRONTIER_HINTS = "free"), c09/c10 are over-predicted 6-60x: the measured points are
low-concurrency deployments, not the best the hardware can do at that interactivity, so the free frontier answers
a different question.
"""
