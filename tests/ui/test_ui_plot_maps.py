"""The heatmaps' axes between redraws: a redraw changes the ticks of the ticker the axis has,
and adds no model to the page's document (a new model per redraw made the page walk every
model of its document again: over a second per live redraw of the recursive lesson)."""

from __future__ import annotations

from bokeh.document import Document
from bokeh.models import FixedTicker

from pyplay.ui.plot_maps import fixed_ticks, heatmap_figure, label_axis


def test_label_axis_keeps_its_ticker_and_the_document_its_models():
    fig, _ = heatmap_figure("h", "states")
    doc = Document()
    doc.add_root(fig)
    axis = fig.xaxis[0]
    label_axis(axis, ["a", "b", "c"])
    ticker = axis.ticker
    count = len(list(doc.models))
    label_axis(axis, ["x", "y"])
    assert axis.ticker is ticker and isinstance(ticker, FixedTicker)
    assert list(ticker.ticks) == [0, 1]
    assert axis.major_label_overrides == {0: "x", 1: "y"}
    assert len(list(doc.models)) == count


def test_fixed_ticks_replaces_a_ticker_of_another_kind_once():
    fig, _ = heatmap_figure("h", "states")
    axis = fig.yaxis[0]
    assert not isinstance(axis.ticker, FixedTicker)  # integer ticks until labelled
    fixed_ticks(axis, [0.5, 2.5])
    first = axis.ticker
    fixed_ticks(axis, [1.0])
    assert axis.ticker is first and list(first.ticks) == [1.0]
