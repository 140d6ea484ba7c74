"""Text alternatives for the plots (issue 36, "plots a screen reader can use"): what
:func:`pyplay.ui.plot_text.describe` says is read from the figure's own data, and
:class:`~pyplay.ui.plot_text.PlotTexts` keeps one text per group of plots, rewritten at a
modest rate while a model trains, and covers every plot of every lesson."""

from __future__ import annotations

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from bokeh.models import ColumnDataSource, LabelSet  # noqa: E402
from bokeh.plotting import figure  # noqa: E402
from bokeh.transform import linear_cmap  # noqa: E402

from pyplay.ui.lessons import LESSONS  # noqa: E402
from pyplay.ui.plot_describe import describe, number_text  # noqa: E402
from pyplay.ui.plot_maps import heatmap_figure, update_heatmap  # noqa: E402
from pyplay.ui.plot_text import RATE_S, PlotTexts  # noqa: E402
from pyplay.ui.plots import legend_key, placeholder  # noqa: E402


def test_a_line_says_its_name_and_newest_point_and_skips_nan_and_helpers():
    fig = figure(title="Loss", x_axis_label="step", y_axis_label="loss")
    source = ColumnDataSource({"step": [1, 2, 3, 4], "loss": [0.9, 0.5, 0.25, np.nan]})
    line = fig.line("step", "loss", source=source, legend_label="training loss")
    fig.scatter("step", "loss", source=source, legend_label="training loss")  # its markers
    legend_key(fig, line)
    placeholder(fig, (0, 1), (0, 1))
    assert describe(fig) == "Loss: training loss: 0.25 at step 3."
    source.stream({"step": [5], "loss": [0.125]})
    assert describe(fig) == "Loss: training loss: 0.125 at step 5."


def test_an_empty_figure_says_nothing_is_drawn_and_an_untitled_one_names_its_axes():
    fig = figure(x_axis_label="time step t", y_axis_label="a(t)")
    fig.line("x", "y", source=ColumnDataSource({"x": [], "y": []}))
    assert describe(fig) == "a(t) over time step t: nothing drawn yet."


def test_a_heatmap_says_its_size_range_and_where_its_largest_value_is():
    fig, source = heatmap_figure("h", "hidden state h_t")
    values = np.zeros((10, 4))  # (T, H)
    values[7, 2], values[1, 0] = 0.75, -0.5
    update_heatmap(fig, source, values, "h")
    text = describe(fig)
    assert text.startswith("hidden state h_t: a map of 4 by 10 cells")
    assert "values from -0.5 to 0.75" in text
    assert "the largest at time step t 7, unit 2" in text
    fig.yaxis[0].major_label_overrides = {2: "cat"}  # a token names its row
    assert "unit cat" in describe(fig)


def test_rect_cells_bars_and_labels_are_read_from_their_columns():
    fig = figure(title="Attention weights", x_axis_label="source", y_axis_label="output")
    cells = ColumnDataSource({"x": [0, 1, 0, 1], "y": [0, 0, 1, 1], "w": [0.1, 0.9, 0.6, 0.4]})
    fig.rect("x", "y", 1, 1, source=cells, fill_color=linear_cmap("w", "Viridis256", 0, 1))
    assert "a map of 4 cells: values from 0.1 to 0.9, the largest at source 1, output 0" in (
        describe(fig)
    )
    bars = figure(title="Counts", x_axis_label="length")
    bars.vbar(x="x", top="top", width=0.8, source=ColumnDataSource({"x": [3, 4], "top": [2, 7]}))
    assert describe(bars) == "Counts: 2 bars, the tallest 7 at length 4."
    drawing = figure()
    names = ColumnDataSource({"x": [0, 1], "y": [0, 0], "label": ["IW¹˒¹", "LW¹˒¹"]})
    drawing.add_layout(LabelSet(x="x", y="y", text="label", source=names))
    assert describe(drawing) == "A drawing: labels IW¹˒¹, LW¹˒¹."


def _page(source: ColumnDataSource) -> tuple[pn.Column, pn.Column]:
    fig = figure(title="Loss", x_axis_label="step")
    fig.line("step", "loss", source=source, legend_label="loss")
    views = pn.Column(pn.pane.Bokeh(fig), css_classes=["pyplay-bench-views"])
    other = figure(title="Map")
    other.line("step", "loss", source=ColumnDataSource({"step": [0], "loss": [1.0]}))
    closed = pn.Column(pn.pane.Bokeh(other), visible=False, css_classes=["pyplay-section-body"])
    return pn.Column(views, closed), closed


def test_while_training_a_text_is_rewritten_at_most_every_rate_s_and_at_once_otherwise():
    source = ColumnDataSource({"step": [1], "loss": [1.0]})
    page, closed = _page(source)
    now, busy = [100.0], [True]
    texts = PlotTexts([page.objects[0], closed], busy=lambda: busy[0], clock=lambda: now[0])
    first = texts.texts[0]
    assert first.css_classes == ["pyplay-plot-text"] and first in page.objects[0].objects
    assert first.object == "Loss: loss: 1 at step 1."
    source.stream({"step": [2], "loss": [0.5]})
    assert first.object.endswith("1 at step 1."), "within RATE_S of the last text: kept"
    now[0] += RATE_S
    source.stream({"step": [3], "loss": [0.25]})
    assert first.object == "Loss: loss: 0.25 at step 3."
    busy[0] = False  # paused: the redraw after it is described at once
    source.stream({"step": [4], "loss": [0.125]})
    assert first.object == "Loss: loss: 0.125 at step 4."
    assert texts.texts[1].object == "", "a closed section is not described"
    closed.visible = True
    assert texts.texts[1].object == "Map: loss: 1 at 0."  # no x-axis label: the number


@pytest.mark.slow
@pytest.mark.parametrize("spec", LESSONS, ids=[s.key for s in LESSONS])
def test_every_plot_of_every_lesson_has_a_text_alternative_with_its_newest_loss(spec):
    view = spec.view_class()()
    page = view.panel()
    pages = getattr(view, "_pages", None) or [page]
    holders = [view, *getattr(view, "parts", {}).values()]
    covered = {id(p) for h in holders for group in h.plot_texts._figures for p in group}
    plots = [p for pg in pages for p in pg.select(pn.pane.Bokeh) if hasattr(p.object, "renderers")]
    assert plots and all(id(p) in covered for p in plots), spec.key
    loss = getattr(view, "loss_source", None)
    if loss is None or not hasattr(view.state, "task_obj"):
        return  # a sub-lesson without a training loss curve
    view.session.step()
    view.session.step()
    steps, losses = loss.data["step"], loss.data["loss"]
    assert f"{number_text(losses[-1])} at step {steps[-1]}" in view.plot_texts.texts[0].object
