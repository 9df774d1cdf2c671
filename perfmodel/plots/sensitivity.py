"""Tornado chart of elasticities d ln T / d ln p at one operating point (``perfmodel sensitivity --plot``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from .curves import new_figure, save_figure

COLORS = {"hardware": "tab:blue", "profile": "tab:orange"}
MAX_BARS = 20     # the largest |elasticity| first; a longer list is unreadable


def sensitivity_plot(df: pd.DataFrame, path, title: str | None = None):
    """Horizontal bars, largest |d ln T / d ln p| on top: a bar of 0.5 means +1% in the parameter gives +0.5% in
    the metric. At a capacity-bound point the bar is ``elasticity_at_capacity`` (the batch that memory allows
    follows the parameter), else ``elasticity``. Blue: hardware fields, orange: profile parameters. Parameters
    with zero elasticity are left out. Returns the path written."""
    col = "elasticity_at_capacity" if df.attrs.get("at_capacity") and "elasticity_at_capacity" in df else "elasticity"
    d = df[df[col].abs() > 1e-9]
    d = d.iloc[np.argsort(-d[col].abs().to_numpy(), kind="stable")[:MAX_BARS]][::-1]
    fig, (ax,) = new_figure(1, max(3.0, 0.32 * len(d) + 1.6))
    y = np.arange(len(d))
    ax.barh(y, d[col], color=[COLORS.get(k, "grey") for k in d["kind"]], edgecolor="black", linewidth=0.5)
    for yi, v in zip(y, d[col]):
        ax.text(v, yi, f" {v:+.3g} ", va="center", ha="left" if v >= 0 else "right", fontsize=8)
    ax.set_yticks(y, d["parameter"], fontsize=8)
    ax.axvline(0.0, color="black", linewidth=0.8)
    lim = float(d[col].abs().max()) * 1.3 if len(d) else 1.0
    ax.set_xlim(-lim, lim)
    ax.set_xlabel(f"elasticity d ln({df.attrs.get('metric', 'metric')}) / d ln(parameter)"
                  + (" incl. the batch memory allows" if col == "elasticity_at_capacity" else ""))
    kinds = [k for k in COLORS if (d["kind"] == k).any()]
    key = ", ".join(f"{COLORS[k].removeprefix('tab:')}: {k}" for k in kinds)
    text = title or (f"sensitivity of {df.attrs.get('metric')} on {df.attrs.get('system')}"
                     + (f" ({key})" if key else "") + (f"; {len(df) - len(d)} parameters not shown"
                                                        if len(df) > len(d) else ""))
    ax.set_title("\n".join(textwrap.wrap(text, 110)), fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    return save_figure(fig, path)
