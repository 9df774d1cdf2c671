"""PNG plots (matplotlib, Agg canvas; no global backend change, no display needed)."""

from .curves import comparison_plot, frontier_plot
from .waterfall import waterfall_plot

__all__ = ["comparison_plot", "frontier_plot", "waterfall_plot"]
