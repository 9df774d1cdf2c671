"""Evidence on a system's speed from the project's own records of that hardware and model, named by id.

A condition "system S's decode steps k times the modeled ones" moves S's curve end from the modeled ``end`` to
``end / k``. The records that bear on it are the per-user speeds measured on S running the claim's model
(``data/shared/*.csv``: a ``tps_per_user`` row, or a ``tpot_ms`` row read as 1000 / TPOT tokens/s per user, the
decode axis), the fastest one v_max (id named):

- slower steps (k > 1): a record faster than the new end (v_max > end / k x (1 + SLACK)) **contradicts** it; else
  the records are **consistent** with it (the fastest one named: nothing measured is faster than the new end);
- faster steps (k < 1): a record above the modeled end (v_max > end) **supports** it; else the records do not
  reach the new end and it rests on the vendor's word (the fastest record named);
- no record of S on that model: **vendor's word**.

Pure functions of the records (read once); the verdict code decides what a tag allows.
"""

from __future__ import annotations

import functools
import math

SLACK = 0.05          # a record this much faster than a curve end still counts as at the end (rounding, noise)


@functools.cache
def speed_records() -> tuple[tuple[str, str, str, float, float | None], ...]:
    """(id, hardware, model, tok/s/user, concurrency) of every measured per-user speed in the shared records."""
    from .. import catalog
    from ..specs.records import SHARED_FILES, read_records
    out = []
    for f in SHARED_FILES:
        p = catalog.builtin_root() / "data" / "shared" / f
        if not p.is_file():
            continue
        for r in read_records(p):
            if r.metric == "tps_per_user":
                v = r.value
            elif r.metric == "tpot_ms":
                v = 1000.0 / r.value
            else:
                continue
            out.append((r.id, r.hardware, r.model, float(v), r.concurrency))
    return tuple(out)


def fastest(hw: str, model: str, records=None) -> tuple[str, float] | None:
    """(id, tok/s/user) of the fastest measured per-user speed of ``hw`` on ``model``, or None."""
    recs = [(i, v) for i, h, m, v, _ in (records if records is not None else speed_records())
            if h == hw and m == model and math.isfinite(v)]
    return max(recs, key=lambda t: t[1]) if recs else None


def on_steps(hw: str, model: str, k: float, end: float | None, records=None) -> dict:
    """The records' word on ``hw``'s steps k times the modeled ones (module docstring): {tag, text, record}.

    ``tag``: ``contradicts records`` | ``consistent with records`` | ``supported by records`` | ``vendor's word``;
    ``end``: the modeled curve end, tokens/s per user (None: the records are named without a test)."""
    top = fastest(hw, model, records)
    if top is None:
        return {"tag": "vendor's word", "record": None,
                "text": f"no record of {hw} on {model}"}
    rid, v = top
    if end is None or not math.isfinite(end) or end <= 0:
        return {"tag": "consistent with records", "record": rid,
                "text": f"records of {hw} on {model}: fastest {v:.0f} tok/s/user ({rid})"}
    new_end = end / k
    if k > 1:
        if v > new_end * (1 + SLACK):
            return {"tag": "contradicts records", "record": rid,
                    "text": f"record {rid} measured {v:.0f} tok/s/user, above the {new_end:.0f} this leaves"}
        return {"tag": "consistent with records", "record": rid,
                "text": f"fastest record {rid}: {v:.0f} tok/s/user, below the {new_end:.0f} this leaves"}
    if v > end * (1 + SLACK):
        return {"tag": "supported by records", "record": rid,
                "text": f"record {rid} measured {v:.0f} tok/s/user, above the modeled end {end:.0f}"}
    return {"tag": "vendor's word", "record": rid,
            "text": f"no record above the modeled end {end:.0f} (fastest, {rid}: {v:.0f} tok/s/user)"}
