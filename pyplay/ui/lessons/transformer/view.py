"""The "Transformers" lesson: train a tiny transformer beside an LSTM on the same task, open
every head's attention, toggle the causal mask and the positional encoding, look at the
sinusoidal encodings, sample from the character model.

Rendering only: actions call :class:`~pyplay.ui.lessons.transformer.state.TransformerLessonState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper, Range1d
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from pyplay.ui.embed import widget_head
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.transformer.state import TASKS, HeadView, TransformerLessonState
from pyplay.ui.plots import (
    attention_figure,
    heatmap_figure,
    update_attention,
    update_heatmap,
)
from pyplay.ui.text import Text
from pyplay.ui.training import lr_input, seed_input

__all__ = ["TransformerLesson", "heads_widget"]

HELP = {
    "train": "A transformer reads the whole sequence at once: every position **attends** to the "
    "others (here only to earlier ones: the **causal mask**, so the output at step t cannot "
    "peek at the answer). The LSTM beside it trains on the same task, one batch for each of "
    "the transformer's. Turn the causal mask off, or the positional encoding to **none**, and "
    "train again to see what breaks: without positions attention sees a bag of symbols.",
    "heads": "Each heatmap row is a query position, each column a key position; bright cells are "
    "where that head looked. Pick a layer and head, or read the grid of all heads at once "
    "(rows: layers, columns: heads). Hover a cell for the two tokens and the weight.",
    "positions": "The sinusoidal encoding adds sin and cos of position x frequency to every "
    "token, one frequency per pair of dimensions (left). Dot products of two positions' "
    "encodings depend only on their distance (right): nearby positions look alike.",
    "sample": "With the character model, continue a prompt one character at a time; the "
    "transformer keeps every earlier position's keys and values (a KV cache) instead of "
    "recomputing them.",
}


def _grid_figure() -> tuple[figure, ColumnDataSource]:
    """All heads as small tiles: layers down, heads across."""
    source = ColumnDataSource(
        {"x": [], "y": [], "weight": [], "q": [], "k": [], "layer": [], "head": []}
    )
    fig = figure(
        height=300, width=520, title="All heads", tools="save,reset",
        x_range=Range1d(-0.5, 0.5), y_range=Range1d(0.5, -0.5),
    )  # fmt: skip
    mapper = LinearColorMapper(palette=Viridis256, low=0.0, high=1.0)
    fig.rect(
        "x", "y", 1, 1, source=source, fill_color={"field": "weight", "transform": mapper},
        line_color=None,
    )  # fmt: skip
    fig.axis.visible = False
    fig.grid.visible = False
    fig.add_tools(
        HoverTool(
            tooltips=[
                ("layer", "@layer"),
                ("head", "@head"),
                ("query", "@q"),
                ("key", "@k"),
                ("weight", "@weight{0.000}"),
            ]
        )
    )
    return fig, source


class TransformerLesson(LessonView):
    """Builds the lesson's layout around a :class:`TransformerLessonState`."""

    heading = "## Train a transformer beside an LSTM"
    help_text = HELP["train"]
    status_css = "pyplay-transformer-status"
    curve = ("step", "loss", "lstm")

    def __init__(self, state: TransformerLessonState | None = None) -> None:
        super().__init__(state or TransformerLessonState())
        self.loss_source.data = {"step": [], "loss": [], "lstm": []}
        self.loss_fig.renderers[0].glyph.line_color = "#8e44ad"
        self.loss_fig.line(
            "step", "lstm", source=self.loss_source, line_width=2, color="#27ae60",
            line_dash="dotted", legend_label="LSTM",
        )  # fmt: skip
        self.loss_fig.legend.location = "top_right"
        self.head_fig, self.head_source = attention_figure()
        self.head_fig.xaxis.axis_label = "key position"
        self.head_fig.yaxis.axis_label = "query position"
        self.grid_fig, self.grid_source = _grid_figure()
        self.pe_fig, self.pe_source = heatmap_figure("pe", "Sinusoidal encoding")
        self.pe_fig.xaxis.axis_label, self.pe_fig.yaxis.axis_label = "position", "dimension"
        self.dot_fig, self.dot_source = heatmap_figure("dot", "Dot products of encodings")
        self.dot_fig.xaxis.axis_label, self.dot_fig.yaxis.axis_label = "position", "position"
        self.layer = pn.widgets.Select(name="Layer", options=[1], value=1, width=100)
        self.head = pn.widgets.Select(name="Head", options=[1], value=1, width=100)
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=200)
        for w in (self.layer, self.head, self.example):
            w.param.watch(lambda e: self.refresh(), "value")
        self.head_title = Text("", css_classes=["pyplay-head-title"])
        self.prompt = pn.widgets.TextInput(name="Prompt", value="Alice ", width=220)
        self.temperature = pn.widgets.FloatSlider(
            name="Temperature", start=0.0, end=2.0, step=0.1, value=0.8, width=220
        )
        self.sample_out = Text("", css_classes=["pyplay-transformer-sample"])
        self.view: HeadView | None = None
        self.watch_version()

    # ------------------------------------------------------------------ training
    def _stream(self, rows: list[tuple[int, float, float]]) -> None:
        if rows:
            steps, losses, lstm = zip(*rows, strict=True)
            self.loss_source.stream(
                {"step": list(steps), "loss": list(losses), "lstm": list(lstm)}, rollover=20_000
            )

    budget_s = 0.12

    def _on_version(self, *_: Any) -> None:
        self.pause()
        s = self.state
        self.layer.options = list(range(1, s.num_layers + 1))
        self.layer.value = min(int(self.layer.value or 1), s.num_layers)
        self.head.options = list(range(1, s.nhead + 1))
        self.head.value = min(int(self.head.value or 1), s.nhead)
        P, G = s.positional_tables()
        update_heatmap(self.pe_fig, self.pe_source, P, "pe")
        update_heatmap(self.dot_fig, self.dot_source, G, "dot")
        super()._on_version()  # the curve, the baseline, the heads

    # ------------------------------------------------------------------ looking inside
    def refresh(self, *_: Any) -> None:
        view = self.view = self.state.heads(int(self.example.value or 0))
        if view is None:
            return
        layer = int(self.layer.value or 1) - 1
        head = int(self.head.value or 1) - 1
        if layer >= len(view.weights) or head >= view.weights[layer].shape[0]:
            return
        w = view.weights[layer][head]  # (T, T)
        update_attention(self.head_fig, self.head_source, w, view.tokens, view.tokens)
        self.head_title.object = f"Layer {layer + 1}, head {head + 1}"
        self._update_grid(view)

    def _update_grid(self, view: HeadView) -> None:
        T = len(view.tokens)
        xs, ys, ws, qs, ks, ls, hs = [], [], [], [], [], [], []
        for li, W in enumerate(view.weights):  # (h, T, T)
            for hi in range(W.shape[0]):
                q, k = np.divmod(np.arange(T * T), T)
                xs += (k + hi * (T + 1)).tolist()
                ys += (q + li * (T + 1)).tolist()
                ws += W[hi].reshape(-1).astype(float).tolist()
                qs += [view.tokens[i] for i in q]
                ks += [view.tokens[i] for i in k]
                ls += [li + 1] * (T * T)
                hs += [hi + 1] * (T * T)
        self.grid_source.data = {"x": xs, "y": ys, "weight": ws, "q": qs, "k": ks,
                                 "layer": ls, "head": hs}  # fmt: skip
        H, L = view.weights[0].shape[0], len(view.weights)
        self.grid_fig.x_range.update(start=-0.5, end=H * (T + 1) - 1.5)
        self.grid_fig.y_range.update(start=L * (T + 1) - 1.5, end=-0.5)

    def generate(self, *_: Any) -> None:
        prompt = self.prompt.value_input or self.prompt.value or ""
        text = self.state.generate(prompt, 200, float(self.temperature.value or 0.0))
        if text is not None:
            self.sample_out.object = prompt + text

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        widgets = [
            pn.widgets.Select.from_param(s.param.task, name="Task", options=TASKS),
            pn.widgets.IntSlider.from_param(s.param.d_model, name="d_model", step=8),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.nhead,
                name="Heads",
                options={f"{n} head{'s' * (n > 1)}": n for n in s.param.nhead.objects},
            ),
            pn.widgets.IntSlider.from_param(s.param.num_layers, name="Layers"),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.positional,
                name="Positions",
                options={"Sinusoidal": "sinusoidal", "Learned": "learned", "None": "none"},
            ),
            pn.widgets.Checkbox.from_param(s.param.causal, name="Causal mask"),
            pn.widgets.IntSlider.from_param(s.param.seq_len, name="Sequence length"),
            lr_input(s),
            seed_input(s),
            pn.widgets.Checkbox.from_param(s.param.compare_lstm, name="Train an LSTM beside it"),
        ]
        return widgets

    def sections(self) -> list[Any]:
        generate = pn.widgets.Button(name="Generate", button_type="primary", width=100)
        generate.on_click(self.generate)
        return [
            "## Open every head",
            pn.pane.Markdown(HELP["heads"]),
            pn.Row(self.layer, self.head, self.example),
            self.head_title,
            pn.Row(pn.pane.Bokeh(self.head_fig), pn.pane.Bokeh(self.grid_fig)),
            "## Positional encodings",
            pn.pane.Markdown(HELP["positions"]),
            pn.Row(pn.pane.Bokeh(self.pe_fig), pn.pane.Bokeh(self.dot_fig)),
            "## Sample from the character model",
            pn.pane.Markdown(HELP["sample"]),
            pn.Row(self.prompt, self.temperature, generate),
            self.sample_out,
        ]


# ------------------------------------------------------------------ embedded parts
def heads_widget(view: Any) -> pn.viewable.Viewable:
    return pn.Column(
        *widget_head(view),
        pn.Row(view.layer, view.head, view.example),
        view.head_title,
        pn.Row(pn.pane.Bokeh(view.head_fig), pn.pane.Bokeh(view.grid_fig)),
        sizing_mode="stretch_width",
    )
