"""What every lesson does with its :class:`~pyplay.train.Trainer`: run steps within a time
budget (errors become messages), carry the optimiser across a settings change, stream the
records into the loss curve, and the Train / Pause / Step / Reset buttons with their periodic
callback. Shared by the lesson states and views."""

from __future__ import annotations

import html
import time
from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource

from pyplay.train import StepRecord

__all__ = [
    "TrainingView",
    "message_alert",
    "run_fit_steps",
    "run_steps",
    "stream_losses",
]


def run_steps(state: Any, steps: int | None, budget_s: float | None) -> list[StepRecord]:
    """Run ``steps`` steps of ``state.trainer``, or as many as fit in ``budget_s`` seconds,
    appending to ``state.history`` and ``state._elapsed``; a diverging run stops
    ``state.running`` with a message (the trainer restores its parameters). Updates
    ``state.status`` and returns the records."""
    if state.trainer is None:
        return []
    records = []
    start = time.perf_counter()
    for record in state.trainer.run(steps):
        if record.status != "ok":
            state.running = False
            state.notify(record.message, "danger")
            break
        records.append(record)
        state.history["step"].append(record.step)
        state.history["loss"].append(record.loss)
        state._elapsed += record.seconds
        if budget_s is not None and time.perf_counter() - start >= budget_s:
            break
    state.status = state._status_text()
    return records


def run_fit_steps(state: Any, steps: int | None, budget_s: float | None) -> list[StepRecord]:
    """As :func:`run_steps` for a dynamic network: ``state._fit`` is a
    :func:`pyplay.dynamic.fit` generator over ``state.net``; ``state._step`` counts the steps.
    A step that makes the loss or a weight non-finite is undone (the weights before it are
    restored), training stops and the state says so. Bumps ``state.weights_version``."""
    records: list[StepRecord] = []
    start = time.perf_counter()
    params = state.net.params
    while steps is None or len(records) < steps:
        saved = {k: v.copy() for k, v in params.items()}
        t0 = time.perf_counter()
        with np.errstate(over="ignore", invalid="ignore"):  # caught just below
            loss = float(next(state._fit))
        if not (np.isfinite(loss) and all(np.all(np.isfinite(v)) for v in params.values())):
            for k, v in saved.items():
                params[k][...] = v
            state._fit, state.running = None, False
            state.notify(
                "Training diverged; the weights before that step are kept. "
                "Try a smaller learning rate.",
                "danger",
            )
            break
        state._step += 1
        seconds = time.perf_counter() - t0
        records.append(StepRecord(state._step, loss, 0.0, 0.0, seconds))
        state.history["step"].append(state._step)
        state.history["loss"].append(loss)
        state._elapsed += seconds
        if budget_s is not None and time.perf_counter() - start >= budget_s:
            break
    if records:
        state.weights_version += 1
    state.status = state._status_text()
    return records


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


class TrainingView:
    """Train / Pause / Step / Reset for a lesson view over a state with ``train(steps=,
    budget_s=)``, ``reset()`` and ``running``.

    Training runs in a periodic callback, a ``budget_s`` slice at a time so the page stays
    responsive; each slice's result goes to :meth:`_stream`. :meth:`after_training` redraws the
    look-inside views after a pause or a single step, and every ``refresh_every`` slices while
    training (0: not while training).
    """

    state: Any
    budget_s = 0.1
    refresh_every = 0
    _callback: Any = None
    _ticks = 0

    def _stream(self, result: Any) -> None:
        raise NotImplementedError

    def after_training(self) -> None:
        """Redraw what depends on the parameters (nothing by default)."""

    def start(self, *_: Any) -> None:
        if self._callback is None:
            self._callback = pn.state.add_periodic_callback(self._tick, period=180, start=False)
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
        self.state.reset()

    def _tick(self) -> None:
        if not self.state.running:
            self.pause()
            return
        self._stream(self.state.train(budget_s=self.budget_s))
        self._ticks += 1
        if not self.state.running:
            self.pause()
        elif self.refresh_every and self._ticks % self.refresh_every == 0:
            self.after_training()

    def buttons(self) -> pn.Row:
        """The four buttons."""
        row = []
        for label, kind, action in (
            ("Train", "primary", self.start),
            ("Pause", "default", self.pause),
            ("Step", "default", self.step),
            ("Reset", "warning", self.reset),
        ):
            button = pn.widgets.Button(name=label, button_type=kind, width=80)
            button.on_click(action)
            row.append(button)
        return pn.Row(*row)
