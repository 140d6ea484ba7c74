"""The plot components every lesson uses (Bokeh): lines over steps or time, the loss curve,
heatmaps, attention maps, the gradient through time and the beam-search tree.

One set of conventions, so every plot reads the same way:

- a figure whose data is still empty draws an invisible placeholder (:func:`placeholder`), so
  Bokeh's automatic ranges always have something to fit (an empty plot made BokehJS warn
  "could not set initial ranges" on every redraw);
- legends sit outside the data (:func:`legend_outside`), integer axes get integer ticks
  (:func:`integer_axis`), log axes read in powers of ten (:func:`set_log`);
- heatmaps have a colour bar, cells centred on integer positions (so tick k sits in the middle
  of cell k, and token labels name their cell) and hover showing the value;
- data goes to the browser as NumPy arrays (sent as binary, checked as one value) and
  figures are updated in place: views never rebuild a figure to show new values.

Each builder returns the figure and the data sources that views update; nothing here knows
about training. Bokeh draws titles and ticks on a canvas, so views put a text heading beside
every figure for readers and tests.
"""

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
    Legend,
    LegendItem,
    LinearColorMapper,
    LinearScale,
    LogScale,
    LogTicker,
    Range1d,
    Span,
)
from bokeh.models.formatters import BasicTickFormatter, LogTickFormatter
from bokeh.palettes import RdBu11, Viridis256
from bokeh.plotting import figure

from pyplay.ui.plot_tree import beam_tree_figure, update_beam_tree

__all__ = [
    "attention_figure",
    "beam_tree_figure",
    "colour_bar",
    "gradient_figure",
    "heatmap_figure",
    "integer_axis",
    "label_axis",
    "legend_outside",
    "line_figure",
    "loss_figure",
    "placeholder",
    "positive",
    "set_data",
    "set_log",
    "set_placeholder",
    "update_attention",
    "update_beam_tree",
    "update_heatmap",
    "watch_placeholder",
]

PLACEHOLDER = "pyplay-placeholder"  # the name of a figure's invisible placeholder renderer
LEGEND_SIDE = "right"

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


# ---------------------------------------------------------------------------- conventions
def placeholder(fig: figure, x: tuple[float, float], y: tuple[float, float]) -> None:
    """Give ``fig`` an invisible renderer over the box ``x`` by ``y``, shown while the real
    data is empty (:func:`set_placeholder`): Bokeh's automatic ranges count invisible
    renderers, so the axes have a span instead of NaN."""
    source = ColumnDataSource({"x": list(x), "y": list(y)})
    fig.scatter("x", "y", source=source, visible=False, name=PLACEHOLDER)


def set_placeholder(fig: figure, on: bool) -> None:
    """Let ``fig``'s placeholder count for the axes (``on``: no real data yet) or not."""
    for r in fig.renderers:
        if r.name == PLACEHOLDER:
            box = r.tags[0] if r.tags else None
            if box is None:  # keep the box the first time, to put it back later
                r.tags = [dict(r.data_source.data)]
                box = r.tags[0]
            data = box if on else {"x": [], "y": []}
            if len(r.data_source.data["x"]) != len(data["x"]):
                r.data_source.data = dict(data)


def watch_placeholder(fig: figure, *sources: ColumnDataSource) -> None:
    """Show ``fig``'s placeholder exactly while every one of ``sources`` is empty."""

    def check(attr: str, old: Any, new: Any) -> None:
        set_placeholder(fig, all(not len(next(iter(s.data.values()), [])) for s in sources))

    for source in sources:
        source.on_change("data", check)


def legend_outside(fig: figure, side: str = LEGEND_SIDE) -> Legend:
    """A legend beside the plot area (``side``: "right" or "below"), never over the data;
    glyphs added later with ``legend_label`` join it."""
    legends = list(fig.legend)
    legend = legends[0] if legends else Legend()
    for panel in ("center", "left", "right", "above", "below"):
        setattr(fig, panel, [obj for obj in getattr(fig, panel) if obj is not legend])
    if side == "below":
        legend.orientation = "horizontal"
    legend.click_policy = "hide"
    legend.label_text_font_size = "9pt"
    legend.spacing = 2
    fig.add_layout(legend, side)
    return legend


def integer_axis(axis: Any) -> None:
    """Ticks only on whole numbers (steps, positions, units): never a half-step tick."""
    axis.ticker = BasicTicker(min_interval=1, desired_num_ticks=8)
    axis.formatter = BasicTickFormatter(use_scientific=False)


def label_axis(axis: Any, labels: Sequence[str]) -> None:
    """Name position k of ``axis`` ``labels[k]``: one tick in the middle of every cell."""
    axis.ticker = FixedTicker(ticks=list(range(len(labels))))
    axis.major_label_overrides = {k: str(t) for k, t in enumerate(labels)}


def set_log(fig: figure, on: bool) -> None:
    """Switch ``fig``'s y axis between a log scale (ticks at powers of ten, labelled 10^k)
    and a linear one, in place."""
    if isinstance(fig.y_scale, LogScale) == on:
        return
    fig.y_scale = LogScale() if on else LinearScale()
    for axis in fig.yaxis:
        if on:
            axis.ticker = LogTicker(desired_num_ticks=6)
            axis.formatter = LogTickFormatter()
        else:
            axis.ticker = BasicTicker()
            axis.formatter = BasicTickFormatter()


def _arrays(data: dict[str, Any]) -> dict[str, Any]:
    """Numeric lists as NumPy arrays (sent as binary buffers, validated as one value)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
            out[key] = value.astype(np.float64) if value.dtype.kind == "f" else value
        else:
            out[key] = value
    return out


@without_property_validation
def set_data(source: ColumnDataSource, data: dict[str, Any]) -> None:
    """Replace ``source``'s columns at once (numeric columns best given as arrays)."""
    source.data = _arrays(data)


# ---------------------------------------------------------------------------- lines
def line_figure(
    title: str,
    x_label: str,
    y_label: str,
    *,
    height: int = 260,
    log: bool = False,
    tools: str = "pan,wheel_zoom,reset,save",
    integer_x: bool = True,
    box: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> figure:
    """An empty figure the width of the page for lines over steps or time: integer ticks on
    x (``integer_x``), a log y axis if ``log``, and a placeholder over ``box`` ((x0, x1),
    (y0, y1); by default 0..1 by 0.1..1) until data comes."""
    fig = figure(
        height=height,
        sizing_mode="stretch_width",
        title=title,
        x_axis_label=x_label,
        y_axis_label=y_label,
        tools=tools,
    )
    if log:
        set_log(fig, True)
    if integer_x:
        integer_axis(fig.xaxis[0])
    (x0, x1), (y0, y1) = box or ((0.0, 1.0), (0.1, 1.0))
    placeholder(fig, (x0, x1), (y0, y1))
    return fig


def loss_figure(log: bool = True) -> tuple[figure, ColumnDataSource, Span]:
    """Training loss against step (log scale by default: losses fall by decades), with the
    trivial baseline as a dashed line that has its own legend entry."""
    source = ColumnDataSource({"step": [], "loss": []})
    fig = line_figure("Training loss", "step", "loss", log=log, box=((0.0, 1.0), (0.01, 1.0)))
    line = fig.line("step", "loss", source=source, line_width=2, color="#2c6fbb")
    style = {"line_dash": "dashed", "line_color": "#c0392b", "line_width": 1.5}
    baseline = Span(location=1.0, dimension="width", **style)
    fig.add_layout(baseline)
    key = fig.line([], [], name="baseline-key", **style)  # draws nothing: the legend's sample
    legend = legend_outside(fig)
    legend.items = [
        LegendItem(label="training loss", renderers=[line]),
        LegendItem(label="baseline (trivial predictor)", renderers=[key]),
    ]
    baseline.on_change("visible", lambda attr, old, new: setattr(key, "visible", new))
    watch_placeholder(fig, source)
    fig.add_tools(
        HoverTool(
            tooltips=[("step", "@step"), ("loss", "@loss{0.0000}")], mode="vline", renderers=[line]
        )
    )
    return fig, source, baseline


def gradient_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """Norm of dL/dh_t against t on a log scale: the current model and a comparison.
    Zero norms are sent as NaN (a gap), never as a tiny number that squashes the axis."""
    current = ColumnDataSource({"t": [], "norm": []})
    compare = ColumnDataSource({"t": [], "rnn": [], "lstm": []})
    title = "Gradient through time: ||dL/dh_t||"
    fig = line_figure(title, "time step t", "norm (log scale)", log=True)
    legend_outside(fig)
    this = fig.line("t", "norm", source=current, line_width=2, color="#2c6fbb", legend_label="this model")  # fmt: skip
    fig.scatter("t", "norm", source=current, size=4, color="#2c6fbb", legend_label="this model")
    rnn = fig.line("t", "rnn", source=compare, line_width=2, color="#c0392b", line_dash="dashed",
                   legend_label="tanh RNN (fresh)")  # fmt: skip
    lstm = fig.line("t", "lstm", source=compare, line_width=2, color="#27ae60", line_dash="dotted",
                    legend_label="LSTM (fresh, forget bias 1)")  # fmt: skip
    fig.add_tools(
        HoverTool(tooltips=[("t", "@t"), ("norm", "$y{0.000e}")], renderers=[this, rnn, lstm])
    )
    watch_placeholder(fig, current, compare)
    return fig, current, compare


def positive(values: np.ndarray) -> np.ndarray:
    """``values`` for a log axis: zeros and negatives become NaN (drawn as a gap)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(v > 0, v, np.nan)


# ---------------------------------------------------------------------------- heatmaps
def heatmap_figure(
    name: str, title: str, x_label: str = "time step t", y_label: str = "unit"
) -> tuple[figure, ColumnDataSource]:
    """A (time x unit) heatmap: a colour bar, cell k centred on k (integer ticks), and hover
    showing both positions and the value. ``name`` picks the colour range: gates and
    probabilities 0..1, candidates -1..1, anything else symmetric about 0."""
    source = ColumnDataSource(
        {"image": [np.zeros((1, 1))], "x": [-0.5], "y": [-0.5], "dw": [1], "dh": [1]}
    )
    lo, hi = _RANGES.get(name, (-1, 1))
    palette = Viridis256 if name in ("i", "f", "o", "r", "z", "p") else list(reversed(RdBu11))
    mapper = LinearColorMapper(palette=palette, low=lo, high=hi)
    fig = figure(
        height=210,
        width=360,
        title=title,
        x_axis_label=x_label,
        y_axis_label=y_label,
        tools="save,reset",
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(-0.5, 0.5),
    )
    fig.image(image="image", x="x", y="y", dw="dw", dh="dh", source=source, color_mapper=mapper)
    fig.add_tools(
        HoverTool(tooltips=[("x", "$x{0}"), ("y", "$y{0}"), ("value", "@image{0.000}")])
    )
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
    source.data = {
        "image": [np.ascontiguousarray(values.T, dtype=np.float64)],  # (H, T)
        "x": [-0.5],
        "y": [-0.5],
        "dw": [T],
        "dh": [H],
    }
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
) -> tuple[figure, ColumnDataSource]:
    """Attention weights: keys along x, queries down y (first at the top), one cell per pair,
    a colour bar 0..1, the two tokens and the weight on hover."""
    source = ColumnDataSource({"x": [], "y": [], "weight": [], "src": [], "out": []})
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
    source.data = {
        "x": xs,
        "y": ys,
        "weight": np.asarray(weights[:n], dtype=np.float64).reshape(-1),  # (n*S,)
        "src": [src[x] for x in xs],
        "out": [labels[y] for y in ys],
    }
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

