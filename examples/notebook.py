# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # A planner's afternoon with perfmodel's Python API
#
# Every `perfmodel` command is also a function returning DataFrames. This notebook walks one question on the
# built-in catalog: **is Vera Rubin NVL72 worth it over GB300 NVL72 for DeepSeek-V4.1-Flash on agentic coding
# (AgentX), served by vLLM with NVFP4 weights?**
#
# 1. load the two systems and the workload,
# 2. draw their frontiers (throughput per GPU against tokens/s per user),
# 3. ask what GB300 would do with 2.4x the HBM bandwidth,
# 4. split Rubin's gain into hardware and software,
# 5. check a published claim (vLLM's "58x"),
# 6. write a CSV for a spreadsheet.
#
# Open it as a notebook with `jupytext --to notebook examples/notebook.py`, or run it as a script:
# `python examples/notebook.py` (figures and the CSV go to `$PERFMODEL_NOTEBOOK_OUT`, default a new temporary
# directory). `tests/test_notebook_example.py` runs it end to end, so it cannot go stale.

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from perfmodel import api
from perfmodel.analyses import DeploymentSpace, System, attribute, frontier, read_at, summary, whatif
from perfmodel.claims import check
from perfmodel.plots import comparison_plot

OUT = Path(os.environ.get("PERFMODEL_NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="perfmodel-notebook-"))
OUT.mkdir(parents=True, exist_ok=True)
pd.set_option("display.width", 140, "display.max_columns", 12)

MODEL, WORKLOAD, WEIGHTS = "deepseek-v4.1-flash", "agentx", "nvfp4"
# A small deployment space keeps every step to about a second: 16 batch sizes per deployment instead of 64
# (the CLI's default); every layout, speculative depth and KV-tier choice is still enumerated.
SPACE = DeploymentSpace(batch_points=16)

# %% [markdown]
# ## 1. Two systems and the workload
#
# A `System` is hardware plus a software profile (`HARDWARE[:PROFILE]` in the CLI). `fields()` gives the
# hardware numbers the model uses, in spec units (GB, TB/s, dense PFLOP/s, GB/s, W, USD per GPU-hour).
# `api.workload_lengths` gives the mean request the agentic workload turns into, in tokens.

# %%
gb300 = System("gb300-nvl72", "vllm")
rubin = System("vr200-nvl72", "vllm")
specs = pd.DataFrame({s.name: s.fields() for s in (gb300, rubin)})
specs["ratio"] = specs.iloc[:, 1] / specs.iloc[:, 0]
specs = specs.loc[["hbm_capacity_gb", "hbm_bandwidth_tbps", "fp4_dense_pflops", "fp8_dense_pflops",
                   "scaleup_bandwidth_gbps", "host_link_bandwidth_gbps", "allin_power_w", "price_usd_per_gpu_hour"]]
print(specs)
lengths = pd.Series(api.workload_lengths(WORKLOAD), name=f"{WORKLOAD} tokens per request")
print(lengths)

# %% [markdown]
# ## 2. Their frontiers
#
# `frontier` enumerates every deployment (GPUs, TP, EP, attention-DP, drafts, KV host tier, batch) and keeps
# the Pareto envelope: the best total tokens/s per GPU at each per-user speed (tokens/s per user). `summary`
# says where each curve peaks and where it ends.

# %%
fronts = [frontier(s, MODEL, WORKLOAD, weights=(WEIGHTS,), space=SPACE) for s in (gb300, rubin)]
summaries = pd.DataFrame([{k: v for k, v in summary(f).items() if not isinstance(v, (dict, list))} for f in fronts])
print(summaries[["system", "frontier_points", "peak_total_tps_per_gpu", "tps_per_user_at_peak",
                 "max_tps_per_user"]])

fig, ax = plt.subplots(figsize=(8, 4.5))
for f in fronts:
    ax.plot(f["tps_per_user"], f["total_tps_per_gpu"], marker="o", ms=2.5, label=f.attrs["system"])
ax.set(xscale="log", yscale="log", xlabel="interactivity (tokens/s per user)",
       ylabel="total tokens/s per GPU", title=f"{MODEL}, {WORKLOAD}, {WEIGHTS}")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
frontier_png = OUT / "frontiers.png"
fig.savefig(frontier_png, dpi=100)

# Both curves read on one grid of per-user speeds (the best throughput at a speed of at least x):
grid = np.geomspace(20, 0.9 * min(f["tps_per_user"].max() for f in fronts), 6)
side_by_side = pd.DataFrame({"tps_per_user": grid, **{f.attrs["system"]: read_at(f, grid) for f in fronts}})
side_by_side["ratio"] = side_by_side[rubin.name] / side_by_side[gb300.name]
print(side_by_side)

# %% [markdown]
# ## 3. What if GB300 had 2.4x the HBM bandwidth?
#
# `whatif` scales (or sets) hardware fields and profile parameters and compares the new frontier (A) with the
# baseline (B): `curve` along interactivity, `summary` at the peak and at the curve end, ratios A/B.

# %%
bw = whatif(gb300, MODEL, WORKLOAD, scale={"hbm_bandwidth": 2.4}, weights=(WEIGHTS,), space=SPACE)
print(bw.summary)
print(bw.curve[["tps_per_user", "a_total_tps_per_gpu", "b_total_tps_per_gpu", "ratio"]].iloc[::10])
whatif_png = comparison_plot(bw, OUT / "whatif-bandwidth.png")

# %% [markdown]
# ## 4. Where does Rubin's gain come from?
#
# `attribute` splits the ratio Rubin / GB300 at one per-user speed (here 200 tokens/s per user; `peak=True`
# compares the peaks) into factors, exact Shapley values on its logarithm: one per hardware group that differs
# and one per software part. Here Rubin also gets decode kernels 25% faster, a software change, so both kinds
# appear. The factors multiply to the total ratio.

# %%
rubin_tuned = rubin.with_changes(prof={"decode_speedup": 1.25}, label="vr200-nvl72:vllm, decode x1.25")
# aggregated serving here: attribution sizes a P/D split's pools once, at the central profile (serving/pools.py), so
# on a prefill-bound split a decode-only speed-up would not show
split = attribute(gb300, rubin_tuned, MODEL, WORKLOAD, at_tps_per_user=200, weights=WEIGHTS,
                  space=DeploymentSpace(batch_points=16, disaggregation=False), layouts_per_side=4)
print(split.parts[["name", "kind", "factor", "share_pct"]])
by_kind = split.parts.groupby("kind")["factor"].prod()
print(f"total x{split.total_ratio:.3g} = hardware x{by_kind.get('hardware', 1.0):.3g} "
      f"* software x{by_kind.get('software', 1.0):.3g}")

# %% [markdown]
# ## 5. Check a published claim
#
# `perfmodel list claims` lists the catalog's claims. vLLM's blog says Rubin NVL72 delivers 58x GB300 NVL72's
# total throughput per GPU at 387 tokens/s per user (P90). `check` returns a dict: the verdict, the model's
# figure with its interval, and what would have to be true for the claim to hold.

# %%
claim = check("vllm-58x-at-387")
verdict = pd.DataFrame([{
    "claim": claim["id"], "claimed": claim["claimed"], "model": claim["model"]["value"],
    "interval_low": claim["model"]["interval"][0], "interval_high": claim["model"]["interval"][1],
    "claim_over_model": claim["distance"]["multiple"], "verdict": claim["verdict"]}])
print(verdict.T)
print("why:", claim["reason"])

# %% [markdown]
# ## 6. A CSV for the spreadsheet
#
# Both frontiers with the deployment behind each point, one row per point.

# %%
cols = ["hardware", "profile", "serving", "gpus", "tp", "dp", "ep", "spec_tokens", "kv_host_tier", "batch", "tps_per_user",
        "total_tps_per_gpu", "output_tps_per_gpu", "total_tps_per_mw", "tpot_ms", "ttft_ms"]
table = pd.concat(fronts, ignore_index=True)
table = table[[c for c in cols if c in table]]
csv_path = OUT / "frontiers.csv"
table.to_csv(csv_path, index=False)
print(f"wrote {csv_path} ({len(table)} rows), {frontier_png.name} and {Path(whatif_png).name} in {OUT}")
print(table[["hardware", "gpus", "tp", "ep", "spec_tokens", "batch", "tps_per_user", "total_tps_per_gpu"]].head())
