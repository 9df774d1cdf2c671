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


def plot(df: pd.DataFrame, path, held_out: pd.DataFrame | None = None) -> None:
    """Predicted vs measured, log-log, one marker per hardware; ``held_out`` rows (never fitted) are drawn as
    grey hollow markers on the same axes."""
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
    both = ok
    if held_out is not None and (held_out["status"] == "ok").any():
        h = held_out[held_out["status"] == "ok"]
        ax.scatter(h["measured"], h["predicted"], facecolors="none", edgecolors="grey", s=28,
                   label="held out (never fitted)")
        for _, r in h.iterrows():
            ax.annotate(r["id"], (r["measured"], r["predicted"]), fontsize=5, color="grey", xytext=(3, -7),
                        textcoords="offset points")
        both = pd.concat([ok, h])
    lo = min(both["measured"].min(), both["low"].min(), both["predicted"].min()) * 0.7
    hi = max(both["measured"].max(), both["high"].max(), both["predicted"].max()) * 1.4
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


def _extra_section(title: str, file: str, df: pd.DataFrame, s: dict, note: str) -> str:
    return f"""## {title}

`{file}` ({s['rows']} records). {note}

{summary_text(s)}

{_md_table(df)}
"""


def write_report(df: pd.DataFrame, s: dict, path: Path, data_file: str, recs=None, discussion: str | None = None,
                 extras: list[tuple[str, str, pd.DataFrame, dict, str]] = ()):
    """reports/validation.md plus reports/validation.csv and reports/validation.png beside it.

    ``extras``: (title, file, rows, summary, note) sections for other record files (project data, holdout)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = path.with_suffix(".csv"), path.with_suffix(".png")
    df.to_csv(csv_path, index=False, float_format="%.6g")
    held = [e[2] for e in extras if e[1].startswith("data/holdout/")]
    plot(df, png_path, held_out=pd.concat(held) if held else None)
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
engine family, none per row), so they overstate accuracy on unseen data. The held-out section below is the
out-of-sample check: published results the calibration never read; `reports/crossval.md` (`perfmodel
crossval`) predicts each record here with profiles fitted without it.

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

{chr(10).join(_extra_section(*e) for e in extras)}
## Discussion

{discussion or DISCUSSION}
"""
    path.write_text(text)
    return path


DISCUSSION = """\
**Calibration** (`perfmodel calibrate`, one command, deterministic grid search: a coarse grid, then two finer
grids around the best point) on calibration.csv plus the sourced records in `data/measured/` (35 in all).
A family gets its own fit only with at least two records per fitted parameter: eff_weights, eff_gemm,
kernel_overhead_us and moe_imbalance; eff_gemm_fp4 where at least three records run 4-bit weights on FP4 tensor
cores (else it equals eff_gemm); the per-draft MTP acceptance rate where at least three records draft tokens
without publishing it (else a sourced prior, 0.8 [0.6, 0.95]: DeepSeek-V3's 85-90% second-token acceptance;
TensorRT-LLM's measured 1.92 / 2.58 / 2.82 tokens for 1 / 2 / 3 drafts). Smaller families start from their base
engine's fit (dynamo-trtllm from trtllm) or from the pooled fit over all records, and refit only their serving
stack's cost per kernel and GEMM efficiency (this pair was chosen among four candidates by leave-one-out and
held-out error, not in-sample error). Result: trtllm has an own fit on 20 records; dynamo-trtllm (4), sglang (5,
incl. the `deepseek` row) and vllm (6) refit two parameters around a larger fit. step_overhead_ms is a documented
prior (0.5 ms, 0.2-1.5 ms). `perfmodel calibrate` prints every fitted parameter that ends on an edge of its range:
trtllm's moe_imbalance (3.0), sglang's cost per kernel (8 us) and dynamo-trtllm's eff_gemm (1.0, the physical
limit: a modeling gap, below).

**What changed in this pass, and why** (each change is physics, data or fitting method; none is a per-row knob):

1. *Busiest EP rank from routing statistics* (equations/ffn.py). The step waits for the busiest expert-parallel
   rank. With random top-k routing its distinct experts are min(E/ep, mu + z(ep) sigma) and its token load is
   (T k / ep)(1 + z(ep) sqrt((1 - 1/ep) ep / (T k))), z(n) the expected maximum of n standard normals (checked
   against a routing simulation in the tests). moe_imbalance is now only the structural skew on top. It matters
   at small batch: the min-latency EP rows (c05, c06) read ~35% more expert weights per step than the mean rank.
2. *Fixed cost per kernel, not per layer* (`kernel_overhead_us` x kernels the layer launches: DeepSeek MoE layer
   20, MLA + MLP layer 13, Llama layer 9). A per-layer constant made the 80-layer Llama pay DeepSeek's overhead or
   DeepSeek pay Llama's; with one per-kernel constant the trtllm fit improves at the same parameter count.
3. *Measured data with published acceptance* (`data/measured/trtllm-blog01-mtp-depth.csv`: TensorRT-LLM's B200
   DeepSeek-R1 table of MTP depth 0-5, with measured acceptance 1.00-3.01). Before, the trtllm fit explained the
   slow batch-1 rows with an acceptance of 0.43 per draft (1.69 tokens for 3 drafts, against the 2.82
   TensorRT-LLM measures for this model, engine and GPU): that fit predicted the no-MTP batch-1 record 80% too
   fast. With the table in the fit the per-kernel cost carries the batch-1 latency (5.6 us/kernel).
4. *No parameter from one or two rows.* sglang's acceptance was set by c25 alone; dynamo-trtllm was pooled with
   trtllm (different benchmark data and serving stack); sglang fitted four parameters on five records (eff_weights
   ended at 1.0, unidentified). Now: acceptance from >= 3 rows, two records per parameter, small families refit
   two parameters around a larger fit. The two-records-per-parameter rule was introduced in this pass, after
   sglang's over-parameterised fit was seen.
5. *FP4 GEMM efficiency* (`eff_gemm_fp4`). Block-scaled NVFP4/MXFP4 GEMMs on Blackwell reach a smaller share of
   their (twice as high) peak than FP8/BF16 GEMMs: trtllm fits 0.32 against 0.49. With one efficiency for both,
   the B200 rows sat 12-17% over and the Hopper rows 12-15% under; the trtllm rms ln error fell 0.14 -> 0.115.
6. *vLLM records* (`data/measured/vllm-blog-deepseek.csv`, five first-party rows; how they were chosen is in
   data/measured/README.md) and nine held-out third-party rows (`data/holdout/`, never fitted).

Items 1-4 first cost in-sample accuracy (within +-25% 67% -> 71%, band 92% -> 79%), because the earlier fit used
the acceptance rate and sglang's unidentified parameters to absorb other costs; items 5-6 and the small-family
refit brought it to the summary above.

**Earlier passes** (kept): prefill EP all-to-all in throughput form with group-limited routing (c02/c03 from -45%
to within 10%; the scale-up part now uses the decode formula's deduplicated copies); mixed-in prefill on the
busiest attention-DP rank (c07); queueing above KV capacity (c08); 90% profile-likelihood parameter ranges for the
band; no EP exchange under TP attention; decode workers of ep GPUs for disaggregated rows (c12).

**Rows outside +-25%, and why we think they miss:**

- **c10 (dynamo-trtllm, GB200 disaggregated, concurrency 180, +94%).** By Little's law the measured point implies
  ~2.7 s of TTFT at a prefill load the model puts at a quarter of the P4 pool's capacity; the model's decode at ~6
  sequences per GPU on EP32 is also faster than measured. The same family's high-batch row c12 (-21%) pulls the
  other way, which is why dynamo-trtllm's eff_gemm ends at 1.0: c12's step is dominated by MLA attention, which
  TensorRT-LLM runs in FP8 on Blackwell with an FP8 KV cache (its DeepSeek throughput blog) while the model runs
  attention math at BF16. Switching that on for TensorRT-LLM was tried and made the family fit worse overall.
- **c04 (sglang, GB200 decode, +34%).** Batch not published; the model reads the largest batch that fits.
- **c06 / c07 (trtllm on H200, DeepSeek-R1 FP8: min-latency +28%, DP8+EP8 max throughput +26%).** The B200
  DeepSeek rows fit (c05 -3%, c08 +17%); the H200 ones do not. A candidate is the block-scaled (128x128) FP8 MoE
  GEMMs of DeepSeek's checkpoint against the per-tensor FP8 GEMMs of the Llama rows, but two rows cannot
  calibrate that. moe_imbalance also ends at the top of its range (3.0).

Rows outside the band (c04, c16, c21): the band is parameter uncertainty only, as issue 6 requires; the trtllm
ranges are narrow because 20 records pin them, so the dense Hopper rows (-12% / -15%) fall just outside.

**Leave-one-out** (`reports/crossval.md`: each record predicted by profiles fitted without it): median |error|
15%, mean 19%, 74% within +-25%, and c09 is not reached at all (the fold's dynamo-trtllm fit ends at 256
tok/s/user, below the measured 286). That, not the in-sample summary, is the accuracy to expect on a new record
from the same kind of source. Worst folds: c15 (+53%: vLLM without its only dense-model record), c04 (+50%),
c10 (+73%).

**Out of sample** (the held-out section above, nine InferenceX rows on Kimi K2 and GLM-5): median |error| 43%,
one row of nine within +-25%; all but v10 and v12 are over-predicted by 38-69%. The gaps they show: KV capacity
for Kimi K2 NVFP4 on 4 B200 (v10: the model fits ~22 sequences with the profile's 0.9 memory fraction and 8 GB
workspace where vLLM ran 64), and both engines running these two model families slower than the DeepSeek-
and Llama-calibrated profiles (GLM-5's sparse-attention path in SGLang, Kimi K2's 384-expert MoE in vLLM).
These are the next things to model; more records of these model families would let the fit see them.

Frontier rows use the published concurrency as a cap on the batch search (the README allows hints as
constraints). Without it (FRONTIER_HINTS = "free"), c09/c10 are over-predicted 6-60x: the measured points are
low-concurrency deployments, not the best the hardware can do at that interactivity.
"""
