"""The Memory lesson's lecture options without a browser: hard heads, the controller reading
y^{t-1} and the lecture's form of attending to previous states reach the model, the address,
the model files and the script; the view marks the cells hard heads drew and shows the
equations in the lecture's notation."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("panel")

from addresses import apply_query
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.memory.code import as_code
from pyplay.ui.lessons.memory.state import MemoryLessonState
from pyplay.ui.urlstate import to_query

OPTIONS = {"hard": "both", "feedback": "output", "attend_form": "state"}


def test_the_settings_reach_the_models() -> None:
    state = MemoryLessonState(hard="read", feedback="output", n_pairs=3)
    assert state.net.hard == "read" and state.net.feedback == "output"
    assert state.train(steps=3) and np.isfinite(state.history["loss"]).all()
    view = state.view(1)
    T = len(view.labels)
    assert view.read_cells.shape == (T, 1) and view.write_cells is None
    np.testing.assert_array_equal(state.view(1).read_cells, view.read_cells)  # the same draw
    state.hard = "write"
    assert state.net.hard == "write" and state.view(0).write_cells.shape == (T, 1)
    state.model, state.attend_form = "attend", "state"
    assert state.net.form == "state" and "query_x.weight" in state.net.params
    assert state.train(steps=2) and state.view(0).read.shape == (T, 1, T)
    with pytest.raises(ValueError, match="hard"):  # the allowed values, declared once
        state.hard = "sometimes"


def test_the_settings_round_trip_through_the_address_and_a_model_file() -> None:
    for key in OPTIONS:
        assert SPECS["memory"].params.count(key) == 1
    source = MemoryLessonState(**OPTIONS, n_pairs=3)
    query = to_query("memory", source)
    for part in ("hard=both", "feedback=output", "attend_form=state"):
        assert part in query.split("&")
    target = MemoryLessonState()
    assert apply_query(query, {"memory": target}) == ("memory", [])
    assert {k: getattr(target, k) for k in OPTIONS} == OPTIONS
    source.train(steps=2)
    loaded = MemoryLessonState()
    assert loaded.load_bytes(source.save_bytes().getvalue()), loaded.message
    assert {k: getattr(loaded, k) for k in OPTIONS} == OPTIONS
    assert loaded.net.config == source.net.config
    for name, value in source.net.params.items():
        np.testing.assert_array_equal(loaded.net.params[name], value)


def test_show_as_code_builds_the_same_nets() -> None:
    spec = SPECS["memory"]
    script = as_code(spec, MemoryLessonState(hard="write", feedback="output"), steps=2, log_every=1)
    assert re.search(r"hard=['\"]write['\"]", script) and re.search(r"feedback=['\"]output", script)
    attend = as_code(spec, MemoryLessonState(model="attend", attend_form="state"), steps=2,
                     log_every=1)  # fmt: skip
    assert re.search(r"form=['\"]state['\"]", attend), attend


@pytest.mark.slow
def test_the_page_marks_the_drawn_cells_and_shows_the_lectures_equations() -> None:
    from pyplay.ui.lessons.memory.view import MemoryLesson

    lesson = MemoryLesson(MemoryLessonState(hard="both", n_pairs=3))
    lesson.panel()
    view = lesson.state.view(0)
    marks = lesson.read_marks.data
    assert list(marks["y"]) == [int(j) for j in view.read_cells[:, 0]]
    assert list(marks["x"]) == list(range(len(view.labels)))
    assert len(lesson.write_marks.data["y"]) == len(view.labels)
    assert lesson.read_fig.title.text == "Read weights, head 1 (□ the cell drawn)"
    text = lesson.equations.object
    assert "rᵗ = v(qᵗ, M) = Mⱼ` with probability `pⱼᵗ" in text and "REINFORCE" in text
    assert "departs from Solberg's lecture" in text
    lesson.state.hard = "none"
    assert len(lesson.read_marks.data["y"]) == 0 and "□" not in lesson.read_fig.title.text
    assert "rᵗ = Σⱼ pⱼᵗ Mⱼ" in lesson.equations.object
    lesson.state.feedback = "output"
    assert "sᵗ = h(xᵗ, sᵗ⁻¹, yᵗ⁻¹, rᵗ⁻¹)" in lesson.equations.object
    lesson.state.model = "attend"
    assert "rᵗ = Σᵢ pᵢᵗ sⁱ" in lesson.equations.object
    assert "departs from Solberg's lecture" in lesson.equations.object  # today's form: the read
    lesson.state.attend_form = "state"
    assert "sᵗ = h(xᵗ, s̃ᵗ⁻¹, yᵗ⁻¹)" in lesson.equations.object
    assert "s̃ᵗ⁻¹ = Σᵢ pᵢᵗ sⁱ" in lesson.equations.object
    lesson.state.model = "lstm"
    assert not lesson.equations.visible
