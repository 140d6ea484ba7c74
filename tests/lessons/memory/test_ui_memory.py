"""The Memory lesson's state without a browser: settings rebuild, a step trains, views have
the right shapes, bad settings become messages."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from pyplay.ui.lessons.memory.state import MemoryLessonState


def test_state_trains_and_views_have_the_right_shapes() -> None:
    state = MemoryLessonState()
    assert "Associative recall" in state.message
    state.train(steps=2)
    assert state.trainer.step_count == 2 and "accuracy" in state.status
    view = state.view(0)
    T = state.task_obj.n_pairs + 1
    assert view.read.shape == (T, 1, 16) and view.write.shape == (T, 1, 16)
    assert view.memory.shape == (T + 1, 16, 16) and len(view.labels) == T
    assert view.labels[-1].endswith("?")


def test_settings_rebuild_and_bad_values_are_messages() -> None:
    state = MemoryLessonState()
    version = state.version
    state.read_heads = 2
    assert state.version == version + 1 and state.view(0).read.shape[1] == 2
    state.model = "attend"
    T = state.task_obj.n_pairs + 1
    assert state.view(0).read.shape == (T, 1, T) and state.view(0).memory is None
    state.train(steps=1)
    state.model = "lstm"
    state.train(steps=1)
    assert state.trainer.step_count == 1
    state.memory_size = 0  # ignored by the LSTM; refused by the memory net
    state.model = "memnet"
    assert state.message_kind == "danger" and "memory_size must be >= 1" in state.message
    state.lr = 0.0
    assert "lr must be > 0" in state.message


@pytest.mark.slow
def test_memory_lesson_view_follows_the_model() -> None:
    from pyplay.ui.lessons.memory.view import MemoryLesson

    lesson = MemoryLesson()
    lesson.panel()
    assert lesson.answer.object.startswith("input : ")
    read = lesson.read_source.data["image"][0]
    assert read.shape == (lesson.state.memory_size, len(lesson.state.view(0).labels))  # (N, T)
    lesson.session.step()
    assert len(lesson.loss_source.data["step"]) == 1
    lesson.at_step.value = 2
    assert lesson.memory_fig.title.text.startswith("Memory after step 2")
    assert lesson.memory_pane.visible and lesson.write_pane.visible
    lesson.state.model = "attend"
    assert not lesson.memory_pane.visible and not lesson.write_pane.visible
    assert lesson.read_fig.yaxis.axis_label == "earlier step attended"
    lesson.state.model = "lstm"
    assert lesson.no_memory.visible and not lesson.read_pane.visible
    lesson.state.model = "memnet"
    lesson.state.read_heads = 2
    lesson.head.value = 1
    assert lesson.read_fig.title.text == "Read weights, head 1"
