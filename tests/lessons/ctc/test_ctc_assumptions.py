"""CTC's three assumptions broken by small cases (Wand's lecture), beside an attention
encoder-decoder: infinite loss without a path, ln 2 for a reversal read in order, ln 4 against
ln 2 for dependent outputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.decode.ctc_lattice import ctc_paths
from pyplay.ui.lessons.ctc.assumptions import (
    CLASSES,
    LONG_LABEL,
    ctc_optimum,
    independence_case,
    length_case,
    order_case,
)
from pyplay.ui.lessons.ctc.assumptions_view import AssumptionsSection, case_text
from pyplay.ui.lessons.ctc.view import CTCLesson


def test_label_longer_than_the_frames_allow_has_no_path() -> None:
    case = length_case()
    label = np.array([CLASSES.index(s) for s in LONG_LABEL])
    assert [len(ctc_paths(label, T)) for T in (4, 5, 6, 7)] == [0, 0, 1, 11]
    assert case.rows[0].startswith("T = 4 frames: 0 paths") and "inf" in case.rows[1]
    assert f"{6 * math.log(5):.3f}" in case.rows[2]  # one path of 6 frames, (1/5)^6
    assert math.isinf(case.ctc_loss) and math.isfinite(case.attention_loss)
    assert "need at least 6 frames" in case.rows[4]


def test_reversed_order_costs_a_one_way_net_ln2() -> None:
    case = order_case(train=False)
    assert case.ctc_loss == pytest.approx(math.log(2))
    assert "its only path of 3 frames is c b a" in case.rows[0]
    assert math.isnan(case.attention_loss)


def test_attention_learns_the_reversal() -> None:
    assert order_case(train=True).attention_loss < 0.05


def test_dependent_outputs_cost_ctc_ln4_and_a_decoder_ln2() -> None:
    probs = ctc_optimum()
    np.testing.assert_allclose(probs[:, 1:], 0.5, atol=0.01)  # blank ~0, a and b 1/2
    case = independence_case(train=True)
    assert case.ctc_loss == pytest.approx(math.log(4), abs=0.01)
    assert case.attention_loss == pytest.approx(math.log(2), abs=0.02)
    exact = independence_case(train=False)
    assert exact.ctc_loss == pytest.approx(math.log(4))
    assert "and 0.500 on a or b alone" in exact.rows[1]


@pytest.mark.slow  # builds a lesson's view: 1-2 s
def test_section_in_the_lesson_and_its_button() -> None:
    lesson = CTCLesson()
    section = lesson.assumptions
    assert "## What CTC assumes, and an attention model beside it" in lesson.sections()
    text = section.text.object
    assert "CTC inf (no path)" in text and "not trained yet" in text
    section.button.clicks += 1
    assert "not trained yet" not in section.text.object
    assert case_text(order_case()).startswith("Orderedness:")
    assert isinstance(AssumptionsSection().text.object, str)
