"""What every lesson view does with its state's training: stream the records into the loss
curve, the Train / Pause / Step / Reset buttons with the note of why training stopped by
itself, and the loop that trains a slice at a time. Shared by the lesson views."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from typing import Any

import panel as pn
import param
from bokeh.models import ColumnDataSource

from pyplay.train import StepRecord
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


def typed_number(p: Any, name: str, step: float | None = None) -> pn.widgets.Widget:
    """An input for the number parameter ``p``, typed freely: no range (the page address's
    is the parameter's ``softbounds``); a value the state cannot use becomes its message."""
    kind = pn.widgets.IntInput if isinstance(p, param.Integer) else pn.widgets.FloatInput
    options: dict[str, Any] = {} if step is None else {"step": step}
    return kind.from_param(p, name=name, start=None, end=None, **options)


def lr_input(state: Any) -> pn.widgets.Widget:
    """The "Learning rate" input of a lesson's controls."""
    return typed_number(state.param.lr, "Learning rate", step=0.001)


def seed_input(state: Any) -> pn.widgets.Widget:
    """The "Seed" input of a lesson's controls."""
    return typed_number(state.param.seed, "Seed")


class TrainingView:
    """Train / Pause / Step / Reset for a lesson view over a state with ``train(steps=,
    budget_s=)``, ``reset()`` and ``running``.

    Training runs in a periodic callback, a ``budget_s`` slice at a time; each slice's result
    goes to :meth:`_stream`. After every slice the callback sleeps ``yield_s`` seconds, always:
    that hands the event loop back, so a click waiting (Pause) is handled before the next
    slice. Without it a slice longer than the callback's period made Panel run the next one at
    once, never returning to the browser's worker, and Pause waited for minutes under large
    settings. :meth:`after_training` redraws the look-inside views after a pause or a single
    step, and every ``refresh_every`` slices while training (0: not while training).
    """

    state: Any
    budget_s = 0.1
    yield_s = 0.02
    refresh_every = 0
    _callback: Any = None
    _ticks = 0

    def _stream(self, result: Any) -> None:
        raise NotImplementedError

    def after_training(self) -> None:
        """Redraw what depends on the parameters (nothing by default)."""

    def start(self, *_: Any) -> None:
        self.state.stopped = ""
        if self._callback is None:
            self._callback = pn.state.add_periodic_callback(
                self._tick,  # type: ignore[arg-type]  # Panel awaits a coroutine function
                period=180,
                start=False,
            )
        self.state.running = True
        self._callback.start()

    def pause(self, *_: Any) -> None:
        self.state.running = False
        if self._callback is not None and self._callback.running:
            self._callback.stop()
        self.after_training()

    def step(self, *_: Any) -> None:
        self.pause()
        self._stream(self.state.train(steps=1))
        self.after_training()

    def reset(self, *_: Any) -> None:
        self.pause()
        self.state.stopped = ""
        self.state.reset()

    async def _tick(self) -> None:
        self.train_slice()
        await asyncio.sleep(self.yield_s)  # let a waiting click in before the next slice

    def train_slice(self) -> None:
        """One slice of training while ``state.running`` (the callback's work)."""
        if not self.state.running:
            self.pause()
            return
        self._stream(self.state.train(budget_s=self.budget_s))
        self._ticks += 1
        if not self.state.running:
            self.pause()
        elif self.refresh_every and self._ticks % self.refresh_every == 0:
            self.after_training()

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
