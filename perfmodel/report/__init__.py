"""`perfmodel report`: every seed claim checked, with frontier, ratio, attribution and what-if plots and the CSV
behind each of them, written as one Markdown document into reports/."""

from .build import build_report

__all__ = ["build_report"]
