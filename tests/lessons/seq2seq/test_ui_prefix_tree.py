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


@pytest.mark.slow
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
    assert (values["B"], column(lesson, "ended")["B"]) == ("0.34", "EOS 0.034")
    assert column(lesson, "state")["A"] == "passed"
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


@pytest.mark.slow
def test_sentence_width_slider_shows_greedy_and_beam() -> None:
    lex = Seq2SeqLesson().lexicon
    assert "result: DOCK BUYS MAN  p = 0.168" in lex.sentence_text.object
    assert "DOG BITES MAN" not in lex.sentence_text.object.split("result:")[-1]
    lex.sentence_width.value = 3
    text = lex.sentence_text.object
    assert "greedy (beam width 1)" in text and "beam width 3" in text
    assert text.rstrip().endswith("result: DOG BITES MAN  p = 0.288")


PAIRS = (
    "the cat\tle chat\nthe dog\tle chien\na cat\tun chat\na dog\tun chien\nthe cats\tles chats\n"
)


@pytest.mark.slow
def test_lexicon_constrained_beam_on_your_pairs() -> None:
    from pyplay.ui.lessons.seq2seq.state import Seq2SeqState

    state = Seq2SeqState()
    assert state.start_beam("abc", 3, lexicon=True) is None  # reversal: no words to constrain
    assert "a lexicon needs word-like output" in state.message
    assert state.set_user_pairs(PAIRS)
    lex = state.target_lexicon()
    vocab = state.task_obj.tgt_vocab
    assert {vocab.decode(w) for w in lex.tree.words()} == {"le", "un", "les", "chat", "chien",
                                                            "chats"}  # fmt: skip
    assert lex.separator == vocab.encode([" "])[0]
    free = state.start_beam("the cat", 3)  # untrained: any characters
    bound = state.start_beam("the cat", 3, lexicon=True)
    assert free is not None and bound is not None
    free.run()
    bound.run()
    assert not all(lex.accepts(h.tokens) for h in free.search.results())
    assert bound.search.results() and all(lex.accepts(h.tokens) for h in bound.search.results())
    assert "only the 6 words of the targets" in bound.listing()
    state.train(steps=150)
    trained = state.start_beam("the dog", 3, lexicon=True)
    assert trained is not None
    trained.run()
    best = trained.search.results()[0]
    assert lex.accepts(best.tokens) and trained.text(best.tokens) == "le chien <eos>"


@pytest.mark.slow
def test_lesson_lexicon_checkbox() -> None:
    lesson = Seq2SeqLesson()
    lesson.state.set_user_pairs(PAIRS)
    lesson.source_box.value_input = "a dog"
    lesson.beam_lexicon.value = True
    lesson.beam_move("run")
    assert lesson.beam is not None and lesson.beam.lexicon is not None
    assert "words of the targets (lexicon)" in lesson.beam_text.object
