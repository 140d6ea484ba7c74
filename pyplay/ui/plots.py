"""The plot components every lesson uses (Bokeh): lines over steps or time, heatmaps,
attention maps, the gradient through time and the beam-search tree (the loss curve and its
log / linear switch: :mod:`pyplay.ui.plot_loss`; log axes: :mod:`pyplay.ui.plot_log_axis`).

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
from bokeh.models import (
    ColumnDataSource,
    GlyphRenderer,
    HoverTool,
    Legend,
    LegendItem,
    LogScale,
    Title,
)
from bokeh.plotting import figure

from pyplay.ui.plot_data import set_data
from pyplay.ui.plot_log_axis import (
    follow_log_ticks,
    log_ticks,
    positive,
    positive_extent,
    set_log,
    set_log_ticks,
    tick_label,
)
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
