"""The one deployment search (perfmodel/search): no module outside it defines its own SLO type (only the YAML input
schemas, each converted to search.SLO in one place), and the callers moved onto it (MIGRATED) keep no copy of the
search: no masked pick of the best admissible point (``np.where(ok, value, -np.inf)``), no latency limit compared on
the served columns and no per-user speed floor compared. The checker is
exercised on a planted violation so it cannot pass vacuously."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "perfmodel"
MIGRATED = ("perfmodel/analyses/frontier.py", "perfmodel/analyses/plan.py", "perfmodel/analyses/deployments.py",
            "perfmodel/validation/predict_rows.py", "perfmodel/validation/frontier_rows.py",
            "perfmodel/validation/point_rows.py", "perfmodel/validation/agents_per_gpu.py",
            "perfmodel/validation/envelope.py", "perfmodel/validation/agentic_rows.py",
            "perfmodel/validation/benchmark_runs.py",
            "perfmodel/analyses/agents.py", "perfmodel/analyses/attribution.py", "perfmodel/claims/check.py",
            "perfmodel/claims/sides.py", "perfmodel/claims/findings.py", "perfmodel/claims/outcome.py",
            "perfmodel/claims/needs.py",
            "perfmodel/claims/reading.py", "perfmodel/claims/fields.py", "perfmodel/report/planner.py",
            "perfmodel/cli/analyses_cmd.py", "perfmodel/cli/plan_cmd.py")
SLO_LIKE_ALLOWED = {
    # YAML input schemas, each converted to search.SLO in exactly one place (their docstrings say where):
    # a benchmark scenario's latency limits (validation/benchmark_runs.record_latency_limits) ...
    ("perfmodel/specs/workload.py", "LatencyLimits"),
    # ... and a claim's operating point: its TTFT limit and speed floor (claims/fields.slo)
    ("perfmodel/specs/claim.py", "OperatingPoint"),
}
SERVED_LATENCY = {"ttft_ms", "ttft_p90_ms", "ttft_p95_ms", "ttft_p99_ms", "tpot_ms", "tpot_p99_ms"}
SPEED = {"tps_per_user", "min_tps_per_user"}


def slo_like_classes(src: str) -> list[str]:
    """Classes whose fields name a TTFT limit and a TPOT limit or speed floor: an SLO type by another name."""
    out = []
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, ast.ClassDef):
            fields = {s.target.id for s in n.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
            if "ttft_ms" in fields and fields & {"tpot_ms", "tps_per_user"}:
                out.append(n.name)
    return out


def _masked(n: ast.AST, sign: int) -> bool:
    """``np.where(ok, value, -np.inf)`` (sign -1: a pick of the highest) or ``np.where(ok, value, np.inf)`` (+1)."""
    if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "where"
            and len(n.args) == 3):
        return False
    fill = n.args[2]
    neg = isinstance(fill, ast.UnaryOp) and isinstance(fill.op, ast.USub)
    fill = fill.operand if isinstance(fill, ast.UnaryOp) else fill
    return isinstance(fill, ast.Attribute) and fill.attr == "inf" and neg == (sign < 0)


def _mentions(side: ast.AST, names: set[str]) -> bool:
    """Whether an expression names one of ``names`` as a string (a column) or an attribute."""
    return any((isinstance(c, ast.Constant) and c.value in names) or (isinstance(c, ast.Attribute) and c.attr in names)
               for c in ast.walk(side))


def search_copies(src: str) -> list[str]:
    """Lines (as 'line N: what') where a module searches deployments itself: a masked pick
    (``np.where(ok, value, -np.inf)``, the best admissible point: search.best / best_index / fewest_index), a
    latency limit compared on the served columns, or a per-user speed floor compared (search.SLO does both)."""
    out = []
    for n in ast.walk(ast.parse(src)):
        if _masked(n, -1) or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                               and n.func.attr == "argmin" and n.args and _masked(n.args[0], +1)):
            out.append(f"line {n.lineno}: masked pick of the best admissible point (search.best)")
        if isinstance(n, ast.Compare) and n.ops and isinstance(n.ops[0], (ast.LtE, ast.Lt)):
            if any(_mentions(side, SERVED_LATENCY) for side in (n.left, *n.comparators)):
                out.append(f"line {n.lineno}: latency limit compared outside search.SLO")
        if isinstance(n, ast.Compare) and n.ops and isinstance(n.ops[0], (ast.GtE, ast.Gt)):
            if any(_mentions(side, SPEED) for side in (n.left, *n.comparators)):
                out.append(f"line {n.lineno}: speed floor compared outside search.SLO")
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

def my_agents(points, slo, sessions):
    ok = points["tps_per_user"].to_numpy() >= slo.tps_per_user
    return int(np.argmin(np.where(ok, -sessions, np.inf)))
'''


def test_the_checker_flags_a_planted_copy(tmp_path):
    f = tmp_path / "planted.py"
    f.write_text(PLANTED)
    assert slo_like_classes(f.read_text()) == ["ServiceTarget"]
    found = search_copies(f.read_text())
    assert sum("masked pick" in x for x in found) == 2
    assert any("latency limit" in x for x in found) and any("speed floor" in x for x in found)


def test_the_checker_flags_the_removed_slo_types(tmp_path):
    """The SLO types folded into search.SLO (analyses/agents.SLO: a speed floor at any percentile; a claim's limits
    as a class of their own) are no longer allowed: a definition of either outside search/ fails the contract."""
    agents_slo = ("@dataclass(frozen=True)\nclass SLO:\n    tps_per_user: float\n    ttft_ms: float | None = None\n"
                  "    percentile: float = 50.0\n")
    assert slo_like_classes(agents_slo) == ["SLO"]
    assert ("perfmodel/analyses/agents.py", "SLO") not in SLO_LIKE_ALLOWED
    assert {f for f, _ in SLO_LIKE_ALLOWED} == {"perfmodel/specs/workload.py", "perfmodel/specs/claim.py"}
