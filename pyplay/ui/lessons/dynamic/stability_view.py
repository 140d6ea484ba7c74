"""The "Stability and memory" sub-tab of the dynamic networks lesson: the eigenvalues of
LW¹˒¹ drawn with the unit circle, beside the impulse response a¹(t) and the gradient through
time ∂F/∂a¹(t); the radius slider moves the eigenvalues out of the circle and the response
explodes. Run / Step move a cursor along the time axis.

Rendering only: the numbers come from
:class:`~pyplay.ui.lessons.dynamic.stability_state.StabilityState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Range1d, Span
from bokeh.plotting import figure

from pyplay.ui.lessons.dynamic.stability_state import StabilityState
from pyplay.ui.lessons.dynamic.subtab import SubTabView
from pyplay.ui.plots import legend_outside, line_figure, positive, set_data, watch_placeholder
from pyplay.ui.text import Text

__all__ = ["StabilityView"]

STATE_COLOURS = ("#2c6fbb", "#e67e22")


def _eigen_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    fig = figure(
        width=300, height=300, title="Eigenvalues of LW¹˒¹", tools="save",
        x_range=Range1d(-1.5, 1.5), y_range=Range1d(-1.5, 1.5),
        x_axis_label="Re λ", y_axis_label="Im λ",
    )  # fmt: skip
    phi = np.linspace(0.0, 2.0 * np.pi, 181)
    fig.line(np.cos(phi), np.sin(phi), color="#7f8c8d", line_width=1.5)  # the unit circle
    radius = ColumnDataSource({"x": [], "y": []})
    fig.line("x", "y", source=radius, color="#c0392b", line_dash="dotted", line_width=1.5)
    eig = ColumnDataSource({"re": [], "im": []})
    fig.scatter("re", "im", source=eig, size=11, color="#c0392b", line_color="black")
    return fig, eig, radius


def _time_figures() -> tuple[figure, figure, ColumnDataSource, list[Span]]:
    source = ColumnDataSource({c: [] for c in ("t", "a1", "a2", "norm_a", "norm_g", "ra", "rg")})
    response = line_figure(
        "Impulse response a¹(t)", "time step t", "a¹(t)", height=240, box=((1, 2), (-1, 1))
    )
    legend_outside(response)
    for i, colour in enumerate(STATE_COLOURS):
        response.line("t", f"a{i + 1}", source=source, color=colour, line_width=2,
                      legend_label=f"a¹{'₁₂'[i]}(t)")  # fmt: skip
    memory = line_figure(
        "Memory: ‖a¹(t)‖ and ‖∂F/∂a¹(t)‖ (log scale)", "time step t", "norm",
        height=260, log=True, box=((1, 2), (0.1, 1)),
    )  # fmt: skip
    legend_outside(memory)
    memory.line("t", "norm_a", source=source, color="#2c6fbb", line_width=2,
                legend_label="‖a¹(t)‖")  # fmt: skip
    memory.line("t", "ra", source=source, color="#2c6fbb", line_dash="dashed",
                legend_label="ρ^(t−1)")  # fmt: skip
    memory.line("t", "norm_g", source=source, color="#c0392b", line_width=2,
                legend_label="‖∂F/∂a¹(t)‖")  # fmt: skip
    memory.line("t", "rg", source=source, color="#c0392b", line_dash="dashed",
                legend_label="ρ^(T−t)")  # fmt: skip
    spans = []
    for fig in (response, memory):
        watch_placeholder(fig, source)
        span = Span(dimension="height", line_color="#27ae60", line_width=2, visible=False)
        fig.add_layout(span)
        spans.append(span)
    return response, memory, source, spans


class StabilityView(SubTabView):
    """The sub-tab around a :class:`StabilityState`; ``panel()`` returns it."""

    state_class = StabilityState

    yield_s = 0.12  # Run plays the cursor at about eight steps a second
    live = False  # nothing to redraw but the cursor, which each slice moves

    def build(self) -> None:
        self.eigen_fig, self.eigen_source, self.radius_source = _eigen_figure()
        self.response_fig, self.memory_fig, self.source, self.spans = _time_figures()
        self.verdict = Text("", css_classes=["pyplay-stability-text"])

    def redraw(self) -> None:
        """The eigenvalues, the response and the gradient from the state."""
        m = self.state.memory
        set_data(self.eigen_source, {"re": m.lam.real.copy(), "im": m.lam.imag.copy()})
        phi = np.linspace(0.0, 2.0 * np.pi, 181)
        set_data(self.radius_source, {"x": m.rho * np.cos(phi), "y": m.rho * np.sin(phi)})
        T = m.t.size
        with np.errstate(over="ignore", invalid="ignore"):
            ra = m.rho ** (m.t - 1.0)  # (T,)
            rg = m.rho ** (T - m.t.astype(np.float64))  # (T,)
        set_data(
            self.source,
            {
                "t": m.t,
                "a1": m.a[:, 0],
                "a2": m.a[:, 1],
                "norm_a": positive(np.linalg.norm(m.a, axis=1)),
                "norm_g": positive(np.linalg.norm(m.grad, axis=1)),
                "ra": positive(ra),
                "rg": positive(rg),
            },
        )
        self.verdict.object = self.state.verdict()
        self._cursor()

    def _cursor(self) -> None:
        for span in self.spans:
            span.visible = self.state.cursor > 0
            span.location = float(self.state.cursor)

    def _stream(self, result: Any) -> None:
        self._cursor()

    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.FloatSlider.from_param(
                s.param.radius, name="Spectral radius ρ = |λ|", step=0.01
            ),
            pn.widgets.FloatSlider.from_param(s.param.angle, name="Angle θ (degrees)", step=5),
            pn.widgets.IntSlider.from_param(s.param.steps, name="Steps T"),
            pn.widgets.RadioButtonGroup.from_param(s.param.transfer, name="Transfer"),
        ]

    def controls_below(self) -> list[Any]:
        return [pn.pane.Bokeh(self.eigen_fig)]

    def header_extra(self) -> list[Any]:
        return [self.verdict]

    def body(self) -> list[Any]:
        return [self.response_fig, self.memory_fig]
