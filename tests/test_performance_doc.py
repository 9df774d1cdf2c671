"""scripts/performance_doc.py renders docs/performance.md from canned benchmark outputs (no timing here)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _doc_module():
    spec = importlib.util.spec_from_file_location("performance_doc", ROOT / "scripts" / "performance_doc.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("performance_doc", mod)      # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _entry(*outputs: str, quick: bool = False) -> dict:
    return {"outputs": list(outputs), "args": [], "quick": quick, "date": "2026-12-05", "machine": "Test CPU, 2 cores"}


CANNED = {
    "bench_scalar": _entry("tpot_ms=37.1 total_tps_per_gpu=1.0\npredict_ms=2.9 (one-row DataFrame)\nscalar_ms=1.2\n",
                           "predict_ms=3.1\nscalar_ms=0.09\n"),
    "bench_decode": _entry("kernel=auto compile_s=0.1 points=2000000 eval_s=0.3\npoints_per_s=11000000\n",
                           "points_per_s=10500000\n"),
    "bench_check": _entry("claim=vllm-58x-at-387 first_check_s=5.0 runs_s=4.1 4.4\nequation_runs=651 frame_builds=135 "
                          "curves=10\ncheck_cli_s=9.0\ncheck_s=4.2\n", quick=True),
}


def test_parse_takes_the_last_value_of_each_key():
    m = _doc_module()
    got = m.parse("a=1 b=x c=2.5e3\nkernel=auto runs_s=0.1 0.2\na=3\nnot x1.37 or C=  64:\n")
    assert got == {"a": 3.0, "c": 2500.0, "runs_s": 0.1}


def test_render_ranges_targets_and_status():
    m = _doc_module()
    doc = m.render(CANNED)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in doc.splitlines() if line.startswith("| ")}
    scalar = rows["one operating point in process, `api.predict_point`"]
    assert "0.09-1.20 ms" in scalar and "<= 0.1 ms" in scalar and "met in some runs" in scalar
    decode = rows["decode sweep, one core"]
    assert "10.50-11.00 M points/s" in decode and ">= 10 M points/s" in decode and decode.endswith("| met |")
    check = rows["`check vllm-58x-at-387` in process"]
    assert "4.20 s" in check and check.endswith("| not met |")
    assert "651" in rows["`check vllm-58x-at-387`: compiled-equation runs"]
    assert rows["full frontier, >= 50,000 candidates"].count("| - |") >= 2       # not run: no figure
    assert "Some figures below come from `--quick` runs" in doc
    assert "- `bench_check`: 1 runs on 2026-12-05, quick mode (default arguments), Test CPU, 2 cores" in doc
    assert "- `bench_frontier`: not run yet" in doc


def test_render_only_rewrites_from_stored_runs(tmp_path):
    m = _doc_module()
    runs, out = tmp_path / "runs.json", tmp_path / "performance.md"
    runs.write_text(json.dumps(CANNED))
    m.main(["--render", "--runs", str(runs), "--out", str(out)])
    assert out.read_text() == m.render(CANNED)


def test_the_load_at_each_run_is_rendered_beside_the_machine():
    m = _doc_module()
    runs = {"bench_scalar": {**_entry("scalar_ms=0.5\npredict_cli_s=0.7\n"), "load": [1.5, None, 3.25]}}
    doc = m.render(runs)
    assert "Test CPU, 2 cores, load average 1.50-3.25 at the runs' starts" in doc
    cli = next(line for line in doc.splitlines() if "as a fresh CLI process" in line and "predict" in line)
    assert "0.70 s" in cli and "<= 0.8 s" in cli and cli.endswith("| met |")
