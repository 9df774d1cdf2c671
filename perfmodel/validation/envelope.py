"""The envelope a frontier row naming no engine is read on: the best over the default engines' profiles and their
variants (or, without envelope_over_engines, over the profile and its latency-tuned variant)."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .. import catalog
from ..specs.profile import ProfileSpec
from ..specs.records import Record
from .frontier_rows import frontier_value
from .row_context import Ctx, Unsupported, make_ctx
from .samples import central_params, sample_params

ENVELOPE_PROFILES = ("trtllm", "sglang", "vllm")
"""The default profiles a frontier row that names no engine is read on, as their envelope: such a frontier
(InferenceX's) is the best over engines and their configurations."""
VARIANT_SCOPE = {"min-latency": "curve-end"}
"""Profile variant -> the kind of records it was fitted or validated on: 'curve-end' (fitted on the
high-interactivity end of frontier reads only: ``python -m perfmodel.validation.variant_fit``) or 'mid-curve'
(validated along the curve). A variant joins the envelope of rows naming no engine only when validated mid-curve
(``ENVELOPE_SCOPE``): a configuration fitted on the curve end alone reads the rest of the curve far too fast (the
min-latency variant did, by +100-700% on the InferenceX reads); it stays selectable by name
(``engine: trtllm@min-latency``)."""
ENVELOPE_SCOPE = ("mid-curve",)
ENVELOPE_VARIANTS = tuple(v for v, scope in VARIANT_SCOPE.items() if scope in ENVELOPE_SCOPE)
"""The variants that join the envelope (none while every variant is fitted on the curve end only)."""


LATENCY_VARIANTS = ("min-latency",)
"""Without the mechanism envelope_over_engines: the latency-tuned stack configurations a frontier row with no engine
named is also read on, beside the profile (at a frontier's high-interactivity end the latency-tuned configuration
is the one on it)."""


_ENVELOPE = contextvars.ContextVar("frontier_envelope", default=True)


def envelope_on() -> bool:
    """Whether frontier rows naming no engine are read on the envelope (False inside ``profile_alone``)."""
    return _ENVELOPE.get()


@contextlib.contextmanager
def profile_alone():
    """Inside: frontier rows are read on the profile alone, not on the envelope over its variants. A profile's
    calibration runs inside it, so the calibrated defaults never see a variant's configuration."""
    token = _ENVELOPE.set(False)
    try:
        yield
    finally:
        _ENVELOPE.reset(token)


def variant_params(profile: ProfileSpec, variant: str, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The parameter samples of ``profile@variant``: the variant's parts at their central values, the rest as given."""
    n = len(next(iter(params.values())))
    return {**params, **{k: np.full(n, p.value) for k, p in profile.variants[variant].params.items()}}


def envelope_members(profile: ProfileSpec, params: dict[str, np.ndarray]) -> list[tuple[str, ProfileSpec, dict]]:
    """(label, profile, parameter samples) of every member of a no-engine row's envelope: ``profile`` with
    ``params``, the other ENVELOPE_PROFILES (central values for one sample, else draws at the fixed seed), and each
    member's ENVELOPE_VARIANTS."""
    n = len(next(iter(params.values())))
    members = [(profile.id, profile, params)]
    if not profile.uses("envelope_over_engines"):      # the profile and its latency-tuned variant (specs/mechanisms.py)
        return members + [(f"{profile.id}@{v}", profile, variant_params(profile, v, params))
                          for v in LATENCY_VARIANTS if v in profile.variants]
    for pid in ENVELOPE_PROFILES:
        if pid != profile.id:
            p = catalog.profile(pid)
            members.append((pid, p, central_params(p) if n == 1 else sample_params(p, n)))
    out = []
    for label, p, prm in members:
        out.append((label, p, prm))
        out += [(f"{label}@{v}", p, variant_params(p, v, prm)) for v in ENVELOPE_VARIANTS if v in p.variants]
    return out


def envelope_value(rec: Record, hardware: str, profile: ProfileSpec, members: list[tuple[str, ProfileSpec, dict]],
                   ctx: Ctx, note: list) -> np.ndarray:
    """Best value per sample over the envelope's ``members`` (``envelope_members``; each read on its own
    frontier; ``ctx`` is ``profile``'s own)."""
    values: dict[str, np.ndarray] = {}
    why: Unsupported | None = None
    for label, p, prm in members:
        try:
            c = ctx if label == profile.id else make_ctx(hardware, rec, p, prm)
            values[label] = frontier_value(rec, c, [])
        except Unsupported as exc:
            why = why or exc
    if not values:
        assert why is not None  # no value: every member (the profile itself at least) raised
        raise why
    top = max(values, key=lambda k: np.nanmedian(values[k]))
    note.append(f"frontier envelope over {', '.join(values)}: {top} on top")
    return np.fmax.reduce(list(values.values()))
