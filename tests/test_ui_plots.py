"""The shared plot components (issue 17, "plots a class can read"), without a browser: colour
bars, integer ticks, the log option, legends outside the data, labelled beam-tree nodes with a
hover only on them, placeholders that keep Bokeh's automatic ranges finite."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from bokeh.document import Document
from bokeh.models import (
    BasicTicker,
    ColorBar,
    FixedTicker,
    HoverTool,
    LabelSet,
    Legend,
    LogScale,
    LogTicker,
)

from pyplay.ui import plots
from pyplay.ui.plot_tree import BEAM_STATUSES


def placeholder_rows(fig) -> int:
    """2: the placeholder's box; 1: a point of the real data (it adds nothing to the ranges)."""
    (r,) = [r for r in fig.renderers if r.name == plots.PLACEHOLDER]
    assert not r.visible
    return len(r.data_source.data["x"])


def test_heatmap_has_a_colour_bar_integer_ticks_and_centred_cells():
    fig, source = plots.heatmap_figure("f", "forget gate f")
    bars = [obj for obj in fig.right if isinstance(obj, ColorBar)]
    assert len(bars) == 1 and (bars[0].color_mapper.low, bars[0].color_mapper.high) == (0, 1)
    for axis in (fig.xaxis[0], fig.yaxis[0]):
        assert isinstance(axis.ticker, BasicTicker) and axis.ticker.min_interval == 1
    plots.update_heatmap(fig, source, np.zeros((7, 3)), "f")  # (T, H)
    # cell (t, j) spans t-0.5..t+0.5: tick t in its middle
    assert source.data["x"] == [-0.5] and source.data["dw"] == [7] and source.data["dh"] == [3]
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 6.5)
    assert (fig.y_range.start, fig.y_range.end) == (-0.5, 2.5)
    (hover,) = fig.select(HoverTool)
    assert ("value", "@image{0.000}") in hover.tooltips


def test_unbounded_heatmap_is_symmetric_about_zero():
    fig, source = plots.heatmap_figure("c", "cell state c")
    plots.update_heatmap(fig, source, np.array([[0.5, -3.0]]), "c")
    mapper = fig.renderers[0].glyph.color_mapper
    assert (mapper.low, mapper.high) == (-3.0, 3.0)


def test_token_labels_sit_on_the_cells_they_name():
    fig, source = plots.attention_figure()
    w = np.full((2, 3), 1 / 3)  # (U, S)
    plots.update_attention(fig, source, w, ["a", "b", "c"], ["x"])
    assert isinstance(fig.xaxis[0].ticker, FixedTicker)
    assert fig.xaxis[0].ticker.ticks == [0, 1, 2]  # cell k is centred on k
    assert fig.xaxis[0].major_label_overrides == {0: "a", 1: "b", 2: "c"}
    assert fig.yaxis[0].major_label_overrides == {0: "x", 1: "<eos>"}
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 2.5)
    assert list(source.data["x"]) == [0, 1, 2, 0, 1, 2]
    assert any(isinstance(obj, ColorBar) for obj in fig.right)


def test_loss_is_on_a_log_scale_with_a_labelled_baseline_and_can_switch():
    fig, _source, baseline = plots.loss_figure()
    assert isinstance(fig.y_scale, LogScale) and isinstance(fig.yaxis[0].ticker, LogTicker)
    (legend,) = fig.legend
    assert legend in fig.right and legend not in fig.center  # outside the data
    labels = [item.label.value for item in legend.items]
    assert labels == ["training loss", "baseline (trivial predictor)"]
    key = legend.items[1].renderers[0]
    # Bokeh draws no legend sample for a renderer without rows (bokeh/bokeh#11193): the key
    # has one row, which draws nothing in the plot
    xs, ys = (key.data_source.data[key.glyph.x], key.data_source.data[key.glyph.y])
    assert len(xs) == 1 and np.isnan(xs[0]) and np.isnan(ys[0])
    baseline.visible = False  # a lesson without a baseline: no legend entry drawn either
    assert not key.visible
    plots.set_log(fig, False)
    assert not isinstance(fig.y_scale, LogScale)
    assert not isinstance(fig.yaxis[0].ticker, LogTicker)
    plots.set_log(fig, True)
    assert isinstance(fig.y_scale, LogScale)


def test_placeholder_keeps_ranges_finite_until_data_comes():
    fig, source, _ = plots.loss_figure()
    Document().add_root(fig)
    assert placeholder_rows(fig) == 2  # empty curve: the ranges fit the placeholder
    source.stream({"step": [3, 4], "loss": [0.5, 0.4]})
    assert placeholder_rows(fig) == 1  # real data: the placeholder is its first point
    (r,) = [r for r in fig.renderers if r.name == plots.PLACEHOLDER]
    assert r.data_source.data == {"x": [3.0], "y": [0.5]}
    source.data = {"step": [], "loss": []}
    assert placeholder_rows(fig) == 2
    grad, current, _compare = plots.gradient_figure()
    assert placeholder_rows(grad) == 2
    plots.set_data(current, {"t": np.arange(3), "norm": np.array([np.nan, 0.5, 1.0])})
    assert placeholder_rows(grad) == 1


def test_line_figures_have_integer_x_ticks_and_legends_outside():
    fig, _current, _ = plots.gradient_figure()
    assert fig.xaxis[0].ticker.min_interval == 1
    (legend,) = fig.legend
    assert legend in fig.right
    assert isinstance(fig.yaxis[0].ticker, LogTicker)
    assert np.isnan(plots.positive(np.array([0.0, 1e-3]))[0])  # a gap, not 1e-30


def test_beam_tree_nodes_show_their_tokens_and_only_they_have_a_hover():
    fig, nodes, _edges = plots.beam_tree_figure()
    (labels,) = fig.select(LabelSet)
    assert labels.text == "token" and labels.source is nodes
    (hover,) = fig.select(HoverTool)
    dots = hover.renderers
    assert len(dots) == 1 and dots[0].data_source is nodes  # edges have no "???" tooltips
    assert ("hypothesis", "@label") in hover.tooltips and ("score", "@score{0.000}") in (
        hover.tooltips
    )
    (legend,) = fig.select(Legend)
    assert legend in fig.right
    assert [item.label.value for item in legend.items] == list(BEAM_STATUSES)
    assert fig.xaxis[0].ticker.min_interval == 1 and fig.yaxis[0].ticker.min_interval == 1


def test_beam_stepper_tree_names_the_token_each_node_added():
    from pyplay.ui.lessons.seq2seq.state import Seq2SeqState

    state = Seq2SeqState()
    state.train(steps=5)
    beam = state.start_beam("abc", beam_width=2)
    assert beam is not None
    beam.step()
    beam.step()
    tree = beam.tree()
    assert tree.nodes["token"][0] == "<bos>"
    for label, token in zip(tree.nodes["label"][1:], tree.nodes["token"][1:], strict=True):
        assert token and (label.endswith(token) or token == "␣")
    _fig, nodes, edges = plots.beam_tree_figure()
    plots.update_beam_tree(nodes, edges, tree)
    assert nodes.data["token"] == tree.nodes["token"]
