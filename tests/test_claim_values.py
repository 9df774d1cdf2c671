"""The claim pipeline's typed values (claims/values.py, issue 58 item 2): a step factor and a band have one printer
each, and the parser reads the printed text back (round trip); the printers print what the three formatters they
replaced printed (conditions' sentences, joint's read-back digits, the stories' tables), so no verdict text moves."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.claims.values import Band, StepFactor, printed_close

HW = st.sampled_from(["gb300-nvl72", "vr200-nvl72", "h100-sxm", "b200", "mi355x"])
K = st.floats(min_value=0.01, max_value=100.0).filter(lambda k: abs(k - 1) > 1e-6)
DIGITS = {"verdict": 3, "readback": 4, "story": 3}


def _old_verdict(hw: str, k: float) -> str:
    """conditions._step_words' short form before the printer (the text it printed)."""
    kk = 1 / k if k < 1 else k
    kt = f"{kk:.3g}" if kk < 1.1 else f"{kk:.2f}" if kk < 10 else f"{kk:.3g}"
    return f"{hw} steps {kt}x faster" if k < 1 else f"{hw} steps {kt}x slower"


def _old_readback(hw: str, k: float) -> str:
    """joint.part's factor before the printer."""
    kk = 1 / k if k < 1 else k
    return f"{hw} steps {kk:.4g}x {'faster' if k < 1 else 'slower'}"


def _old_story(hw: str, k: float) -> str:
    """story._fk before the printer."""
    return f"{hw} {1 / k:.2f}x faster" if k < 1 / 1.005 else f"{hw} {k:.2f}x slower" if k > 1.005 else \
        f"{hw} as modeled"


def test_hand_checked_words():
    assert StepFactor("gb300-nvl72", 0.8).words() == "gb300-nvl72 steps 1.25x faster"
    assert StepFactor("gb300-nvl72", 1 / 1.0545).words("readback") == "gb300-nvl72 steps 1.054x faster"
    assert StepFactor("b200", 1.004).words("story", steps=False) == "b200 as modeled"
    assert StepFactor("b200", 12.345).words() == "b200 steps 12.3x slower"
    assert Band(0.5, 1.37).words() == "2x faster to 1.37x slower"
    assert StepFactor.parse("vr200-nvl72 steps 1.25x faster (end 500, modeled 400)") == [StepFactor("vr200-nvl72", 0.8)]


@given(HW, K)
def test_the_printers_print_what_the_old_formatters_printed(hw, k):
    assert StepFactor(hw, k).words("verdict") == _old_verdict(hw, k)
    assert StepFactor(hw, k).words("readback") == _old_readback(hw, k)
    assert StepFactor(hw, k).words("story", steps=False) == _old_story(hw, k)


@given(HW, K, st.sampled_from(["verdict", "readback"]))
def test_a_step_factor_reads_back_from_its_words(hw, k, digits):
    words = StepFactor(hw, k).words(digits)
    (got,) = StepFactor.parse(f"the claim needs {words} (curve end 300 tok/s/user)")
    size, printed = (1 / k, 1 / got.k) if k < 1 else (k, got.k)
    assert got.hardware == hw and (got.faster == (k < 1) or printed == 1.0)      # '1x faster' reads back as 1
    assert printed_close(printed, size, DIGITS[digits] if size < 1.1 or size >= 10 or digits == "readback" else 3)


@given(HW, K)
def test_a_story_factor_reads_back_with_the_bare_parser(hw, k):
    f = StepFactor(hw, k)
    words = f.words("story", steps=False)
    got = StepFactor.parse(words, bare=True)
    if words.endswith("as modeled"):
        assert got == [] and abs(k - 1) <= 0.005
    else:
        assert got[0].hardware == hw and math.isclose(got[0].k, k, rel_tol=0.005)


@given(st.floats(min_value=0.05, max_value=0.999), st.floats(min_value=1.001, max_value=20.0))
def test_a_band_reads_back_from_its_words(lo, hi):
    (got,) = Band.parse(f"its region's (mid) speed error: {Band(lo, hi).words()}")
    assert printed_close(1 / got.lo, 1 / lo, 3) and printed_close(got.hi, hi, 3)
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
