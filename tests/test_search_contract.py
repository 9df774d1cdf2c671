"""The one deployment search (perfmodel/search): no module outside it defines its own SLO type, and the callers
moved onto it (MIGRATED) keep no copy of the search: no pick of the best admissible point
(``np.where(ok, value, -np.inf).max(...)``) and no SLO comparison on the served latency columns. The checker is
exercised on a planted violation so it cannot pass vacuously."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "perfmodel"
MIGRATED = ("perfmodel/analyses/frontier.py", "perfmodel/analyses/plan.py", "perfmodel/analyses/deployments.py",
            "perfmodel/validation/predict_rows.py", "perfmodel/validation/benchmark_runs.py")
SLO_LIKE_ALLOWED = {
    # not yet on search.SLO (issue 39): the agents capacity's speed floor at any percentile
    ("perfmodel/analyses/agents.py", "SLO"),
    # the workload catalog's YAML schema of a benchmark scenario (read into search.SLO by benchmark_runs)
    ("perfmodel/specs/workload.py", "LatencyLimits"),
    # a claim's operating point (YAML schema): its TTFT limit and speed floor, read by claims/reading.py (issue 39:
    # claims onto search.SLO is still to do)
    ("perfmodel/specs/claim.py", "OperatingPoint"),
}
SERVED_LATENCY = {"ttft_ms", "ttft_p90_ms", "ttft_p95_ms", "ttft_p99_ms", "tpot_ms", "tpot_p99_ms"}


def slo_like_classes(src: str) -> list[str]:
    """Classes whose fields name a TTFT limit and a TPOT limit or speed floor: an SLO type by another name."""
    out = []
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, ast.ClassDef):
            fields = {s.target.id for s in n.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
            if "ttft_ms" in fields and fields & {"tpot_ms", "tps_per_user"}:
                out.append(n.name)
    return out


def _neg_inf(n: ast.AST) -> bool:
    return (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Attribute)
            and n.operand.attr == "inf")


def search_copies(src: str) -> list[str]:
    """Lines (as 'line N: what') where a module searches deployments itself."""
    out = []
    for n in ast.walk(ast.parse(src)):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "max"
                and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Attribute)
                and n.func.value.func.attr == "where" and len(n.func.value.args) == 3
                and _neg_inf(n.func.value.args[2])):
            out.append(f"line {n.lineno}: best-admissible pick (search.best)")
        if isinstance(n, ast.Compare) and n.ops and isinstance(n.ops[0], (ast.LtE, ast.Lt)):
            for side in (n.left, *n.comparators):
                names = {c.value for c in ast.walk(side) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
                if names & SERVED_LATENCY:
                    out.append(f"line {n.lineno}: latency limit compared outside search.SLO")
                    break
    return out


def test_one_slo_type():
    found = {(p.relative_to(ROOT).as_posix(), c) for p in PKG.rglob("*.py") if "perfmodel/search/" not in
             p.relative_to(ROOT).as_posix() for c in slo_like_classes(p.read_text())}
    assert found - SLO_LIKE_ALLOWED == set()
    assert any(c == "SLO" for c in slo_like_classes((PKG / "search/slo.py").read_text()))


def test_migrated_callers_use_the_one_search():
    bad = {f: search_copies((ROOT / f).read_text()) for f in MIGRATED}
    assert {f: v for f, v in bad.items() if v} == {}


PLANTED = '''
from dataclasses import dataclass
import numpy as np

@dataclass
class ServiceTarget:
    ttft_ms: float
    tps_per_user: float

def my_frontier(df, limit, val, ok):
    ok = ok & (df["ttft_p99_ms"].to_numpy() <= limit)
    return np.maximum(0, np.where(ok, val, -np.inf).max(axis=1))
'''


def test_the_checker_flags_a_planted_copy(tmp_path):
    f = tmp_path / "planted.py"
    f.write_text(PLANTED)
    assert slo_like_classes(f.read_text()) == ["ServiceTarget"]
    found = search_copies(f.read_text())
    assert any("best-admissible pick" in x for x in found) and any("latency limit" in x for x in found)
