"""Sentences of the report that compare two values or state a share, generated from the values they name.

Every such sentence is built here from its numbers and recorded, with the numbers and where they come from, in
``claims/sentences.csv`` (columns: sentence, a_label, a_value, a_source, b_label, b_value, b_source, relation).
A source is ``claims.csv:<claim id>:<column>`` or ``claims.json:<claim id>:arithmetic:<expression>``; a test
reads every row back and checks the sentence is in the Markdown, the numbers are those of the sources and the
relation word follows from them by ``relation``.
"""

from __future__ import annotations

import math

from ..claims.fmt import pct

SAME = 0.10   # within 10% (in ln) two values are "about the same"


def relation(a: float, b: float) -> str:
    """'higher than' / 'lower than' / 'about the same as' for a against b (ln distance beyond SAME)."""
    if a is None or b is None or not (a > 0 and b > 0):
        return "not comparable with"
    r = math.log(a / b)
    return "about the same as" if abs(r) <= math.log(1 + SAME) else ("higher than" if r > 0 else "lower than")


class Sentences:
    """Collects generated comparison sentences and their values."""

    def __init__(self):
        self.rows: list[dict] = []

    def share(self, who: str, model: float, model_src: str, seed: float, seed_src: str) -> str:
        """'In the model, <who> keeps 9% of its own peak there, lower than the seed's ~67%.'"""
        rel = relation(model, seed)
        s = (f"In the model, {who} keeps {pct(model)} of its own peak there, {rel} the seed's ~{pct(seed)}.")
        self.rows.append({"sentence": s, "a_label": f"{who} model share of peak", "a_value": model,
                          "a_source": model_src, "b_label": f"{who} seed share of peak", "b_value": seed,
                          "b_source": seed_src, "relation": rel})
        return s

    def ends(self, a: str, ea: float, a_src: str, b: str, eb: float, b_src: str) -> str:
        """'vr200 curve ends at 530 tok/s/user, about the same as gb300's 514 (1.03x).'"""
        from ..claims.fmt import fmt as _fmt
        rel = relation(ea, eb)
        s = (f"{a}'s curve ends at {_fmt(ea)} tok/s/user, {rel} {b}'s {_fmt(eb)} ({ea / eb:.2f}x).")
        self.rows.append({"sentence": s, "a_label": f"{a} curve end", "a_value": ea, "a_source": a_src,
                          "b_label": f"{b} curve end", "b_value": eb, "b_source": b_src, "relation": rel})
        return s
