"""The beam-search tree plot (a part of :mod:`pyplay.ui.plots`): one dot per hypothesis at
(step, slot), coloured by what happened to it, labelled with the token it added, an edge to
its parent; hovering a dot shows the whole hypothesis, its score and its fate."""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.models import (
    BasicTicker,
    CategoricalColorMapper,
    ColumnDataSource,
    HoverTool,
    LabelSet,
    Legend,
    LegendItem,
)
from bokeh.plotting import figure

__all__ = ["BEAM_STATUSES", "beam_tree_figure", "update_beam_tree"]

BEAM_STATUSES = (
    "start",
    "in the beam",
    "finished (EOS)",
    "finished (max length)",
    "pruned: outside the beam",
    "pruned: cannot beat the finished ones",
)
COLOURS = ["#555555", "#2c6fbb", "#27ae60", "#8e44ad", "#bbbbbb", "#e67e22"]
NODE_COLUMNS = ("x", "y", "label", "token", "score", "status")
EMPTY_NODES: dict[str, list[Any]] = {
    "x": [0], "y": [0], "label": ["<bos>"], "token": ["<bos>"], "score": [0.0],
    "status": ["start"],
}  # fmt: skip


def beam_tree_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """The tree figure, its node source (columns :data:`NODE_COLUMNS`) and its edge source
    (x0, y0, x1, y1). Steps and slots are whole numbers on their axes; the legend lists every
    status beside the plot."""
    nodes = ColumnDataSource(dict(EMPTY_NODES))
    edges = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []})
    fig = figure(
        height=320,
        sizing_mode="stretch_width",
        title="Beam search tree",
        x_axis_label="step",
        y_axis_label="slot (rank)",
        tools="pan,wheel_zoom,reset,save",
    )
    fig.segment("x0", "y0", "x1", "y1", source=edges, line_color="#999999", line_width=1)
    colours = CategoricalColorMapper(factors=list(BEAM_STATUSES), palette=COLOURS)
    dots = fig.scatter(
        "x", "y", source=nodes, size=11, line_color="#333333", line_width=0.5,
        color={"field": "status", "transform": colours},
    )  # fmt: skip
    fig.add_layout(
        LabelSet(
            x="x", y="y", text="token", source=nodes, x_offset=8, y_offset=-7,
            text_font_size="9pt", text_color="#222222",
        )
    )  # fmt: skip
    # one legend entry per status, each drawn with its colour: one NaN point each, which
    # draws nothing in the plot (an empty renderer would draw no legend sample either,
    # bokeh/bokeh#11193)
    items = []
    for status, colour in zip(BEAM_STATUSES, COLOURS, strict=True):
        key = fig.scatter([np.nan], [np.nan], size=9, color=colour)
        items.append(LegendItem(label=status, renderers=[key]))
    fig.add_layout(Legend(items=items, label_text_font_size="9pt", spacing=1), "right")
    fig.add_tools(
        HoverTool(
            renderers=[dots],
            tooltips=[("hypothesis", "@label"), ("score", "@score{0.000}"), ("", "@status")],
        )
    )
    for axis in (fig.xaxis[0], fig.yaxis[0]):
        axis.ticker = BasicTicker(min_interval=1, desired_num_ticks=8)
    fig.x_range.range_padding = 0.15
    fig.y_range.flipped = True
    return fig, nodes, edges


def update_beam_tree(nodes: ColumnDataSource, edges: ColumnDataSource, tree: Any | None) -> None:
    """Show ``tree`` (a :class:`~pyplay.ui.lessons.seq2seq.beam_stepper.TreeData`; None: only
    the start node)."""
    if tree is None:
        nodes.data = dict(EMPTY_NODES)
        edges.data = {"x0": [], "y0": [], "x1": [], "y1": []}
        return
    data = dict(tree.nodes)
    if "token" not in data:
        data["token"] = [str(t).split(" ")[-1] for t in data["label"]]
    nodes.data = data
    edges.data = tree.edges
