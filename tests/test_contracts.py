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
