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

Only records of the same engine family (``engine_family``: dynamo-trtllm is trtllm) and workload class (agentic
sessions or fixed lengths, ``record_class``) as the claim's side are evidence; the others of S on that model are
named as *other* (another engine or workload: a different stack, not evidence here) and decide nothing.

Pure functions of the records (read once); the verdict code decides what a tag allows.
"""

from __future__ import annotations

import functools
import math
import re

SLACK = 0.05          # a record this much faster than a curve end still counts as at the end (rounding, noise)


def engine_family(name: str | None) -> str:
    """The engine family of a profile id or a record's engine: 'dynamo-trtllm' -> 'trtllm', 'TensorRT-LLM' ->
    'trtllm'; '' when none is given."""
    e = (name or "").lower().strip()
    e = e.removeprefix("dynamo-")
    return {"tensorrt-llm": "trtllm", "trt-llm": "trtllm", "tensorrt_llm": "trtllm"}.get(e, e)


@functools.cache
def record_class(workload: str | None) -> str:
    """'agentic' for a record on an agentic workload (sessions, tool pauses, a prefix cache), else 'fixed'."""
    if not workload:
        return "fixed"
    from .. import catalog
    try:
        return "agentic" if getattr(catalog.workload(workload), "kind", "fixed") == "agentic" else "fixed"
    except Exception:       # a workload id the catalog does not hold: its class is unknown, not agentic
        return "fixed"


@functools.cache
def speed_records() -> tuple[tuple[str, str, str, float, float | None], ...]:
    """(id, hardware, model, tok/s/user, concurrency) of every measured per-user speed in the shared records."""
    return tuple(r[:5] for r in scoped_records())


@functools.cache
def scoped_records() -> tuple[tuple[str, str, str, float, float | None, str, str], ...]:
    """(id, hardware, model, tok/s/user, concurrency, engine family, workload class) of every measured per-user
    speed in the shared records."""
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
            out.append((r.id, r.hardware, r.model, float(v), r.concurrency, engine_family(r.engine),
                        record_class(r.workload)))
    return tuple(out)


def fastest(hw: str, model: str, records=None, engine: str | None = None,
            wclass: str | None = None) -> tuple[str, float] | None:
    """(id, tok/s/user) of the fastest measured per-user speed of ``hw`` on ``model`` (of one engine family and
    workload class where given; records of 5 fields carry neither and always match), or None."""
    fam = engine_family(engine) if engine else None
    recs = [(r[0], r[3]) for r in (records if records is not None else scoped_records())
            if r[1] == hw and r[2] == model and math.isfinite(r[3])
            and (fam is None or len(r) < 7 or r[5] == fam) and (wclass is None or len(r) < 7 or r[6] == wclass)]
    return max(recs, key=lambda t: t[1]) if recs else None


def _other(hw: str, model: str, records, engine: str | None, wclass: str | None) -> str:
    """' (other: record X, sglang on fixed lengths, N tok/s/user: not evidence here)' (another engine or workload)
    for the fastest record of ``hw`` on ``model`` outside the claim's engine family and workload class."""
    if engine is None and wclass is None:
        return ""
    recs = [r for r in (records if records is not None else scoped_records())
            if r[1] == hw and r[2] == model and math.isfinite(r[3]) and len(r) >= 7]
    if not recs:
        return ""
    r = max(recs, key=lambda t: t[3])
    what = "lengths" if r[6] == "fixed" else "sessions"
    return (f" (other: record {r[0]}, {r[5] or 'engine not stated'} on {r[6]} {what}, {r[3]:.0f} tok/s/user: "
            "not evidence here)")


def on_steps(hw: str, model: str, k: float, end: float | None, records=None, engine: str | None = None,
             wclass: str | None = None) -> dict:
    """The records' word on ``hw``'s steps k times the modeled ones (module docstring): {tag, text, record}.

    ``tag``: ``contradicts records`` | ``consistent with records`` | ``supported by records`` | ``vendor's word``;
    ``end``: the modeled curve end, tokens/s per user (None: the records are named without a test); ``engine`` /
    ``wclass``: the claim side's profile and workload class (None: any), whose records alone are evidence."""
    top = fastest(hw, model, records, engine, wclass)
    if top is None:
        scope = (f" with {engine_family(engine)}" if engine else "") + (f" on {wclass} workloads" if wclass else "")
        return {"tag": "vendor's word", "record": None,
                "text": f"no record of {hw} on {model}{scope}" + _other(hw, model, records, engine, wclass)}
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


_VERSION = re.compile(r"^(?P<base>.*?)(?P<ver>\d+(?:\.\d+)*)(?P<suf>.*)$")


def earlier_versions(model: str) -> list[str]:
    """Catalog models that are earlier versions of ``model`` (the same name and suffix, a lower version number:
    deepseek-v4-flash for deepseek-v4.1-flash, kimi-k2.5 and kimi-k2 for kimi-k3), nearest first."""
    from .. import catalog
    m = _VERSION.match(model)
    if not m:
        return []
    ver = tuple(int(v) for v in m["ver"].split("."))
    out = []
    for other in catalog.ids("models"):
        o = _VERSION.match(other)
        if o and other != model and (o["base"], o["suf"]) == (m["base"], m["suf"]):
            ov = tuple(int(v) for v in o["ver"].split("."))
            if ov < ver:
                out.append((ov, other))
    return [o for _, o in sorted(out, reverse=True)]


def precedent(hw: str, model: str, records=None) -> dict | None:
    """The nearest precedent for a speed of ``hw`` on ``model`` where it has no record: the fastest record of the
    nearest earlier version of the model, on ``hw`` if it has one, else on any hardware. {record, hardware, model,
    tps_per_user, engine, wclass} or None."""
    recs = records if records is not None else scoped_records()
    for prev in earlier_versions(model):
        rows = [r for r in recs if r[2] == prev and math.isfinite(r[3])]
        own = [r for r in rows if r[1] == hw]
        pick = own or rows
        if pick:
            r = max(pick, key=lambda t: t[3])
            return {"record": r[0], "hardware": r[1], "model": prev, "tps_per_user": r[3],
                    "engine": r[5] if len(r) > 5 else "", "wclass": r[6] if len(r) > 6 else ""}
    return None
