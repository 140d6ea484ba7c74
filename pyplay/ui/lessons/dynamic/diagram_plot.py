"""A Bokeh drawing of an LDDN the way the book draws one: inputs and layers as boxes, weights
as arrows labelled with their name and delay line, feedback as arcs below.

:func:`diagram_figure` builds the figure and its sources once; :func:`update_diagram` redraws
it from a :class:`~pyplay.ui.lddn_notation.Diagram` (plain data from the core).
"""

from __future__ import annotations

from dataclasses import dataclass

from bokeh.models import Arrow, ColumnDataSource, Range1d, VeeHead
from bokeh.plotting import figure

from pyplay.ui.lddn_notation import Diagram
from pyplay.ui.plot_tree import empty_edges, node_labels

__all__ = ["DiagramSources", "diagram_figure", "update_diagram"]

BOX_W, BOX_H = 0.56, 0.46
COLOURS = {"input": "#f3e6c4", "layer": "#cfe3f5"}


@dataclass(frozen=True)
class DiagramSources:
    nodes: ColumnDataSource
    arrows: ColumnDataSource
    arcs: ColumnDataSource
    labels: ColumnDataSource


def diagram_figure() -> tuple[figure, DiagramSources]:
    """An empty diagram figure and the sources :func:`update_diagram` fills."""
    nodes = ColumnDataSource({"x": [], "y": [], "label": [], "detail": [], "colour": []})
    arrows = ColumnDataSource(empty_edges())
    arcs = ColumnDataSource(
        {"x0": [], "y0": [], "x1": [], "y1": [], "cx0": [], "cy0": [], "cx1": [], "cy1": []}
    )
    labels = ColumnDataSource({"x": [], "y": [], "text": []})
    fig = figure(
        height=260,
        sizing_mode="stretch_width",
        tools="save,reset",
        x_range=Range1d(-0.5, 2.5),
        y_range=Range1d(-1.2, 0.6),
        toolbar_location=None,
    )
    fig.axis.visible = False
    fig.grid.visible = False
    fig.outline_line_color = None
    fig.rect("x", "y", BOX_W, BOX_H, source=nodes, fill_color="colour", line_color="#555555")
    for column, baseline, size in (("label", "bottom", "11pt"), ("detail", "top", "8pt")):
        node_labels(
            fig, nodes, column, text_align="center", text_baseline=baseline, text_font_size=size
        )
    fig.add_layout(
        Arrow(
            end=VeeHead(size=9),
            x_start="x0",
            y_start="y0",
            x_end="x1",
            y_end="y1",
            source=arrows,
            line_color="#333333",
        )
    )
    fig.bezier(
        "x0",
        "y0",
        "x1",
        "y1",
        "cx0",
        "cy0",
        "cx1",
        "cy1",
        source=arcs,
        line_color="#b03a2e",
        line_width=1.5,
    )
    fig.scatter("x1", "y1", source=arcs, marker="triangle", size=8, color="#b03a2e")
    node_labels(
        fig, labels, "text", text_align="center", text_font_size="9pt", text_color="#333333"
    )
    return fig, DiagramSources(nodes, arrows, arcs, labels)


def update_diagram(fig: figure, sources: DiagramSources, d: Diagram) -> None:
    """Draw ``d``: columns left to right, rows top to bottom."""
    pos = {n.key: (float(n.column), -float(n.row)) for n in d.nodes}
    sources.nodes.data = {
        "x": [pos[n.key][0] for n in d.nodes],
        "y": [pos[n.key][1] for n in d.nodes],
        "label": [n.label for n in d.nodes],
        "detail": [n.detail for n in d.nodes],
        "colour": [COLOURS[n.kind] for n in d.nodes],
    }
    arrows = empty_edges()
    arcs: dict[str, list[float]] = {
        k: [] for k in ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1")
    }
    labels: dict[str, list[object]] = {"x": [], "y": [], "text": []}
    for k, e in enumerate(d.edges):
        (xs, ys), (xt, yt) = pos[e.source], pos[e.target]
        text = f"{e.name} {e.delays}".strip()
        if not e.feedback:
            arrows["x0"].append(xs + BOX_W / 2)
            arrows["y0"].append(ys)
            arrows["x1"].append(xt - BOX_W / 2)
            arrows["y1"].append(yt)
            labels["x"].append((xs + xt) / 2)
            labels["y"].append((ys + yt) / 2 + 0.04)
        else:  # below the boxes, from the source's bottom back to the target's bottom
            depth = 0.55 + 0.15 * (k % 3)
            low = min(ys, yt) - BOX_H / 2
            arcs["x0"].append(xs)
            arcs["y0"].append(ys - BOX_H / 2)
            arcs["x1"].append(xt)
            arcs["y1"].append(yt - BOX_H / 2)
            arcs["cx0"].append(xs + 0.2)
            arcs["cy0"].append(low - depth)
            arcs["cx1"].append(xt - 0.2)
            arcs["cy1"].append(low - depth)
            labels["x"].append((xs + xt) / 2)
            labels["y"].append(low - 0.75 * depth)
        labels["text"].append(text)
    sources.arrows.data = arrows
    sources.arcs.data = arcs
    sources.labels.data = labels
    fig.x_range.update(start=-0.5, end=d.columns - 0.5)
    fig.y_range.update(start=-(d.rows - 1) - 1.3, end=0.6)
