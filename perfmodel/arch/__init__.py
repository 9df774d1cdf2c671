"""Architecture arithmetic: parameter counts and KV-cache bytes, derived from a ModelSpec.

These are facts of the architecture (element counts), used by the listing, by the tests against
published figures, and as constants inside the sympy cost equations.
"""

from .kv import kv_bytes_per_token, kv_fixed_bytes_per_sequence
from .params import ParamCounts, param_counts
from .summary import model_summary

__all__ = ["ParamCounts", "param_counts", "kv_bytes_per_token", "kv_fixed_bytes_per_sequence", "model_summary"]
