"""The training loop as an object (:class:`pyplay.ui.session.TrainingSession`) without a
lesson: timing declared once on the class, one training at a time as data, the sessions a
view holds, and a bug in the loop stopping training with a message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("panel")

from pyplay.ui.session import TrainingSession, one_at_a_time, sessions_of, timing_of


class FakeState:
    """The protocol a session drives: ``train``, ``reset``, ``running``, ``stopped``,
    ``notify``."""

    def __init__(self) -> None:
        self.running, self.stopped, self.steps, self.said = False, "", 0, ""

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[int]:
        self.steps += steps or 1
        return [self.steps]

    def reset(self) -> None:
        self.steps = 0

    def notify(self, text: str, kind: str = "info") -> None:
        self.said = text


def session(**timing: Any) -> tuple[TrainingSession, list[Any], list[int]]:
    streamed: list[Any] = []
    redraws: list[int] = []
    s = TrainingSession(FakeState(), streamed.append, lambda: redraws.append(1), **timing)
    return s, streamed, redraws


def test_timing_defaults_live_on_the_class_and_a_given_setting_is_the_sessions_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain, _, _ = session()
    own, _, _ = session(live=False, budget_s=0.3)
    assert (plain.budget_s, own.budget_s, own.yield_s) == (0.1, 0.3, 0.02)
    monkeypatch.setattr(TrainingSession, "live", False)  # what the live measurement sets
    assert plain.live is False and own.live is False
    monkeypatch.setattr(TrainingSession, "live", True)
    assert plain.live is True and own.live is False

    class View:
        budget_s = 0.12
        live = False

    assert timing_of(View()) == {"budget_s": 0.12, "live": False}


def test_starting_one_pauses_the_others_and_step_reset_pause_drive_the_state() -> None:
    lesson, streamed, redraws = session()
    a, _, _ = session()
    b, _, _ = session()
    one_at_a_time(lesson, a, b)
    lesson.start()  # no event loop: only the flag
    assert lesson.state.running and lesson.loop_task is None
    a.start()
    assert a.state.running and not lesson.state.running and not b.state.running
    assert redraws == [1]  # the lesson paused while running: its views redrawn
    lesson.step()
    assert streamed == [[1]] and lesson.state.steps == 1 and redraws == [1, 1]
    lesson.state.stopped = "diverged"
    lesson.reset()
    assert lesson.state.steps == 0 and lesson.state.stopped == ""


def test_sessions_of_finds_the_views_comparisons_and_sub_tabs() -> None:
    class Holder:
        def __init__(self) -> None:
            self.session = session()[0]

    class View(Holder):
        def __init__(self) -> None:
            super().__init__()
            self.comparison = Holder()
            self.parts = {"a": Holder(), "b": object()}

    view = View()
    found = sessions_of(view)
    assert found == [view.session, view.comparison.session, view.parts["a"].session]


def test_a_bug_in_the_loop_stops_training_and_says_so(capsys: pytest.CaptureFixture) -> None:
    s, _, _ = session()

    def broken(records: Any) -> None:
        raise ValueError("bad plot")

    s.stream = broken

    async def run() -> None:
        s.start()
        assert s.loop_task is not None
        await s.loop_task

    asyncio.run(run())
    assert not s.state.running and s.state.said == "Training stopped by an error: bad plot"
    assert "ValueError" in capsys.readouterr().err
