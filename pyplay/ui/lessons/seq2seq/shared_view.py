"""The Sequence to sequence lesson's "One shared RNN" section: one click trains an
encoder-decoder with separate encoder and decoder RNNs and one with a single shared RNN side
by side, on the same batches, and draws both learning curves live, their parameter counts in
the legend (rendering only: the work is
:class:`~pyplay.ui.lessons.seq2seq.shared.SharedComparison`, driven by the loop of
:class:`~pyplay.ui.lessons.seq2seq.by_length_view.LengthSection`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.core.properties import value

from pyplay.ui.comparison import ComparisonSection
from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.seq2seq.by_length import ComparisonSetting
from pyplay.ui.lessons.seq2seq.by_length_view import LengthSection
from pyplay.ui.lessons.seq2seq.shared import MODELS, SHARED_STEPS, SharedComparison
from pyplay.ui.plot_loss import LossPlot
from pyplay.ui.plots import legend_outside, set_data, set_title
from pyplay.ui.text import Text
from pyplay.ui.workbench import until_drawn

__all__ = ["HELP", "SharedSection"]

HELP = (
    f"{lecture('solberg')} draws two ways to compose an encoder-decoder: **separate** RNNs, one "
    "reading the source and another writing the target, and **one shared RNN** that reads "
    "the source and then simply goes on, writing the target with the same weights (its "
    "slides show both as figures; this is our reading of them). Sharing keeps the two "
    "embeddings and the output layer but has one recurrent stack instead of two: half the "
    "recurrent weights. **Train both** trains them for "
    f"{SHARED_STEPS} steps on the same batches, with this lesson's task (reversal or copy; "
    "otherwise reversal), training lengths, cell, hidden size, layers, wiring, attention "
    "score, learning rate, batch size and seed (both encoders read one way: a shared RNN "
    "cannot read backwards). What to expect: on copy and reversal both learn, the shared one "
    "with about half the recurrent parameters and a curve close to the separate one's, often "
    "a little behind at first, since the same weights must both summarise and write; the "
    "legend gives the parameter counts and the line below both models' exact match on fresh "
    "pairs once done. Where source and target are different languages the separate decoder "
    "has more room to specialise. Its models are its own: the lesson's model is left as it is."
)
SEPARATE_COLOUR, SHARED_COLOUR = "#c0392b", "#2c6fbb"


class SharedSection(LengthSection):
    """The section's buttons, progress line, setting and learning curves around a
    :class:`SharedComparison`."""

    steps = SHARED_STEPS
    button_names = ("Train both", "Pause both", "Continue both")

    def __init__(self, lesson: Any) -> None:
        ComparisonSection.__init__(self, lesson, SharedComparison())  # not the length plot
        self.plot = LossPlot()
        self.plot.baseline.visible = False
        self.plot.source.data = {"step": [], "loss": [], "shared": []}
        self.plot.source.name = "seq2seq-shared"  # the page's tests find the curves by it
        self.plot.style_curve(MODELS["separate"], SEPARATE_COLOUR)
        self.plot.add_curve("shared", MODELS["shared"], SHARED_COLOUR, line_dash="solid")
        for fig in self.plot.figures:
            set_title(fig, "Training loss: separate against shared RNN")
            legend = legend_outside(fig, "below")  # long labels: the plot keeps the width
            legend.orientation = "vertical"
            legend.items = legend.items[:2]  # no baseline here (its entry kept a blank row)
            fig.height = 340
        self.progress = Text(self.state.progress(), css_classes=["pyplay-shared-progress"])
        self.setting = Text("", css_classes=["pyplay-shared-setting"])

    def after_training(self) -> None:
        """Both learning curves as trained so far."""
        losses = self.state.losses
        if losses:
            n = min(len(v) for v in losses.values())
            set_data(
                self.plot.source,
                {
                    "step": np.arange(1, n + 1),
                    "loss": losses["separate"][:n],
                    "shared": losses["shared"][:n],
                },
            )
        self.progress.object = self.state.message or self.state.progress()

    def _show_setting(self, setting: ComparisonSetting) -> None:
        set_data(self.plot.source, {k: np.zeros(0) for k in self.plot.source.data})
        counts = self.state.parameters()
        for fig in self.plot.figures:
            items = fig.legend[0].items[:2]  # separate, shared (the hidden baseline last)
            for item, (key, (n, n_rnn)) in zip(items, counts.items(), strict=True):
                item.label = value(f"{MODELS[key]}: {n:,} parameters, {n_rnn:,} recurrent")
        self.setting.object = f"Setting: {setting.describe()}, wiring {setting.wiring}."

    def panel(self) -> list[Any]:
        """The section's parts, for the lesson's column."""
        return self.section(
            "One shared RNN or two",
            HELP,
            until_drawn(
                self.plot.panel(),
                [self.plot.source],
                "*Train both* trains a model with two RNNs and one with a shared RNN and draws "
                "their learning curves here.",
            ),
        )
