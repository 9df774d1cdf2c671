"""perfmodel: an analytical roofline performance model for LLM inference serving.

Data flows one way: YAML specs -> validated pydantic specs -> sympy cost equations ->
lambdified numpy kernels -> pandas DataFrames of operating points -> analyses and outputs.
"""

__version__ = "0.1.0"
