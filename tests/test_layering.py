"""The package's layering (LAYERS): specs -> model (the operator families, on their own sympy vocabulary) -> arch ->
equations -> engine -> serving -> search -> analyses -> validation -> claims -> report -> api -> cli.
No import cycles (module-level or inside functions); nothing below the facade imports ``api``; no layer imports a
layer above it."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "perfmodel"
LAYERS = ("specs", "importers", "plots", "model", "arch", "equations", "engine", "kernels", "serving", "search",
          "analyses", "validation", "claims", "report", "cli")
"""Every subpackage of perfmodel, lowest first: a module of one may import its own package and those before it,
never one after it (the operator families, model, state their terms in their own sympy vocabulary,
model/vocabulary.py, below the equations; the one deployment search sits on serving and under every caller;
analyses -> validation -> claims -> report; the api facade (perfmodel/api.py) sits under the cli only)."""
LAYER_ABOVE = {f"perfmodel.{low}": tuple(f"perfmodel.{up}" for up in LAYERS[i + 1:]) + ("perfmodel.api",)
               for i, low in enumerate(LAYERS[:-1])}
"""A module under the key may not import any module under these prefixes."""


def _modname(p: Path) -> str:
    parts = list(p.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the perfmodel modules it imports anywhere in its text (function-level imports included)."""
    mods = {_modname(p): p for p in PKG.rglob("*.py")}
    g = {}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        deps = set()
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.ImportFrom):
                base = pkg.split(".")[: len(pkg.split(".")) - (n.level - 1)] if n.level else []
                tgt = ".".join(base + ([n.module] if n.module else [])) if n.level else (n.module or "")
                deps |= {f"{tgt}.{a.name}" if f"{tgt}.{a.name}" in mods else tgt for a in n.names}
            elif isinstance(n, ast.Import):
                deps |= {a.name for a in n.names}
        g[m] = {d for d in deps if d in mods and d != m}
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in g:
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop(); on.discard(x); comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_only_the_cli_imports_the_api_facade():
    g = import_graph()
    assert sorted(m for m, d in g.items() if "perfmodel.api" in d and not m.startswith("perfmodel.cli")) == []


def _upward(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, import) pairs of ``g`` that run up the floors."""
    return [(m, d) for m, deps in g.items() for low, above in LAYER_ABOVE.items()
            if m == low or m.startswith(low + ".") for d in sorted(deps) if d.startswith(above)]


def test_no_layer_imports_a_layer_above_it():
    assert _upward(import_graph()) == []


def test_every_package_has_its_layer():
    packages = {p.parent.name for p in PKG.glob("*/__init__.py")}
    assert packages == set(LAYERS)


def test_the_layering_check_finds_an_import_up_the_floors():
    """A planted import of claims from analyses is caught."""
    g = {"perfmodel.analyses.x": {"perfmodel.claims.y"}, "perfmodel.claims.y": {"perfmodel.analyses.x"}}
    assert _upward(g) == [("perfmodel.analyses.x", "perfmodel.claims.y")]


def test_readme_architecture_lists_every_module_and_is_current():
    from perfmodel import layout_doc
    text = (ROOT / "docs/architecture.md").read_text()
    assert layout_doc.update_readme(text) == text, "docs/architecture.md is stale: python -m perfmodel.layout_doc"
    listed = {line.split("`")[1] for line in layout_doc.lines()}
    assert listed == {p.relative_to(ROOT).as_posix() for p in PKG.rglob("*.py")}
    assert all(not line.endswith(": ") for line in layout_doc.lines())
