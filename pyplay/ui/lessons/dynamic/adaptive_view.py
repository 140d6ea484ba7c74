"""The "Adaptive filter" sub-tab of the dynamic networks lesson: lecture 8's tapped delay line
and linear neuron, its weights adapting by LMS while the noise-cancellation signal streams,
the weight trajectory beside the Wiener solution and the error beside the clean signal drawn
live; Run / Pause / Step / Reset as in the rest of the page (one step is one sample), and the
learning rate against the LMS stability bound 1/λmax(R).

Rendering only: actions call :class:`~pyplay.ui.lessons.dynamic.adaptive_state.AdaptiveFilterState`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import panel as pn
from bokeh.models import ColumnDataSource, Span
from bokeh.plotting import figure

from pyplay.dynamic.adaptive import LMSRecord
from pyplay.ui.lessons.dynamic.adaptive_state import (
    MAX_TAPS,
    SAMPLES,
    AdaptiveFilterState,
    records_columns,
)
from pyplay.ui.lessons.dynamic.subtab import SubTabView
from pyplay.ui.plots import legend_outside, line_figure, set_data, watch_placeholder
from pyplay.ui.text import Text
from pyplay.ui.training import seed_input

__all__ = ["AdaptiveFilterView"]

COLOURS = ("#2c6fbb", "#e67e22")


def _sample_figure(title: str, y_label: str, y_half: float) -> figure:
    """A figure over the samples k (its empty box: k in 1..2, y within +-``y_half``), 250 px
    high, its legend beside the plot."""
    fig = line_figure(title, "sample k", y_label, height=250, box=((1.0, 2.0), (-y_half, y_half)))
    legend_outside(fig)
    return fig


def _weights_figure() -> tuple[figure, ColumnDataSource, list[Any], list[Span]]:
    fig = _sample_figure("Weights W(k) (dashed: the Wiener solution x*)", "weight", 0.2)
    source = ColumnDataSource({c: [] for c in ("k", "w1", "w2", "e", "s", "a")})
    lines, spans = [], []
    for i, colour in enumerate(COLOURS[:MAX_TAPS]):
        lines.append(
            fig.line(
                "k",
                f"w{i + 1}",
                source=source,
                color=colour,
                line_width=2,
                legend_label=f"w₁,{i + 1}(k)",
            )
        )
        span = Span(dimension="width", line_dash="dashed", line_color=colour, line_width=1.5)
        fig.add_layout(span)
        spans.append(span)
    watch_placeholder(fig, source)
    return fig, source, lines, spans


def _error_figure(source: ColumnDataSource) -> figure:
    fig = _sample_figure(
        "Error e(k), the restored signal, beside the clean signal s(k)", "value", 0.4
    )
    fig.line("k", "s", source=source, color="#95a5a6", line_width=1.5, legend_label="signal s(k)")
    fig.line("k", "e", source=source, color="#c0392b", line_width=1.5, legend_label="error e(k)")
    watch_placeholder(fig, source)
    return fig


class AdaptiveFilterView(SubTabView):
    """The sub-tab around an :class:`AdaptiveFilterState`; ``panel()`` returns it."""

    state_class = AdaptiveFilterState
    prose_values: ClassVar[dict[str, int]] = {"SAMPLES": SAMPLES, "MAX_TAPS": MAX_TAPS}

    yield_s = 0.03  # a few samples per slice: the plots follow sample by sample
    refresh_interval_s = 0.5

    def build(self) -> None:
        self.weights_fig, self.source, self.weight_lines, self.spans = _weights_figure()
        self.error_fig = _error_figure(self.source)
        self.bound = Text("", css_classes=["pyplay-adaptive-bound"])

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
        """Everything from the state: after a reset, the columns streamed so far."""
        s = self.state
        set_data(self.source, s.arrays())
        for i, (line, span) in enumerate(zip(self.weight_lines, self.spans, strict=True)):
            shown = i < s.n_taps
            line.visible = span.visible = shown
            span.location = float(s.wiener[i]) if shown else 0.0
        self._show_bound()

    def _show_bound(self) -> None:
        self.bound.object = self.state.bound_text()

    def _stream(self, records: list[LMSRecord]) -> None:
        if records:
            s = self.state
            self.source.stream(records_columns(records, s.signal.s, s.n_taps), rollover=SAMPLES)

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.FloatSlider.from_param(
                s.param.lr, name="Learning rate α", start=0.005, end=1.5, step=0.005
            ),
            pn.widgets.IntSlider.from_param(s.param.n_taps, name="Taps R"),
            seed_input(s),
        ]

    def controls_below(self) -> list[Any]:
        return [pn.pane.Markdown("A new α, R or seed restarts the filter from W = 0.")]

    def header_extra(self) -> list[Any]:
        return [self.bound]

    def body(self) -> list[Any]:
        return [self.weights_fig, self.error_fig]
