"""The tree the recursive net reads, drawn: leaves left to right along the bottom, every parent
above the middle of its children, an edge from each node to its parent. A node shows its token
(an operator, a word; "·" for a phrase without one) and, under it, the class the network gives
it, green when that is the node's true class and red when not; hovering a node shows the
numbers behind it (true class, probability, the sizes of its vector and of the gradient
reaching it)."""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, Range1d
from bokeh.plotting import figure

from pyplay.ui.plot_tree import node_labels, tree_frame

__all__ = ["tree_figure", "update_tree"]

TREE_MAX_PX = 300  # the tallest the tree is drawn

RIGHT, WRONG = "#27ae60", "#c0392b"


def tree_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """The figure, its nodes' source and its edges' source (empty until :func:`update_tree`)."""
    nodes = ColumnDataSource(
        {k: [] for k in ("x", "y", "token", "shown", "colour", "target", "p", "h", "g")}
    )
    fig, edges = tree_frame(
        "#888888",
        2,
        height=300,
        title="The tree, bottom up",
        tools="save",
        x_range=Range1d(-0.7, 3.7),
        y_range=Range1d(-0.8, 2.6),
    )
    circles = fig.scatter(
        "x", "y", source=nodes, size=30, fill_color="white", line_color="colour", line_width=3
    )
    centred = {"text_align": "center", "text_baseline": "middle"}
    node_labels(fig, nodes, "token", **centred, text_font_size="12pt")
    node_labels(
        fig, nodes, "shown", **centred, y_offset=-26, text_font_size="9pt", text_color="colour"
    )
    fig.add_tools(
        HoverTool(
            renderers=[circles],
            tooltips=[
                ("node", "@token"),
                ("class given", "@shown"),
                ("true class", "@target"),
                ("probability", "@p{0.000}"),
                ("|h|", "@h{0.000}"),
                ("|dL/dh|", "@g{0.0000}"),
            ],
        )
    )
    fig.axis.visible = False
    fig.grid.visible = False
    fig.toolbar.logo = None
    return fig, nodes, edges


def update_tree(fig: figure, nodes: ColumnDataSource, edges: ColumnDataSource, view: Any) -> None:
    """Draw ``view`` (a :class:`~pyplay.ui.lessons.recursive.state.TreeView`)."""
    right = view.predicted == view.target
    nodes.data = {
        "x": view.x.tolist(),
        "y": view.y.tolist(),
        "token": view.text,
        "shown": [f"= {int(c)}" for c in view.predicted],
        "colour": [RIGHT if ok else WRONG for ok in right],
        "target": [int(t) for t in view.target],
        "p": view.probability.tolist(),
        "h": np.linalg.norm(view.vectors, axis=1).tolist(),
        "g": np.linalg.norm(view.grads, axis=1).tolist(),
    }
    child = np.flatnonzero(view.parent >= 0)
    parent = view.parent[child]
    edges.data = {
        "x0": view.x[child].tolist(),
        "y0": view.y[child].tolist(),
        "x1": view.x[parent].tolist(),
        "y1": view.y[parent].tolist(),
    }
    fig.x_range.update(start=-0.7, end=float(view.x.max()) + 0.7)
    fig.y_range.update(start=-0.8, end=float(view.y.max()) + 0.6)
    # a row per level, within the workbench's one screen (1280x800) however deep the tree
    fig.height = min(TREE_MAX_PX, max(220, 70 * (int(view.y.max()) + 2)))
