"""The loss plot every trained lesson shows (a part of :mod:`pyplay.ui.plots`): the training
loss against step, the task's trivial baseline as a labelled dashed line, and a switch between
a log and a linear y axis.

Bokeh cannot change a figure's y scale once the page has drawn it (bokeh/bokeh#11983), so the
plot is two figures, one log and one linear, reading the one data source, with the one baseline
(:attr:`LossPlot.baseline`; the linear figure's line follows it), and the switch shows one of
them. Until the learner picks a scale the plot follows the rule "log where the losses span
decades": a new model's curve starts on log (every lesson's loss falls by decades as it
learns), and a curve put in whole (a loaded model's, :meth:`LossPlot.fit_scale`) is shown on
log if its largest loss is :data:`AUTO_LOG_SPAN` times its smallest, linear otherwise. The
scale never changes by itself while the model trains: showing the other figure lays the
whole page out again, which took seconds in a page of seven lessons on a busy machine.

The log axis is labelled from the data (:func:`~pyplay.ui.plots.set_log_ticks`): 1-2-5 ticks
over a decade or two, read as "0.05" or "2×10⁻⁵", where Bokeh's own log ticker piles linear
ticks into the top decade. The baseline counts in the axes' range, so it stays in view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, HoverTool, LegendItem, LogScale, Span
from bokeh.plotting import figure

from pyplay.ui.plots import (
    legend_key,
    legend_outside,
    line_figure,
    positive_extent,
    set_log_ticks,
    watch_placeholder,
)

__all__ = [
    "AUTO_LOG_SPAN",
    "BASELINE_LABEL",
    "LossPlot",
    "loss_extent",
    "loss_figure",
]

AUTO_LOG_SPAN = 10.0  # largest / smallest loss of the curve from which log is the default
BASELINE_LABEL = "baseline (trivial predictor)"
BASELINE_STYLE: dict[str, Any] = {"line_dash": "dashed", "line_color": "#c0392b", "line_width": 1.5}
LOSS_COLOUR = "#2c6fbb"
SCALES = {"log scale": "log", "linear scale": "linear"}  # the switch: label -> scale
EMPTY_BOX = ((0.0, 1.0), (0.01, 1.0))  # the placeholder's box while the curve is empty
LOSS_HEIGHT = 260  # pixels; the workbench's loss curve is lower (LessonView.loss_height)
BEFORE_STYLE: dict[str, Any] = {"line_color": "#7f7f7f", "line_alpha": 0.55, "line_width": 2}


def loss_extent(source: ColumnDataSource, baseline: Span | None = None) -> tuple[float, float]:
    """(smallest, largest) positive finite loss in ``source`` (every column but "step"), and
    ``baseline``'s location if given and visible; (nan, nan) when there is none."""
    columns = [v for k, v in source.data.items() if k != "step"]
    if baseline is not None and baseline.visible and baseline.location is not None:
        columns.append([float(baseline.location)])
    return positive_extent(*columns)


def loss_figure(
    log: bool = True,
    source: ColumnDataSource | None = None,
    height: int = LOSS_HEIGHT,
    legend_inside: bool = False,
) -> tuple[figure, ColumnDataSource, Span]:
    """Training loss against step on a log (``log``) or linear y axis, from ``source`` (a new
    one with columns step and loss by default), ``height`` pixels high, with the trivial
    baseline as a dashed line whose legend entry names its value; the legend beside the plot,
    or (``legend_inside``) in its top right corner, where a falling loss leaves room and a
    phone's width does too. Returns the figure, the source and the baseline."""
    source = source if source is not None else ColumnDataSource({"step": [], "loss": []})
    fig = line_figure("Training loss", "step", "loss", log=log, box=EMPTY_BOX, height=height)
    line = fig.line("step", "loss", source=source, line_width=2, color=LOSS_COLOUR)
    baseline = Span(location=1.0, dimension="width", **BASELINE_STYLE)
    fig.add_layout(baseline)
    key = fig.line([np.nan], [np.nan], name="baseline-key", **BASELINE_STYLE)  # its legend sample
    # the baseline in the axes' range: one invisible point on it (NaN while it is hidden)
    reach = ColumnDataSource({"x": [0.0], "y": [np.nan]})
    fig.scatter("x", "y", source=reach, visible=False, name="baseline-range")
    legend = legend_outside(fig)
    if legend_inside:
        fig.right = [obj for obj in fig.right if obj is not legend]
        legend.update(location="top_right", background_fill_alpha=0.75)
        fig.add_layout(legend, "center")
    legend.items = [
        LegendItem(label="training loss", renderers=[line, legend_key(fig, line)]),
        LegendItem(label=BASELINE_LABEL, renderers=[key]),
    ]

    def follow(attr: str, old: Any, new: Any) -> None:
        steps = source.data.get("step", [])
        x = float(steps[0]) if len(steps) else 0.0
        y = float(baseline.location) if baseline.visible and baseline.location else np.nan
        if not np.array_equal([reach.data["x"][0], reach.data["y"][0]], [x, y], equal_nan=True):
            reach.data = {"x": [x], "y": [y]}
        if isinstance(fig.y_scale, LogScale):
            low, high = loss_extent(source, baseline)
            if not len(steps):  # no loss yet: the placeholder's box, with the baseline if shown
                low, high = np.fmin(low, EMPTY_BOX[1][0]), np.fmax(high, EMPTY_BOX[1][1])
            set_log_ticks(fig, low, high)

    def name_baseline(attr: str, old: Any, new: Any) -> None:
        named = BASELINE_LABEL if new is None else f"baseline {new:.4g} (trivial predictor)"
        legend.items[-1].label = value(named)

    def show_baseline(attr: str, old: Any, new: Any) -> None:  # the line and its legend entry
        key.visible = legend.items[-1].visible = new

    baseline.on_change("visible", show_baseline)
    baseline.on_change("location", name_baseline)
    for attr in ("location", "visible"):
        baseline.on_change(attr, follow)
    source.on_change("data", follow)
    watch_placeholder(fig, source)
    if log:
        set_log_ticks(fig, *EMPTY_BOX[1])
    fig.add_tools(
        HoverTool(
            tooltips=[("step", "@step"), ("loss", "@loss{0.0000}")], mode="vline", renderers=[line]
        )
    )
    return fig, source, baseline


class LossPlot:
    """The shared loss plot: a log and a linear :func:`loss_figure` over one source, and the
    switch (:attr:`scale`) that shows one of them.

    Parameters
    ----------
    log : bool or None
        The scale to show; None (the default): log once the curve spans
        :data:`AUTO_LOG_SPAN` (see :meth:`fit_scale`), until the learner picks one.
    height : int
        The figures' height in pixels.
    legend_inside : bool
        The legend in the plot's top right corner instead of beside it (the workbench's).

    Attributes
    ----------
    source : ColumnDataSource
        The curve (columns step, loss and any added with :meth:`add_curve`); stream into it.
    before : ColumnDataSource
        The previous model's curve (step, loss), drawn faded and labelled (:meth:`show_before`)
        after a setting built a new model, so the learner sees the difference; empty and out
        of the legend otherwise.
    baseline : Span
        The baseline: set its ``location`` and ``visible`` here, both figures show it.
    log_fig, linear_fig : figure
        The two figures.
    pane : pn.pane.Bokeh
        Shows one of them. The other is not in the page at all: a hidden figure still
        redrew on every training step, and each redraw laid the whole page out again.
    scale : pn.widgets.RadioButtonGroup
        The switch, valued "log" or "linear".
    """

    def __init__(
        self, log: bool | None = None, height: int = LOSS_HEIGHT, legend_inside: bool = False
    ) -> None:
        self.source = ColumnDataSource({"step": [], "loss": []})
        self.before = ColumnDataSource({"step": [], "loss": []})  # the run before a rebuild
        self.log_fig, _, self.baseline = loss_figure(True, self.source, height, legend_inside)
        self.linear_fig, _, self._linear_baseline = loss_figure(
            False, self.source, height, legend_inside
        )
        self._before_items = [self._before_line(fig) for fig in self.figures]
        for attr in ("location", "visible"):
            self.baseline.on_change(attr, self._mirror)
        self.scale = pn.widgets.RadioButtonGroup(
            name="y axis",
            options=SCALES,
            value="linear" if log is False else "log",
            button_type="primary",
            button_style="outline",
            width=200,
            height=30,
            margin=(0, 10, 5, 10),
            css_classes=["pyplay-loss-scale"],
        )
        self.pane = pn.pane.Bokeh(self.log_fig, sizing_mode="stretch_width")
        self.picked = log is not None  # the learner's (or the lesson's) pick holds
        self._following = False
        self.scale.param.watch(self._on_scale, "value")
        self._show(self.scale.value == "log")

    @property
    def figures(self) -> tuple[figure, figure]:
        """(log figure, linear figure)."""
        return self.log_fig, self.linear_fig

    @property
    def log(self) -> bool:
        """Whether the log figure is the one shown."""
        return self.pane.object is self.log_fig

    def spans_decades(self) -> bool:
        """Whether the curve's largest loss is at least :data:`AUTO_LOG_SPAN` times its
        smallest (positive) one."""
        low, high = loss_extent(self.source)
        return bool(np.isfinite(low) and high >= AUTO_LOG_SPAN * low)

    def add_curve(self, column: str, label: str, color: str, line_dash: str = "dotted") -> None:
        """Draw ``source[column]`` against step as a second curve named ``label`` on both
        figures (the column must be in the source's data)."""
        for fig in self.figures:
            line = fig.line(
                "step", column, source=self.source, line_width=2, color=color, line_dash=line_dash
            )
            legend = fig.legend[0]
            item = LegendItem(label=label, renderers=[line, legend_key(fig, line)])
            legend.items = [*legend.items[:-1], item, legend.items[-1]]  # the baseline last

    def style_curve(self, label: str, color: str = LOSS_COLOUR) -> None:
        """Name (and colour) the main curve, the loss column."""
        for fig in self.figures:
            item = fig.legend[0].items[0]
            assert isinstance(item, LegendItem)
            item.label = value(label)
            for r in item.renderers:
                r.glyph.update(line_color=color)

    def panel(self) -> pn.Column:
        """The two figures (one shown) and the switch under them."""
        return pn.Column(self.pane, self.scale, sizing_mode="stretch_width")

    def show_before(self, label: str, steps: list[float], losses: list[float]) -> None:
        """Draw the previous run (``steps``, ``losses``) faded, named ``label`` in the legend;
        an empty run clears it."""
        self.before.data = {"step": list(steps), "loss": list(losses)}
        for fig, item in zip(self.figures, self._before_items, strict=True):
            item.label = value(label)
            legend = fig.legend[0]
            items: list[Any] = [i for i in legend.items if i is not item]
            legend.items = [items[0], item, *items[1:]] if len(steps) else items

    def clear_before(self) -> None:
        """No previous run on the plot."""
        self.show_before("before", [], [])

    # ------------------------------------------------------------------ internals
    def _before_line(self, fig: figure) -> LegendItem:
        """The faded line of :attr:`before` on ``fig`` and its legend entry, which is in the
        legend only while the line has data (after the training loss's)."""
        line = fig.line("step", "loss", source=self.before, name="before-run", **BEFORE_STYLE)
        return LegendItem(label="before", renderers=[line, legend_key(fig, line)])

    def _mirror(self, attr: str, old: Any, new: Any) -> None:
        setattr(self._linear_baseline, attr, new)

    def _show(self, log: bool) -> None:
        fig = self.log_fig if log else self.linear_fig
        if self.pane.object is not fig:
            self.pane.object = fig
        want = "log" if log else "linear"
        if self.scale.value != want:
            self._following = True
            try:
                self.scale.value = want
            finally:
                self._following = False

    def _on_scale(self, event: Any) -> None:
        if not self._following:
            self.picked = True
        self._show(event.new == "log")

    def fit_scale(self) -> None:
        """After the curve was put in whole: unless a scale was picked, log if it spans
        decades (:meth:`spans_decades`) or is empty, linear otherwise."""
        if not self.picked:
            empty = not len(self.source.data.get("step", []))
            self._show(empty or self.spans_decades())
