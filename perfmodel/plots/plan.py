"""The capacity plan as a chart: GPUs (or MW, or USD per hour) needed against demand, one line per system."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import SpecError
from .curves import new_figure, save_figure

PLAN_METRICS = {"gpus": "GPUs needed", "mw": "MW (all-in power)", "usd_per_hour": "USD per hour"}
DEMAND_LABELS = {"requests_per_s": "requests/s", "output_tps": "output tokens/s", "tokens_per_day":
                 "output tokens/day", "users": "concurrent users", "sessions": "live agent sessions",
                 "limit": "limit"}


def plan_plot(df, path, metric: str = "gpus") -> Path:
    """``metric`` (gpus, mw or usd_per_hour) of each plan row against its demand, one line a system (markers at
    each demand scale); rows over a limit are drawn hollow. Returns the PNG path."""
    if metric not in PLAN_METRICS:
        raise SpecError(f"unknown plot metric {metric!r}; choose from {list(PLAN_METRICS)}", field="--plot-metric")
    fig, (ax,) = new_figure()
    x_col = "demand_value" if df["demand_value"].notna().all() else "demand_scale"
    for system, g in df.groupby("system", sort=False):
        g = g.sort_values(x_col)
        x, y = g[x_col].to_numpy(float), g[metric].to_numpy(float)
        line, = ax.plot(x, y, marker="o", linewidth=1.6, label=system)
        over = g["status"].astype(str).str.startswith("over").to_numpy()
        if over.any():
            ax.plot(x[over], y[over], "o", markerfacecolor="white", color=line.get_color())
    kind = str(df["demand_kind"].iloc[0])
    ax.set_xlabel(f"demand ({DEMAND_LABELS.get(kind, kind)})" if x_col == "demand_value" else "demand scale")
    ax.set_ylabel(PLAN_METRICS[metric])
    if np.nanmax(df[x_col].to_numpy(float)) / max(np.nanmin(df[x_col].to_numpy(float)), 1e-300) > 20:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    slo = df.attrs.get("slo")
    ax.set_title(f"{df['model'].iloc[0]} on {df['workload'].iloc[0]}" + (f" (SLO: {slo})" if slo else ""),
                 fontsize=9)
    return save_figure(fig, path)
