"""Waterfall of a multiplicative attribution: from 1x (the 'from' system) through each part to the total."""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from .curves import new_figure, save_figure

COLORS = {"hardware": "tab:blue", "software": "tab:orange"}


def waterfall_plot(attr, path, title: str | None = None):
    """Bars on a log axis: each part moves the running product by its factor; the last bar is the total.

    Blue: hardware groups, orange: software parts. Returns the path written.
    """
    parts = attr.parts
    fig, (ax,) = new_figure(1, 5.0)
    level = 1.0
    names = list(parts["name"]) + ["total"]
    for i, r in enumerate(parts.itertuples()):
        new = level * r.factor
        lo, hi = min(level, new), max(level, new)
        ax.bar(i, max(hi - lo, lo * 2e-3), bottom=lo, color=COLORS.get(r.kind, "grey"), edgecolor="black",
               linewidth=0.5)
        ax.text(i, hi * 1.02, f"x{r.factor:.3g}", ha="center", va="bottom", fontsize=8)
        if i + 1 < len(names):
            ax.plot([i + 0.4, i + 0.6], [new, new], color="black", linewidth=0.6)
        level = new
    n = len(parts)
    lo, hi = min(1.0, attr.total_ratio), max(1.0, attr.total_ratio)
    ax.bar(n, max(hi - lo, lo * 2e-3), bottom=lo, color="tab:gray", edgecolor="black", linewidth=0.5)
    ax.text(n, max(attr.total_ratio, 1.0) * 1.02, f"x{attr.total_ratio:.3g}", ha="center", va="bottom",
            fontsize=9, fontweight="bold")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_yscale("log")
    # ticks at 1, 2, 3, 5 x powers of ten, written as plain multiples (x1.5 reads better than 10^0.18)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(1.5, 4.0, 7.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_xticks(np.arange(n + 1), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"multiple of {attr.meta.get('from')}")
    m = attr.meta
    kinds = [k for k in COLORS if (parts["kind"] == k).any()]       # the key names only what is drawn
    key = ", ".join(f"{COLORS[k].removeprefix('tab:')}: {k}" for k in kinds)
    text = title or (f"{m.get('model')} - {m.get('workload')}: {m.get('to')} / {m.get('from')}, {m.get('metric')} "
                     f"at {m.get('at')}" + (f" ({key})" if key else ""))
    ax.set_title("\n".join(textwrap.wrap(text, 110)), fontsize=9)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return save_figure(fig, path)
