"""The "Pointer networks" lesson: a pointer network sorts digits or finds the convex hull of points
in the plane; its pointing weights at every output step as a heatmap, the points with the true
and the predicted hull, and how often greedy decoding is right, all redrawn while it trains.

Rendering only: actions call :class:`~pyplay.ui.lessons.pointer.state.PointerLessonState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, LabelSet, Range1d
from bokeh.plotting import figure

from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.pointer.state import PointerLessonState, Pointing, Score
from pyplay.ui.plots import (
    attention_figure,
    keep_legend_samples,
    legend_outside,
    set_data,
    set_title,
    update_attention,
)
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["PointerLesson"]

TASK_HELP = {
    "sorting": "**Sorting**: the input is digits; the answer is their positions from the "
    "smallest digit to the largest (ties in input order).",
    "hull": "**Convex hull**: the input is points in the unit square, each read as (x, y, 0), "
    "then an END marker (0, 0, 1); the answer is the indices of the hull's corners, "
    "counter-clockwise from the lowest index, then a pointer at END (the hull's size depends "
    "on the points). The true hull is computed exactly (Andrew's monotone chain).",
}
TASKS = {"Sorting": "sorting", "Convex hull": "hull"}
CELLS = {"LSTM": "lstm", "GRU": "gru", "RNN": "rnn"}
SIZES = dict(hidden_size="Hidden size", min_len="Fewest digits / points",
             max_len="Most digits / points", batch_size="Batch size")  # fmt: skip
TRUE, PREDICTED = "#27ae60", "#d35400"


def hull_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource, ColumnDataSource]:
    """The points with their indices, the true hull (wide, pale) and the predicted one (dashed)
    in the unit square: the figure and its points', true hull's and predicted hull's sources."""
    points = ColumnDataSource({"x": [], "y": [], "label": []})
    true = ColumnDataSource({"x": [], "y": []})
    predicted = ColumnDataSource({"x": [], "y": []})
    fig = figure(
        height=340,
        width=470,
        title="The points and their hull",
        tools="save,reset",
        x_range=Range1d(-0.05, 1.05),
        y_range=Range1d(-0.05, 1.05),
        x_axis_label="x",
        y_axis_label="y",
    )
    legend_outside(fig)
    fig.line("x", "y", source=true, line_color=TRUE, line_width=5, line_alpha=0.5,
             legend_label="true hull")  # fmt: skip
    fig.line("x", "y", source=predicted, line_color=PREDICTED, line_width=2, line_dash="dashed",
             legend_label="predicted")  # fmt: skip
    dots = fig.scatter("x", "y", source=points, size=7, color="#2c3e50")
    fig.add_layout(
        LabelSet(x="x", y="y", text="label", source=points, x_offset=5, y_offset=3,
                 text_font_size="9pt")
    )  # fmt: skip
    fig.add_tools(
        HoverTool(renderers=[dots], tooltips=[("point", "@label"), ("x, y", "@x{0.00}, @y{0.00}")])
    )
    keep_legend_samples(fig)
    fig.toolbar.logo = None
    return fig, points, true, predicted


def _closed(points: np.ndarray, order: list[int]) -> dict[str, np.ndarray]:
    """The polygon through ``points[order]``, back to its first corner."""
    ring = [*order, order[0]] if order else []
    return {"x": points[ring, 0], "y": points[ring, 1]}


class PointerLesson(LessonView):
    """Builds the Pointer networks lesson around a :class:`PointerLessonState`."""

    state_class = PointerLessonState

    def build(self) -> None:
        self.map_fig, self.map_source = attention_figure(
            "Pointing weights softmax(uⁱ)", "input position j", "output step i",
            height=300, width=460, name="pointer-weights",
        )  # fmt: skip
        self.hull_fig, self.points_source, self.true_source, self.pred_source = hull_figure()
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=220)
        self.example.param.watch(lambda e: self.refresh(), "value")
        self.readout = Text("", css_classes=["pyplay-pointer-score"])
        self.answer = Text("", css_classes=["pyplay-pointer-answer"])
        self.task_help = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.hull_pane = pn.Column(pn.pane.Bokeh(self.hull_fig), margin=0)
        self.watch_version()

    # ------------------------------------------------------------------ looking inside
    def refresh(self, *_: Any) -> None:
        s = self.state
        self.task_help.object = TASK_HELP[s.task]
        decoded = s.decode()
        score, view = s.score(decoded), s.pointing(int(self.example.value or 0), decoded)
        if score is None or view is None:
            return
        self.readout.object = self._readout(score)
        self.answer.object = self._answer(view)
        steps = [f"{i + 1}: {view.inputs[p]}" for i, p in enumerate(view.predicted)]
        update_attention(self.map_fig, self.map_source, view.weights, view.inputs, steps)
        k = int(self.example.value or 0)
        set_title(self.map_fig, f"Pointing weights softmax(uⁱ), example {k}")
        self.hull_pane.visible = view.points is not None
        if view.points is not None:
            self._draw_hull(view, view.points)

    def _draw_hull(self, view: Pointing, points: np.ndarray) -> None:
        n = len(points)
        set_data(
            self.points_source,
            {"x": points[:, 0], "y": points[:, 1], "label": [str(i) for i in range(n)]},
        )
        set_data(self.true_source, _closed(points, [i for i in view.target if i < n]))
        set_data(self.pred_source, _closed(points, [i for i in view.predicted if i < n]))
        verdict = "right" if view.right else "wrong"
        set_title(
            self.hull_fig, f"Example {int(self.example.value or 0)}: predicted hull {verdict}"
        )

    @staticmethod
    def _readout(score: Score) -> str:
        return (
            f"Greedy decoding on {score.examples} fixed examples:\n"
            f"  exact match      {score.exact:.2f}  (the whole output right)\n"
            f"  pointer accuracy {score.pointer:.2f}  (output steps pointing at the target's "
            "position)"
        )

    @staticmethod
    def _answer(view: Pointing) -> str:
        verdict = "right" if view.right else "wrong"
        if view.values is not None:
            values = view.values
            return (
                f"input    : {' '.join(view.inputs)}\n"
                f"pointed  : {' '.join(str(p) for p in view.predicted)}   "
                f"(target {' '.join(str(p) for p in view.target)})\n"
                f"read out : {' '.join(str(values[p]) for p in view.predicted)}   ({verdict})"
            )
        named = [view.inputs[p] for p in view.predicted]
        want = [view.inputs[p] for p in view.target]
        return f"pointed  : {' '.join(named)}\ntarget   : {' '.join(want)}   ({verdict})"

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.RadioButtonGroup.from_param(s.param.task, name="Task", options=TASKS),
            pn.widgets.RadioButtonGroup.from_param(s.param.cell, name="Cell", options=CELLS),
            *int_sliders(s, **SIZES),
        ]

    def sections(self) -> list[Any]:
        return ["## Where it points: the task", self.task_help, self.readout]

    def inside(self) -> list[Any]:
        """The workbench's view: where the decoder points at each step, live."""
        return [
            self.example,
            self.answer,
            pn.Row(
                pn.Column(pn.pane.Bokeh(self.map_fig), css_classes=["pyplay-pointer-map"]),
                self.hull_pane,
                sizing_mode="stretch_width",
            ),
        ]
