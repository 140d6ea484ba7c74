"""The "Transformers" lesson: train a tiny transformer beside an LSTM on the same task, open
every head's attention, toggle the causal mask and the positional encoding, look at the
sinusoidal encodings, sample from the character model; or train a transformer encoder-decoder
beside the LSTM encoder-decoder with attention on pairs and open its three kinds of attention
(:mod:`~pyplay.ui.lessons.transformer.pairs_view`).

Rendering only: actions call :class:`~pyplay.ui.lessons.transformer.state.TransformerLessonState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper, Range1d
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from pyplay.nn.positional import POSITIONAL
from pyplay.ui.curve_points import stream_curve
from pyplay.ui.embed import widget_head
from pyplay.ui.embeddings_view import EmbeddingsView, model_tables
from pyplay.ui.lectures import lecture, lecture_label
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.transformer.cost_plot import cost_figure, update_cost
from pyplay.ui.lessons.transformer.formulas import VALUE_LABELS, formulas_markdown
from pyplay.ui.lessons.transformer.pairs import ARCHS, PAIR_CHOICES
from pyplay.ui.lessons.transformer.pairs_view import (
    PairsPanel,
    chosen_head,
    follow_heads,
    head_menus,
)
from pyplay.ui.lessons.transformer.state import TASKS, HeadView, TransformerLessonState
from pyplay.ui.plot_maps import fixed_ticks
from pyplay.ui.plots import (
    attention_figure,
    colour_bar,
    heatmap_figure,
    set_data,
    set_title,
    update_attention,
    update_heatmap,
)
from pyplay.ui.text import Text

__all__ = ["TransformerLesson", "heads_widget"]

_WAND = lecture_label("wand")  # the lecture the positional encodings follow, in short

HELP = {
    "heads": "Each heatmap row is a query position, each column a key position; bright cells are "
    "where that head looked. Pick a layer and head, or read the grid of all heads at once "
    "(rows: layers, columns: heads). Hover a cell for the two tokens and the weight.",
    "positions": "A transformer sees a set: the position of each token must be added to it. "
    "The table the model adds (left, position by dimension) and the dot products of two "
    f"positions' vectors (right). The steps of {lecture('wand')}: a **count** 1, 2, ... in one "
    "component (badly scaled), the count **normalised** (Wand divides by the "
    "sequence's own length; the page by N, the longest sequence the model takes: see the note "
    "under the table), a **binary** code (one "
    "component per bit, -1 or +1: not continuous), and the **sinusoidal** encoding, whose dot "
    f"products depend only on the distance; or a **learned** table, or **none**. {_WAND} "
    "names the standard approach: the code as wide as the input and *added* to it; "
    "**concatenated** gives the (sinusoidal) code components of its own instead.",
    "cost": "Every position attends to every other: a layer of self-attention computes T x T "
    "scores, so doubling the sequence quadruples them (solid), while the projections and an "
    "LSTM layer of the same width grow only in proportion to T. Multiply-adds of one layer, "
    "the feed-forward block (the same for both) left out; log scales on both axes.",
    "sample": "With the character model, continue a prompt one character at a time; the "
    "transformer keeps every earlier position's keys and values (a KV cache) instead of "
    "recomputing them.",
}


def _grid_figure() -> tuple[figure, ColumnDataSource]:
    """All heads as small tiles: layers down, heads across (numbered from 1, as the menus)."""
    source = ColumnDataSource(
        {"x": [], "y": [], "weight": [], "q": [], "k": [], "layer": [], "head": []}
    )
    fig = figure(
        height=320, width=540, title="All heads (rows: layers, columns: heads)",
        tools="save,reset", x_range=Range1d(-0.5, 0.5), y_range=Range1d(0.5, -0.5),
    )  # fmt: skip
    mapper = LinearColorMapper(palette=Viridis256, low=0.0, high=1.0)
    fig.rect(
        "x", "y", 1, 1, source=source, fill_color={"field": "weight", "transform": mapper},
        line_color=None,
    )  # fmt: skip
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
    colour_bar(fig, mapper)
    return fig, source


def _tile_axis(axis: Any, count: int, size: int, name: str) -> None:
    """Name each tile of the grid ("head 1", ...) under (or beside) its middle."""
    middles = [k * (size + 1) + (size - 1) / 2 for k in range(count)]
    fixed_ticks(axis, middles)
    axis.major_label_overrides = {m: f"{name} {k + 1}" for k, m in enumerate(middles)}
    axis.major_tick_line_color = None


# per positional kind: the panel's title (its first words name the choice) and a note
POSITION_TEXT = {
    "sinusoidal": ("Sinusoidal (sin and cos of position x frequency)", ""),
    "learned": ("Learned (position embeddings)", "Learned positions: one trained vector per "
                "position (they change as the model trains)."),
    "count": ("Count (i = 1, 2, ... in component 0)", "The count grows without bound: far "
              "positions swamp the token's own values."),
    "normalised": ("Normalised (i / N in component 0)", "The count divided by N, the longest "
                   f"sequence the model takes ({_WAND} divides by the sequence's own "
                   "length, which changes a position's code with the length; a fixed N keeps "
                   "one code per position)."),
    "binary": ("Binary (one component per bit)", "Position t in binary, each bit as -1 or +1: "
               "distinct codes, but neighbours can differ in many bits."),
    "concat": ("Concatenated (sinusoidal, own components)", "Joined, not added: "
               "the token embedding is d_model - d_pos wide and the sinusoidal code fills the "
               "last d_pos = d_model / 4 components (the table shows those), so tokens and "
               "positions never share a component, at the price of fewer for the token."),
    "none": ("None", "No positional encoding: every position gets only its token, so "
             "attention sees a bag of symbols (train and compare with the other choices)."),
}  # fmt: skip


class TransformerLesson(LessonView):
    """Builds the lesson's layout around a :class:`TransformerLessonState`."""

    state_class = TransformerLessonState
    curve = ("step", "loss", "lstm")

    def build(self) -> None:
        self.loss_source.data = {"step": [], "loss": [], "lstm": []}
        self.loss_plot.style_curve("transformer", "#8e44ad")
        self.loss_plot.add_curve("lstm", "LSTM beside it", "#27ae60")
        self.head_fig, self.head_source = attention_figure(
            "Attention of the chosen head", "key position", "query position"
        )
        self.grid_fig, self.grid_source = _grid_figure()
        self.pe_fig, self.pe_source = heatmap_figure(
            "pe", "Sinusoidal encoding", "position", "dimension"
        )
        self.dot_fig, self.dot_source = heatmap_figure(
            "dot", "Dot products of encodings", "position", "position"
        )
        self.pe_panes = pn.Row(pn.pane.Bokeh(self.pe_fig), pn.pane.Bokeh(self.dot_fig))
        self.pe_note = Text("", css_classes=["pyplay-positions-note"])
        self.cost_fig, self.cost_source = cost_figure()
        self.cost_note = Text("", css_classes=["pyplay-cost-note"])
        self.embeddings = EmbeddingsView(
            lambda: model_tables(self.state.model, self.state.task_obj)
        )
        self.layer, self.head = head_menus()
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=200)
        for w in (self.layer, self.head):  # a new pick: the same forward pass, another head
            w.param.watch(lambda e: self.show_head(), "value")
        self.example.param.watch(lambda e: self.refresh(), "value")
        self.head_title = Text("", css_classes=["pyplay-head-title"])
        self.prompt = pn.widgets.TextInput(name="Prompt", value="Alice ", width=220)
        self.temperature = pn.widgets.FloatSlider(
            name="Temperature", start=0.0, end=2.0, step=0.1, value=0.8, width=220
        )
        self.sample_out = Text("", css_classes=["pyplay-transformer-sample"])
        self.pairs = PairsPanel(self.state)
        self.decoder_only: list[Any] = []  # what only the decoder-only model shows
        self.with_pairs: list[Any] = []  # what only the encoder-decoder shows
        self.view: HeadView | None = None
        self._grid_shape: tuple[int, int, int] | None = None  # (layers, heads, T) drawn
        self.watch_version()

    # ------------------------------------------------------------------ training
    def _stream(self, rows: list[tuple[int, float, float]]) -> None:
        if rows:
            steps, losses, lstm = zip(*rows, strict=True)
            stream_curve(
                self.loss_source, {"step": list(steps), "loss": list(losses), "lstm": list(lstm)}
            )

    def _on_version(self, *_: Any) -> None:
        self.session.pause()
        s = self.state
        follow_heads(self.layer, self.head, s)
        self._grid_shape = None
        self.show_positions()
        self.cost_note.object = update_cost(
            self.cost_fig, self.cost_source, s.attention_cost(), s.d_model
        )
        self._show_mode()
        self.pairs.new_model()
        if s.encoder_decoder:  # pair tasks have no trivial baseline
            self.baseline.visible = False
            self.reset_curve()
            self.refresh()
            return
        self.baseline.visible = True
        super()._on_version()  # the curve, the baseline, the heads

    def _show_mode(self) -> None:
        """Show what the chosen architecture has (settings and sections), hide the rest."""
        pairs = bool(self.state.encoder_decoder)
        for part in self.decoder_only:
            part.visible = not pairs
        for part in self.with_pairs:
            part.visible = pairs

    # ------------------------------------------------------------------ looking inside
    def refresh(self, *_: Any) -> None:
        """A forward pass of the chosen example through the model as it is now: every head
        (the grid), the chosen head, and learned positions; with the encoder-decoder its three
        kinds of attention; the embeddings view offers the model's tables as they are now."""
        self.embeddings.refresh()
        if self.state.encoder_decoder:
            self.pairs.refresh()
            if self.state.positional == "learned":
                self.show_positions()
            return
        self.view = self.state.heads(int(self.example.value or 0))
        if self.view is None:
            return
        self._update_grid(self.view)
        self.show_head()
        if self.state.positional == "learned":
            self.show_positions()

    def show_head(self) -> None:
        """The chosen layer and head of the last forward pass (no new pass: a pick shows at
        once, even while training)."""
        view = self.view
        picked = None if view is None else chosen_head(self.layer, self.head, view.weights)
        if view is None or picked is None:
            return
        layer, head = picked
        w = view.weights[layer][head]  # (T, T)
        update_attention(self.head_fig, self.head_source, w, view.tokens, view.tokens)
        self.head_title.object = f"Layer {layer + 1}, head {head + 1}"
        title = f"Attention of layer {layer + 1}, head {head + 1}"
        set_title(self.head_fig, title)

    def _update_grid(self, view: HeadView) -> None:
        T = len(view.tokens)
        W = np.stack(view.weights)  # (L, h, T, T)
        L, H = W.shape[:2]
        layer, head, q, k = np.indices(W.shape).reshape(4, -1)  # (L*h*T*T,) each
        tokens = np.asarray(view.tokens, dtype=object)
        set_data(
            self.grid_source,
            {
                "x": k + head * (T + 1),
                "y": q + layer * (T + 1),
                "weight": W.reshape(-1),
                "q": tokens[q].tolist(),
                "k": tokens[k].tolist(),
                "layer": layer + 1,
                "head": head + 1,
            },
        )
        if self._grid_shape != (L, H, T):
            self._grid_shape = (L, H, T)
            self.grid_fig.x_range.update(start=-0.5, end=H * (T + 1) - 1.5)
            self.grid_fig.y_range.update(start=L * (T + 1) - 1.5, end=-0.5)
            _tile_axis(self.grid_fig.xaxis[0], H, T, "head")
            _tile_axis(self.grid_fig.yaxis[0], L, T, "layer")

    def show_positions(self) -> None:
        """The positional-encoding panel for the chosen kind: the table the model adds (the
        learned one as trained so far) and its dot products, or a note that there are none."""
        s = self.state
        title, note = POSITION_TEXT[s.positional]
        self.pe_note.object = note
        self.pe_panes.visible = s.positional != "none"
        if s.positional == "none":
            return
        P, dots = s.positional_tables()  # (48, D), (48, 48)
        set_title(self.pe_fig, title)
        update_heatmap(self.pe_fig, self.pe_source, P, "pe")
        update_heatmap(self.dot_fig, self.dot_source, dots, "dot")

    def generate(self, *_: Any) -> None:
        prompt = self.prompt.value_input or self.prompt.value or ""
        text = self.state.generate(prompt, 200, float(self.temperature.value or 0.0))
        if text is not None:
            self.sample_out.object = prompt + text

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        task = pn.widgets.Select.from_param(s.param.task, name="Task", options=TASKS)
        pair_task = pn.widgets.Select.from_param(
            s.param.pair_task, name="Pair task", options=PAIR_CHOICES
        )
        causal = pn.widgets.Checkbox.from_param(s.param.causal, name="Causal mask")
        self.decoder_only += [task, causal]
        self.with_pairs.append(pair_task)
        self._show_mode()
        widgets = [
            pn.widgets.Select.from_param(s.param.arch, name="Architecture", options=ARCHS),
            task,
            pair_task,
            pn.widgets.IntSlider.from_param(s.param.d_model, name="d_model", step=8),
            pn.widgets.RadioButtonGroup.from_param(
                s.param.nhead,
                name="Heads",
                options={f"{n} head{'s' * (n > 1)}": n for n in s.param.nhead.objects},
            ),
            pn.widgets.IntSlider.from_param(s.param.num_layers, name="Layers"),
            pn.widgets.Select.from_param(
                s.param.positional,
                name="Positions",
                options={POSITION_TEXT[k][0].split(" (")[0]: k for k in POSITIONAL},
            ),
            causal,
            pn.widgets.Select.from_param(
                s.param.value_function,
                name="Value function",
                options=VALUE_LABELS,
                description=s.param.value_function.doc,
            ),
            pn.widgets.IntSlider.from_param(s.param.seq_len, name="Sequence length"),
            pn.widgets.Checkbox.from_param(s.param.compare_lstm, name="Train an LSTM beside it"),
        ]
        return widgets

    def inside(self) -> list[Any]:
        """The workbench's view, live: one head's attention and every head at once
        (decoder-only), or the encoder-decoder's three kinds of attention."""
        heads = pn.Column(
            pn.Row(self.layer, self.head, self.example),
            self.head_title,
            pn.Row(pn.pane.Bokeh(self.head_fig), pn.pane.Bokeh(self.grid_fig)),
            sizing_mode="stretch_width",
        )
        maps = self.pairs.maps()
        self.decoder_only.append(heads)
        self.with_pairs.append(maps)
        self._show_mode()
        return [heads, maps]

    def sections(self) -> list[Any]:
        s = self.state
        generate = pn.widgets.Button(name="Generate", button_type="primary", width=100)
        generate.on_click(self.generate)
        heads = pn.Column(
            "## Every head: what the maps show",
            pn.pane.Markdown(HELP["heads"]),
            sizing_mode="stretch_width",
        )
        pairs = self.pairs.panel()
        sample = pn.Column(
            "## Sample from the character model",
            pn.pane.Markdown(HELP["sample"]),
            pn.Row(self.prompt, self.temperature, generate),
            self.sample_out,
            sizing_mode="stretch_width",
        )
        self.decoder_only += [heads, sample]
        self.with_pairs.append(pairs)
        self._show_mode()
        self.formulas = pn.pane.Markdown(
            pn.bind(formulas_markdown, s.param.value_function, s.param.nhead),
            css_classes=["pyplay-attention-formulas"],
            sizing_mode="stretch_width",
        )
        return [
            heads,
            pairs,
            "## Self-attention in the lectures' notation",
            self.formulas,
            "## Positional encodings",
            pn.pane.Markdown(HELP["positions"]),
            self.pe_note,
            self.pe_panes,
            "## The cost of attention",
            pn.pane.Markdown(HELP["cost"]),
            pn.pane.Bokeh(self.cost_fig, sizing_mode="stretch_width"),
            self.cost_note,
            sample,
            self.embeddings.panel,
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
