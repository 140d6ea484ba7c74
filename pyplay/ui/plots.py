"""Bokeh figures of the lessons: a streaming loss curve, heatmaps over time, gradient norms.

Each builder returns the figure and the data sources that views update; nothing here knows
about training. Bokeh draws titles and ticks on a canvas, so views put a text heading beside
every figure for readers and tests.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import (
    CategoricalColorMapper,
    ColumnDataSource,
    HoverTool,
    LinearColorMapper,
    Range1d,
    Span,
)
from bokeh.palettes import RdBu11, Viridis256
from bokeh.plotting import figure

__all__ = [
    "attention_figure",
    "beam_tree_figure",
    "gradient_figure",
    "heatmap_figure",
    "loss_figure",
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


def line_figure(
    title: str,
    x_label: str,
    y_label: str,
    *,
    height: int = 260,
    log: bool = False,
    tools: str = "pan,wheel_zoom,reset,save",
) -> figure:
    """An empty figure the width of the page for lines over steps or time."""
    return figure(
        height=height,
        sizing_mode="stretch_width",
        title=title,
        x_axis_label=x_label,
        y_axis_label=y_label,
        y_axis_type="log" if log else "linear",
        tools=tools,
    )


def loss_figure() -> tuple[figure, ColumnDataSource, Span]:
    """Training loss against step, with the trivial baseline as a dashed line."""
    source = ColumnDataSource({"step": [], "loss": []})
    fig = line_figure("Training loss", "step", "loss")
    fig.line("step", "loss", source=source, line_width=2, color="#2c6fbb")
    baseline = Span(
        location=0.0, dimension="width", line_dash="dashed", line_color="#c0392b", line_width=1.5
    )
    fig.add_layout(baseline)
    fig.add_tools(HoverTool(tooltips=[("step", "@step"), ("loss", "@loss{0.0000}")], mode="vline"))
    return fig, source, baseline


def heatmap_figure(name: str, title: str) -> tuple[figure, ColumnDataSource]:
    """A (time x unit) heatmap with hover showing t, unit and value."""
    source = ColumnDataSource(
        {"image": [np.zeros((1, 1))], "x": [0], "y": [0], "dw": [1], "dh": [1]}
    )
    lo, hi = _RANGES.get(name, (-1, 1))
    palette = Viridis256 if name in ("i", "f", "o", "r", "z", "p") else list(reversed(RdBu11))
    mapper = LinearColorMapper(palette=palette, low=lo, high=hi)
    fig = figure(
        height=190,
        width=330,
        title=title,
        x_axis_label="time step t",
        y_axis_label="unit",
        tools="save,reset",
    )
    fig.image(image="image", x="x", y="y", dw="dw", dh="dh", source=source, color_mapper=mapper)
    fig.add_tools(
        HoverTool(tooltips=[("t", "$x{0}"), ("unit", "$y{0}"), ("value", "@image{0.000}")])
    )
    fig.x_range.range_padding = fig.y_range.range_padding = 0
    return fig, source


def update_heatmap(fig: figure, source: ColumnDataSource, values: np.ndarray, name: str) -> None:
    """Show ``values`` (T, H): time along x, units along y."""
    T, H = values.shape
    source.data = {
        "image": [np.ascontiguousarray(values.T, dtype=np.float64)],
        "x": [0],
        "y": [0],
        "dw": [T],
        "dh": [H],
    }
    if name not in _RANGES:  # unbounded (cell state, linear units): symmetric range
        mapper = fig.renderers[0].glyph.color_mapper
        bound = float(np.max(np.abs(values))) or 1.0
        mapper.update(low=-bound, high=bound)


def gradient_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """Norm of dL/dh_t against t on a log scale: the current model and a comparison."""
    current = ColumnDataSource({"t": [], "norm": []})
    compare = ColumnDataSource({"t": [], "rnn": [], "lstm": []})
    title = "Gradient through time: ||dL/dh_t||"
    fig = line_figure(title, "time step t", "norm (log scale)", log=True)
    fig.line("t", "norm", source=current, line_width=2, color="#2c6fbb", legend_label="this model")
    fig.scatter("t", "norm", source=current, size=4, color="#2c6fbb")
    fig.line(
        "t",
        "rnn",
        source=compare,
        line_width=2,
        color="#c0392b",
        line_dash="dashed",
        legend_label="tanh RNN (fresh)",
    )
    fig.line(
        "t",
        "lstm",
        source=compare,
        line_width=2,
        color="#27ae60",
        line_dash="dotted",
        legend_label="LSTM (fresh, forget bias 1)",
    )
    fig.legend.location = "top_left"
    fig.add_tools(HoverTool(tooltips=[("t", "@t"), ("norm", "$y{0.000e}")]))
    return fig, current, compare


def attention_figure() -> tuple[figure, ColumnDataSource]:
    """Attention weights: source positions along x, output steps along y (first at the top),
    one cell per pair, with the two tokens and the weight on hover."""
    source = ColumnDataSource({"x": [], "y": [], "weight": [], "src": [], "out": []})
    mapper = LinearColorMapper(palette=Viridis256, low=0.0, high=1.0)
    fig = figure(
        height=320,
        width=420,
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(0.5, -0.5),  # first output step at the top
        title="Attention weights",
        x_axis_label="source position",
        y_axis_label="output step",
        tools="save,reset",
    )
    fig.rect(
        "x", "y", 1, 1, source=source, fill_color={"field": "weight", "transform": mapper},
        line_color=None,
    )  # fmt: skip
    fig.add_tools(
        HoverTool(tooltips=[("source", "@src"), ("output", "@out"), ("weight", "@weight{0.000}")])
    )
    return fig, source


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
    revealing rows one by one only sends the new data."""
    U, S = weights.shape
    n = U if rows is None else max(0, min(rows, U))
    labels = [*out, "<eos>"][:U]
    ys, xs = np.divmod(np.arange(n * S), S)
    source.data = {
        "x": xs.tolist(),
        "y": ys.tolist(),
        "weight": weights[:n].reshape(-1).astype(float).tolist(),
        "src": [src[x] for x in xs],
        "out": [labels[y] for y in ys],
    }
    if rows is None or rows <= 1:
        fig.xaxis.ticker = list(range(S))
        fig.xaxis.major_label_overrides = {k: t for k, t in enumerate(src)}
        fig.yaxis.ticker = list(range(U))
        fig.yaxis.major_label_overrides = {k: t for k, t in enumerate(labels)}
        fig.x_range.update(start=-0.5, end=S - 0.5)
        fig.y_range.update(start=U - 0.5, end=-0.5)


BEAM_STATUSES = (
    "start",
    "in the beam",
    "finished (EOS)",
    "finished (max length)",
    "pruned: outside the beam",
    "pruned: cannot beat the finished ones",
)


def beam_tree_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """The beam-search tree: one dot per hypothesis (x = step, y = its slot that step),
    coloured by what happened to it, with an edge to its parent; hover shows text and score."""
    nodes = ColumnDataSource({"x": [], "y": [], "label": [], "score": [], "status": []})
    edges = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []})
    fig = figure(
        height=300,
        sizing_mode="stretch_width",
        title="Beam search tree",
        x_axis_label="step",
        y_axis_label="slot (rank)",
        tools="pan,wheel_zoom,reset,save",
    )
    fig.segment("x0", "y0", "x1", "y1", source=edges, line_color="#999999", line_width=1)
    colours = CategoricalColorMapper(
        factors=list(BEAM_STATUSES),
        palette=["#555555", "#2c6fbb", "#27ae60", "#8e44ad", "#cccccc", "#e67e22"],
    )
    fig.scatter(
        "x", "y", source=nodes, size=9, legend_field="status",
        color={"field": "status", "transform": colours},
    )  # fmt: skip
    fig.legend.location = "top_right"
    fig.add_tools(
        HoverTool(tooltips=[("text", "@label"), ("score", "@score{0.000}"), ("", "@status")])
    )
    fig.y_range.flipped = True
    return fig, nodes, edges
