"""Issue 21 in the page's logic, without a browser: training that stops by itself says so next
to Train and keeps the model before it; Pause is handled between slices however long a slice
takes; autosave never overwrites a good model with a worse one."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

pytest.importorskip("panel")

import pyplay.ui.trainer_lesson as trainer_lesson
from pyplay.ui.lessons.dynamic.state import LDDNLessonState
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson

DIVERGED = "Training stopped: the loss diverged; the model before it is kept"


def test_divergence_in_the_page_stops_with_the_note_and_keeps_a_finite_model():
    # the case: a trained LSTM, then learning rate 10, SGD, no clipping, Train
    state = LessonState(task="adding", cell="lstm", seq_len=10)
    state.train(steps=60)
    good_loss = float(np.mean(state.history["loss"][-10:]))
    state.param.update(lr=10.0, optimizer="sgd", clip=0.0)
    state.running = True
    with np.errstate(all="ignore"):  # as in the page, where NumPy only warns
        for _ in range(400):
            state.train(budget_s=0.05)
            if not state.running:
                break
    assert not state.running
    assert state.stopped.startswith(DIVERGED)
    assert state.message_kind == "danger" and "restored to step" in state.message
    for name, value in state.model.params.items():
        assert np.isfinite(value).all(), name
    # the kept model is one that gave a finite loss, and the page can train on from it
    state.param.update(lr=0.01, optimizer="adam", clip=1.0)
    state.train(steps=5)
    assert np.isfinite(state.history["loss"][-1])
    assert good_loss < 1.0


def test_dynamic_networks_diverge_through_the_same_loop():
    s = LDDNLessonState(preset="first order", system="moving average", lr=1e6)
    s.running = True
    with np.errstate(all="ignore"):
        s.train(steps=50)
    assert not s.running and s.stopped.startswith(DIVERGED)
    assert all(np.isfinite(v).all() for v in s.net.params.values())


def test_a_step_slower_than_the_limit_stops_continuous_training(monkeypatch):
    monkeypatch.setattr(trainer_lesson, "SLOW_STEP_S", 0.0)
    state = LessonState()
    state.running = True
    records = state.train(budget_s=1.0)
    assert len(records) == 1 and not state.running
    assert state.stopped.startswith("Training paused: one step takes")
    assert state.message_kind == "warning"
    state.running = False
    assert len(state.train(steps=3)) == 3  # Step (and a given number of steps) still trains


@pytest.mark.slow
def test_pause_is_handled_between_slices_even_when_a_slice_outlasts_the_period():
    """Panel's periodic callback runs the next slice at once when a slice took longer than
    its period; the slice must hand the event loop back, or a click never gets in."""
    view = RecurrentLesson(LessonState())
    slices = []

    def slow_slice(steps=None, budget_s=None):  # a slice of 0.3 s, longer than the period
        slices.append(time.perf_counter())
        time.sleep(0.3)
        if len(slices) >= 12:  # safety: without the fix the click never arrives
            view.state.running = False
        return []

    view.state.train = slow_slice

    async def scenario() -> None:
        view.session.start()
        await asyncio.sleep(0.05)  # runs once the first slice has handed the loop back
        asyncio.get_running_loop().call_soon(view.session.pause)  # a click, queued like a message
        while view.state.running:
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    # the click got in after the first slice: at most the slice under way ran after it
    # (starved, the loop would run slice after slice until the safety stop at 12)
    assert len(slices) <= 2, f"{len(slices)} slices ran before Pause was handled"
    assert not view.state.running


@pytest.mark.slow
def test_training_start_clears_the_note():
    view = RecurrentLesson(LessonState())
    view.state.stop_training("Training stopped: test")

    async def scenario() -> None:
        view.session.start()
        await asyncio.sleep(0)
        view.session.pause()

    asyncio.run(scenario())
    assert view.state.stopped == ""
