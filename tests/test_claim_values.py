"""The claim pipeline's typed values (claims/values.py, issue 58 item 2): a step factor and a band have one printer
each, at one precision (values.PRECISION: the conditions' sentences, the joint read-back, the stories' tables, the
bands and the planner print a factor alike), and the parser reads the printed text back (round trip)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.claims.values import PRECISION, Band, StepFactor, factor_range, magnitude, printed_close

HW = st.sampled_from(["gb300-nvl72", "vr200-nvl72", "h100-sxm", "b200", "mi355x"])
K = st.floats(min_value=0.01, max_value=100.0).filter(lambda k: abs(k - 1) > 1e-6)


def test_hand_checked_words():
    assert PRECISION == 4
    assert StepFactor("gb300-nvl72", 0.8).words() == "gb300-nvl72 steps 1.25x faster"
    assert StepFactor("gb300-nvl72", 1 / 1.0545).words() == "gb300-nvl72 steps 1.054x faster"   # 1.0545 -> 1.054
    assert StepFactor("b200", 1.004).words(steps=False, as_modeled=True) == "b200 as modeled"
    assert StepFactor("b200", 1.004).words(steps=False) == "b200 1.004x slower"
    assert StepFactor("b200", 12.345).words() == "b200 steps 12.35x slower"
    assert StepFactor("b200", 1 / 1.81).size() == "1.81x faster"
    assert Band(0.5, 1.37).words() == "2x faster to 1.37x slower"
    assert Band(1 / 1.6043, 2.4567).words() == "1.604x faster to 2.457x slower"
    assert factor_range(1.4423, 1.8129) == "1.442-1.813" and factor_range(1.81291, 1.81289) == "1.813"
    assert StepFactor.parse("vr200-nvl72 steps 1.25x faster (end 500, modeled 400)") == [StepFactor("vr200-nvl72", 0.8)]


@given(HW, K)
def test_every_printer_prints_a_factor_alike(hw, k):
    """The sentence, the story's table and a band end print one factor with the same digits."""
    m = 1 / k if k < 1 else k
    way = "faster" if k < 1 else "slower"
    assert StepFactor(hw, k).words() == f"{hw} steps {magnitude(m)}x {way}"
    story = StepFactor(hw, k).words(steps=False, as_modeled=True)
    assert story == f"{hw} {magnitude(m)}x {way}" or (story == f"{hw} as modeled" and abs(math.log(k)) <= 0.005)
    band = Band(k, 2.0) if k < 1 else Band(0.5, k)
    assert (magnitude(m) + f"x {way}") in band.words()


@given(HW, K)
def test_a_step_factor_reads_back_from_its_words(hw, k):
    words = StepFactor(hw, k).words()
    (got,) = StepFactor.parse(f"the claim needs {words} (curve end 300 tok/s/user)")
    size, printed = (1 / k, 1 / got.k) if k < 1 else (k, got.k)
    assert got.hardware == hw and (got.faster == (k < 1) or printed == 1.0)      # '1x faster' reads back as 1
    assert printed_close(printed, size, PRECISION)


@given(HW, K)
def test_a_story_factor_reads_back_with_the_bare_parser(hw, k):
    f = StepFactor(hw, k)
    words = f.words(steps=False, as_modeled=True)
    got = StepFactor.parse(words, bare=True)
    if words.endswith("as modeled"):
        assert got == [] and abs(k - 1) <= 0.005
    else:
        assert got[0].hardware == hw and math.isclose(got[0].k, k, rel_tol=0.005)


@given(st.floats(min_value=0.05, max_value=0.999), st.floats(min_value=1.001, max_value=20.0))
def test_a_band_reads_back_from_its_words(lo, hi):
    (got,) = Band.parse(f"its region's (mid) speed error: {Band(lo, hi).words()}")
    assert printed_close(1 / got.lo, 1 / lo, PRECISION) and printed_close(got.hi, hi, PRECISION)
    assert got.holds(1.0) and Band(lo, hi).holds(1.0)


def test_bounds_and_prose_are_no_step_factor():
    text = ("vr200-nvl72's decode steps more than 5x faster than modeled; speed of light allows 1.23x faster; "
            "even kernels 5x faster give only 3")
    assert StepFactor.parse(text) == []


def test_the_conditions_sentence_reads_back():
    from perfmodel.claims.conditions import _step_words
    what, short, end = _step_words("gb300-nvl72", 1 / 1.37, 400.0)
    assert short.startswith("gb300-nvl72 steps 1.37x faster") and end == pytest.approx(548.0)
    assert StepFactor.parse(what) == StepFactor.parse(short)
    assert StepFactor.parse(short)[0].k == pytest.approx(1 / 1.37)
