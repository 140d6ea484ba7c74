"""The "RTRL and BPTT" sub-tab of the dynamic networks lesson: on the chapter's basic recurrent
network both gradients side by side (equal to rounding), gradient descent a step at a time,
and the two algorithms' costs (operations and memory) against T and S, counted by
:func:`pyplay.dynamic.rtrl.cost_figures`.

Rendering only: actions call :class:`~pyplay.ui.lessons.dynamic.rtrl_state.RTRLState`.
"""

from __future__ import annotations

from typing import Any

import panel as pn
from bokeh.models import ColumnDataSource, Span
from bokeh.plotting import figure

from pyplay.ui.lessons.dynamic.rtrl_state import COST_S, COST_T, RTRLState, cost_table
from pyplay.ui.lessons.dynamic.subtab import SubTabView
from pyplay.ui.plots import legend_outside, line_figure, set_data, watch_placeholder
from pyplay.ui.text import Text
from pyplay.ui.training import lr_input, seed_input

__all__ = ["RTRLView"]

COLUMNS = ("x", "bptt_ops", "rtrl_ops", "bptt_memory", "rtrl_memory")


def _cost_figure(title: str, x_label: str) -> tuple[figure, ColumnDataSource, Span]:
    fig = line_figure(
        title, x_label, "count (log scale)", height=260, log=True, box=((1, 2), (1, 10))
    )
    legend_outside(fig)
    source = ColumnDataSource({c: [] for c in COLUMNS})
    for column, colour, dash, label in (
        ("bptt_ops", "#2c6fbb", "solid", "BPTT operations"),
        ("rtrl_ops", "#c0392b", "solid", "RTRL operations"),
        ("bptt_memory", "#2c6fbb", "dashed", "BPTT memory"),
        ("rtrl_memory", "#c0392b", "dashed", "RTRL memory"),
    ):
        fig.line("x", column, source=source, color=colour, line_dash=dash, line_width=2,
                 legend_label=label)  # fmt: skip
    span = Span(dimension="height", line_color="#27ae60", line_width=1.5)
    fig.add_layout(span)
    watch_placeholder(fig, source)
    return fig, source, span


class RTRLView(SubTabView):
    """The sub-tab around an :class:`RTRLState`; ``panel()`` returns it."""

    state_class = RTRLState

    yield_s = 0.1  # a few steps a second: each one is shown
    live = False  # every slice redraws the gradients itself

    def build(self) -> None:
        self.t_fig, self.t_source, self.t_span = _cost_figure(
            "Cost of one gradient against the length T (S as set)", "sequence length T"
        )
        self.s_fig, self.s_source, self.s_span = _cost_figure(
            "Cost of one gradient against the hidden size S (T as set)", "hidden size S"
        )
        self.gradients = Text("", css_classes=["pyplay-rtrl-gradients"])
        self.costs = Text("", css_classes=["pyplay-rtrl-costs"])

    def redraw(self) -> None:
        """The gradients and the cost curves for the current T and S."""
        s = self.state
        T, S = int(s.seq_len), int(s.hidden_size)
        set_data(self.t_source, {"x": COST_T, **cost_table(COST_T, S)})
        set_data(self.s_source, {"x": COST_S, **cost_table(T, COST_S)})
        self.t_span.location, self.s_span.location = float(T), float(S)
        self.costs.object = s.costs_text()
        self._stream(None)

    def _stream(self, result: Any) -> None:
        self.gradients.object = self.state.gradients_text()

    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.IntSlider.from_param(s.param.hidden_size, name="Hidden size S"),
            pn.widgets.IntSlider.from_param(s.param.seq_len, name="Sequence length T"),
            lr_input(s),
            seed_input(s),
        ]

    def body(self) -> list[Any]:
        return [
            "### Both gradients",
            self.gradients,
            "### What each costs",
            self.costs,
            self.t_fig,
            self.s_fig,
        ]
