"""The Memory lesson's copy task and addressing choice without a browser: the settings build
the model they name, the view carries location addressing's stages, and the page draws them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.ui.lessons.memory.state import STAGES, MemoryLessonState


def test_copy_task_with_location_addressing_has_stages() -> None:
    state = MemoryLessonState(task="copy", addressing="location", seq_len=5, memory_size=8)
    assert state.net.addressing == "location" and "Delayed recall" in state.message
    assert state.model_name() == "memnet on copy of 5 symbols"
    state.train(steps=2)
    view = state.view(3)
    T = 2 * 5 + 1
    assert len(view.labels) == T and view.labels[5] == "→"
    assert len(view.answer.split()) == len(view.target.split()) == 5
    assert view.read_stages.shape == (T, 1, len(STAGES), 8)
    assert view.write_stages.shape == (T, 1, len(STAGES), 8)
    np.testing.assert_allclose(view.read_stages.sum(axis=3), 1.0, rtol=1e-5)  # each a weighting
    np.testing.assert_allclose(view.read_stages[:, :, -1], view.read[:, :, :], rtol=1e-6)
    state.addressing = "content"
    assert state.net.addressing == "content" and state.view(0).read_stages is None
    with pytest.raises(ValueError, match="addressing"):  # the allowed values, declared once
        state.addressing = "place"
    assert state.net.addressing == "content"


@pytest.mark.slow
def test_the_page_draws_the_stages_of_the_step_shown() -> None:
    from pyplay.ui.lessons.memory.view import MemoryLesson

    lesson = MemoryLesson(MemoryLessonState(task="copy", addressing="location", seq_len=4))
    lesson.panel()
    assert lesson.stages.visible
    lesson.at_step.value = 3
    image = lesson.read_stages_source.data["image"][0]  # (N, 4)
    view = lesson.state.view(0)
    np.testing.assert_allclose(image, view.read_stages[2, 0].T)
    assert lesson.read_stages_fig.title.text == f"Read head 1, step 3 ({view.labels[2]})"
    lesson.state.addressing = "content"
    assert not lesson.stages.visible


def test_key_function_and_addressing_reach_the_model_and_the_script() -> None:
    import re

    from pyplay.ui.lessons import SPECS
    from pyplay.ui.lessons.memory.code import as_code

    state = MemoryLessonState(task="copy", addressing="location", key_function="linear")
    assert state.net.key_function == "linear" and "read_key.weight" in state.net.params
    assert {"task", "addressing", "key_function", "seq_len"} <= set(SPECS["memory"].params)
    script = as_code(SPECS["memory"], state, steps=10, log_every=5)
    assert re.search(r"addressing=['\"]location['\"]", script), script
    assert re.search(r"key_function=['\"]linear['\"]", script), script
    assert "DelayedRecall" in script
