"""The lecture's prefix-tree and DOCK / DOG sections of the sequence-to-sequence lesson without
a browser: the buttons step the tree, the figure's columns and the listing show the search's
numbers, the width sliders rebuild."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson


def column(lesson: Seq2SeqLesson, name: str) -> dict[str, str]:
    data = lesson.lexicon.nodes.data
    return dict(zip(data["node"], data[name], strict=True))


def test_tree_buttons_step_back_run_and_reset() -> None:
    lesson = Seq2SeqLesson()
    lex = lesson.lexicon
    assert lex.tree_text.object.startswith("Frame 0 of 4")
    assert set(column(lesson, "value").values()) == {"1.0", ""}  # only the start node
    lex.tree_move("step")
    values = column(lesson, "value")
    assert (values["A"], values["AE"], values["B"]) == ("0.4", "0.06", "0.34")
    assert column(lesson, "state")["A"] == "in the beam"
    lex.tree_move("step")
    values = column(lesson, "value")
    assert (values["A R"], values["A N"], values["AE N"]) == ("0.08", "0.16", "0.03")
    assert values["B"] == "0.34, EOS 0.034" and column(lesson, "state")["A"] == "passed"
    assert len(lex.edges.data["x0"]) == len(lex.nodes.data["x"]) - 1  # a tree
    lex.tree_move("back")
    assert lex.tree_text.object.startswith("Frame 1 of 4")
    lex.tree_move("run")
    assert "Result (best of the final nodes): A N D, p = 0.0864" in lex.tree_text.object
    lex.tree_width.value = 1  # a new width starts over
    assert lex.stepper.search.beam_width == 1 and lex.stepper.frame == 0
    lex.tree_move("run")
    assert column(lesson, "state")["AE"] == "pruned" and "A N D, p = 0.0864" in (
        lex.tree_text.object
    )


def test_sentence_width_slider_shows_greedy_and_beam() -> None:
    lex = Seq2SeqLesson().lexicon
    assert "result: DOCK BUYS MAN  p = 0.168" in lex.sentence_text.object
    assert "DOG BITES MAN" not in lex.sentence_text.object.split("result:")[-1]
    lex.sentence_width.value = 3
    text = lex.sentence_text.object
    assert "greedy (beam width 1)" in text and "beam width 3" in text
    assert text.rstrip().endswith("result: DOG BITES MAN  p = 0.288")
