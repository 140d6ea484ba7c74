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
from bokeh.models import LegendItem

from pyplay.ui.curve_points import CurveBuffer, stream_curve
from pyplay.ui.embed import widget_head
from pyplay.ui.embeddings_view import EmbeddingsSection, model_tables
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.rnn.layers_view import LayerChoice, LayerLines
from pyplay.ui.lessons.rnn.lstm_views import CECView, lstm_controls
from pyplay.ui.lessons.rnn.packing_view import PACKING_TITLE, PackingView
from pyplay.ui.lessons.rnn.residual_view import ResidualSection
from pyplay.ui.lessons.rnn.state import TASK_LABELS, LessonState
from pyplay.ui.plot_gradnorm import GradNormPlot
from pyplay.ui.plots import (
    gradient_figure,
    heatmap_figure,
    positive,
    set_data,
    set_title,
    update_heatmap,
)
from pyplay.ui.session import one_at_a_time
from pyplay.ui.text import Text
from pyplay.ui.training import typed_number
from pyplay.ui.workbench import Later

__all__ = ["RecurrentLesson", "gates_widget", "gradient_widget"]

GRAD_TITLE = "gradient through time, ||dL/dh_t||"
MAP_HEIGHT, MAP_WIDTH = 170, 290  # the workbench's gate and state maps: 3 x 2 under the loss
TITLES = {
    "i": "input gate i_t",
    "f": "forget gate f_t",
    "g": "candidate g_t",
    "o": "output gate o_t",
    "c": "cell state c_t",
    "h": "hidden state h_t",
    "r": "reset gate r_t",
    "z": "update gate z_t",
    "n": "candidate n_t",
    "a": "pre-activation a_t",
}
HELP = {
    "inside": "Each heatmap shows one quantity over time (x) for every unit (y) while the "
    "model reads the chosen example; they follow the model while it trains. Gates near 0 "
    "block, near 1 let through: watch the LSTM's forget gate learn to stay open when it must "
    "remember.",
    "inside_rnn": "Each heatmap shows one quantity over time (x) for every unit (y) while the "
    "model reads the chosen example; they follow the model while it trains. A plain RNN cell "
    "has no gates: all it has is its pre-activation a and its hidden state h = tanh(a), which "
    "it overwrites at every step.",
    "layers": "With several layers, or both directions, pick which layer's gates and states "
    "to see (layer 1 reads the input, layer l + 1 reads layer l's states h_t at the same step; "
    "a backward layer reads the sequence from its end, and the layer above, or the output "
    "layer, reads [h_t forward; h_t backward], 2H numbers).",
    "grad": "How strongly the loss at the end reaches back to each step: the norm of "
    "dL/dh_t. For a tanh RNN it shrinks geometrically going back in time (vanishing "
    "gradient); the LSTM's cell state can keep it alive. **Compare RNN vs LSTM** adds a freshly "
    "initialised tanh RNN and LSTM (forget-gate bias 1, the usual start) of the same size "
    "on the same example (one layer). With several layers or directions, the plot shows the "
    "chosen one, or with **Every layer** all of them at once. For an LSTM, the truncated "
    "gradient of the original LSTM is drawn beside the true one below.",
    "sample": "With the character model: type a prompt and **Generate**. Temperature below 1 "
    "picks likelier characters, above 1 more surprising ones, 0 always the likeliest.",
    "norm": "**Gradient norm and clipping.** Every step's gradient has a global norm "
    "||g|| = sqrt(Σ ||∂L/∂θ||²), drawn here before clipping. With **Clip** c > 0, a step above "
    "the dashed line is scaled down to norm c (g ← g c/||g||) before the update; one below goes "
    "through unchanged. Spikes of a decade or more are exploding gradients: try the RNN cell "
    "with a large learning rate, with and without clipping.",
    "embeddings": "The **Character model** learns one vector per character, its embedding "
    "table: choose that task to look at the table here (nearest characters, analogies, a map), "
    "beside a small table of word vectors. The other tasks read numbers, or token ids with no "
    "names to show.",
    "data": "Paste or upload a text (UTF-8, up to 1 MB) for the character model, or a column "
    "of numbers (one per line, up to 100,000) to predict the next value.",
}


class RecurrentLesson(LessonView):
    """Builds the lesson's layout around a :class:`LessonState`."""

    state_class = LessonState
    status_css = "pyplay-status"

    def build(self) -> None:
        # the views of closed sections are made when first asked for (a section's first
        # opening, an embed, a test): the gradient figure, the CEC comparison, packing, the
        # residual comparison and the gradient norms were a third of the first render's build
        self._grad: tuple[Any, Any, Any] | None = None
        self._layer_lines: LayerLines | None = None
        self._cec: CECView | None = None
        self._packing: PackingView | None = None
        self._residual: ResidualSection | None = None
        self._norms: GradNormPlot | None = None
        self._norm_steps = CurveBuffer()  # the norms trained before that plot is made
        self._last_view: Any = None  # the last look inside (state.inspect), for those views
        self.heatmaps = pn.GridBox(
            ncols=3, sizing_mode="stretch_width", css_classes=["pyplay-bench-maps"]
        )
        self._maps: dict[str, tuple[Any, Any]] = {}
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=200)
        self.example.param.watch(lambda e: self.refresh_inside(), "value")
        self.inside_help = pn.pane.Markdown(HELP["inside"])
        self.choice = LayerChoice(self.refresh_inside, HELP["layers"])
        self.every_layer = pn.widgets.Checkbox(name="Every layer", value=False)
        self.every_layer.param.watch(lambda e: self.refresh_inside(), "value")
        self.embeddings = EmbeddingsSection(
            lambda: model_tables(self.state.model, self.state.task_obj), HELP["embeddings"]
        )  # built when the character model is first chosen: the landing lesson starts light
        self.state.param.watch(lambda e: self._norms and self._norms.set_clip(e.new), "clip")
        self.watch_version()

    # ------------------------------------------------------------------ made when first used
    def _gradient(self) -> tuple[Any, Any, Any]:
        if self._grad is None:
            self._grad = gradient_figure()
            top = int(self.state.param.num_layers.softbounds[1])
            self._layer_lines = LayerLines(self._grad[0], top)
            if self._last_view is not None:
                self._draw_gradient(self._last_view)
        return self._grad

    @property
    def grad_fig(self) -> Any:
        """The gradient-through-time figure (made when first asked for)."""
        return self._gradient()[0]

    @property
    def grad_current(self) -> Any:
        """Its source of this model's norms, columns ``t`` and ``norm``."""
        return self._gradient()[1]

    @property
    def grad_compare(self) -> Any:
        """Its source of the fresh RNN's and LSTM's norms (**Compare RNN vs LSTM**)."""
        return self._gradient()[2]

    @property
    def layer_lines(self) -> LayerLines:
        """The figure's line per layer (**Every layer**)."""
        self._gradient()
        assert self._layer_lines is not None
        return self._layer_lines

    @property
    def cec(self) -> CECView:
        """The LSTM's full against its truncated (CEC-only) gradient."""
        if self._cec is None:
            self._cec = CECView(self.state)
            if self.state.model is not None:
                self._cec.refresh(int(self.example.value or 0))
        return self._cec

    @property
    def packing(self) -> PackingView:
        """Padding and packing on the current model (it draws itself when made)."""
        if self._packing is None:
            self._packing = PackingView(self.state)
        return self._packing

    @property
    def residual(self) -> ResidualSection:
        """The plain against the residual stack, trained side by side."""
        if self._residual is None:
            self._residual = ResidualSection(self)
            one_at_a_time(self.session, self._residual.session)  # one training at a time
        return self._residual

    @property
    def norms(self) -> GradNormPlot:
        """The gradient norm of every step, with the steps trained before it was made."""
        if self._norms is None:
            self._norms = GradNormPlot()
            self._norms.set_clip(self.state.clip)
            self._norms.stream_rows(self._norm_steps.data)
            self._norm_steps = CurveBuffer()
        return self._norms

    def _on_version(self, *_: Any) -> None:
        """A new or loaded model: clear the curves, redraw (the heatmaps are made anew only
        when the cell's quantities change: replacing figures the page is still drawing made
        Panel drop the page's late updates to them, with a console warning)."""
        if self._grad is not None:
            self.grad_compare.data = {"t": [], "rnn": [], "lstm": []}
        self.inside_help.object = HELP["inside_rnn" if self.state.cell == "rnn" else "inside"]
        rnn = self.state.model.rnn if self.state.model is not None else None
        if rnn is not None:
            self.choice.follow(rnn.num_layers, rnn.bidirectional)
        if self._norms is not None:
            self._norms.clear()
        self._norm_steps = CurveBuffer()
        super()._on_version()

    def _stream(self, records: list[Any]) -> None:
        super()._stream(records)
        if self._norms is not None:
            self._norms.stream(records)
        else:
            stream_curve(self._norm_steps, GradNormPlot.rows(records))

    def refresh(self, *_: Any) -> None:
        self.refresh_inside()
        self.embeddings.refresh()

    # ------------------------------------------------------------------ look inside
    def refresh_inside(self, *_: Any) -> None:
        if self.state.model is None:
            return
        try:
            view = self.state.inspect(int(self.example.value or 0))
        except (ValueError, TypeError, FloatingPointError) as err:
            self.state.notify(f"Could not look inside: {err}", "warning")
            return
        key = self.choice.key if self.choice.key in view.internals else "l0"
        layer = view.internals.get(key, {})
        if set(self._maps) != set(layer):
            self._maps = {
                name: heatmap_figure(
                    name, TITLES.get(name, name), height=MAP_HEIGHT, width=MAP_WIDTH
                )
                for name in layer
            }
            self.heatmaps.objects = [pn.pane.Bokeh(fig) for fig, _ in self._maps.values()]
        where = self.choice.title()
        for name, (fig, source) in self._maps.items():
            update_heatmap(fig, source, layer[name], name)
            set_title(
                fig, f"{where}: {TITLES.get(name, name)}" if where else TITLES.get(name, name)
            )
        self._last_view = view
        if self._grad is not None:
            self._draw_gradient(view)
        if self._cec is not None:
            self._cec.refresh(int(self.example.value or 0))
        if self._packing is not None:
            self._packing.refresh()

    def _draw_gradient(self, view: Any) -> None:
        """The gradient-through-time figure from ``view`` (``state.inspect``)."""
        key = self.choice.key if self.choice.key in view.internals else "l0"
        where = self.choice.title()
        every = bool(self.every_layer.value) and len(view.grad_norms) > 1
        norms = None if every else view.grad_norms.get(key)
        shown = positive(norms) if norms is not None else np.zeros(0)
        set_data(self.grad_current, {"t": np.arange(len(shown)), "norm": shown})
        self.layer_lines.show(view.grad_norms if every else None)
        for item in self.grad_fig.legend[0].items:  # "this model": the chosen layer only
            if isinstance(item, LegendItem) and getattr(item.label, "value", "") == "this model":
                item.visible = not every
        which = "Every layer" if every else where
        set_title(self.grad_fig, f"{which}: {GRAD_TITLE}" if which else "G" + GRAD_TITLE[1:])

    def compare(self, *_: Any) -> None:
        curves = self.state.compare_gradients(int(self.example.value or 0))
        T = len(curves["rnn"])
        set_data(
            self.grad_compare,
            {"t": np.arange(T), "rnn": positive(curves["rnn"]), "lstm": positive(curves["lstm"])},
        )

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        w: dict[str, Any] = {
            "task": pn.widgets.Select.from_param(s.param.task, name="Task", options=TASK_LABELS),
            "cell": pn.widgets.RadioButtonGroup.from_param(
                s.param.cell, name="Cell", options={"LSTM": "lstm", "GRU": "gru", "RNN": "rnn"}
            ),
            "hidden_size": pn.widgets.IntSlider.from_param(s.param.hidden_size, name="Hidden size"),
            "seq_len": pn.widgets.IntSlider.from_param(s.param.seq_len, name="Sequence length"),
            "lstm": lstm_controls(s),
            "feedforward_layers": pn.widgets.IntSlider.from_param(
                s.param.feedforward_layers, name="Feed-forward layers before"
            ),
            "num_layers": pn.widgets.IntSlider.from_param(s.param.num_layers, name="Layers"),
            "bidirectional": bidirectional_box(s),
            "residual": pn.widgets.Checkbox.from_param(
                s.param.residual, name="Residual connections between layers"
            ),
            "tbptt": self.tbptt_box(),
            "optimizer": pn.widgets.Select.from_param(s.param.optimizer, name="Optimiser"),
            "clip": typed_number(s.param.clip, "Clip (0 = off)"),
            "batch_size": pn.widgets.IntSlider.from_param(s.param.batch_size, name="Batch size"),
        }
        return list(w.values())

    def tbptt_box(self) -> pn.widgets.Checkbox:
        """The truncated-BPTT switch, shown for the character model only (the other tasks'
        examples are independent sequences)."""
        box = pn.widgets.Checkbox.from_param(
            self.state.param.tbptt, name="Truncated BPTT (carry the state across chunks)"
        )

        def follow(*_: Any) -> None:
            box.visible = self.state.task == "charlm"

        self.state.param.watch(follow, "task")
        follow()
        return box

    def status_line(self) -> Text:
        return Text(self.state.param.status, name="status", css_classes=[self.status_css])

    def refresh_button(self) -> pn.widgets.Button:
        button = pn.widgets.Button(name="Refresh", width=100)
        button.on_click(self.refresh_inside)
        return button

    def compare_button(self) -> pn.widgets.Button:
        button = pn.widgets.Button(name="Compare RNN vs LSTM", width=200)
        button.on_click(self.compare)
        return button

    def inside(self) -> list[Any]:
        """The workbench's view: the gates and states of one example, live."""
        return [pn.Row(self.example, self.choice.panel), self.heatmaps]

    def sections(self) -> list[Any]:
        from pyplay.ui.lessons.rnn.data_views import data_panel, sampling_panel
        from pyplay.ui.lessons.rnn.schmidt import schmidt_markdown

        s = self.state
        return [
            "## Gates and states: what the maps show",
            self.inside_help,
            self.refresh_button(),
            "## Gradient through time",
            pn.pane.Markdown(HELP["grad"]),
            pn.Row(self.compare_button(), self.every_layer),
            Later(lambda: pn.pane.Bokeh(self.grad_fig, sizing_mode="stretch_width")),
            Later(lambda: self.cec.panel),
            "## Backpropagation through time in Schmidt's notation",
            pn.pane.Markdown(
                schmidt_markdown(), css_classes=["pyplay-schmidt-bptt"], sizing_mode="stretch_width"
            ),
            pn.widgets.Select.from_param(s.param.nonlinearity, name="φₕ (RNN cell)", width=200),
            "## Gradient norm and clipping",
            pn.pane.Markdown(HELP["norm"]),
            Later(lambda: pn.pane.Bokeh(self.norms.fig, sizing_mode="stretch_width")),
            Later(
                lambda: pn.Column(*self.residual.panel(), sizing_mode="stretch_width"),
                title=ResidualSection.title,
            ),
            Later(lambda: self.packing.panel, title=PACKING_TITLE),
            sampling_panel(s, HELP["sample"]),
            self.embeddings.panel,
            data_panel(s, HELP["data"]),
        ]


def bidirectional_box(state: LessonState) -> pn.widgets.Checkbox:
    """The bidirectional switch, greyed out for the tasks that predict the next input (a
    backward direction would read it; the model stays one-way there)."""
    box = pn.widgets.Checkbox.from_param(
        state.param.bidirectional, name="Bidirectional (not for next-step prediction)"
    )

    def follow(*_: Any) -> None:
        box.disabled = not state.reads_whole_input()

    state.param.watch(follow, "task")
    follow()
    return box


# ------------------------------------------------------------------ embedded parts
def gates_widget(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *widget_head(view),
        pn.Row(view.example, view.refresh_button()),
        view.choice.panel,
        view.heatmaps,
        sizing_mode="stretch_width",
    )


def gradient_widget(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *widget_head(view, view.compare_button()),
        pn.Row(view.choice.panel, view.every_layer),
        pn.pane.Bokeh(view.grad_fig, sizing_mode="stretch_width"),
        view.cec.panel,
        sizing_mode="stretch_width",
    )
