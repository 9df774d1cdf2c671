"""Validation against measured serving records and calibration of software profiles.

specs/records read and validate the record CSV (data/shared/README.md format; below analyses, which read it too)
predict_rows  predict each record (point, frontier, ratio) with a Monte Carlo uncertainty band; its rooms:
  samples, row_context (a record's setup and layout defaults), point_rows, agentic_rows, frontier_rows, envelope,
  agents_per_gpu
calibrate     fit a few shared profile parameters per engine family; render profiles/<engine>.yaml (the CLI writes them to --out-dir, or in place with --in-place)
report        summary statistics, the predicted-vs-measured plot and reports/validation.md
"""

from ..specs.records import Record, read_records

__all__ = ["Record", "read_records"]
