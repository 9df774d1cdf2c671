"""The deployment search: ONE search with the SLO as a constraint inside it.

Every caller that picks deployments (analyses/frontier, analyses/plan, validation/frontier_rows,
analyses/agents, analyses/attribution, the claims' usable points) runs the same four steps:

    candidates  -> served points   -> SLO mask             -> pick per objective
    (enumerated)   (serving/, and      (``SLO``, slo.py: NaN  (``pick.best``: max per sample; ``pick.pareto_index``:
                   ``served.poisson``   fails; ``cut.py``      the envelope of an objective against tokens/s per user)
                   for Poisson loads)   marks points unfit)

``SLO`` is the one service-level objective type (TTFT and TPOT limits at named percentiles, an E2E limit, or a
per-user speed floor in the speed form: the agents capacity, attribution, claims);
``best_over`` runs the candidate loop of a search read per parameter sample. Units: ms (TTFT, TPOT), s (E2E),
tokens/s (per user, per GPU).
"""

from __future__ import annotations

from .cut import slo_cut, ttft_cut
from .loop import Best, best_over
from .pick import best, best_index, fewest_index, pareto_index, top_k
from .quantile import ttft_quantile_ms
from .served import SERVED_COLUMNS, poisson
from .slo import SLO, slo_infeasible

__all__ = ["SLO", "SERVED_COLUMNS", "Best", "best", "best_index", "best_over", "fewest_index", "pareto_index", "poisson", "slo_cut",
           "slo_infeasible", "top_k", "ttft_cut", "ttft_quantile_ms"]
