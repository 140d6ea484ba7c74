"""Tree plots (a part of :mod:`pyplay.ui.plots`).

What every tree or node diagram of the page shares: :func:`tree_frame` (a page-wide figure with
an edge from every node to its parent), :func:`node_labels` (a text per node at its (x, y))
and :func:`key_legend` (a legend under the plot whose samples are drawn before any data).
The beam-search tree: one dot per hypothesis at (step, slot), coloured by what happened to it,
labelled with the token it added, an edge to its parent; hovering a dot shows the whole
hypothesis, its score and its fate."""

from __future__ import annotations

from collections.abc import Sequence
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

__all__ = [
    "BEAM_STATUSES",
    "beam_tree_figure",
    "empty_edges",
    "key_legend",
    "node_labels",
    "tree_frame",
    "update_beam_tree",
]

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


def empty_edges() -> dict[str, list[float]]:
    """The columns of an edges' source, from (x0, y0) to (x1, y1) (a tree's: from the child to
    its parent), with no rows."""
    return {"x0": [], "y0": [], "x1": [], "y1": []}


def tree_frame(
    line_color: str, line_width: float, **figure_args: Any
) -> tuple[figure, ColumnDataSource]:
    """A page-wide figure (``figure_args`` as for bokeh's ``figure``) with a segment from
    every child to its parent, drawn under what comes after, and the edges' source
    (:func:`empty_edges`)."""
    edges = ColumnDataSource(empty_edges())
    fig = figure(sizing_mode="stretch_width", **figure_args)
    fig.segment("x0", "y0", "x1", "y1", source=edges, line_color=line_color, line_width=line_width)
    return fig, edges


def node_labels(fig: figure, nodes: ColumnDataSource, text: str, **style: Any) -> LabelSet:
    """Column ``text`` of ``nodes`` written at every node's (x, y), in ``style`` (LabelSet's
    text properties and offsets)."""
    labels = LabelSet(x="x", y="y", text=text, source=nodes, **style)
    fig.add_layout(labels)
    return labels


def key_legend(fig: figure, entries: Sequence[tuple[str, dict[str, Any]]]) -> Legend:
    """A legend under the plot, an entry per (label, scatter style) of ``entries``, one under
    the other (beside the plot, its long labels made the figure wider than a 320 px column).
    Each sample is one NaN point in that style, which draws nothing in the plot (an empty
    renderer would draw no legend sample either, bokeh/bokeh#11193)."""
    items = [
        LegendItem(label=label, renderers=[fig.scatter([np.nan], [np.nan], **style)])
        for label, style in entries
    ]
    legend = Legend(items=items, label_text_font_size="9pt", spacing=1)
    fig.add_layout(legend, "below")
    return legend


def beam_tree_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """The tree figure, its node source (columns :data:`NODE_COLUMNS`) and its edge source
    (x0, y0, x1, y1). Steps and slots are whole numbers on their axes; the legend under the
    plot lists every status."""
    nodes = ColumnDataSource(dict(EMPTY_NODES))
    fig, edges = tree_frame(
        "#999999", 1, height=320, title="Beam search tree", x_axis_label="step",
        y_axis_label="slot (rank)", tools="pan,wheel_zoom,reset,save",
    )  # fmt: skip
    colours = CategoricalColorMapper(factors=list(BEAM_STATUSES), palette=COLOURS)
    dots = fig.scatter(
        "x", "y", source=nodes, size=11, line_color="#333333", line_width=0.5,
        color={"field": "status", "transform": colours},
    )  # fmt: skip
    node_labels(
        fig, nodes, "token", x_offset=8, y_offset=-7, text_font_size="9pt", text_color="#222222"
    )
    key_legend(
        fig,
        [
            (status, {"size": 9, "color": colour})
            for status, colour in zip(BEAM_STATUSES, COLOURS, strict=True)
        ],
    )
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
        edges.data = empty_edges()
        return
    data = dict(tree.nodes)
    if "token" not in data:
        data["token"] = [str(t).split(" ")[-1] for t in data["label"]]
    nodes.data = data
    edges.data = tree.edges
