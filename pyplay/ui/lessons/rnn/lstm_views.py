"""The LSTM's variants in the "Recurrent networks" lesson: their controls, and the truncated
gradient through the constant error carousel beside the true one.

Lecture 8 of an NLP course ("Variations of the LSTM", "LSTM Training"): the original LSTM
had no forget gate; peepholes let the gates see the cell state; the forget gate's bias is best
initialised to 1 or more; and the original LSTM was trained with an approximate gradient that
flows back in time through the CEC only. Rendering only: the settings are
:class:`~pyplay.ui.lessons.rnn.state.LessonState`'s parameters (in the address and the lesson's
files through its spec), the gradients its :meth:`~LessonState.gradient_pair`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure

from pyplay.ui.lessons.rnn.state import GradientPair, LessonState
from pyplay.ui.plots import legend_outside, line_figure, positive, set_data, watch_placeholder
from pyplay.ui.training import typed_number

__all__ = ["CECView", "cec_figure", "lstm_controls"]

HELP = (
    "**True vs CEC-only gradient (LSTM).** Hochreiter & Schmidhuber trained the first LSTM "
    "with an approximate gradient: error flows back in time only through the cell state `c` "
    "(the constant error carousel); the paths through `h(t-1)` into the gates and the cell "
    "input are cut. The plot shows how much gradient reaches the input at each step, "
    "`||dL/dx_t||`, both ways; the line under it compares the two gradients of all the "
    "LSTM's weights."
)


def lstm_controls(state: LessonState) -> pn.Column:
    """Forget gate, peepholes and the forget gate's initial bias; shown for the LSTM only, the
    bias greyed out without a forget gate."""
    forget = pn.widgets.Checkbox.from_param(
        state.param.forget_gate, name="Forget gate (off: the 1997 LSTM)"
    )
    peephole = pn.widgets.Checkbox.from_param(state.param.peephole, name="Peepholes")
    bias = typed_number(state.param.forget_bias, "Forget-gate bias at start (1+ helps)")
    column = pn.Column(forget, peephole, bias, sizing_mode="stretch_width", name="LSTM variant")

    def follow(*_: Any) -> None:
        column.visible = state.cell == "lstm"
        bias.disabled = not state.forget_gate

    state.param.watch(follow, ["cell", "forget_gate"])
    follow()
    return column


def cec_figure() -> tuple[figure, ColumnDataSource]:
    """||dL/dx_t|| against t on a log scale: the true gradient and the CEC-only one."""
    source = ColumnDataSource({"t": [], "full": [], "cec": []})
    fig = line_figure(
        "LSTM: true vs CEC-only gradient, ||dL/dx_t||", "time step t", "norm (log)", log=True
    )
    legend_outside(fig)
    full = fig.line("t", "full", source=source, line_width=2, color="#2c6fbb",
                    legend_label="true (BPTT)")  # fmt: skip
    cec = fig.line("t", "cec", source=source, line_width=2, color="#d35400", line_dash="dashed",
                   legend_label="CEC only")  # fmt: skip
    fig.scatter("t", "cec", source=source, size=4, color="#d35400", legend_label="CEC only")
    fig.add_tools(HoverTool(tooltips=[("t", "@t"), ("norm", "$y{0.000e}")], renderers=[full, cec]))
    watch_placeholder(fig, source)
    return fig, source


def summary(pair: GradientPair) -> str:
    """The line under the plot: how close the truncated gradient is to the true one."""
    if math.isnan(pair.cosine):
        return "The gradient is zero on this example: nothing to compare."
    return (
        f"All weights: cosine between the CEC-only and the true gradient {pair.cosine:.3f}, "
        f"norm ratio {pair.ratio:.3f}."
    )


class CECView:
    """The heading, help, plot and summary line of the comparison; ``panel`` is visible only
    while the model is an LSTM."""

    def __init__(self, state: LessonState) -> None:
        self.state = state
        self.fig, self.source = cec_figure()
        self.line = pn.pane.Markdown("", name="cec-summary", css_classes=["pyplay-cec-summary"])
        self.panel = pn.Column(
            pn.pane.Markdown(HELP),
            pn.pane.Bokeh(self.fig, sizing_mode="stretch_width"),
            self.line,
            sizing_mode="stretch_width",
            visible=False,
        )

    def refresh(self, index: int) -> None:
        """Redraw for the current model and example (hidden when it is not an LSTM)."""
        try:
            pair = self.state.gradient_pair(index)
        except (ValueError, TypeError, FloatingPointError) as err:
            self.state.notify(f"Could not compare the gradients: {err}", "warning")
            return
        self.panel.visible = pair is not None
        if pair is None:
            return
        t = np.arange(len(pair.full))
        set_data(self.source, {"t": t, "full": positive(pair.full), "cec": positive(pair.cec)})
        self.line.object = summary(pair)
