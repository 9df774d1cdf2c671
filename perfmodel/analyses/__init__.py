"""Analyses over the evaluation API; every function returns DataFrames (the CLI only formats them).

- ``frontier``     Pareto envelope of throughput per GPU vs tokens/s per user over enumerated deployments
- ``compare``      ratio A/B of two frontiers along interactivity and at peak (per GPU, MW, dollar)
- ``whatif``       scaled / set hardware fields and profile parameters: new frontier vs baseline
- ``sensitivity``  elasticities d ln T / d ln p at an operating point, from sympy derivatives
- ``attribute``    exact Shapley split of a ratio into hardware groups and software parts
"""

from .compare import Comparison, compare
from .deployments import DeploymentSpace
from .frontier import candidates, frontier, pareto, read_at, summary
from .sensitivity import sensitivity
from .systems import System
from .whatif import whatif


def attribute(*args, **kwargs):
    """See ``perfmodel.analyses.attribution.attribute``."""
    from .attribution import attribute as _attribute
    return _attribute(*args, **kwargs)


__all__ = ["Comparison", "DeploymentSpace", "System", "attribute", "candidates", "compare", "frontier", "pareto",
           "read_at", "sensitivity", "summary", "whatif"]
