"""The training loop as an object (:class:`pyplay.ui.session.TrainingSession`) without a
lesson: timing declared once on the class, one training at a time as data, the sessions a
view holds, a bug in the loop stopping training with a message, and the pace the page's load
reports set."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

pytest.importorskip("panel")

from pyplay.ui import session as session_module
from pyplay.ui.session import (
    FIRST_SLICE_S,
    MAX_PACE,
    PAGE_BUSY,
    PAGE_FREE,
    SLOWEST_REFRESH_S,
    TrainingSession,
    one_at_a_time,
    page_load,
    sessions_of,
    timing_of,
)


class FakeState:
    """The protocol a session drives: ``train``, ``reset``, ``running``, ``stopped``,
    ``notify``."""

    def __init__(self) -> None:
        self.running, self.stopped, self.steps, self.said = False, "", 0, ""
        self.budgets: list[float | None] = []  # the budget of each train() call

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[int]:
        self.steps += steps or 1
        self.budgets.append(budget_s)
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
    assert (plain.budget_s, own.budget_s, own.yield_s) == (0.25, 0.3, TrainingSession.yield_s)
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


def test_a_busy_page_slows_the_pace_and_a_free_one_brings_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(TrainingSession, "pace", 1.0)
    paces = [page_load(0.6) for _ in range(6)]  # a page held up 60% of each second
    assert paces[:3] == [1.5, 2.25, 3.375] and paces[3:] == [MAX_PACE] * 3
    assert page_load((PAGE_FREE + PAGE_BUSY) / 2) == MAX_PACE  # between the two: it holds
    assert page_load(PAGE_BUSY) == MAX_PACE  # (at the threshold: not busy)
    assert page_load(float("nan")) == MAX_PACE  # a report that is no number changes nothing
    falling = [page_load(0.0) for _ in range(8)]
    assert falling[0] == MAX_PACE / 1.25 and falling[-1] == 1.0  # free: back to the default
    assert all(a >= b for a, b in itertools.pairwise(falling))
    assert page_load(-3.0) == 1.0 and page_load(7.0) == 1.5  # clipped to [0, 1]
    with pytest.raises((TypeError, ValueError)):
        page_load("busy")  # type: ignore[arg-type]


def test_the_pace_spaces_the_slices_and_the_live_redraws(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(session_module.time, "perf_counter", lambda: clock[0])
    s, _, _ = session()
    s.state.running = True
    for pace, budget, interval in ((1.0, 0.25, 0.5), (3.0, 0.75, 1.5), (MAX_PACE, 1.0, 2.0)):
        monkeypatch.setattr(TrainingSession, "pace", pace)
        s.train_slice()
        assert s.state.budgets[-1] == pytest.approx(budget)  # the slice: budget_s x pace
        s.live_refresh()  # took no time on this clock: the next redraw waits the interval
        expected = max(s.refresh_interval_s, min(SLOWEST_REFRESH_S, interval))
        assert s._next_refresh - clock[0] == pytest.approx(expected)
    assert SLOWEST_REFRESH_S == 1.0 and s._next_refresh - clock[0] == pytest.approx(1.0)
    own, _, _ = session(refresh_interval_s=2.5)  # a view's own slower redraws stay as slow
    own.live_refresh()
    assert own._next_refresh - clock[0] == pytest.approx(2.5)


def test_the_first_slices_after_train_ramp_up_to_the_budget() -> None:
    s, streamed, _ = session(live=False)
    s.start()  # no running loop here: only the state and the ramp are set
    for _ in range(6):
        s.train_slice()
    first = [FIRST_SLICE_S * 2**k for k in range(3)]  # 0.05, 0.1, 0.2
    assert s.state.budgets == pytest.approx([*first, 0.25, 0.25, 0.25])
    assert len(streamed) == 6
    s.pause()
    s.start()  # every Train starts the ramp again
    s.train_slice()
    assert s.state.budgets[-1] == pytest.approx(FIRST_SLICE_S)
