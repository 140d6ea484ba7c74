"""The Recurrent networks lesson's state object, without a browser: settings, training, errors
as messages."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.tasks import TASKS
from pyplay.ui.lessons.rnn.state import LESSON_TASKS, TASK_LABELS, LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson


def _params(state: LessonState) -> dict[str, np.ndarray]:
    assert state.model is not None
    return {k: v.copy() for k, v in state.model.params.items()}


@pytest.mark.slow
def test_step_advances_and_training_lowers_the_loss():
    state = LessonState()
    assert state.trainer is not None and state.trainer.step_count == 0
    state.train(steps=1)  # what the page's Step button runs (TrainingSession.step)
    assert state.trainer.step_count == 1 and len(state.history["loss"]) == 1
    state.train(steps=300)
    losses = state.history["loss"]
    assert np.mean(losses[-20:]) < 0.2 * state.task_obj.baseline_loss()
    assert "Step 301" in state.status


def test_time_budget_bounds_a_tick():
    state = LessonState()
    records = state.train(budget_s=0.05)
    assert 1 <= len(records) < 300


def test_model_settings_rebuild_and_training_settings_apply_live():
    state = LessonState()
    state.train(steps=3)
    version = state.version
    state.cell = "gru"
    assert state.version == version + 1 and state.model.cell == "gru"
    assert state.trainer.step_count == 0 and state.history["loss"] == []
    state.train(steps=2)
    state.lr = 0.001
    assert state.trainer.optimizer.lr == 0.001 and state.trainer.step_count == 2
    assert state.version == version + 1  # the model was kept


def test_bad_settings_become_messages_and_keep_the_model():
    state = LessonState()
    state.train(steps=2)
    before = _params(state)
    state.lr = -1.0
    assert state.message_kind == "danger" and "lr must be > 0" in state.message
    state.hidden_size = 0
    assert "hidden_size" in state.message
    for k, v in before.items():
        np.testing.assert_array_equal(state.model.params[k], v)
    assert state.trainer.step_count == 2


def test_divergence_is_a_message_and_parameters_are_restored():
    state = LessonState(
        optimizer="sgd", lr=1e12, clip=0.0, cell="rnn", nonlinearity="relu", task="sine"
    )
    state.train(steps=30)
    assert state.message_kind == "danger" and "non-finite" in state.message
    assert not state.running
    assert all(np.isfinite(v).all() for v in state.model.params.values())


@pytest.mark.parametrize(
    ("cell", "names"),
    [("lstm", {"i", "f", "g", "o", "c", "h"}), ("gru", {"r", "z", "n", "h"}), ("rnn", {"a", "h"})],
)
def test_look_inside_has_the_cell_internals(cell, names):
    state = LessonState(cell=cell, hidden_size=6, seq_len=7)
    view = state.inspect(3)
    assert set(view.internals["l0"]) == names
    for arr in view.internals["l0"].values():
        assert arr.shape == (7, 6)
    assert view.grad_norms["l0"].shape == (7,) and (view.grad_norms["l0"] > 0).all()
    assert len(view.labels) == 7


def test_rnn_gradient_vanishes_faster_than_lstm():
    state = LessonState(seq_len=40, hidden_size=16)
    curves = state.compare_gradients(0)

    def decay(norms: np.ndarray) -> float:  # gradient reaching the first step vs the last
        return float(norms[0] / norms[-1])

    assert decay(curves["rnn"]) < 1e-3
    assert decay(curves["lstm"]) > 100 * decay(curves["rnn"])


def test_user_text_and_numbers_are_validated():
    state = LessonState()
    assert not state.set_user_text(b"\xff\xfe bad bytes")
    assert "UTF-8" in state.message and state.user_text is None
    assert not state.set_user_text("tiny")
    assert state.task == "adding"  # unchanged
    assert state.set_user_text("the quick brown fox jumps over the lazy dog " * 20)
    assert state.task == "charlm" and state.task_obj.text.startswith("the quick")
    assert not state.set_user_numbers("1\n2\nbanana\n")
    assert "line 3" in state.message
    assert state.set_user_numbers("\n".join(str(np.sin(k / 3)) for k in range(200)))
    assert state.task == "series"
    state.train(steps=3)


def test_sampling_from_the_lesson():
    state = LessonState()
    assert state.generate("x") is None and "character model" in state.message
    state.task = "charlm"
    text = state.generate("Alice ", length=30, temperature=0.5)
    assert text is not None and len(text) == 30
    assert state.generate("Alice €") is None and "'€'" in state.message


def test_save_then_load_restores_identical_outputs():
    state = LessonState(cell="gru", hidden_size=8)
    state.train(steps=5)
    data = state.save_bytes().getvalue()
    batch = state.inspection_batch(0)
    expected = state.model.forward(batch.inputs, training=False)[0]
    other = LessonState(cell="lstm", hidden_size=4, seq_len=12)
    assert other.load_bytes(data)
    assert other.cell == "gru" and other.hidden_size == 8 and other.trainer.step_count == 5
    np.testing.assert_array_equal(other.model.forward(batch.inputs, training=False)[0], expected)
    other.train(steps=2)  # and it trains on
    assert other.trainer.step_count == 7


def test_corrupt_upload_is_a_message_and_the_model_stays():
    state = LessonState()
    state.train(steps=2)
    before = _params(state)
    assert not state.load_bytes(b"this is not an npz file")
    assert "Not loaded" in state.message and state.message_kind == "danger"
    for k, v in before.items():
        np.testing.assert_array_equal(state.model.params[k], v)
    assert state.task == "adding" and state.trainer.step_count == 2


@pytest.mark.slow
def test_lesson_view_drives_the_state():
    lesson = RecurrentLesson(LessonState(hidden_size=5))
    lesson.panel()
    lesson.session.step()
    assert lesson.state.trainer.step_count == 1
    assert len(lesson.loss_source.data["loss"]) == 1
    assert set(lesson._maps) == {"i", "f", "g", "o", "c", "h"}
    lesson.compare()
    assert len(lesson.grad_compare.data["rnn"]) == lesson.state.seq_len
    lesson.session.reset()
    assert lesson.loss_source.data["loss"] == []


def test_every_task_declares_a_distinct_title_the_recurrent_lesson_shows():
    titles = [cls.title for cls in TASKS.values()]
    assert all(titles) and len(set(titles)) == len(titles)
    assert list(TASK_LABELS.values()) == list(LESSON_TASKS)
    assert TASK_LABELS["Delayed recall (copy)"] == "copy"
    assert TASK_LABELS[TASKS["series"].title] == "series"
