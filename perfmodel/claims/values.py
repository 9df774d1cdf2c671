"""The values the claim pipeline passes between its rooms, typed: a ``Reading`` of a claim's figure off the curves
(reading.Figure.read), its ``Evaluation`` (the reading with its interval and curve ends: findings.evaluate), and
the step factors the conditions speak in, ``StepFactor`` and ``Band``, each with its one printer and the parser
that reads the printed text back (tests/test_claim_values.py: round trip).

A step factor k of a system is its true decode step over the modeled one (k < 1: the steps are 1/k times faster
than modeled; the curve end moves to end / k). A band is the pair of step factors (lo, hi) that the model's
held-out error spans (exp(q10), exp(q90) of ln(model / true speed): conditions.region_band), printed as
'1/lo x faster to hi x slower'.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    import numpy as np


class Reading(TypedDict, total=False):
    """Q and what it was read from (reading.Figure.read). Every reading has the first seven keys; a reading over
    a grid of speeds (fastest_common, matched) also the grid's."""

    q: float                    # the claim's figure Q (a ratio: dimensionless; else the metric's unit)
    unreached: list[str]        # systems that cannot reach the point (their term: 0, or infinity for a TTFT)
    ends: list[float]           # each term's curve end, tokens/s per user (divided by its shift k)
    systems: list[str]          # each term's hardware id
    x: float | None             # the per-user speed read at, tokens/s per user (None: a peak or a curve end)
    rows: list[Any]             # each term's envelope row (a pandas Series) at the point, or None
    values: list[float]         # each term's figure f_i
    xs: np.ndarray              # grid readings: the speeds of the grid, tokens/s per user
    qs: np.ndarray              # grid readings: Q at each speed of the grid
    qmin: float
    qmax: float
    x_min: float
    x_max: float
    range: list[float]          # the speeds every system reaches (bounded by the source's tested range)
    grid_points: int
    grid_step: float            # the largest step of ln Q between neighbouring grid points


class CurveEnd(TypedDict):
    """A system's curve end, tokens/s per user, with the model's curve-end speed error around it (low, high:
    end x exp(-q90), end x exp(-q10); +-inf where the curve has no end)."""

    end: float
    low: float
    high: float


class Evaluation(TypedDict):
    """A claim's reading with its interval (findings.evaluate): the nominal reading ``nom`` (``pess`` is the same
    reading), the profile's fast corner ``opt``, Q, the interval ``iv`` (interval.interval), each system's curve
    end, the unreached systems, the claimed figure ``c`` in Q's terms and the curve-end speed error's
    half-widths (analyses/model_error.half_widths)."""

    fig: Any                    # the reading.Figure read (Any here: this module sits below reading.py, no cycle)
    nom: Reading
    pess: Reading
    opt: Reading
    q: float
    iv: dict[str, Any]
    ends: dict[str, CurveEnd]
    unreached: dict[str, list[str]]
    c: float
    end_error: dict[str, Any]


def end_of(ev: Evaluation, hw: str) -> float | None:
    """``hw``'s curve end in an evaluation, tokens/s per user (None: not one of its systems)."""
    e = ev["ends"].get(hw)
    return None if e is None else e["end"]


PRECISION = 4
"""Significant digits of every printed step factor, band end and range of factors: one precision for the
conditions' sentences, the joint read-back, the stories' tables and the planner. Near a curve's end a claim's
figure moves ~15x faster than k, so a factor rounded to three digits (1.05 for 1.0545) reads back up to 7% off
the claim; at four, within 0.1% (tests/test_verdicts_readback.py)."""

NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)"
STEP = re.compile(rf"([\w.\-@:]+?)(?:'s decode)? steps {NUMBER}x (faster|slower)")
BARE_STEP = re.compile(rf"([\w.\-@:]+?)(?:'s decode)?(?: steps)? {NUMBER}x (faster|slower)")
BAND = re.compile(rf"{NUMBER}x faster to {NUMBER}x slower")


def magnitude(m: float) -> str:
    """A factor's size m (>= 1: 1/k for faster steps, k for slower) as every factor is printed: PRECISION
    significant digits ('1.054', '2.5', '12.35')."""
    return f"{m:.{PRECISION}g}"


def factor_range(lo: float, hi: float) -> str:
    """Two sizes of factors as a range ('1.442-1.813'), one figure where both print the same."""
    a, b = magnitude(lo), magnitude(hi)
    return a if a == b else f"{a}-{b}"


@dataclass(frozen=True)
class StepFactor:
    """A system's decode step time over the modeled one, k (k < 1: faster)."""

    hardware: str
    k: float

    @property
    def faster(self) -> bool:
        return self.k < 1

    def size(self) -> str:
        """'1.234x faster' / '1.234x slower' (the factor 1/k or k, whichever is >= 1; ``magnitude``)."""
        return f"{magnitude(1 / self.k if self.faster else self.k)}x {'faster' if self.faster else 'slower'}"

    def words(self, steps: bool = True, as_modeled: bool = False) -> str:
        """'<hardware> steps 1.234x faster' (``steps`` False: '<hardware> 1.234x faster'); ``as_modeled``: a
        factor within 0.5% of 1 is '<hardware> as modeled' (the stories' tables)."""
        if as_modeled and 1 / 1.005 <= self.k <= 1.005:
            return f"{self.hardware} as modeled"
        return f"{self.hardware}{' steps' if steps else ''} {self.size()}"

    @classmethod
    def parse(cls, text: str, bare: bool = False) -> list[StepFactor]:
        """Every step factor printed in ``text`` ('<hw> steps 1.23x faster', "<hw>'s decode steps 1.23x slower
        than modeled"), in order; ``bare``: also '<hw> 1.23x faster' (``words(steps=False)``, the stories'
        tables; in free prose any word before a multiple would read as a hardware id). A bound ('steps more than
        5x faster') and 'as modeled' are no factor."""
        return [cls(hw, 1 / float(v) if d == "faster" else float(v))
                for hw, v, d in (BARE_STEP if bare else STEP).findall(text)]


@dataclass(frozen=True)
class Band:
    """The step factors (lo, hi) a system's speed may take inside the model's error (lo < 1 < hi usually)."""

    lo: float
    hi: float

    def words(self) -> str:
        """'1/lo x faster to hi x slower' (``magnitude``)."""
        return f"{magnitude(1 / self.lo)}x faster to {magnitude(self.hi)}x slower"

    def holds(self, k: float) -> bool:
        return self.lo <= k <= self.hi

    @classmethod
    def parse(cls, text: str) -> list[Band]:
        """Every band printed in ``text``, in order."""
        return [cls(1 / float(f), float(s)) for f, s in BAND.findall(text)]


def printed_close(printed: float, value: float, digits: int) -> bool:
    """Whether ``printed`` is ``value`` rounded to ``digits`` significant digits (for round-trip checks)."""
    return math.isclose(printed, value, rel_tol=0.5 * 10 ** (1 - digits))
