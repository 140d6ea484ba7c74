"""The recurrent lesson's "Residual connections" section: one click trains the lesson's deep
stack without and with residual connections on the same batches and draws both learning
curves, and the norm of the gradient that reaches the first layer (rendering only: the work
is :class:`~pyplay.ui.lessons.rnn.residual.ResidualComparison`).

The comparison trains in slices through the section's
:class:`~pyplay.ui.session.TrainingSession`, so the page answers between slices, Pause stops
it, and the plots are redrawn live.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure

from pyplay.ui.comparison import ComparisonSection
from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.rnn.residual import COMPARE_STEPS, KINDS, ResidualComparison
from pyplay.ui.plots import (
    follow_log_ticks,
    keep_legend_samples,
    legend_outside,
    line_figure,
    set_data,
    set_log_ticks,
    set_title,
    watch_placeholder,
)
from pyplay.ui.text import Text
from pyplay.ui.workbench import until_drawn

__all__ = ["HELP", "ResidualSection", "comparison_figure"]

HELP = (
    f"{lecture('solberg')} names residual connections among the design of Google's neural "
    'machine translation system (GNMT, Wu et al. 2016): "plenty of residual connections in '
    "both encoder and decoder\". In GNMT's form each stacked layer after the first adds its "
    "input to its output, x⁽ˡ⁺¹⁾_t = cell_l(x⁽ˡ⁾_t, h⁽ˡ⁾_t₋₁) + x⁽ˡ⁾_t (the setting "
    "**Residual connections between layers**). Wu et al. report that plain stacked LSTMs "
    '"work well up to 4 layers, barely with 6 layers, and very poorly beyond 8 layers": '
    "the gradient reaching the lower layers through every layer above them fades, where the "
    "sums pass it down unchanged. **Compare** "
    f"trains this lesson's model twice for {COMPARE_STEPS} steps, on the same batches and "
    "from the same initial weights, without and with residual connections (its layers, "
    "cell, size, task, optimiser and seed; its models are its own, the lesson's model is "
    "left as it is). With 2 or 3 layers the two usually learn alike (Adam rescales even "
    "small gradients); with 6 layers, try the GRU with 16 units on the adding problem: the "
    "plain stack stays at the baseline while the residual one learns, and the gradient "
    "reaching its first layer is tens to hundreds of times larger."
)
COLOURS = {"plain": "#c0392b", "residual": "#2c6fbb"}


def comparison_figure(
    title: str, y_label: str, x_label: str = "training step"
) -> tuple[figure, ColumnDataSource]:
    """A log plot of one quantity of both stacks against the training step, with a legend
    beside the data."""
    source = ColumnDataSource({"step": np.zeros(0), **{k: np.zeros(0) for k in KINDS}})
    fig = line_figure(title, x_label, y_label, height=240, log=True, tools="save,reset")
    legend_outside(fig)
    lines: list[Any] = []
    for kind, label in KINDS.items():
        dash = "solid" if kind == "residual" else "dashed"
        style: dict[str, Any] = {"source": source, "color": COLOURS[kind], "legend_label": label}
        lines.append(fig.line("step", kind, line_width=2, line_dash=dash, **style))
    keep_legend_samples(fig)
    set_log_ticks(fig, 0.1, 1.0)  # the placeholder's box, then the data's
    follow_log_ticks(fig, source, x="step")
    tips = [("step", "@step"), ("plain", "@plain{0.0000}"), ("residual", "@residual{0.0000}")]
    fig.add_tools(HoverTool(renderers=lines, tooltips=tips))
    watch_placeholder(fig, source)
    return fig, source


class ResidualSection(ComparisonSection):
    """The section's buttons, progress line, setting and two plots around a
    :class:`ResidualComparison` (``state``, driven by the shared training loop)."""

    steps = COMPARE_STEPS
    title = "Residual connections between layers"  # the section's title

    def __init__(self, lesson: Any) -> None:
        super().__init__(lesson, ResidualComparison())
        self.loss_fig, self.loss_source = comparison_figure(
            "Loss of the plain and the residual stack", "loss (log)"
        )
        self.grad_fig, self.grad_source = comparison_figure(
            "Gradient reaching the first layer, ||∂L/∂θ⁽¹⁾||", "norm (log)"
        )
        self.progress = Text(self.state.progress(), css_classes=["pyplay-residual-progress"])
        self.setting = Text("", css_classes=["pyplay-residual-setting"])

    def shown(self) -> None:
        assert self.state.setting is not None
        self.setting.object = f"Setting: {self.state.setting.describe()}."
        self.after_training()

    def after_training(self) -> None:
        """Redraw both plots from the comparison's records."""
        s = self.state
        n = min(len(v) for v in s.losses.values())
        losses = {k: np.asarray(v[:n], dtype=np.float64) for k, v in s.losses.items()}
        set_data(self.loss_source, {"step": np.arange(1, n + 1), **losses})
        m = len(s.probes)
        grads = {k: np.asarray(v[:m], dtype=np.float64) for k, v in s.first_layer.items()}
        set_data(self.grad_source, {"step": np.asarray(s.probes), **grads})
        if s.setting is not None:
            layers = s.setting.model["num_layers"]
            set_title(self.loss_fig, f"Loss of {layers} layers, plain and residual")
        self.progress.object = s.message or s.progress()

    def panel(self) -> list[Any]:
        """The section's parts, for the lesson's column."""
        return self.section(
            self.title, HELP,
            until_drawn(
                pn.Column(
                    pn.pane.Bokeh(self.loss_fig, sizing_mode="stretch_width"),
                    pn.pane.Bokeh(self.grad_fig, sizing_mode="stretch_width"),
                    sizing_mode="stretch_width",
                ),
                [self.loss_source, self.grad_source],
                "*Compare* trains a plain and a residual stack side by side and draws their "
                "losses and the gradient reaching their first layer here.",
            ),
        )  # fmt: skip
