"""The Sequence to sequence lesson's "Attention and long sentences" section: one click trains
a plain and an attention encoder-decoder side by side and plots exact match against source
length for both, the training range shaded (rendering only: the work is
:class:`~pyplay.ui.lessons.seq2seq.by_length.LengthComparison`).

The comparison trains in slices through the section's
:class:`~pyplay.ui.session.TrainingSession`, so the page answers between slices, Pause stops
it, and the plot is redrawn live (at most as often as that loop's live redraws allow).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import BoxAnnotation, ColumnDataSource, HoverTool, Label, Range1d
from bokeh.plotting import figure

from pyplay.ui.comparison import ComparisonSection
from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.seq2seq.by_length import (
    COMPARE_STEPS,
    EVAL_PAIRS,
    WIRINGS,
    ComparisonSetting,
    LengthComparison,
)
from pyplay.ui.plots import keep_legend_samples, legend_outside, line_figure, set_data, set_title
from pyplay.ui.text import Text
from pyplay.ui.workbench import until_drawn

__all__ = ["HELP", "LengthSection", "length_figure"]

HELP = (
    "Without attention the encoder must squeeze the whole source into one fixed-size vector, "
    "its final state, and the decoder writes the target from that alone; the longer the "
    "source, the more of it that summary loses. With attention the decoder keeps every "
    "encoder state at hand and looks up the one it needs at each step (Bahdanau, Cho and "
    "Bengio 2015, whose figure 2 shows a plain model's score falling with sentence length "
    f"while an attention model's holds; {lecture('wand')} makes the same point: the source "
    '"must be encoded in a fixed-size vector"). **Compare** trains a plain encoder-decoder '
    "(wiring *init*, Sutskever) and "
    f"an attention one (*Luong*) for {COMPARE_STEPS} steps each, on the same batches, with "
    "this lesson's task (reversal or copy; otherwise reversal), training lengths, cell, "
    "hidden size, layers, attention score, learning rate, batch size and seed; then it decodes "
    f"{EVAL_PAIRS} fresh sources of every length from the shortest training length to twice "
    "the longest and plots the share decoded exactly right. The shaded band is the range "
    "of lengths the models were trained on. Its models are its own: the lesson's model is "
    "left as it is. Watch the plain model fall long before the end of the band while the "
    "attention model holds; past the band both soon fail: neither decoder has ever written "
    "more tokens than the longest training target, so neither knows how to go on."
)
PLAIN_COLOUR, ATTENTION_COLOUR = "#c0392b", "#2c6fbb"


def length_figure() -> tuple[figure, ColumnDataSource, BoxAnnotation, Label]:
    """Exact match (0..1) against source length for the plain and the attention model, the
    training range as a shaded band with its label; per-token accuracy in the hover."""
    source = ColumnDataSource(
        {k: np.zeros(0) for k in ("length", "init", "attention", "init_tok", "attention_tok")},
        name="seq2seq-bylength",
    )
    fig = line_figure(
        "Exact match by source length", "source length", "exact match",
        height=300, tools="save", box=((1.0, 20.0), (0.0, 1.0)),
    )  # fmt: skip
    fig.y_range = Range1d(-0.02, 1.16)  # room above 1 for the band's label
    fig.x_range = Range1d(0.5, 20.5)
    band = BoxAnnotation(left=2.5, right=10.5, fill_color="#888888", fill_alpha=0.15)
    fig.add_layout(band)
    label = Label(
        x=2.6, y=1.04, text="training lengths", text_font_size="9pt", text_color="#555555"
    )
    fig.add_layout(label)
    legend_outside(fig, "below")
    lines: list[Any] = []
    for key, colour, marker in (
        ("init", PLAIN_COLOUR, "square"),
        ("attention", ATTENTION_COLOUR, "circle"),
    ):
        style: dict[str, Any] = {"source": source, "color": colour, "legend_label": WIRINGS[key]}
        lines.append(fig.line("length", key, line_width=2, **style))
        fig.scatter("length", key, size=6, marker=marker, **style)
    keep_legend_samples(fig)
    fig.add_tools(
        HoverTool(
            renderers=lines,
            tooltips=[
                ("length", "@length"),
                ("exact match: plain", "@init{0.00}"),
                ("attention", "@attention{0.00}"),
                ("tokens right: plain", "@init_tok{0.00}"),
                ("attention", "@attention_tok{0.00}"),
            ],
        )
    )
    return fig, source, band, label


class LengthSection(ComparisonSection):
    """The section's buttons, progress line, setting and plot around a
    :class:`LengthComparison` (``state``, driven by the shared training loop)."""

    steps = COMPARE_STEPS  # each model's training steps

    def __init__(self, lesson: Any) -> None:
        super().__init__(lesson, LengthComparison())
        self.fig, self.source, self.band, self.label = length_figure()
        self.progress = Text(self.state.progress(), css_classes=["pyplay-bylength-progress"])
        self.setting = Text("", css_classes=["pyplay-bylength-setting"])

    def shown(self) -> None:
        assert self.state.setting is not None
        self._show_setting(self.state.setting)

    # ------------------------------------------------------------------ the session's hooks
    def after_training(self) -> None:
        """Evaluate both models by length now and redraw the plot."""
        curves = self.state.curves()
        if curves:
            plain, attention = curves["init"], curves["attention"]
            set_data(
                self.source,
                {
                    "length": plain.lengths,
                    "init": plain.exact_match,
                    "attention": attention.exact_match,
                    "init_tok": plain.token_accuracy,
                    "attention_tok": attention.token_accuracy,
                },
            )
            set_title(self.fig, f"Exact match by source length after {self.state.step_count} steps")
        self.progress.object = self.state.message or self.state.progress()

    def _show_setting(self, setting: ComparisonSetting) -> None:
        lengths = setting.lengths
        self.fig.x_range.update(start=lengths.start - 0.5, end=lengths.stop - 0.5)
        self.band.update(left=setting.min_len - 0.5, right=setting.max_len + 0.5)
        self.label.update(x=setting.min_len - 0.4, text=f"trained on {setting.min_len}-"
                          f"{setting.max_len}")  # fmt: skip
        set_data(self.source, {k: np.zeros(0) for k in self.source.data})
        self.setting.object = f"Setting: {setting.describe()}."

    # ------------------------------------------------------------------ layout
    def panel(self) -> list[Any]:
        """The section's parts, for the lesson's column."""
        return self.section(
            "Attention and long sentences", HELP,
            until_drawn(
                pn.pane.Bokeh(self.fig, sizing_mode="stretch_width"),
                [self.source],
                "*Compare* trains a model without and one with attention and draws here how "
                "often each translates a sentence exactly, by its length.",
            ),
        )  # fmt: skip
