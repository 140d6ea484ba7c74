"""The plot components every lesson uses (Bokeh): lines over steps or time, heatmaps,
attention maps, the gradient through time and the beam-search tree (the loss curve and its
log / linear switch: :mod:`pyplay.ui.plot_loss`).

One set of conventions, so every plot reads the same way:

- a figure whose data is still empty draws an invisible placeholder (:func:`placeholder`), so
  Bokeh's automatic ranges always have something to fit (an empty plot made BokehJS warn
  "could not set initial ranges" on every redraw);
- legends sit outside the data (:func:`legend_outside`) and draw their samples before the
  data comes (:func:`legend_key`), integer axes get integer ticks (:func:`integer_axis`), log
  axes read in powers of ten (:func:`set_log`), or are labelled from the data
  (:func:`set_log_ticks`: 1-2-5 ticks over a decade or two, "0.05" or "2×10⁻⁵");
- heatmaps have a colour bar, cells centred on integer positions (so tick k sits in the middle
  of cell k, and token labels name their cell) and hover showing the value;
- data goes to the browser as NumPy arrays (sent as binary, checked as one value) and
  figures are updated in place: views never rebuild a figure to show new values.

Each builder returns the figure and the data sources that views update; nothing here knows
about training. Bokeh draws titles and ticks on a canvas, so views put a text heading beside
every figure for readers and tests.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from bokeh.core.property.validation import without_property_validation
from bokeh.models import (
    BasicTicker,
    ColumnDataSource,
    FixedTicker,
    GlyphRenderer,
    HoverTool,
    Legend,
    LegendItem,
    LinearScale,
    LogScale,
    LogTicker,
    Title,
)
from bokeh.models.formatters import BasicTickFormatter, LogTickFormatter
from bokeh.plotting import figure

from pyplay.ui.plot_maps import (
    attention_figure,
    colour_bar,
    heatmap_figure,
    integer_axis,
    label_axis,
    update_attention,
    update_heatmap,
)
from pyplay.ui.plot_tree import beam_tree_figure, update_beam_tree

__all__ = [
    "attention_figure",
    "beam_tree_figure",
    "colour_bar",
    "follow_log_ticks",
    "gradient_figure",
    "heatmap_figure",
    "integer_axis",
    "keep_legend_samples",
    "label_axis",
    "legend_key",
    "legend_outside",
    "line_figure",
    "log_ticks",
    "placeholder",
    "positive",
    "positive_extent",
    "set_data",
    "set_log",
    "set_log_ticks",
    "set_placeholder",
    "set_title",
    "tick_label",
    "update_attention",
    "update_beam_tree",
    "update_heatmap",
    "watch_placeholder",
]

PLACEHOLDER = "pyplay-placeholder"  # the name of a figure's invisible placeholder renderer
LEGEND_KEY = "pyplay-legend-key"  # the name of a legend entry's own sample renderer
# the style a legend sample copies from the renderer it stands for
KEY_STYLE = ("line_color", "line_width", "line_dash", "line_alpha", "fill_color", "fill_alpha",
             "marker", "size")  # fmt: skip
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
LOG_FINE_STEPS = (  # (most decades in view, mantissa steps on [1, 2), [2, 5), [5, 10))
    (0.04, (0.02, 0.05, 0.1)),  # under 10 %: 0.55, 0.56, 0.57, 0.58
    (0.12, (0.05, 0.1, 0.2)),  # under 30 %: 0.5, 0.52, 0.54, ...
)
LOG_MANTISSAS = (  # (most decades in view, mantissas of the labelled ticks)
    (0.3, (1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9)),
    (0.7, (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9)),
    (1.3, (1, 2, 3, 5)),
    (2.5, (1, 2, 5)),
)
LEGEND_SIDE: Literal["right", "below"] = "right"


# ---------------------------------------------------------------------------- conventions
def placeholder(fig: figure, x: tuple[float, float], y: tuple[float, float]) -> None:
    """Give ``fig`` an invisible renderer over the box ``x`` by ``y``, shown while the real
    data is empty (:func:`set_placeholder`): Bokeh's automatic ranges count invisible
    renderers, so the axes have a span instead of NaN."""
    source = ColumnDataSource({"x": list(x), "y": list(y)})
    fig.scatter("x", "y", source=source, visible=False, name=PLACEHOLDER)


def set_placeholder(fig: figure, on: bool) -> None:
    """Let ``fig``'s placeholder hold its box (``on``: no real data yet) or one point of the
    real data, which leaves the ranges as the data makes them. It is never emptied: the
    page may draw the placeholder's change before the data's, and an empty placeholder
    there would leave nothing to fit."""
    for r in fig.renderers:
        if r.name != PLACEHOLDER:
            continue
        if not r.tags:  # keep the box the first time, to put it back later
            r.tags = [dict(r.data_source.data)]
        data = r.tags[0] if on else _data_point(fig)
        if data is not None and r.data_source.data != data:
            r.data_source.data = data


def _data_point(fig: figure) -> dict[str, list[float]] | None:
    """The first point of ``fig``'s lines and dots that a log axis can show too."""
    log = isinstance(fig.y_scale, LogScale)
    for r in fig.renderers:
        x, y = getattr(r.glyph, "x", None), getattr(r.glyph, "y", None)
        if r.name == PLACEHOLDER or not isinstance(x, str) or not isinstance(y, str):
            continue
        data = r.data_source.data
        if x not in data or y not in data or not len(data[y]):
            continue
        xs = np.asarray(data[x], dtype=np.float64)
        ys = np.asarray(data[y], dtype=np.float64)
        ok = np.isfinite(xs) & np.isfinite(ys) & ((ys > 0) if log else True)
        if ok.any():
            k = int(np.argmax(ok))
            return {"x": [float(xs[k])], "y": [float(ys[k])]}
    return None


def watch_placeholder(fig: figure, *sources: ColumnDataSource) -> None:
    """Show ``fig``'s placeholder box exactly while every one of ``sources`` is empty."""

    def check(attr: str, old: Any, new: Any) -> None:
        set_placeholder(fig, all(not len(next(iter(s.data.values()), [])) for s in sources))

    for source in sources:
        source.on_change("data", check)


def set_title(fig: figure, text: str) -> None:
    """Change the text of ``fig``'s title in place (a new Title model is not redrawn)."""
    title = fig.title
    if isinstance(title, Title) and title.text != text:
        title.text = text


def legend_outside(
    fig: figure, side: Literal["right", "below"] = LEGEND_SIDE, stacked: bool = False
) -> Legend:
    """A legend beside the plot area (``side``: "right" or "below"), never over the data;
    glyphs added later with ``legend_label`` join it. Below the plot its entries stand in a
    row, or one under the other if ``stacked`` (long labels: the figure then needs no more
    width than its widest label, so it fits a 320 px column)."""
    legends = list(fig.legend)
    legend = legends[0] if legends else Legend()
    for panel in ("center", "left", "right", "above", "below"):
        setattr(fig, panel, [obj for obj in getattr(fig, panel) if obj is not legend])
    if side == "below" and not stacked:
        legend.orientation = "horizontal"
    legend.click_policy = "hide"
    legend.label_text_font_size = "9pt"
    legend.spacing = 2
    fig.add_layout(legend, side)
    return legend


def legend_key(fig: figure, renderer: GlyphRenderer) -> GlyphRenderer:
    """A legend sample for ``renderer``: a renderer of the same glyph and style with one NaN
    point, which draws nothing in the plot. Bokeh draws no legend sample for a renderer
    without rows (bokeh/bokeh#11193), so an entry whose data is still empty would show a
    blank key; put this beside ``renderer`` in its :class:`LegendItem`."""
    glyph = renderer.glyph
    style = {}
    for name in KEY_STYLE:
        value = getattr(glyph, name, None)
        if value is not None and not isinstance(value, dict):  # a field: not a style
            style[name] = value
    if "marker" in style:
        return fig.scatter([np.nan], [np.nan], name=LEGEND_KEY, **style)
    return fig.line([np.nan], [np.nan], name=LEGEND_KEY, **style)


def keep_legend_samples(fig: figure) -> None:
    """Give every legend entry of ``fig`` a sample drawn before its data comes
    (:func:`legend_key`), hidden with it when the entry is clicked."""
    for legend in fig.legend:
        for item in legend.items:
            assert isinstance(item, LegendItem)  # Bokeh turns (label, renderers) into these
            if any(r.name == LEGEND_KEY for r in item.renderers) or not item.renderers:
                continue
            item.renderers = [*item.renderers, legend_key(fig, item.renderers[0])]


def tick_label(value: float) -> str:
    """A log axis's label for ``value``: plain from 0.001 to 9999 ("0.05", "2000"), a power of
    ten below and above ("10⁻⁴", "2×10⁻⁵")."""
    if 1e-3 <= value < 1e4:
        return f"{value:.6g}"
    mantissa, exponent = f"{value:.6e}".split("e")
    power = "10" + str(int(exponent)).translate(SUPERSCRIPT)
    m = float(mantissa)
    return power if m == 1 else f"{m:g}×{power}"


def log_ticks(low: float, high: float) -> tuple[list[float], list[float]]:
    """Major and minor ticks for a log axis showing ``low`` .. ``high`` (both > 0), one
    decade beyond each side for the padding of the range. The fewer decades, the more
    mantissas, so about five to eight labels are in view whatever the span: (1, 2, 5) on
    two decades, every power of ten on six, every k-th power beyond (Bokeh's own LogTicker
    switches to linear ticks under two decades, which all sit in the top decade)."""
    if not (0 < low <= high < np.inf):
        raise ValueError(f"low and high: expected 0 < low <= high < inf, got {low!r}, {high!r}")
    span = np.log10(high / low)
    for limit, steps in LOG_FINE_STEPS:
        if span <= limit:
            return _fine_log_ticks(low, high, steps), []
    first, last = int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 1
    every = max(1, int(np.ceil(span / 6)))
    mantissas: tuple[float, ...] = (1,)
    for limit, these in LOG_MANTISSAS:
        if span <= limit:
            mantissas = these
            break
    major, minor = [], []
    for e in range(first, last + 1):
        values = [float(f"{m}e{e}") for m in range(1, 10)]
        if len(mantissas) > 1:
            major += [float(f"{m}e{e}") for m in mantissas]
            minor += [v for v in values if v not in major]
        elif e % every == 0:
            major.append(values[0])
            minor += values[1:] if every == 1 else []
    return major, minor


def _fine_log_ticks(low: float, high: float, steps: tuple[float, float, float]) -> list[float]:
    """Ticks for a log axis spanning a fraction of a decade (:data:`LOG_FINE_STEPS`): the
    mantissas 1..10 in ``steps`` (finer below 2, coarser above 5, so they sit about evenly on
    the log scale), kept within a factor 1.5 of the data (the range's padding is smaller)."""
    mantissas = np.concatenate(
        [
            np.arange(a, b, step)
            for (a, b), step in zip(((1, 2), (2, 5), (5, 10)), steps, strict=True)
        ]
    )  # (M,)
    ticks = []
    for e in range(int(np.floor(np.log10(low / 1.5))), int(np.floor(np.log10(high * 1.5))) + 1):
        ticks += [float(f"{m:.4g}e{e}") for m in mantissas]
    return [t for t in ticks if low / 1.5 <= t <= high * 1.5]


def set_log_ticks(fig: figure, low: float, high: float) -> None:
    """Label ``fig``'s log y axis for data from ``low`` to ``high`` (:func:`log_ticks`,
    :func:`tick_label`), changing nothing when the ticks are already these."""
    major, minor = log_ticks(low, high)
    for axis in fig.yaxis:
        ticker = axis.ticker
        if not isinstance(ticker, FixedTicker):
            ticker = axis.ticker = FixedTicker()
        if list(ticker.ticks) != major or list(ticker.minor_ticks) != minor:
            ticker.update(ticks=major, minor_ticks=minor)
            axis.major_label_overrides = {v: tick_label(v) for v in major}


def positive_extent(*columns: Any) -> tuple[float, float]:
    """(smallest, largest) positive finite value of ``columns`` (sequences of numbers);
    (nan, nan) when there is none."""
    parts = [np.asarray(c, dtype=np.float64).ravel() for c in columns]
    values = np.concatenate(parts) if parts else np.zeros(0)
    values = values[np.isfinite(values) & (values > 0)]
    return (float(values.min()), float(values.max())) if values.size else (np.nan, np.nan)


def follow_log_ticks(fig: figure, *sources: ColumnDataSource, x: str) -> None:
    """Label ``fig``'s log y axis from the data of ``sources`` (every column but ``x``) each
    time it changes (:func:`set_log_ticks`)."""

    def follow(attr: str, old: Any, new: Any) -> None:
        columns = [v for s in sources for k, v in s.data.items() if k != x]
        low, high = positive_extent(*columns)
        if low == high:  # one value: Bokeh's range spans about a decade either side of it
            low, high = low / 10, high * 10
        if np.isfinite(low):
            set_log_ticks(fig, low, high)

    for source in sources:
        source.on_change("data", follow)


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


def gradient_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource]:
    """Norm of dL/dh_t against t on a log scale: the current model and a comparison.
    Zero norms are sent as NaN (a gap), never as a tiny number that squashes the axis."""
    current = ColumnDataSource({"t": [], "norm": []})
    compare = ColumnDataSource({"t": [], "rnn": [], "lstm": []})
    title = "Gradient through time: ||dL/dh_t||"
    fig = line_figure(title, "time step t", "norm (log scale)", log=True)
    legend_outside(fig)
    this = fig.line("t", "norm", source=current, line_width=2, color="#2c6fbb",
                    legend_label="this model")  # fmt: skip
    fig.scatter("t", "norm", source=current, size=4, color="#2c6fbb", legend_label="this model")
    rnn = fig.line("t", "rnn", source=compare, line_width=2, color="#c0392b", line_dash="dashed",
                   legend_label="tanh RNN (fresh)")  # fmt: skip
    lstm = fig.line("t", "lstm", source=compare, line_width=2, color="#27ae60", line_dash="dotted",
                    legend_label="LSTM (fresh, forget bias 1)")  # fmt: skip
    keep_legend_samples(fig)
    set_log_ticks(fig, 0.1, 1.0)  # the placeholder's box, then the data's
    follow_log_ticks(fig, current, compare, x="t")
    fig.add_tools(
        HoverTool(tooltips=[("t", "@t"), ("norm", "$y{0.000e}")], renderers=[this, rnn, lstm])
    )
    watch_placeholder(fig, current, compare)
    compared = [
        i
        for i in fig.legend[0].items
        if isinstance(i, LegendItem) and any(r in (rnn, lstm) for r in i.renderers)
    ]

    def show_compared(attr: str, old: Any, new: Any) -> None:  # no legend for undrawn lines
        for item in compared:
            item.visible = bool(len(compare.data["t"]))

    compare.on_change("data", show_compared)
    show_compared("data", None, None)
    return fig, current, compare


def positive(values: np.ndarray) -> np.ndarray:
    """``values`` for a log axis: zeros and negatives become NaN (drawn as a gap)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(v > 0, v, np.nan)
