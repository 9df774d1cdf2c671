"""One set of layout rules (perfmodel/arch/layout.py): the frontier enumerates no layout predict refuses."""

import pytest

from perfmodel import api, catalog
from perfmodel.analyses.deployments import DeploymentSpace, layouts, prefill_layouts
from perfmodel.arch.layout import expert_problem, layout_problem
from perfmodel.errors import SpecError
from perfmodel.specs.deployment import Scenario

MODELS = ("deepseek-v3", "llama-3.1-8b", "deepseek-v4-pro", "llama-4-maverick")


@pytest.mark.parametrize("model", MODELS)
def test_enumerated_layouts_are_ones_predict_accepts(model):
    m = catalog.model(model)
    rows, _notes = layouts(m, 72, None, DeploymentSpace(spec_tokens=(0,)))
    pf = prefill_layouts(m, 72)
    for table in (rows, pf):
        bad = [(r.gpus, r.tp, r.ep, r.pp) for r in table.itertuples()
               if layout_problem(m, int(r.gpus), int(r.tp), int(r.ep), int(r.pp)) or expert_problem(m, int(r.ep))]
        assert bad == [] and len(table) > 0


def test_predict_refuses_what_the_rules_refuse_and_the_enumeration_skips_it():
    """256 routed experts do not split over ep=72 (uneven placement is not modelled): predict refuses it, and the
    72-GPU domain's enumeration, which once listed it, no longer does."""
    m = catalog.model("deepseek-v3")
    assert expert_problem(m, 72) is not None
    sc = Scenario.model_validate({"hardware": "gb200-nvl72", "model": "deepseek-v3", "profile": "sglang",
                                  "deployment": {"gpus": 72, "tp": 1, "ep": 72, "dp_attention": True, "batch": 72}})
    with pytest.raises(SpecError, match="routed experts"):
        api.predict(sc)
    with pytest.raises(SpecError, match="no deployment"):       # every 72-GPU split needs ep = 72
        layouts(m, 72, None, DeploymentSpace(gpus=(72,), spec_tokens=(0,)))
    rows, _ = layouts(m, 72, None, DeploymentSpace(spec_tokens=(0,)))
    assert len(rows) > 0 and 72.0 not in set(rows["ep"])
