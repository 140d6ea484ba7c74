"""The "Recurrent networks" lesson: controls, live loss curve, look inside, sampling, data.

Rendering only: every action calls :class:`~pyplay.ui.lessons.rnn.state.LessonState`. Training
runs in a periodic callback that does as many steps as fit in ~0.1 s per tick and then leaves
the worker idle for a moment, so clicks (Pause) are processed between ticks, natively and in the
browser's Pyodide worker.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn

from pyplay.ui.embed import widget_head
from pyplay.ui.export_bar import ExportBar, curve_data
from pyplay.ui.lessons.rnn.state import TASK_LABELS, LessonState
from pyplay.ui.plots import gradient_figure, heatmap_figure, loss_figure, update_heatmap
from pyplay.ui.text import Text
from pyplay.ui.training import (
    TrainingView,
    lr_input,
    message_alert,
    seed_input,
    stream_losses,
    typed_number,
)

__all__ = ["RecurrentLesson", "gates_widget", "gradient_widget"]

TITLES = {
    "i": "input gate i",
    "f": "forget gate f",
    "g": "candidate g",
    "o": "output gate o",
    "c": "cell state c",
    "h": "hidden state h",
    "r": "reset gate r",
    "z": "update gate z",
    "n": "candidate n",
    "a": "pre-activation a",
}
HELP = {
    "train": "Pick a task and a cell, then **Train**. The curve shows the loss of every "
    "batch; the dashed line is what a trivial predictor scores. **Step** trains on "
    "one batch; **Reset** starts a fresh model. Learning rate, optimiser, clipping "
    "and batch size apply to the current model; the other settings build a new one.",
    "inside": "Each heatmap shows one quantity over time (x) for every unit (y) while the "
    "model reads the chosen example. Gates near 0 block, near 1 let through: watch "
    "the LSTM's forget gate learn to stay open when it must remember.",
    "grad": "How strongly the loss at the end reaches back to each step: the norm of "
    "dL/dh_t. For a tanh RNN it shrinks geometrically going back in time (vanishing "
    "gradient); the LSTM's cell state can keep it alive. **Compare** adds a freshly "
    "initialised tanh RNN and LSTM (forget-gate bias 1, the usual start) of the same size "
    "on the same example.",
    "sample": "With the character model: type a prompt and **Generate**. Temperature below 1 "
    "picks likelier characters, above 1 more surprising ones, 0 always the likeliest.",
    "data": "Paste or upload a text (UTF-8, up to 1 MB) for the character model, or a column "
    "of numbers (one per line, up to 100,000) to predict the next value.",
}


class RecurrentLesson(TrainingView):
    """Builds the lesson's layout around a :class:`LessonState`."""

    def __init__(self, state: LessonState | None = None) -> None:
        self.state = state or LessonState()
        self.loss_fig, self.loss_source, self.baseline = loss_figure()
        self.grad_fig, self.grad_current, self.grad_compare = gradient_figure()
        self.heatmaps = pn.GridBox(ncols=3, sizing_mode="stretch_width")
        self._maps: dict[str, tuple[Any, Any]] = {}
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=200)
        self.example.param.watch(lambda e: self.refresh_inside(), "value")
        self.state.param.watch(self._on_version, "version")
        self._on_version()

    # ------------------------------------------------------------------ training
    def _stream(self, records: list[Any]) -> None:
        stream_losses(self.loss_source, records)

    refresh_every = 5  # slices between redraws of the look-inside views while training

    def after_training(self) -> None:
        self.refresh_inside()

    def _on_version(self, *_: Any) -> None:
        """A new or loaded model: clear the curve, rebuild the heatmap grid, redraw."""
        self.loss_source.data = curve_data(self.state.history, ("step", "loss"))
        self.grad_compare.data = {"t": [], "rnn": [], "lstm": []}
        if self.state.task_obj is not None:
            self.baseline.location = float(self.state.task_obj.baseline_loss())
        self._maps = {}
        self.refresh_inside()

    # ------------------------------------------------------------------ look inside
    def refresh_inside(self, *_: Any) -> None:
        if self.state.model is None:
            return
        try:
            view = self.state.inspect(int(self.example.value or 0))
        except (ValueError, TypeError, FloatingPointError) as err:
            self.state.notify(f"Could not look inside: {err}", "warning")
            return
        layer = view.internals.get("l0", {})
        if set(self._maps) != set(layer):
            self._maps = {name: heatmap_figure(name, TITLES.get(name, name)) for name in layer}
            self.heatmaps.objects = [pn.pane.Bokeh(fig) for fig, _ in self._maps.values()]
        for name, (fig, source) in self._maps.items():
            update_heatmap(fig, source, layer[name], name)
        norms = view.grad_norms.get("l0")
        if norms is not None:
            self.grad_current.data = {
                "t": list(range(len(norms))),
                "norm": np.maximum(norms, 1e-30).tolist(),
            }

    def compare(self, *_: Any) -> None:
        curves = self.state.compare_gradients(int(self.example.value or 0))
        T = len(curves["rnn"])
        self.grad_compare.data = {
            "t": list(range(T)),
            "rnn": np.maximum(curves["rnn"], 1e-30).tolist(),
            "lstm": np.maximum(curves["lstm"], 1e-30).tolist(),
        }

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        s = self.state
        w: dict[str, Any] = {
            "task": pn.widgets.Select.from_param(s.param.task, name="Task", options=TASK_LABELS),
            "cell": pn.widgets.RadioButtonGroup.from_param(
                s.param.cell, name="Cell", options={"LSTM": "lstm", "GRU": "gru", "RNN": "rnn"}
            ),
            "hidden_size": pn.widgets.IntSlider.from_param(s.param.hidden_size, name="Hidden size"),
            "num_layers": pn.widgets.IntSlider.from_param(s.param.num_layers, name="Layers"),
            "seq_len": pn.widgets.IntSlider.from_param(s.param.seq_len, name="Sequence length"),
            "lr": lr_input(s),
            "optimizer": pn.widgets.Select.from_param(s.param.optimizer, name="Optimiser"),
            "clip": typed_number(s.param.clip, "Clip (0 = off)", step=0.5),
            "batch_size": pn.widgets.IntSlider.from_param(s.param.batch_size, name="Batch size"),
            "seed": seed_input(s),
        }
        return pn.Column(*w.values(), self.buttons(), width=320)

    def panel(self) -> pn.Row:
        s = self.state
        alert = message_alert(s)
        status = Text(s.param.status, name="status", css_classes=["pyplay-status"])
        compare = pn.widgets.Button(name="Compare RNN vs LSTM", width=200)
        compare.on_click(self.compare)
        refresh = pn.widgets.Button(name="Refresh", width=100)
        refresh.on_click(self.refresh_inside)
        self.export = ExportBar("rnn", s)
        training = pn.Column(
            "## Train",
            pn.pane.Markdown(HELP["train"]),
            status,
            pn.pane.Bokeh(self.loss_fig, sizing_mode="stretch_width"),
            self.export.panel(),
            sizing_mode="stretch_width",
        )
        inside = pn.Column(
            "## Look inside",
            pn.pane.Markdown(HELP["inside"]),
            pn.Row(self.example, refresh),
            self.heatmaps,
            "## Gradient through time",
            pn.pane.Markdown(HELP["grad"]),
            compare,
            pn.pane.Bokeh(self.grad_fig, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )
        from pyplay.ui.lessons.rnn.data_views import data_panel, sampling_panel

        main = pn.Column(
            alert,
            training,
            inside,
            sampling_panel(s, HELP["sample"]),
            data_panel(s, HELP["data"]),
            sizing_mode="stretch_width",
        )
        return pn.Row(self.controls(), main, sizing_mode="stretch_width")


# ------------------------------------------------------------------ embedded parts
def gates_widget(view: Any) -> pn.viewable.Viewable:
    refresh = pn.widgets.Button(name="Refresh", width=100)
    refresh.on_click(view.refresh_inside)
    return pn.Column(
        *widget_head(view),
        pn.Row(view.example, refresh),
        view.heatmaps,
        sizing_mode="stretch_width",
    )


def gradient_widget(view: Any) -> pn.viewable.Viewable:
    compare = pn.widgets.Button(name="Compare RNN vs LSTM", width=200)
    compare.on_click(view.compare)
    return pn.Column(
        *widget_head(view, compare),
        pn.pane.Bokeh(view.grad_fig, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )
