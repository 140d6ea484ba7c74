"""Issue 19, "a truncated-BPTT control": the recurrent lesson's character model trains with
truncated BPTT (consecutive chunks, the state carried across them without its gradient) or,
unticked, on independent windows from a zero state; the switch applies to the current model,
follows the page address and "show as code", and is shown for the character model only."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from addresses import apply_query
from pyplay.ui.export import as_code
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson
from pyplay.ui.urlstate import to_query


def _charlm(**settings: object) -> LessonState:
    return LessonState(task="charlm", hidden_size=8, seq_len=6, batch_size=4, **settings)


def test_the_switch_reaches_the_trainer_and_keeps_the_model() -> None:
    state = _charlm()
    assert state.tbptt and state.trainer is not None and state.trainer.tbptt
    state.train(steps=3)
    objective = state.trainer.objective
    assert objective.carry is not None  # the last chunk's final state goes into the next one
    model, steps = state.model, state.trainer.step_count

    state.tbptt = False
    assert state.trainer is not None and not state.trainer.tbptt
    assert state.model is model and state.trainer.step_count == steps == 3  # same model
    state.train(steps=2)
    assert state.trainer.step_count == 5
    assert state.trainer.objective.carry is None  # every window from a zero state

    state.tbptt = True
    state.train(steps=1)
    assert state.trainer.tbptt and state.trainer.objective.carry is not None


def test_other_tasks_never_carry_a_state() -> None:
    state = LessonState(hidden_size=8, seq_len=6, batch_size=4)  # the adding problem
    assert state.tbptt and state.trainer is not None and not state.trainer.tbptt


def test_the_switch_round_trips_through_the_address_and_the_code() -> None:
    source = _charlm(tbptt=False)
    query = to_query("rnn", source)
    assert "tbptt=false" in query.split("&")
    target = _charlm()
    assert apply_query(query, {"rnn": target}) == ("rnn", [])
    assert target.tbptt is False and target.trainer is not None and not target.trainer.tbptt
    assert "tbptt=True" not in as_code("rnn", target, steps=5, log_every=5)
    target.tbptt = True
    assert "tbptt=True" in as_code("rnn", target, steps=5, log_every=5)
    assert "tbptt" not in to_query("rnn", target).split("&")  # the default is not written


@pytest.mark.slow
def test_the_checkbox_shows_for_the_character_model_only() -> None:
    lesson = RecurrentLesson(LessonState(hidden_size=8, seq_len=6, batch_size=4))
    box = lesson.tbptt_box()
    assert not box.visible
    lesson.state.task = "charlm"
    assert box.visible and box.value is True
    box.value = False
    assert lesson.state.tbptt is False
