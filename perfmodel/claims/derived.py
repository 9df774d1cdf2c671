"""Specs derived by arithmetic from a stated figure keep that figure's status (issue 48).

A hardware file holds per-GPU numbers; where a source states a figure for another unit (NVLink-C2C 1.8 TB/s per
Vera CPU, both directions) the file holds the arithmetic's result (1800 / 2 / 2 = 450 GB/s per GPU per direction)
as an *estimate*. ``data/spec-derivations/derived.yaml`` names such values: the stated figure (value, unit,
status, source) and the arithmetic. A spec-ratio check reads the value with the stated figure's status
(``effective_status``) and prints the arithmetic. An entry whose arithmetic does not give the catalog's value is
a one-line error naming the file and the field (never silently used).
"""

from __future__ import annotations

import functools
from pathlib import Path

from pydantic import ValidationError

from .. import catalog
from ..errors import SpecError
from ..specs.claim import eval_arithmetic
from ..specs.common import Status, Strict

FILE = Path("data") / "spec-derivations" / "derived.yaml"


class Stated(Strict):
    """The figure a source states: value in ``unit``, its status and source URL."""

    value: float
    unit: str
    status: Status
    source: str


class Derivation(Strict):
    """One per-GPU spec derived from a stated figure: hardware id, field, the stated figure, the arithmetic
    (numbers and + - * / only, giving the hardware file's value) and what each step does."""

    hardware: str
    field: str
    stated: Stated
    arithmetic: str
    steps: str


@functools.cache
def derivations(path: str | None = None) -> tuple[Derivation, ...]:
    """Every entry of the derivations file (one-line SpecError on a malformed one)."""
    from ..fileio import load_yaml
    p = Path(path) if path else catalog.builtin_root() / FILE
    if not p.is_file():
        return ()
    data = load_yaml(p) or []
    if not isinstance(data, list):
        raise SpecError("expected a list of derivations", file=str(p))
    out = []
    for i, d in enumerate(data):
        try:
            out.append(Derivation.model_validate(d))
        except ValidationError as exc:
            e = exc.errors()[0]
            raise SpecError(e["msg"], file=str(p), field=f"[{i}]." + ".".join(map(str, e["loc"]))) from None
    return tuple(out)


def derived(hw: str, field: str, path: str | None = None) -> dict | None:
    """The derivation of ``hw``'s value of ``field`` ({status, arithmetic, stated, text}) when the file names one
    and its arithmetic gives the value hw (id[@variant]) holds; None otherwise. A derivation whose arithmetic does
    not give the base hardware's value is a SpecError naming the file and field."""
    base = hw.split("@")[0]
    for i, d in enumerate(derivations(path)):
        if d.hardware != base or d.field != field:
            continue
        try:
            got = eval_arithmetic(d.arithmetic)
        except ValueError as exc:
            raise SpecError(str(exc), file=str(path or FILE), field=f"[{i}].arithmetic") from None
        want = catalog.hardware(base).value(field)
        if want is None or abs(got - want) > 1e-9 * max(1.0, abs(want)):
            raise SpecError(f"{d.arithmetic} = {got:g}, not {base}'s {field} {want}", file=str(path or FILE),
                            field=f"[{i}].arithmetic")
        if abs(catalog.hardware(hw).value(field) - got) > 1e-9 * max(1.0, abs(got)):
            return None       # a variant with a value of its own
        s = d.stated
        return {"status": s.status, "arithmetic": d.arithmetic, "stated": s.model_dump(), "steps": d.steps,
                "text": f"{d.arithmetic} = {got:g}: the {s.status} {s.value:g} {s.unit}, {d.steps}"}
    return None


def effective_status(hw: str, field: str) -> str:
    """The status a spec check reads: the stated figure's where the value is derived from one, else its own."""
    d = derived(hw, field)
    return d["status"] if d else getattr(catalog.hardware(hw).specs, field).status
