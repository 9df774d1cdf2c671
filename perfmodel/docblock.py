"""Generated blocks of the docs: the lines between two marker comments replaced (the one marker-block writer)."""

from __future__ import annotations


def replace_between(text: str, start: str, end: str, block: str, where: str) -> str:
    """``text`` with the lines between the markers ``start`` and ``end`` replaced by ``block``; ValueError naming
    ``where`` when a marker is missing. The one marker-block writer of generated doc sections."""
    if start not in text or end not in text:
        raise ValueError(f"{where} has no generated-block markers ({start!r} ... {end!r})")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{block}\n{end}{tail}"
