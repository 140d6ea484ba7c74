"""Heatmaps and attention maps (a part of :mod:`pyplay.ui.plots`, which re-exports them): a
colour bar, cell k centred on k with integer ticks or token labels in the middle of the cells,
hover showing the value; plus the two axis helpers every plot uses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from bokeh.core.property.validation import without_property_validation
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    Range1d,
)
from bokeh.models.formatters import BasicTickFormatter
from bokeh.palettes import RdBu11, Viridis256
from bokeh.plotting import figure

from pyplay.ui.plot_data import set_data

__all__ = [
    "attention_figure",
    "colour_bar",
    "fixed_ticks",
    "heatmap_figure",
    "integer_axis",
    "label_axis",
    "update_attention",
    "update_heatmap",
]

# which quantities are bounded, and so get a fixed colour range
_RANGES = {
    "i": (0, 1),
    "f": (0, 1),
    "o": (0, 1),
    "r": (0, 1),
    "z": (0, 1),
    "g": (-1, 1),
    "n": (-1, 1),
    "p": (0, 1),  # probabilities
}


def integer_axis(axis: Any) -> None:
    """Ticks only on whole numbers (steps, positions, units): never a half-step tick."""
    axis.ticker = BasicTicker(min_interval=1, desired_num_ticks=8)
    axis.formatter = BasicTickFormatter(use_scientific=False)


def label_axis(axis: Any, labels: Sequence[str]) -> None:
    """Name position k of ``axis`` ``labels[k]``: one tick in the middle of every cell."""
    fixed_ticks(axis, list(range(len(labels))))
    axis.major_label_overrides = {k: str(t) for k, t in enumerate(labels)}


def fixed_ticks(axis: Any, ticks: Sequence[float]) -> None:
    """Ticks exactly at ``ticks`` on ``axis``. The axis keeps its FixedTicker once it has
    one: a new model at every redraw made the page's document look through all its models
    again (over a second per live redraw of the recursive lesson in the page). A figure whose
    axis is labelled this way at its updates gets its FixedTicker when it is made: the first
    live redraw of the seq2seq lesson, which made four, took 2 s with every lesson drawn."""
    if isinstance(axis.ticker, FixedTicker):
        axis.ticker.ticks = list(ticks)
    else:
        axis.ticker = FixedTicker(ticks=list(ticks))


def heatmap_figure(
    name: str,
    title: str,
    x_label: str = "time step t",
    y_label: str = "unit",
    height: int = 210,
    width: int = 360,
) -> tuple[figure, ColumnDataSource]:
    """A (time x unit) heatmap ``height`` by ``width`` pixels: a colour bar, cell k centred
    on k (integer ticks), and hover showing both positions and the value. ``name`` picks the
    colour range: gates and probabilities 0..1, candidates -1..1, anything else symmetric
    about 0."""
    source = ColumnDataSource(
        {"image": [np.zeros((1, 1))], "x": [-0.5], "y": [-0.5], "dw": [1], "dh": [1]}
    )
    lo, hi = _RANGES.get(name, (-1, 1))
    palette = Viridis256 if name in ("i", "f", "o", "r", "z", "p") else list(reversed(RdBu11))
    mapper = LinearColorMapper(palette=palette, low=lo, high=hi)
    fig = figure(
        height=height,
        width=width,
        title=title,
        x_axis_label=x_label,
        y_axis_label=y_label,
        tools="save,reset",
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(-0.5, 0.5),
    )
    fig.image(image="image", x="x", y="y", dw="dw", dh="dh", source=source, color_mapper=mapper)
    fig.add_tools(HoverTool(tooltips=[("x", "$x{0}"), ("y", "$y{0}"), ("value", "@image{0.000}")]))
    colour_bar(fig, mapper)
    integer_axis(fig.xaxis[0])
    integer_axis(fig.yaxis[0])
    fig.grid.visible = False
    return fig, source


def colour_bar(fig: figure, mapper: LinearColorMapper) -> ColorBar:
    """A colour bar for ``mapper`` on the right of ``fig``."""
    bar = ColorBar(color_mapper=mapper, width=10, padding=4, label_standoff=4)
    bar.major_label_text_font_size = "8pt"
    fig.add_layout(bar, "right")
    return bar


@without_property_validation
def update_heatmap(fig: figure, source: ColumnDataSource, values: np.ndarray, name: str) -> None:
    """Show ``values`` (T, H): time along x, units along y, cell (t, j) centred on (t, j)."""
    T, H = values.shape
    set_data(
        source,
        {
            "image": [np.ascontiguousarray(values.T, dtype=np.float64)],  # (H, T)
            "x": [-0.5],
            "y": [-0.5],
            "dw": [T],
            "dh": [H],
        },
    )
    if (fig.x_range.start, fig.x_range.end) != (-0.5, T - 0.5):
        fig.x_range.update(start=-0.5, end=T - 0.5)
    if (fig.y_range.start, fig.y_range.end) != (-0.5, H - 0.5):
        fig.y_range.update(start=-0.5, end=H - 0.5)
    if name not in _RANGES:  # unbounded (cell state, linear units): symmetric range
        mapper = fig.renderers[0].glyph.color_mapper
        bound = float(np.max(np.abs(values))) or 1.0
        if abs(bound - mapper.high) > 1e-3 * bound:
            mapper.update(low=-bound, high=bound)


def attention_figure(
    title: str = "Attention weights",
    x_label: str = "source position",
    y_label: str = "output step",
    height: int = 320,
    width: int = 440,
    name: str | None = None,
) -> tuple[figure, ColumnDataSource]:
    """Attention weights: keys along x, queries down y (first at the top), one cell per pair,
    a colour bar 0..1, the two tokens and the weight on hover. ``name`` names the data source
    (the page's tests find a lesson's map by it)."""
    source = ColumnDataSource({"x": [], "y": [], "weight": [], "src": [], "out": []}, name=name)
    mapper = LinearColorMapper(palette=Viridis256, low=0.0, high=1.0)
    fig = figure(
        height=height,
        width=width,
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(0.5, -0.5),  # first output step at the top
        title=title,
        x_axis_label=x_label,
        y_axis_label=y_label,
        tools="save,reset",
    )
    fig.rect(
        "x", "y", 1, 1, source=source, fill_color={"field": "weight", "transform": mapper},
        line_color=None,
    )  # fmt: skip
    fig.add_tools(
        HoverTool(tooltips=[(x_label, "@src"), (y_label, "@out"), ("weight", "@weight{0.000}")])
    )
    colour_bar(fig, mapper)
    fig.grid.visible = False
    for axis in (fig.xaxis[0], fig.yaxis[0]):  # labelled by token at every update: their
        fixed_ticks(axis, [])  # tickers exist from the start (see fixed_ticks)
    return fig, source


@without_property_validation
def update_attention(
    fig: figure,
    source: ColumnDataSource,
    weights: np.ndarray,
    src: list[str],
    out: list[str],
    rows: int | None = None,
) -> None:
    """Show the first ``rows`` rows (all by default) of ``weights`` (U, S): row u is output
    step u (``out[u]``, or EOS past the end). The axes are labelled for all U rows at once, so
    revealing rows one by one only sends the new data; labels and ranges are sent only when
    they change."""
    U, S = weights.shape
    n = U if rows is None else max(0, min(rows, U))
    labels = [*out, "<eos>"][:U]
    ys, xs = np.divmod(np.arange(n * S), S)  # (n*S,) each
    set_data(
        source,
        {
            "x": xs,
            "y": ys,
            "weight": np.asarray(weights[:n], dtype=np.float64).reshape(-1),  # (n*S,)
            "src": [src[x] for x in xs],
            "out": [labels[y] for y in ys],
        },
    )
    if rows is None or rows <= 1:
        x_labels = {k: str(t) for k, t in enumerate(src)}
        if fig.xaxis[0].major_label_overrides != x_labels:
            label_axis(fig.xaxis[0], src)
        y_labels = {k: str(t) for k, t in enumerate(labels)}
        if fig.yaxis[0].major_label_overrides != y_labels:
            label_axis(fig.yaxis[0], labels)
        if (fig.x_range.start, fig.x_range.end) != (-0.5, S - 0.5):
            fig.x_range.update(start=-0.5, end=S - 0.5)
        if (fig.y_range.start, fig.y_range.end) != (U - 0.5, -0.5):
            fig.y_range.update(start=U - 0.5, end=-0.5)
