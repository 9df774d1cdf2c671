"""Frontier curves as in InferenceX charts: throughput per GPU against interactivity (tok/s/user, log x)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import SpecError
from ..fileio import write_figure

LABELS = {
    "total_tps_per_gpu": "Total tokens/s per GPU (input + output)",
    "output_tps_per_gpu": "Output tokens/s per GPU",
    "total_tps_per_mw": "Total tokens/s per MW (all-in power)",
    "total_tokens_per_usd": "Total tokens per USD",
}


def _ylabel(metric: str, frontiers) -> str:
    """The metric's axis label; a total-token metric on a workload with prefix hits says it counts the cached
    prefix (agentic sessions: most input tokens are read from the KV cache, not prefilled)."""
    label = LABELS.get(metric, metric)
    cached = any("prefix_hit" in f and (f["prefix_hit"].fillna(0) > 0).any() for f in frontiers)
    if cached and metric.startswith("total_"):
        label = label.replace("(input + output)", "(input incl. cached prefix + output)") \
            if "(input + output)" in label else label + " (input incl. cached prefix)"
    return label


def new_figure(rows: int = 1, height: float = 5.0):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(9, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False, height_ratios=[2, 1][:rows] if rows > 1 else None)
    return fig, [ax[0] for ax in axes]


def save_figure(fig, path) -> Path:
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise SpecError(f"plot file must end in .png, got {str(p)!r}", field="--plot")
    return write_figure(fig, p)


def _label(front, i):
    return front.attrs.get("system") or f"system {i + 1}"


def _curve(ax, front, metric, label, **kw):
    x, y = front["tps_per_user"].to_numpy(), front[metric].to_numpy()
    order = np.argsort(x)
    line, = ax.plot(x[order], y[order], marker="o", markersize=2.5, linewidth=1.6, label=label, **kw)
    return line


def frontier_plot(frontiers, path, metric: str = "total_tps_per_gpu", title: str | None = None) -> Path:
    """One or several frontiers on one chart (log-scaled interactivity axis). Returns the path written.

    x: tokens/s per user; y: ``metric`` (default total tokens/s per GPU). ``path`` must end in .png."""
    frontiers = list(frontiers)
    fig, (ax,) = new_figure()
    for i, f in enumerate(frontiers):
        line = _curve(ax, f, metric, _label(f, i))
        top = f["tps_per_user"].max()
        ax.axvline(top, color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("Interactivity (tokens/s per user)")
    ax.set_ylabel(_ylabel(metric, frontiers))
    ax.grid(True, which="both", alpha=0.3)
    ax.set_ylim(bottom=0)
    f0 = frontiers[0]
    wl = f0.attrs.get("workload", "")
    lengths = f"isl {f0.attrs.get('isl', 0):g}, osl {f0.attrs.get('osl', 0):g}"
    ax.set_title(title or f"{f0['model'].iloc[0]} - {wl} ({lengths}) - dotted: where each curve ends")
    ax.legend(loc="upper right", fontsize=8)
    return save_figure(fig, path)


def comparison_plot(cmp, path, metric: str = "total_tps_per_gpu", title: str | None = None) -> Path:
    """Both frontiers (top) and the ratio A/B along interactivity (bottom). Returns the path written (.png).

    x: tokens/s per user; top y: ``metric`` (default total tokens/s per GPU); bottom: A/B per GPU and per MW."""
    fig, (ax, axr) = new_figure(2, 7.0)
    for i, f in enumerate((cmp.a, cmp.b)):
        line = _curve(ax, f, metric, ("A: " if i == 0 else "B: ") + _label(f, i))
        ax.axvline(f["tps_per_user"].max(), color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_ylabel(_ylabel(metric, (cmp.a, cmp.b)))
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    a = cmp.a
    wl = a.attrs.get("workload", "")
    model = a["model"].iloc[0] if "model" in a and len(a) else ""
    ax.set_title(title or f"{model} - {wl}: frontiers (dotted: where each curve ends) and the ratio A/B")
    c = cmp.curve
    axr.plot(c["tps_per_user"], c["ratio"], color="black", linewidth=1.6, label="A/B per GPU")
    if "ratio_per_mw" in c:
        axr.plot(c["tps_per_user"], c["ratio_per_mw"], color="tab:green", linewidth=1.0, linestyle="--",
                 label="A/B per MW")
    axr.axhline(1.0, color="grey", linewidth=0.8)
    axr.set_xscale("log")
    axr.set_xlabel("Interactivity (tokens/s per user)")
    axr.set_ylabel("ratio A/B")
    axr.grid(True, which="both", alpha=0.3)
    axr.legend(loc="upper left", fontsize=8)
    return save_figure(fig, path)
