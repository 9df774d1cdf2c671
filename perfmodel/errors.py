"""One error type for every bad input: a single readable line naming the file and the field."""

from __future__ import annotations

MAX_PART = 200
"""Longest file name or field quoted in a message (a longer one is cut)."""
MAX_PROBLEM = 400
"""Longest problem text (bad values inside are already cut to a short head by ``short``)."""


def cut_value(text: str, limit: int = MAX_PART) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def short(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: messages quote only a short head of a bad value."""
    return cut_value(repr(value), limit)


class SpecError(Exception):
    """Bad user input. ``str(err)`` is one line: ``<file>: <field>: <problem>``.

    The CLI prints it and exits with status 2; no traceback is shown.
    """

    def __init__(self, problem: str, *, file: str | None = None, field: str | None = None):
        self.problem = problem
        self.file = file
        self.field = field
        super().__init__(self.line())

    def line(self) -> str:
        parts = [cut_value(p) for p in (self.file, self.field) if p]
        parts.append(cut_value(self.problem, MAX_PROBLEM))
        return ": ".join(parts).replace("\n", " ").replace("\r", " ")

    def in_file(self, file: str) -> "SpecError":
        """Return a copy that names ``file`` (keeps an already-set file)."""
        return SpecError(self.problem, file=self.file or file, field=self.field)


def _is_tag(part) -> bool:
    """A pydantic union-branch tag in an error location (a class name or ``function-after[...]``)."""
    return isinstance(part, str) and (part[:1].isupper() and part.isidentifier() or "[" in part)


def pydantic_to_spec_error(exc, file: str | None = None, prefix: str = "") -> SpecError:
    """Turn a pydantic ValidationError into a one-line SpecError naming the first bad field."""
    err = exc.errors()[0]
    # drop union-branch tags (``workload.FixedWorkload.isl`` -> ``workload.isl``)
    loc = ".".join(str(p) for p in err.get("loc", ()) if p != "__root__" and not _is_tag(p))
    if prefix:
        loc = f"{prefix}.{loc}" if loc else prefix
    msg = err.get("msg", "invalid value")
    msg = msg.removeprefix("Value error, ")
    given = err.get("input")
    if err.get("type") not in ("missing",) and not isinstance(given, (dict, list)) and given is not None:
        msg = f"{msg} (got {short(given)})"
    return SpecError(msg, file=file, field=loc or None)
