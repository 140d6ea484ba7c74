"""What every lesson view shows of its state's training: stream the records into the loss
curve, the note of why training stopped by itself, the state's message, and the inputs every
lesson's controls share (learning rate, seed, typed numbers, integer sliders). The loop that
trains a slice at a time, with its Train / Pause / Step / Reset buttons, is the view's
:class:`~pyplay.ui.session.TrainingSession`."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import panel as pn
from bokeh.models import ColumnDataSource

from pyplay.train import StepRecord
from pyplay.ui.curve_points import stream_curve
from pyplay.ui.inputs import NumberBox
from pyplay.ui.text import Text

__all__ = [
    "local_note",
    "lr_input",
    "message_alert",
    "seed_input",
    "stop_note",
    "stream_losses",
    "typed_number",
]


def stream_losses(source: ColumnDataSource, records: list[StepRecord]) -> None:
    """Append the records' losses to a loss curve's source (at most
    :data:`~pyplay.ui.curve_points.CURVE_POINTS` points: :func:`stream_curve`)."""
    if records:
        stream_curve(source, {"step": [r.step for r in records], "loss": [r.loss for r in records]})


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
