"""Imports cost what a command uses (issue 49): with the compiled equations on disk, a fresh process that predicts
one point never imports sympy, pandas, matplotlib, scipy or numba; the code it runs from the disk cache is the code
lambdify generates, in lambdify's namespace."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from perfmodel.engine import compiled as C

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "matplotlib", "scipy", "numba", "numpy.f2py")


def _fresh(code: str, cache: Path) -> dict:
    env = {**os.environ, "PERFMODEL_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_fresh_predict_with_the_cache_warm_imports_no_sympy(tmp_path):
    code = ("import io, json, sys, contextlib\n"
            "from perfmodel.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    rc = main(['predict', 'examples/llama70b-h100.yaml', '--json'])\n"
            f"print(json.dumps({{'rc': rc, 'tpot': json.loads(out.getvalue())['tpot_ms'], "
            f"'loaded': [m for m in {HEAVY + ('pandas',)!r} if m in sys.modules]}}))")
    cold = _fresh(code, tmp_path)        # builds the equations with sympy and writes them to the cache
    assert cold["rc"] == 0 and "sympy" in cold["loaded"]
    assert {p.name.split("-")[0] for p in tmp_path.glob("*.json")} == {"model", "queue", "catalog"}
    warm = _fresh(code, tmp_path)
    assert warm == {"rc": 0, "tpot": cold["tpot"], "loaded": []}


def test_importing_the_commands_loads_no_heavy_module():
    code = ("import json, sys\n"
            "from perfmodel.cli.main import build_parser\n"
            "build_parser()\n"
            "import perfmodel.api, perfmodel.claims, perfmodel.analyses, perfmodel.report\n"
            f"print(json.dumps([m for m in {HEAVY!r} + ('tqdm',) if m in sys.modules]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == [], loaded


def test_the_namespace_built_without_sympy_is_lambdifys():
    ours, theirs = C._namespace(), C._lambdify_namespace()
    keys = lambda ns: {k for k in ns if not k.startswith("__")}  # noqa: E731
    assert keys(ours) == keys(theirs)
    assert [k for k in keys(ours) if ours[k] is not theirs[k] and ours[k] != theirs[k]] == []


def test_generated_code_reads_lambdifys_objects(tmp_path, monkeypatch):
    """The names a cached function's code reads resolve to the objects of lambdify's namespace (and a name that
    namespace lacks stays unresolved, for the builtins)."""
    from perfmodel import catalog
    monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path))
    full = C._namespace()
    sources = [C.compiled(catalog.model(m)).decode.source for m in ("deepseek-v4.1-flash", "llama-3.1-8b")]
    sources += ["def _lambdifygenerated(x):\n    return numpy.sqrt(x) + sqrt(x) + Abs(x) + I + inv(x) + abs(x) "
                "+ SMin(x, 1) + ceiling(x) + Heaviside(x) + len(x) + range(3)[0]\n"]
    for src in sources:
        code = compile(src, "<test>", "exec")
        ns = C.namespace_for(code)
        names = C._code_names(code)
        assert {n for n in names if n in full} == set(ns)
        assert [n for n in ns if ns[n] is not full[n]] == []


def test_cached_queue_forms_are_the_built_ones(tmp_path, monkeypatch):
    from perfmodel.equations.queueing import lambdified_queue as forms
    lambdified_queue = lambda: forms(C.NUMPY_MODULES)  # noqa: E731
    monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path))
    built = C.cached_functions("queue", lambdified_queue)          # a miss: built, then written
    (path,) = tmp_path.glob("queue-*.json")
    loaded = C.cached_functions("queue", lambda: (_ for _ in ()).throw(AssertionError("rebuilt")))
    assert set(loaded) == set(built)
    rng = np.random.default_rng(1)
    n = 200
    rho, t_s, c, q = rng.uniform(0.01, 0.99, n), rng.uniform(1e-3, 2, n), rng.integers(1, 16, n) * 1.0, 0.9
    phi, clients, cs2 = rng.uniform(0, 1, n), rng.uniform(1, 500, n), rng.uniform(0, 3, n)
    t = rng.uniform(0, 1, (4, n))
    args = {"mean_wait": (rho, t_s, c, cs2), "quantile_wait": (rho, t_s, c, q, cs2),
            "mean_prefill_wait": (rho, t_s, c, phi, clients, cs2),
            "ttft_quantile": (*t, rho, t_s, c, q, phi, clients, cs2),
            "ttft_mean": (*t, rho, t_s, c, phi, clients, cs2)}
    assert set(args) == set(built)
    for k, a in args.items():
        np.testing.assert_array_equal(loaded[k](*a), built[k](*a), err_msg=k)
    path.write_text("{damaged")
    again = C.cached_functions("queue", lambdified_queue)            # a damaged file is rebuilt
    np.testing.assert_array_equal(again["mean_wait"](*args["mean_wait"]), built["mean_wait"](*args["mean_wait"]))


def test_serving_queue_forms_equal_the_equations():
    """serving/queueing's forms (the disk cache's code) equal the equations lambdified afresh."""
    from perfmodel.equations.queueing import lambdified_queue
    from perfmodel.serving.queueing import compiled_queue
    reference = lambdified_queue(C.NUMPY_MODULES)
    rho, t_s, c = np.array([0.1, 0.5, 0.97]), np.array([0.2, 1.0, 3.0]), np.array([1.0, 4.0, 8.0])
    for cs2 in (0.0, 1.5):
        np.testing.assert_array_equal(compiled_queue()["mean_wait"](rho, t_s, c, cs2=cs2),
                                      reference["mean_wait"](rho, t_s, c, cs2))
    np.testing.assert_array_equal(compiled_queue()["quantile_wait"](rho, t_s, c, 0.99),
                                  reference["quantile_wait"](rho, t_s, c, 0.99, 0.0))


def test_the_code_version_reads_sympys_version_from_its_files():
    import sympy
    assert sympy.__version__.encode() in C._sympy_version()


def test_the_catalog_ids_kept_on_disk_are_the_parsed_ones(tmp_path, monkeypatch):
    from perfmodel import catalog
    monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path))
    root = catalog.builtin_root()
    for kind in catalog.KINDS:
        parsed = catalog._root_ids(kind, root)                     # a miss: every file parsed, the ids written
        assert len(list(tmp_path.glob(f"catalog-{kind}-*.json"))) == 1
        monkeypatch.setattr(catalog, "_file_ids", lambda f: (_ for _ in ()).throw(AssertionError(f"parsed {f}")))
        assert catalog._root_ids(kind, root) == parsed             # a hit: no file parsed
        monkeypatch.undo()
        monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path))


def test_a_changed_catalog_file_is_indexed_again(tmp_path, monkeypatch):
    from perfmodel import catalog
    monkeypatch.setenv("PERFMODEL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cat" / "hardware").mkdir(parents=True)
    f = tmp_path / "cat" / "hardware" / "x.yaml"
    f.write_text("id: first\n")
    monkeypatch.setattr(catalog, "builtin_root", lambda: tmp_path / "cat")
    assert catalog._root_ids("hardware", tmp_path / "cat") == [(f, ["first"])]
    f.write_text("id: second\naliases: [two]\n")
    assert catalog._root_ids("hardware", tmp_path / "cat") == [(f, ["second", "two"])]
    (tmp_path / "cat" / "hardware" / "y.yaml").write_text("id: third\n")
    assert [ids for _, ids in catalog._root_ids("hardware", tmp_path / "cat")] == [["second", "two"], ["third"]]
    monkeypatch.setenv("PERFMODEL_CACHE", "off")
    assert [ids for _, ids in catalog._root_ids("hardware", tmp_path / "cat")] == [["second", "two"], ["third"]]
