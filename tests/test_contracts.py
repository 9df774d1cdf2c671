"""Contracts: each quantity has one owner (issue 34 item 7). These fail when a second copy appears.

- One binder: equation symbols are bound from specs only in ``engine/evaluate.Setup.symbol_values`` (through the
  helpers of ``engine/bind.py`` and ``engine/kernel_bind.py``); analyses, validation, claims and the serving layer
  pass resolved field / profile values to it instead of calling the helpers.
"""

from __future__ import annotations

import re
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "perfmodel"
BINDERS = ("bind_hardware", "bind_profile", "bind_formats", "bind_kernel_fits", "kernel_values")
BINDER_HOMES = {"engine/bind.py", "engine/evaluate.py", "engine/kernel_bind.py"}


def _calls(name: str) -> list[str]:
    pat = re.compile(rf"\b{name}\(")
    out = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel in BINDER_HOMES or "_catalog" in p.parts:
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if pat.search(line) and not line.lstrip().startswith(("def ", "#")):
                out.append(f"{rel}:{i}: {line.strip()}")
    return out


def test_symbols_are_bound_only_by_setup():
    found = [c for name in BINDERS for c in _calls(name)]
    assert not found, "bind through Setup.symbol_values(fields=..., profile=...) instead:\n" + "\n".join(found)


def test_the_contract_scan_sees_a_call():
    assert _calls("symbol_values"), "the scan found no call at all: the pattern is broken"


def test_bytes_per_number_format_live_in_one_table():
    """One precision table (perfmodel/formats.py): no other module spells out bytes per format."""
    pat = re.compile(r"""["'](fp8|bf16|bfloat16|fp4|nvfp4|half)["']\s*:\s*[0-9.]+\s*[,}]""")
    found = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel == "formats.py" or "_catalog" in p.parts:
            continue
        found += [f"{rel}:{i}: {ln.strip()}" for i, ln in enumerate(p.read_text().splitlines(), 1) if pat.search(ln)]
    assert not found, "use perfmodel/formats.py (WEIGHT_BYTES, KV_BYTES, table_element_bytes):\n" + "\n".join(found)


def test_no_module_imports_another_modules_private_names():
    """Issue 34: a name another module needs is public (engine.evaluate.point_arrays, not _arrays)."""
    import ast
    found = []
    for p in sorted(PKG.rglob("*.py")):
        if "_catalog" in p.parts:
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{p.relative_to(PKG).as_posix()}:{node.lineno}: {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "\n".join(found)


# ------------------------------------------------------------------ one writer of the derived columns, one tail law
DERIVED_COLUMNS = frozenset({"tps_per_user_e2e", "tps_per_user_e2e_p50", "tps_per_user_e2e_p90", "total_tps_per_mw",
                             "output_tps_per_mw", "total_tokens_per_usd", "intvty", "tput_per_gpu",
                             "output_tput_per_gpu"})
"""Columns derived from a served point's throughput, speed and TTFT terms (issue 58 item 1): written by
serving/finish.py only (``rates``, ``record_names``), for the aggregated, disaggregated and one-point paths."""
DERIVED_HOME = "serving/finish.py"
DERIVED_ALIASES = {"analyses/compare.py": 1}
"""Other writers allowed, with how many writes: compare names its interactivity grid ``intvty`` too (a relabelled
axis, nothing derived)."""
TAIL_HOMES = {"serving/queueing.py", "equations/queueing.py"}
"""The queue-tail law W_q = (E[W] / rho) max(0, ln(rho / (1 - q))): its sympy form (equations) and its numpy form
read from a point's columns (serving/queueing.queue_tail)."""


def _derived_writes(tree) -> list[int]:
    """Lines that write a derived column by its literal name: ``x["col"] = ...``, ``{"col": value}``, ``col=...`` in a
    call (dict, update, assign). A label table (a string value) and a copy of the column under its own name from
    another frame (``{"col": s["col"]}``) derive nothing and are no write."""
    import ast

    def named(node) -> bool:
        return isinstance(node, ast.Constant) and node.value in DERIVED_COLUMNS

    def derives(key, value) -> bool:
        label = isinstance(value, ast.Constant) and isinstance(value.value, str)
        copy = isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) \
            and value.slice.value == key.value
        return not (label or copy)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                pairs = zip(t.elts, node.value.elts) if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    else [(e, node.value) for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
                lines += [node.lineno for e, v in pairs
                          if isinstance(e, ast.Subscript) and named(e.slice) and derives(e.slice, v)]
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript) and named(node.target.slice):
            lines.append(node.lineno)
        elif isinstance(node, ast.Dict):
            lines += [k.lineno for k, v in zip(node.keys, node.values) if k is not None and named(k) and derives(k, v)]
        elif isinstance(node, ast.Call):
            lines += [node.lineno for kw in node.keywords if kw.arg in DERIVED_COLUMNS]
    return lines


def _tail_laws(tree) -> list[int]:
    """Lines that spell the queue-tail law: a ``log(x / (1 - q))`` call."""
    import ast
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "log" \
                and node.args and isinstance(a := node.args[0], ast.BinOp) and isinstance(a.op, ast.Div) \
                and isinstance(r := a.right, ast.BinOp) and isinstance(r.op, ast.Sub) \
                and isinstance(r.left, ast.Constant) and r.left.value == 1:
            lines.append(node.lineno)
    return lines


def _outside(scan, homes: set[str]) -> list[str]:
    import ast
    found = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel in homes or "_catalog" in p.parts:
            continue
        found += [f"{rel}:{i}" for i in scan(ast.parse(p.read_text()))]
    return found


def test_derived_columns_are_written_in_one_place():
    found = _outside(_derived_writes, {DERIVED_HOME})
    for rel, n in DERIVED_ALIASES.items():
        assert sum(f.startswith(rel + ":") for f in found) == n, rel
    found = [f for f in found if f.split(":")[0] not in DERIVED_ALIASES]
    assert not found, "write derived columns through serving/finish.rates / record_names:\n" + "\n".join(found)
    import ast
    assert _derived_writes(ast.parse((PKG / DERIVED_HOME).read_text())), "the scan finds no write in finish.py"


def test_the_queue_tail_law_lives_in_one_place():
    found = _outside(_tail_laws, TAIL_HOMES)
    assert not found, "use serving/queueing.queue_tail:\n" + "\n".join(found)
    import ast
    assert _tail_laws(ast.parse((PKG / "serving/queueing.py").read_text())), "the scan misses queue_tail"


def test_the_single_place_scans_find_planted_copies():
    """A planted second writer of a derived column and a second copy of the tail law are caught, in every form."""
    import ast
    planted = ast.parse('out["total_tps_per_mw"] = y / p * 1e6\n'
                        'cols = {"tps_per_user_e2e": osl / (t + osl * tpot)}\n'
                        'df = df.assign(total_tokens_per_usd=y * 3600 / price)\n'
                        'a, b["intvty"] = 1, 2\n'
                        'ok = {"total_tps_per_gpu": 1, "total_tps_per_mw": "a label", "intvty": s["intvty"]}\n'
                        'w = m / rho * np.maximum(0.0, np.log(rho / (1 - q)))\n'
                        'v = math.log(r / (1 - u[None, :]))\n')
    assert sorted(_derived_writes(planted)) == [1, 2, 3, 4]
    assert sorted(_tail_laws(planted)) == [6, 7]
