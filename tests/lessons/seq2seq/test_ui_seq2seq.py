"""The sequence-to-sequence lesson without a browser: settings, training, decoding with
attention weights, user pairs, errors as messages."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.ui.lessons.seq2seq.state import Seq2SeqState
from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson


@pytest.mark.slow
def test_training_lowers_the_loss_and_decoding_reverses() -> None:
    state = Seq2SeqState()
    assert state.trainer is not None and state.trainer.step_count == 0
    state.train(steps=1)  # what the page's Step button runs (TrainingSession.step)
    assert state.trainer.step_count == 1 and "Step 1" in state.status
    state.train(steps=400)
    losses = state.history["loss"]
    assert np.mean(losses[-20:]) < 0.3 * np.mean(losses[:5])
    result = state.translate("abcdefg")
    assert result is not None and result.text == "gfedcba"
    assert result.weights is not None and result.weights.shape == (8, 7)  # 7 outputs + EOS
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, rtol=1e-5)
    assert result.weights[0].argmax() == 6  # the first output looks at the last source symbol
    assert state.evaluate()["exact_match"] > 0.5


def test_switching_wiring_or_score_rebuilds_and_init_has_no_weights() -> None:
    state = Seq2SeqState()
    version = state.version
    state.score = "additive"
    assert state.version == version + 1 and "Luong attention (additive)" in state.message
    state.wiring = "init"
    assert state.version == version + 2
    result = state.translate("abc")
    assert result is not None and result.weights is None


@pytest.mark.slow
def test_bahdanau_wiring_trains_and_shows_its_weights() -> None:
    state = Seq2SeqState(wiring="bahdanau", score="additive")
    assert "Bahdanau attention (additive)" in state.message
    state.train(steps=300)
    result = state.translate("abcdef")
    assert result is not None and result.weights is not None
    assert result.weights.shape == (len(result.output) + 1, 6)
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, rtol=1e-5)
    assert state.evaluate()["exact_match"] > 0.5


@pytest.mark.slow
def test_reverse_source_keeps_the_heatmap_in_typed_order() -> None:
    state = Seq2SeqState(reverse_source=True, seed=1)
    state.train(steps=300)
    result = state.translate("abcdef")
    assert result is not None and result.text == "fedcba"
    assert result.weights is not None and result.weights[0].argmax() == 5


def test_bad_input_becomes_a_message_and_the_model_stays() -> None:
    state = Seq2SeqState()
    state.train(steps=3)
    params = {k: v.copy() for k, v in state.model.params.items()}
    assert state.translate("xyz") is None
    assert state.message_kind == "warning" and "not in the vocabulary" in state.message
    assert state.translate("   ") is None and "type a source" in state.message
    state.lr = -1.0
    assert state.message_kind == "danger" and "lr must be > 0" in state.message
    assert state.trainer.step_count == 3
    state.task = "pairs"  # no pairs given yet
    assert "Not rebuilt" in state.message and state.task_obj.name == "reversal"
    assert all(np.array_equal(params[k], v) for k, v in state.model.params.items())


def test_user_pairs() -> None:
    state = Seq2SeqState()
    assert not state.set_user_pairs("no tab here")
    assert "Pairs not used: line 1" in state.message
    assert not state.set_user_pairs(b"\xff\xfe")
    assert "UTF-8" in state.message
    assert state.set_user_pairs("cat\tchat\ndog\tchien\n")
    assert state.task == "pairs" and state.task_obj.name == "pairs"
    assert "2 pairs" in state.message
    state.train(steps=5)
    assert state.translate("cat") is not None


@pytest.mark.slow
def test_lesson_reveals_the_heatmap_row_by_row() -> None:
    lesson = Seq2SeqLesson()
    lesson.state.train(steps=50)
    lesson.source_box.value_input = "abcd"
    lesson.decoding = lesson.state.translate("abcd")
    assert lesson.decoding is not None and lesson.decoding.weights is not None
    lesson._reveal_row()
    assert len(lesson.attn_source.data["weight"]) == 4  # one row of four source positions
    lesson._reveal_row()
    assert len(lesson.attn_source.data["weight"]) == 8
    assert lesson.attn_source.data["src"][:4] == ["a", "b", "c", "d"]
    assert lesson.panel() is not None


@pytest.mark.slow
def test_beam_stepper_steps_back_and_runs() -> None:
    state = Seq2SeqState()
    state.train(steps=300)
    beam = state.start_beam("abcde", beam_width=3)
    assert beam is not None and "greedy: 'edcba <eos>'" in beam.listing()
    first = beam.step()
    assert first is not None and len(first.live) == 3
    tree = beam.tree()
    assert tree.nodes["status"][0] == "start" and tree.nodes["status"].count("in the beam") == 3
    assert len(tree.edges["x0"]) == len(tree.nodes["x"]) - 1  # one edge per non-root node
    listing = beam.listing()
    assert "live:" in listing and "pruned: outside the beam" in listing
    beam.step()
    assert beam.search.step == 2
    beam.back()
    assert beam.search.step == 1 and beam.search.history[-1] is first
    beam.run()
    assert beam.search.done and "done: best 'edcba <eos>'" in beam.listing()
    assert max(beam.tree().nodes["x"]) == beam.search.step


def test_beam_errors_are_messages() -> None:
    state = Seq2SeqState()
    assert state.start_beam("zz") is None and "Cannot search" in state.message
    assert state.start_beam("abc", beam_width=0) is None
    assert "beam_width must be" in state.message


@pytest.mark.slow
def test_lesson_beam_buttons() -> None:
    lesson = Seq2SeqLesson()
    lesson.state.train(steps=20)
    lesson.source_box.value_input = "abc"
    lesson.beam_move("step")  # starts a search on the box's source, then steps
    assert lesson.beam is not None and lesson.beam.search.step == 1
    assert "Step 1 of at most" in lesson.beam_text.object
    assert len(lesson.tree_nodes.data["x"]) > 1
    lesson.beam_move("run")
    assert lesson.beam.search.done


@pytest.mark.slow
def test_beam_search_runs_on_the_weights_taken_at_its_start() -> None:
    state = Seq2SeqState()
    state.train(steps=200)
    beam = state.start_beam("abcde", beam_width=3)
    assert beam is not None
    beam.step()
    state.train(steps=20)  # training goes on while the learner steps through the search
    beam.run()
    seen = [
        h
        for rec in beam.search.history
        for h in (*rec.live, *rec.finished, *rec.pruned)
        if beam.text(h.tokens) == beam.greedy_text
    ]
    assert seen  # the greedy hypothesis is in the search, with the greedy score
    for h in seen:
        assert h.log_prob == pytest.approx(beam.greedy_log_prob, rel=1e-5)  # float32 sums


@pytest.mark.slow
def test_teacher_forcing_is_named_where_scheduled_sampling_is_set() -> None:
    import panel as pn

    lesson = Seq2SeqLesson()
    slider = next(
        w
        for w in lesson.controls()
        if isinstance(w, pn.widgets.FloatSlider) and w.value == lesson.state.sampling
    )
    assert slider.name == "Scheduled sampling (0 = teacher forcing)"
    slider.value = 0.25  # the slider is the state's setting: it reaches the trainer
    assert lesson.state.sampling == 0.25
    assert lesson.state.trainer.objective.sampling == 0.25
    assert "**teacher forcing**" in lesson.help_text
