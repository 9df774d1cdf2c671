"""The two hottest files split into rooms by job (issue 58 item 2): each file and each of its rooms stays under
MAX_LINES, and every top-level name of a split package is defined in one room only (a merge that brings back an
old copy of a moved function fails here). The checks are exercised on planted violations so they cannot pass
vacuously."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 450
ROOMS = {
    "perfmodel/validation/predict_rows.py": (
        "perfmodel/validation/samples.py", "perfmodel/validation/row_context.py", "perfmodel/validation/point_rows.py",
        "perfmodel/validation/agentic_rows.py", "perfmodel/validation/frontier_rows.py",
        "perfmodel/validation/envelope.py", "perfmodel/validation/agents_per_gpu.py"),
    "perfmodel/claims/check.py": (
        "perfmodel/claims/sides.py", "perfmodel/claims/findings.py", "perfmodel/claims/outcome.py",
        "perfmodel/claims/needs.py"),
    "perfmodel/claims/story.py": ("perfmodel/claims/story_grid.py", "perfmodel/claims/story_fit.py"),
}
"""A split file -> the rooms its jobs moved into (the file keeps the driver: which room reads a record)."""


def too_long(texts: dict[str, str], limit: int = MAX_LINES) -> list[str]:
    """'path: N lines' for every text of ``limit`` lines or more."""
    return [f"{p}: {n} lines" for p, t in texts.items() if (n := len(t.splitlines())) >= limit]


def defined_twice(texts: dict[str, str]) -> list[str]:
    """Top-level functions and classes defined in more than one of ``texts`` (path -> source)."""
    homes: dict[str, list[str]] = {}
    for path, text in texts.items():
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                homes.setdefault(node.name, []).append(path)
    return [f"{name}: {', '.join(paths)}" for name, paths in sorted(homes.items()) if len(paths) > 1]


def _texts(paths) -> dict[str, str]:
    return {p: (ROOT / p).read_text() for p in paths}


def test_split_files_and_their_rooms_stay_small():
    found = [line for main, rooms in ROOMS.items() for line in too_long(_texts((main, *rooms)))]
    assert not found, f"split further (each under {MAX_LINES} lines):\n" + "\n".join(found)


def test_each_function_of_a_split_file_has_one_room():
    found = [line for main, rooms in ROOMS.items() for line in defined_twice(_texts((main, *rooms)))]
    assert not found, "one definition per name (import it from its room):\n" + "\n".join(found)


def test_the_rooms_are_used():
    """The driver imports every room, directly or through another room (no orphan copy is left behind)."""
    for main, rooms in ROOMS.items():
        reached, todo = set(), [main]
        while todo:
            p = todo.pop()
            pkg = Path(p).parent
            for node in ast.walk(ast.parse((ROOT / p).read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                    dep = (pkg / f"{node.module}.py").as_posix()
                    if dep in rooms and dep not in reached:
                        reached.add(dep)
                        todo.append(dep)
        assert reached == set(rooms), f"{main} never reaches {sorted(set(rooms) - reached)}"


def test_the_room_checks_catch_planted_violations():
    assert too_long({"a.py": "x = 1\n" * MAX_LINES, "b.py": "x = 1\n" * (MAX_LINES - 1)}) == [f"a.py: {MAX_LINES} lines"]
    planted = {"a.py": "def f():\n    pass\n\n\nclass C:\n    pass\n", "b.py": "def f():\n    return 1\n\n\ng = 2\n"}
    assert defined_twice(planted) == ["f: a.py, b.py"]
