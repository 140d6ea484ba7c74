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
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LabelSet,
    Legend,
    LogScale,
    LogTicker,
    Span,
)

from pyplay.ui import plot_describe, plot_loss, plots
from pyplay.ui.plot_log_axis import LOG_LABEL_CHARS
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
    fig, _source, baseline = plot_loss.loss_figure()
    # Bokeh's LogTicker piles linear ticks into the top decade under two decades: the log
    # axis has ticks computed from the data, each with its label
    ticker = fig.yaxis[0].ticker
    assert isinstance(fig.y_scale, LogScale) and isinstance(ticker, FixedTicker)
    assert set(fig.yaxis[0].major_label_overrides) == set(ticker.ticks)
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
    assert not key.visible and not legend.items[1].visible  # Bokeh lists invisible renderers
    baseline.visible = True
    assert key.visible and legend.items[1].visible
    baseline.visible = False
    plots.set_log(fig, False)
    assert not isinstance(fig.y_scale, LogScale)
    assert not isinstance(fig.yaxis[0].ticker, LogTicker)
    plots.set_log(fig, True)
    assert isinstance(fig.y_scale, LogScale)


def test_placeholder_keeps_ranges_finite_until_data_comes():
    fig, source, _ = plot_loss.loss_figure()
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
    fig, current, _ = plots.gradient_figure()
    assert fig.xaxis[0].ticker.min_interval == 1
    (legend,) = fig.legend
    assert legend in fig.right
    # log ticks from the data, each labelled (LogTicker piles them into the top decade)
    axis = fig.yaxis[0]
    assert isinstance(axis.ticker, FixedTicker)
    plots.set_data(current, {"t": np.arange(4), "norm": np.array([0.5, 0.1, 0.02, np.nan])})
    assert [t for t in axis.ticker.ticks if 0.02 <= t <= 0.5] == [0.02, 0.05, 0.1, 0.2, 0.5]
    assert set(axis.major_label_overrides) == set(axis.ticker.ticks)
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
    assert legend in fig.below and legend.orientation == "vertical"  # fits 320 px
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


# ---------------------------------------------------------------------------- the loss plot
def rows(renderer) -> int:
    return len(renderer.data_source.data[renderer.glyph.y])


def line_of(fig, column: str):
    (r,) = [r for r in fig.renderers if getattr(r.glyph, "y", None) == column and r.name is None]
    return r


def test_loss_switch_shows_one_of_two_figures_of_one_source():
    lp = plot_loss.LossPlot()
    for fig in lp.figures:  # both draw the one curve
        assert line_of(fig, "loss").data_source is lp.source
    assert isinstance(lp.log_fig.y_scale, LogScale)
    assert not isinstance(lp.linear_fig.y_scale, LogScale)
    assert lp.pane.object is lp.log_fig  # one figure in the page at a time
    lp.scale.value = "linear"  # the learner's click
    assert lp.pane.object is lp.linear_fig and not lp.log and lp.picked
    lp.scale.value = "log"
    assert lp.pane.object is lp.log_fig and lp.log
    assert lp.panel().objects == [lp.pane, lp.scale]


@pytest.mark.slow
def test_loss_scale_is_log_by_default_where_the_curve_spans_decades():
    lp = plot_loss.LossPlot()
    assert lp.log and lp.scale.value == "log"  # a new model's loss falls by decades
    lp.source.data = {"step": [1, 2], "loss": [2.0, 0.9]}  # a loaded curve: less than 10x
    lp.fit_scale()
    assert not lp.log and lp.scale.value == "linear" and not lp.picked
    lp.source.stream({"step": [3], "loss": [0.01]})  # never changes by itself while training
    assert not lp.log
    lp.fit_scale()  # 2.0 / 0.01 > 10
    assert lp.log
    lp.source.data = {"step": [], "loss": []}  # a new model: log again
    lp.source.data = {"step": [1, 2], "loss": [2.0, 1.9]}
    lp.scale.value = "log"
    lp.scale.value = "linear"  # the learner's pick holds
    lp.fit_scale()
    assert not lp.log and lp.picked
    lp.source.data = {"step": [1, 2], "loss": [10.0, 0.001]}
    lp.fit_scale()
    assert not lp.log
    fixed = plot_loss.LossPlot(log=False)  # a lesson's own pick holds too
    fixed.source.data = {"step": [1, 2], "loss": [10.0, 0.001]}
    fixed.fit_scale()
    assert not fixed.log and plot_loss.LossPlot(log=True).log


def test_loss_baseline_is_set_in_one_place_and_labelled_with_its_value():
    lp = plot_loss.LossPlot()
    lp.baseline.location = 0.1667
    for fig in lp.figures:
        (span,) = [obj for obj in fig.center if isinstance(obj, Span)]
        assert span.location == 0.1667
        labels = [item.label.value for item in fig.legend[0].items]
        assert labels == ["training loss", "baseline 0.1667 (trivial predictor)"]
        (reach,) = [r for r in fig.renderers if r.name == "baseline-range"]
        assert not reach.visible and reach.data_source.data["y"] == [0.1667]  # kept in view
    lp.baseline.visible = False  # a lesson without a baseline: gone from both, key too
    for fig in lp.figures:
        (span,) = [obj for obj in fig.center if isinstance(obj, Span)]
        key = fig.legend[0].items[-1].renderers[0]
        assert not span.visible and not key.visible
        (reach,) = [r for r in fig.renderers if r.name == "baseline-range"]
        assert np.isnan(reach.data_source.data["y"][0])


def test_log_ticks_label_the_decades_below_one():
    major, minor = plots.log_ticks(0.03, 2.5)  # 1.9 decades: Bokeh's LogTicker goes linear
    shown = [t for t in major if 0.03 <= t <= 2.5]
    assert shown == [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]  # as many below 0.3 as above
    assert [plots.tick_label(t) for t in shown] == ["0.05", "0.1", "0.2", "0.5", "1", "2"]
    major, minor = plots.log_ticks(1e-6, 1.0)  # six decades: every power, minor 2..9
    assert [t for t in major if 1e-6 <= t <= 1] == [10.0**-k for k in range(6, -1, -1)]
    assert 2e-6 in minor and 1e-5 not in minor
    major, _ = plots.log_ticks(1e-12, 1.0)  # twelve: every other power
    assert [t for t in major if 1e-12 <= t <= 1] == [10.0**-k for k in range(12, -1, -2)]
    assert 4 <= len([t for t in plots.log_ticks(0.3, 0.55)[0] if 0.3 <= t <= 0.55]) <= 8
    for low, high in [(0.5, 0.6), (0.55, 0.58), (1.0, 1.3), (0.9, 1.05), (3.1, 3.2)]:
        shown = [t for t in plots.log_ticks(low, high)[0] if low <= t <= high]  # under a third
        assert 3 <= len(shown) <= 11, (low, high, shown)  # of a decade: still labelled
        assert all(len(plots.tick_label(t)) <= 5 for t in shown), shown  # and short
    assert plots.tick_label(2e-5) == "2×10⁻⁵" and plots.tick_label(1e-4) == "10⁻⁴"
    assert plots.tick_label(3e5) == "3×10⁵" and plots.tick_label(0.001) == "0.001"
    with pytest.raises(ValueError, match="low and high"):
        plots.log_ticks(0.0, 1.0)


def test_loss_log_axis_follows_the_data_and_the_baseline():
    lp = plot_loss.LossPlot()
    lp.baseline.location = 2.3
    lp.source.stream({"step": [1, 2, 3], "loss": [2.0, 0.5, 0.04]})
    axis = lp.log_fig.yaxis[0]
    assert isinstance(axis.ticker, FixedTicker)
    shown = [t for t in axis.ticker.ticks if 0.04 <= t <= 2.3]
    assert shown == [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    assert axis.major_label_overrides[0.05].strip() == "0.05"
    assert set(axis.major_label_overrides) == set(axis.ticker.ticks)
    assert isinstance(lp.linear_fig.yaxis[0].ticker, BasicTicker)  # linear: Bokeh's own


def test_log_axis_labels_keep_one_width_while_the_loss_falls():
    """A wider tick label makes BokehJS lay the whole plot out again (about 150 ms of a slow
    page's main thread): the labels are monospace, padded to one width, never narrower than
    before, and the screen reader's text of a tick has no padding."""
    lp = plot_loss.LossPlot()
    axis = lp.log_fig.yaxis[0]
    assert axis.major_label_text_font == "monospace"
    loss = 3.0
    for step in range(1, 60):
        loss *= 0.6  # 1.8 .. 2.5e-13: plain numbers, then powers of ten
        lp.source.stream({"step": [step], "loss": [loss]})
        labels = list(axis.major_label_overrides.values())
        assert {len(text) for text in labels} == {LOG_LABEL_CHARS}, (step, labels)
    plots.set_log_ticks(lp.log_fig, 1.1e-12, 1.3e-12)  # a fraction of a decade: "1.15×10⁻¹²"
    wide = {len(text) for text in axis.major_label_overrides.values()}
    assert wide == {len("1.15×10⁻¹²")}
    plots.set_log_ticks(lp.log_fig, 0.1, 1.0)  # "0.1" .. "1": as wide as before, not narrower
    assert {len(text) for text in axis.major_label_overrides.values()} == wide
    assert plot_describe._tick_name([axis], 0.01) == "0.01"


def test_added_curves_are_on_both_figures_with_their_legend_samples():
    lp = plot_loss.LossPlot()
    lp.source.data = {"step": [], "loss": [], "lstm": []}
    lp.style_curve("transformer", "#8e44ad")
    lp.add_curve("lstm", "LSTM beside it", "#27ae60")
    for fig in lp.figures:
        items = fig.legend[0].items
        assert [i.label.value for i in items] == [
            "transformer", "LSTM beside it", "baseline (trivial predictor)"
        ]  # fmt: skip
        assert line_of(fig, "lstm").data_source is lp.source
        assert all(r.glyph.line_color == "#8e44ad" for r in items[0].renderers)
    lp.source.data = {"step": [1, 2], "loss": [3.0, 2.0], "lstm": [3.0, 0.2]}
    lp.fit_scale()
    assert lp.log  # the second curve spans the decade


def sampled_before_data(item) -> bool:
    """Bokeh draws an entry's sample from a renderer with rows: one must have one."""
    return any(r.visible and rows(r) >= 1 for r in item.renderers)


@pytest.mark.slow
def test_shared_legends_draw_their_samples_before_data_comes():
    lp = plot_loss.LossPlot()
    grad, _current, _compare = plots.gradient_figure()
    tree, _nodes, _edges = plots.beam_tree_figure()
    for fig in (*lp.figures, grad, tree):
        items = fig.select(Legend)[0].items if fig is tree else fig.legend[0].items
        assert items and all(sampled_before_data(item) for item in items), fig.title.text
    # the samples draw nothing in the plot and join the hover of no tool
    for fig in (*lp.figures, grad):
        keys = [r for r in fig.renderers if r.name == plots.LEGEND_KEY]
        assert keys and all(np.isnan(r.data_source.data["y"]).all() for r in keys)
        for hover in fig.select(HoverTool):
            assert not set(hover.renderers) & set(keys)


def test_hiding_the_baseline_of_an_empty_curve_puts_back_the_empty_ticks():
    """A lesson switching to a task without a baseline before training: the log axis is
    labelled for the empty box again, not for the hidden baseline's value."""
    lp = plot_loss.LossPlot()
    empty = list(lp.log_fig.yaxis[0].ticker.ticks)
    lp.baseline.location, lp.baseline.visible = 2.079, True
    assert list(lp.log_fig.yaxis[0].ticker.ticks) != empty
    lp.baseline.visible = False
    assert list(lp.log_fig.yaxis[0].ticker.ticks) == empty
    assert list(plots.log_ticks(*plot_loss.EMPTY_BOX[1])[0]) == empty


def test_an_empty_curve_with_a_baseline_is_labelled_over_the_box_and_the_baseline():
    """Before the first step the axis spans the placeholder's box and the baseline: its labels
    are the 1-2-5 ticks of that span, not the crowded fine ticks of the baseline alone."""
    lp = plot_loss.LossPlot()
    lp.baseline.location, lp.baseline.visible = 2.079, True
    ticks = list(lp.log_fig.yaxis[0].ticker.ticks)
    assert ticks == list(plots.log_ticks(plot_loss.EMPTY_BOX[1][0], 2.079)[0])
    shown = [t for t in ticks if plot_loss.EMPTY_BOX[1][0] <= t <= 2.079]
    assert shown == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0]


def test_a_single_value_on_a_log_axis_gets_the_ticks_of_the_decades_around_it():
    """One point (the top backward layer's gradient on the adding problem is non-zero at the
    last step only): Bokeh spans about a decade either side, labelled 1-2-5, not crammed."""
    fig = plots.line_figure("one value", "t", "norm", log=True)
    source = ColumnDataSource({"t": [], "norm": []})
    plots.follow_log_ticks(fig, source, x="t")
    source.data = {"t": [9], "norm": [0.004]}
    ticks = list(fig.yaxis[0].ticker.ticks)
    assert ticks == plots.log_ticks(0.0004, 0.04)[0]
    assert len([v for v in ticks if 0.0004 <= v <= 0.04]) <= 8
