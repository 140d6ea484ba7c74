"""Hagan's figures 6.4-6.8 (:mod:`.book_figures`) drawn with the dynamic lesson's diagram engine,
extended.

:mod:`~pyplay.ui.lessons.dynamic.diagram_plot` draws boxes (inputs, layers), straight weight
arrows between them and feedback arcs below; :func:`update_book_figure` hands it those. What
the seq2seq and attention figures need besides, and this module adds on the same Bokeh
figure, is what the engine cannot express:

- operation nodes (circles): the transpose "T" of Figure 6.5, the sampler "t = T" of
  Figure 6.4, the TDL_hstack, the vertical stacking of Figure 6.8, with their arrows;
- the attention's multiplicative connection: a signal used as a layer's weight
  (:math:`[A^1(T)]^T` times :math:`a^2(t-1)`, :math:`A^1(T)` times :math:`a^4(t)`), a dashed
  blue arrow into the top of the box;
- a value fixed while the decoder runs (the sampled :math:`a^1(T)`), a dotted arrow, as the
  book draws it;
- the decoder's initial condition :math:`a^2(T) = a^1(T)`, an arc above the boxes.

The figure's title is "Hagan, fig. 6.x: caption".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bokeh.models import Arrow, ColumnDataSource, LabelSet, VeeHead
from bokeh.plotting import figure

from pyplay.ui.lddn_notation import Diagram, Edge
from pyplay.ui.lessons.dynamic.diagram_plot import (
    BOX_H,
    BOX_W,
    DiagramSources,
    diagram_figure,
    update_diagram,
)
from pyplay.ui.lessons.textbook.book_figures import BookFigure, FigureEdge
from pyplay.ui.plot_tree import empty_edges
from pyplay.ui.plots import set_title

__all__ = ["BookFigureSources", "book_figure", "update_book_figure"]

OP_R = (0.17, 0.2)  # an operation's circle: half its width and height, in data units
ARROW_STYLES = {  # style -> (line dash, colour)
    "plain": ("solid", "#333333"),
    "multiplies": ("dashed", "#2c6fbb"),
    "fixed": ("dotted", "#333333"),
}
ARC_KEYS = ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1")


@dataclass(frozen=True)
class BookFigureSources:
    """The engine's sources (``base``) and this module's: operation circles, an arrow source
    per style of :data:`ARROW_STYLES`, arcs above and their labels."""

    base: DiagramSources
    ops: ColumnDataSource
    arrows: dict[str, ColumnDataSource]
    above: ColumnDataSource
    labels: ColumnDataSource


def book_figure() -> tuple[figure, BookFigureSources]:
    """An empty figure (the engine's :func:`diagram_figure`, extended) and its sources."""
    fig, base = diagram_figure()
    fig.height = 300
    ops = ColumnDataSource({"x": [], "y": [], "yd": [], "label": [], "detail": []})
    fig.ellipse(
        "x", "y", width=2 * OP_R[0], height=2 * OP_R[1], source=ops, fill_color="#ffffff",
        line_color="#555555",
    )  # fmt: skip
    for column, y, baseline, size in (
        ("label", "y", "middle", "10pt"),
        ("detail", "yd", "top", "8pt"),
    ):
        fig.add_layout(
            LabelSet(
                x="x", y=y, text=column, source=ops, text_align="center",
                text_baseline=baseline, text_font_size=size,
            )
        )  # fmt: skip
    arrows = {}
    for style, (dash, colour) in ARROW_STYLES.items():
        arrows[style] = ColumnDataSource(empty_edges())
        fig.add_layout(
            Arrow(
                end=VeeHead(size=9, fill_color=colour, line_color=colour),
                x_start="x0", y_start="y0", x_end="x1", y_end="y1", source=arrows[style],
                line_color=colour, line_dash=dash, line_width=1.5,
            )
        )  # fmt: skip
    above = ColumnDataSource({k: [] for k in ARC_KEYS})
    fig.bezier(*ARC_KEYS, source=above, line_color="#8e44ad", line_width=1.5)
    fig.scatter("x1", "y1", source=above, marker="inverted_triangle", size=8, color="#8e44ad")
    labels = ColumnDataSource({"x": [], "y": [], "text": [], "align": []})
    fig.add_layout(
        LabelSet(
            x="x", y="y", text="text", source=labels, text_align="align",
            text_font_size="9pt", text_color="#333333",
        )
    )  # fmt: skip
    return fig, BookFigureSources(base, ops, arrows, above, labels)


def _style(edge: Edge) -> str:
    return edge.style if isinstance(edge, FigureEdge) else "plain"


def _port(xy: tuple[float, float], towards: tuple[float, float], op: bool) -> tuple[float, float]:
    """Where a line from the node at ``xy`` towards ``towards`` leaves (or enters) it: the
    circle's edge for an operation (the ellipse of :data:`OP_R` in data units, round on a
    typical page); a box's top or bottom when the other end is in the same column, its right or
    left side otherwise."""
    (x, y), (tx, ty) = xy, towards
    if op:
        dx, dy = tx - x, ty - y
        k = 1.0 / (np.hypot(dx / OP_R[0], dy / OP_R[1]) or 1.0)
        return x + k * dx, y + k * dy
    if abs(tx - x) < 1e-9:
        return x, y + (BOX_H / 2 if ty > y else -BOX_H / 2)
    return x + (BOX_W / 2 if tx > x else -BOX_W / 2), y


def update_book_figure(fig: figure, sources: BookFigureSources, book: BookFigure) -> None:
    """Draw ``book``: the boxes and the plain arrows between boxes by the engine
    (:func:`update_diagram`), the rest here; the title is ``book.title``."""
    d = book.diagram
    pos = {n.key: (float(n.column), -float(n.row)) for n in d.nodes}
    is_op = {n.key: n.kind == "op" for n in d.nodes}

    def by_engine(e: Edge) -> bool:
        return _style(e) == "plain" and not (is_op[e.source] or is_op[e.target])

    boxes = tuple(n for n in d.nodes if not is_op[n.key])
    engine = tuple(e for e in d.edges if by_engine(e))
    update_diagram(fig, sources.base, Diagram(boxes, engine, d.columns, d.rows))
    ops = [n for n in d.nodes if is_op[n.key]]
    sources.ops.data = {
        "x": [pos[n.key][0] for n in ops],
        "y": [pos[n.key][1] for n in ops],
        "yd": [pos[n.key][1] - OP_R[1] - 0.03 for n in ops],
        "label": [n.label for n in ops],
        "detail": [n.detail for n in ops],
    }
    arrows = {style: empty_edges() for style in ARROW_STYLES}
    above: dict[str, list[float]] = {k: [] for k in ARC_KEYS}
    labels: dict[str, list[object]] = {"x": [], "y": [], "text": [], "align": []}
    for e in d.edges:
        if by_engine(e):
            continue
        s, t = pos[e.source], pos[e.target]
        text = f"{e.name} {e.delays}".strip()
        if _style(e) == "initial":  # over the boxes, from the source's top to the target's top
            top = max(s[1], t[1]) + BOX_H / 2
            for k, v in zip(ARC_KEYS, (s[0], top, t[0], top, s[0] + 0.3, top + 0.5,
                                       t[0] - 0.3, top + 0.5), strict=True):  # fmt: skip
                above[k].append(v)
            labels["x"].append((s[0] + t[0]) / 2)
            labels["y"].append(top + 0.42)
            labels["align"].append("center")
        else:
            x0, y0 = _port(s, t, is_op[e.source])
            x1, y1 = _port(t, s, is_op[e.target])
            for k, v in zip(("x0", "y0", "x1", "y1"), (x0, y0, x1, y1), strict=True):
                arrows[_style(e)][k].append(v)
            vertical = abs(x1 - x0) < 1e-9
            labels["x"].append((x0 + x1) / 2 + (0.05 if vertical else 0.0))
            labels["y"].append((y0 + y1) / 2 + (0.0 if vertical else 0.04))
            labels["align"].append("left" if vertical else "center")
        labels["text"].append(text)
    for style, data in arrows.items():
        sources.arrows[style].data = data
    sources.above.data = above
    sources.labels.data = labels
    set_title(fig, book.title)
    if above["x0"]:
        fig.y_range.update(end=1.15)
