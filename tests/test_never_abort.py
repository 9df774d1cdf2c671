"""`validate` never aborts a file: a dense model on a whole NVL72 with no layout is searched over instances of up to
8 GPUs; a workload whose spread overflows floating point is a one-line error naming the field."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from perfmodel import catalog
from perfmodel.cli.main import main
from perfmodel.errors import SpecError
from perfmodel.serving.prefill_spread import _moments, prefill_cv2
from perfmodel.specs.workload import Dist

HEADER = (Path(__file__).resolve().parent.parent / "data/shared/curve-end.csv").read_text().splitlines()[0]


def test_a_dense_model_on_a_whole_nvl72_is_predicted(tmp_path, capsys):
    csv = tmp_path / "nvl72.csv"
    csv.write_text(HEADER + "\n" + 'x1,frontier,gb200-nvl72,,llama-3.3-70b,,fp8,,vllm,aggregated,72,,,,,,,,1024,1024,'
                   '0,,,,output_tps_per_gpu,1000,2026-03-01,https://example.org,"synthetic: no layout"\n')
    code = main(["validate", str(csv)])
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.err, out.err
    assert "1/1 rows predicted (0 unsupported)" in out.out


def test_lognormal_moments_hand_checked():
    # median 100, mean 100 e^(1/2) -> sigma 1: E[u] = 100 e^0.5, E[u^2] = 1e4 e^2
    m1, m2 = _moments(Dist(median=100, mean=100 * math.exp(0.5)), "context_tokens")
    assert math.isclose(m1, 100 * math.exp(0.5)) and math.isclose(m2, 1e4 * math.exp(2))


def test_an_overflowing_context_spread_is_one_line():
    ag = catalog.workload("agentx").agentic
    wide = ag.model_copy(update={"context_tokens": Dist(median=1000, mean=1e308)})
    with pytest.raises(SpecError) as e:
        prefill_cv2(wide, 0.1)
    assert e.value.field == "workload.agentic.context_tokens" and "\n" not in e.value.line()
