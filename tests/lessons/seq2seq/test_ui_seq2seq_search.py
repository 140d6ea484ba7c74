"""The beam section's count of paths (Wand's M^T, 26^100 against 10^80 atoms, and the lesson's
own M and T) and the pruning limits chosen on the page."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from pathlib import Path

from pyplay.decode.pruning import Pruning
from pyplay.ui.lessons.seq2seq.beam_stepper import BEAM_MAX_LENGTH
from pyplay.ui.lessons.seq2seq.search_space import (
    ATOMS_POWER,
    LECTURE_LENGTH,
    LECTURE_SYMBOLS,
    power_of_ten,
    search_space_text,
)
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState
from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson


def test_the_lectures_example_as_it_states_it() -> None:
    # the lecture's numbers: 26 letters, length 100, about 10^80 atoms
    assert (LECTURE_SYMBOLS, LECTURE_LENGTH, ATOMS_POWER) == (26, 100, 80)
    exact = str(LECTURE_SYMBOLS**LECTURE_LENGTH)  # Python's exact integer
    mantissa, exponent = power_of_ten(LECTURE_SYMBOLS, LECTURE_LENGTH)
    assert exponent == len(exact) - 1 == 141
    assert f"{mantissa:.1f}" == f"{exact[0]}.{exact[1]}" == "3.1"
    text = search_space_text(10, 30)
    assert "26¹⁰⁰ ≈ 3.1 × 10¹⁴¹" in text and "10⁸⁰ atoms" in text
    assert "M = 10" in text and "T = 30" in text and "10³⁰ ≈ 1.0 × 10³⁰" in text
    assert "Wand's lecture" in text and "the lecture" not in text.replace("Wand's lecture", "")


WAND = Path("/work/shared/lectures/002_c50f0723eb4f3691.txt")


@pytest.mark.skipif(not WAND.exists(), reason="the lecture's text is not on this machine")
def test_the_numbers_are_the_lectures() -> None:
    text = WAND.read_text()
    assert "M^T$ possible paths" in text and "26 letters, max sequence length 100" in text
    assert "26 100 possible combinations" in text  # 26^100, its exponent lost in the text
    assert "10^{80} atoms in the universe" in text


def test_power_of_ten_against_exact_integers() -> None:
    for m, t in ((2, 10), (7, 13), (33, 30), (1, 5), (9, 0)):
        mantissa, exponent = power_of_ten(m, t)
        exact = str(m**t)
        assert exponent == len(exact) - 1
        assert mantissa == pytest.approx(int(exact) / 10**exponent, rel=1e-9)
    with pytest.raises(ValueError):
        power_of_ten(0, 3)


@pytest.mark.slow  # builds a lesson's view: 1-2 s
def test_lesson_counts_its_own_vocabulary_live() -> None:
    lesson = Seq2SeqLesson()
    M = len(lesson.state.task_obj.tgt_vocab)
    mantissa, _ = power_of_ten(M, BEAM_MAX_LENGTH)
    shown = lesson.search_space.object
    assert f"M = {M} symbols" in shown and f"T = {BEAM_MAX_LENGTH} tokens" in shown
    assert f"{mantissa:.1f} × 10" in shown
    lesson.state.task = "dates"
    M2 = len(lesson.state.task_obj.tgt_vocab)
    assert M2 != M
    assert f"M = {M2} symbols" in lesson.search_space.object


def test_pruning_controls_reach_the_search() -> None:
    lesson = Seq2SeqLesson()
    assert lesson.pruning() == Pruning()
    lesson.per_node.value, lesson.threshold.value = 1, 2.5
    assert lesson.pruning() == Pruning(per_node=1, threshold=2.5)
    lesson.source_box.value_input = "abc"
    lesson.beam_width.value = 4
    lesson.beam_move("step")
    lesson.beam_move("step")
    beam = lesson.beam
    assert beam is not None and beam.search.pruning == Pruning(1, 2.5)
    text = lesson.beam_text.object
    assert "at most 1 per node, scores within 2.5 of the best" in text
    for rec in beam.search.history:
        last = [h.tokens[-1] for h in rec.live]
        assert len(last) == len(set(last))


def test_per_node_prunes_are_named_in_the_listing() -> None:
    state = Seq2SeqState()
    beam = state.start_beam("abcd", beam_width=6, pruning=Pruning(per_node=1))
    assert beam is not None
    beam.step()
    beam.step()
    statuses = {h.status for rec in beam.search.history for h in rec.pruned}
    assert "per_node" in statuses
    assert "pruned: its node is full (per node)" in set(beam.tree().nodes["status"])


def test_word_history_section_follows_the_count_per_node() -> None:
    from pyplay.decode.word_histories import FRAMES
    from pyplay.ui.lessons.seq2seq.word_history_view import (
        HELP,
        WordHistorySection,
        frames_markdown,
    )

    section = WordHistorySection()
    assert section.text.object.endswith("result: DOG BITES MAN  p = 0.0004761")
    assert "[start] after DOCK BUYS 0.003075, after DOG BITES 0.0008062" in section.text.object
    section.per_node.value = 1
    assert "dropped at [start]: after DOG BITES 0.0008062 (node full)" in section.text.object
    assert section.text.object.endswith("result: DOCK BUYS MAN  p = 0.0002018")
    table = frames_markdown()
    assert table.count("\n| ") == len(FRAMES) and "| 4 | ␣ 0.4, K 0.5 |" in table
    assert "Wand's lecture" in HELP
    lesson = Seq2SeqLesson()
    headings = [s for s in lesson.lexicon.sections() if isinstance(s, str)]
    assert "## Word histories and a language model in the prefix tree" in headings
