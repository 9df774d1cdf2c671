"""PNG plots (matplotlib, Agg canvas; no global backend change, no display needed)."""

from .curves import comparison_plot, frontier_plot
from .plan import plan_plot
from .sensitivity import sensitivity_plot
from .waterfall import waterfall_plot

__all__ = ["comparison_plot", "frontier_plot", "plan_plot", "sensitivity_plot", "waterfall_plot"]
