"""What every lesson view does with its state's training: stream the records into the loss
curve, the Train / Pause / Step / Reset buttons with the note of why training stopped by
itself, and the loop that trains a slice at a time. Shared by the lesson views."""

from __future__ import annotations

import asyncio
import html
import time
import traceback
from collections.abc import Callable
from typing import Any

import panel as pn
from bokeh.models import ColumnDataSource

from pyplay.train import StepRecord
from pyplay.ui.inputs import NumberBox
from pyplay.ui.text import Text

__all__ = [
    "TrainingView",
    "local_note",
    "lr_input",
    "message_alert",
    "seed_input",
    "stop_note",
    "stream_losses",
    "typed_number",
]


def stream_losses(source: ColumnDataSource, records: list[StepRecord]) -> None:
    """Append the records' losses to a loss curve's source."""
    if records:
        source.stream(
            {"step": [r.step for r in records], "loss": [r.loss for r in records]},
            rollover=20_000,
        )


def message_alert(state: Any) -> pn.pane.Alert:
    """The alert that shows ``state.message`` (hidden while there is none).

    The message is HTML-escaped first: messages quote what the user typed or what an address
    carried, and an alert renders Markdown, which would otherwise pass HTML through."""
    return pn.pane.Alert(
        pn.bind(html.escape, state.param.message),
        alert_type=state.param.message_kind,
        visible=pn.bind(bool, state.param.message),
        sizing_mode="stretch_width",
    )


def local_note(state: Any) -> tuple[Text, Callable[[Callable[[], Any]], Any]]:
    """A note to put under a control, and ``run(action)``: it calls ``action()`` and moves
    any message the action gave ``state`` into the note (the lesson's alert at the top keeps
    what it showed before), so the message appears next to the control that caused it."""
    note = Text("", visible=False, css_classes=["pyplay-local-note"], sizing_mode="stretch_width")

    def run(action: Callable[[], Any]) -> Any:
        before = (state.message, state.message_kind)
        state.message = ""
        try:
            return action()
        finally:
            said = state.message
            note.object, note.visible = said, bool(said)
            state.param.update(message=before[0], message_kind=before[1])

    return note, run


def stop_note(state: Any) -> pn.pane.Alert:
    """The note under the buttons saying why training stopped by itself (``state.stopped``:
    the loss diverged, a step too slow), escaped like :func:`message_alert`; hidden while
    there is none."""
    return pn.pane.Alert(
        pn.bind(html.escape, state.param.stopped),
        alert_type="danger",
        visible=pn.bind(bool, state.param.stopped),
        sizing_mode="stretch_width",
        css_classes=["pyplay-stop-note"],
    )


def typed_number(p: Any, name: str, note_css: tuple[str, ...] = ()) -> NumberBox:
    """A box for the number parameter ``p``, typed freely, named ``name``: a text it cannot
    use (not a number, not finite, outside the parameter's ``softbounds``, the range the page
    address accepts) is refused next to it and the parameter keeps its value
    (:class:`~pyplay.ui.inputs.NumberBox`); a value the state cannot use becomes its
    message."""
    return NumberBox(p, name, note_css)


def int_sliders(state: Any, **labels: str) -> list[pn.widgets.Widget]:
    """A slider for each integer setting of ``state`` named in ``labels`` (setting=label), in
    that order; its range is the parameter's own."""
    return [pn.widgets.IntSlider.from_param(state.param[k], name=v) for k, v in labels.items()]


def lr_input(state: Any) -> NumberBox:
    """The "Learning rate" input of a lesson's controls."""
    return typed_number(state.param.lr, "Learning rate")


def seed_input(state: Any) -> NumberBox:
    """The "Seed" input of a lesson's controls."""
    return typed_number(state.param.seed, "Seed")


class TrainingView:
    """Train / Pause / Step / Reset for a lesson view over a state with ``train(steps=,
    budget_s=)``, ``reset()`` and ``running``.

    Training runs in an asyncio task (:meth:`_loop`), a ``budget_s`` slice at a time; each
    slice's result goes to :meth:`_stream`. After every slice the task sleeps ``yield_s``
    seconds, always: that hands the event loop back, so a click waiting (Pause, a head picked)
    is handled before the next slice. Pause only clears ``state.running``: the task ends by
    itself after the slice under way (cancelling it while it slept made Pyodide's event loop
    print an ``asyncio.CancelledError`` traceback for every Pause).

    **Live views.** While training, :meth:`live_refresh` redraws the look-inside views
    (:meth:`after_training`) at most every ``refresh_interval_s`` seconds, and never more
    often than keeps the redraws within ``max_refresh_share`` of the time (a redraw that took
    r seconds waits at least r (1 - share) / share before the next). ``live`` turns it off
    (the page's training speed with and without live views is measured with it).
    ``refresh_log`` keeps the last redraws' (clock, seconds) for that measurement. After a
    pause or a single step the views are redrawn at once.
    """

    state: Any
    budget_s = 0.1
    yield_s = 0.02
    refresh_interval_s = 0.5  # live look-inside redraws at most this often while training
    max_refresh_share = 0.2  # ... and taking at most this share of the time
    live = True
    _task: Any = None
    _next_refresh = 0.0

    def _stream(self, result: Any) -> None:
        raise NotImplementedError

    def after_training(self) -> None:
        """Redraw what depends on the parameters (nothing by default)."""

    def start(self, *_: Any) -> None:
        """Train until paused: a task on the running event loop (Pyodide's, or the Panel
        server's); without one (a plain script) only ``running`` is set."""
        self.state.stopped = ""
        self.state.running = True
        self._next_refresh = time.perf_counter() + self.refresh_interval_s
        if self._task is None or self._task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._task = loop.create_task(self._loop())

    def pause(self, *_: Any) -> None:
        """Stop after the slice under way; the views show the model as it is now."""
        was_running = self.state.running
        self.state.running = False
        if was_running:
            self.after_training()

    def leave(self) -> None:
        """The learner left this lesson: pause its training and every training loop it holds
        (a comparison, a sub-tab), so the lesson on screen has the machine. Coming back shows
        it paused at the step it reached, one click (Train) from resuming."""
        for loop in _loops_of(self):
            loop.pause()

    def step(self, *_: Any) -> None:
        self.pause()
        self._stream(self.state.train(steps=1))
        self.after_training()

    def reset(self, *_: Any) -> None:
        self.pause()
        self.state.stopped = ""
        self.state.reset()

    async def _loop(self) -> None:
        """Slices while ``state.running``, handing the event loop back after each."""
        try:
            while self.state.running:
                self.train_slice()
                await asyncio.sleep(self.yield_s)  # let a waiting click in before the next
        except Exception as err:  # a bug: stop and say so rather than fail silently
            self.state.running = False
            traceback.print_exc()
            self.state.notify(f"Training stopped by an error: {err}", "danger")

    def train_slice(self) -> None:
        """One slice of training while ``state.running`` (the task's work). A live redraw
        that is due comes first, so what the page receives from a slice ends with its status
        and losses, and a click handled between two slices answers right after them."""
        if not self.state.running:
            return
        if self.live and time.perf_counter() >= self._next_refresh:
            self.live_refresh()
        self._stream(self.state.train(budget_s=self.budget_s))
        if not self.state.running:
            self.after_training()  # stopped by itself (diverged, too slow)

    def live_refresh(self) -> float:
        """Redraw the look-inside views now and schedule the next redraw; returns the
        seconds it took."""
        start = time.perf_counter()
        self.after_training()
        took = time.perf_counter() - start
        share = self.max_refresh_share
        wait = max(self.refresh_interval_s - took, took * (1 - share) / share)
        self._next_refresh = time.perf_counter() + wait
        log = self.__dict__.setdefault("refresh_log", [])
        log.append((start, took))
        del log[:-50]
        return took

    def buttons(self) -> pn.Column:
        """The four buttons, and under them the note of why training stopped by itself."""
        row = []
        for label, kind, action in (
            ("Train", "primary", self.start),
            ("Pause", "default", self.pause),
            ("Step", "default", self.step),
            ("Reset", "warning", self.reset),
        ):
            button = pn.widgets.Button(name=label, button_type=kind, width=64, margin=(5, 4))
            button.on_click(action)
            row.append(button)
        return pn.Column(pn.Row(*row), stop_note(self.state), margin=0)


def _loops_of(view: TrainingView) -> list[TrainingView]:
    """``view`` and the training loops among its attributes (directly, or in a list, tuple or
    dict attribute): its comparisons, its sub-tabs."""
    found: list[TrainingView] = [view]
    for value in vars(view).values():
        if isinstance(value, dict):
            items = list(value.values())
        elif isinstance(value, list | tuple):
            items = list(value)
        else:
            items = [value]
        found += [i for i in items if isinstance(i, TrainingView) and i not in found]
    return found
