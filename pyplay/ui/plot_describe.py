"""What a plot shows, in words: :func:`describe`, the text alternative of a Bokeh figure.

Bokeh draws on a canvas, which a screen reader cannot read. :func:`describe` says in one
paragraph what a figure shows, read from the figure itself (its title, axes, legend and the
data its renderers draw), so the words can never drift from the picture:

- a line or a step curve: its name (legend label, else the plotted column) and its newest
  point, ``"training loss: 0.0432 at step 120"``;
- markers: their count and newest point;
- a heatmap (an ``image``, or ``rect`` cells coloured by a value): its size, its range of
  values and where the largest value is (in the axis' token labels when it has them);
- bars: how many and which is tallest; pictures: how many; words and labels (a caption, a
  diagram's names): the words.

Placeholders and legend samples (:mod:`pyplay.ui.plots`) are not data and are left out.
:mod:`pyplay.ui.plot_text` puts these paragraphs in the page.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from bokeh.models import GlyphRenderer, LabelSet, Legend, LegendItem, Plot
from bokeh.models.glyphs import (
    HBar,
    Image,
    ImageRGBA,
    Line,
    MultiLine,
    Rect,
    Scatter,
    Step,
    VBar,
)
from bokeh.models.glyphs import Text as TextGlyph

from pyplay.ui.plots import LEGEND_KEY, PLACEHOLDER

__all__ = ["describe", "describe_all", "legend_items", "number_text"]

MAX_ITEMS = 6  # lines described one by one in a figure; the rest counted
MAX_WORDS = 30  # the words of a figure's text glyphs (a caption, a diagram's labels) read out


def number_text(value: Any) -> str:
    """``value`` as the texts say it: in at most three significant digits (a category as it is)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not np.isfinite(number):
        return "not a number"
    return str(int(number)) if number.is_integer() and abs(number) < 1e6 else f"{number:.3g}"


def _field(spec: Any) -> str | None:
    """The data column a glyph property reads (``"y"`` or ``{"field": "y"}``), else None."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and isinstance(spec.get("field"), str):
        return str(spec["field"])
    field = getattr(spec, "field", None)  # bokeh.core.property.vectorization.Field
    return field if isinstance(field, str) else None


def _column(renderer: GlyphRenderer, spec: Any) -> np.ndarray | None:
    """The values of the column ``spec`` names in ``renderer``'s source, as an array."""
    name = _field(spec)
    data = getattr(renderer.data_source, "data", {})
    if name is None or name not in data:
        return None
    return np.asarray(data[name], dtype=object)


def _is_value(v: Any) -> bool:
    """Whether ``v`` is a finite number or a category (not None, NaN or infinite)."""
    if v is None:
        return False
    if isinstance(v, (float, np.floating)):
        return bool(np.isfinite(v))
    return True


def _annotations(fig: Plot) -> list[Any]:
    """The figure's annotations (legends, label sets) on every side; not ``fig.select``,
    which walks every model the figure references (a tenth of a second per heatmap)."""
    return [*fig.center, *fig.above, *fig.below, *fig.left, *fig.right]


def legend_items(fig: Plot) -> Iterator[LegendItem]:
    """The entries of every legend of ``fig``, in order."""
    for legend in (a for a in _annotations(fig) if isinstance(a, Legend)):
        yield from (i for i in legend.items if isinstance(i, LegendItem))


def _labels(fig: Plot) -> dict[int, str]:
    """The legend's label of each renderer (by ``id``)."""
    names: dict[int, str] = {}
    for item in legend_items(fig):
        label = item.label
        text = label.get("value") if isinstance(label, dict) else getattr(label, "value", label)
        for r in item.renderers:
            if text:
                names.setdefault(id(r), str(text))
    return names


def _axis_name(axes: Sequence[Any]) -> str:
    labels = [a.axis_label for a in axes if getattr(a, "axis_label", None)]
    return str(labels[0]) if labels else ""


def _tick_name(axes: Sequence[Any], position: float) -> str:
    """``position`` as the axis labels it (an override such as a token), else the number."""
    for axis in axes:
        overrides = getattr(axis, "major_label_overrides", None) or {}
        for key in (
            position,
            int(position) if float(position).is_integer() else None,
            str(position),
        ):
            if key is not None and key in overrides:
                return str(overrides[key]).strip()  # a log axis pads its labels
    return number_text(position)


def _curve(fig: Plot, renderer: GlyphRenderer, name: str) -> str | None:
    """A line or markers: the newest (last) finite point."""
    glyph = renderer.glyph
    x, y = _column(renderer, glyph.x), _column(renderer, glyph.y)
    if x is None or y is None or len(y) == 0:
        return None
    n = min(len(x), len(y))
    last = next((k for k in range(n - 1, -1, -1) if _is_value(x[k]) and _is_value(y[k])), None)
    if last is None:
        return None
    where = _axis_name(fig.xaxis)
    at = f" at {where} {number_text(x[last])}" if where else f" at {number_text(x[last])}"
    if isinstance(glyph, Scatter) and n > 1:
        count = sum(1 for k in range(n) if _is_value(x[k]) and _is_value(y[k]))
        return f"{name}: {count}, the newest {number_text(y[last])}{at}"
    return f"{name}: {number_text(y[last])}{at}"


def _grid(fig: Plot, values: np.ndarray, xs: np.ndarray, ys: np.ndarray, name: str) -> str:
    """A heatmap: size, range and where its largest value is."""
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v)
    if not ok.any():
        return f"{name}: no values yet"
    k = int(np.argmax(np.where(ok, v, -np.inf)))
    x_at, y_at = _tick_name(fig.xaxis, xs.flat[k]), _tick_name(fig.yaxis, ys.flat[k])
    x_name, y_name = _axis_name(fig.xaxis) or "x", _axis_name(fig.yaxis) or "y"
    low, high = number_text(v[ok].min()), number_text(v[ok].max())
    return f"{name}: values from {low} to {high}, the largest at {x_name} {x_at}, {y_name} {y_at}"


def _image(fig: Plot, renderer: GlyphRenderer, name: str) -> str | None:
    """An ``image`` glyph (rows along y, columns along x, from its corner x, y)."""
    glyph = renderer.glyph
    data = renderer.data_source.data
    images = data.get(_field(glyph.image) or "", [])
    if len(images) == 0:
        return None
    image = np.asarray(images[0], dtype=np.float64)  # (rows, cols)
    if image.ndim != 2 or image.size <= 1:
        return None
    rows, cols = image.shape
    x0 = float(data["x"][0]) if "x" in data else 0.0
    y0 = float(data["y"][0]) if "y" in data else 0.0
    dw = float(data["dw"][0]) if "dw" in data else float(cols)
    dh = float(data["dh"][0]) if "dh" in data else float(rows)
    xs = x0 + (np.arange(cols) + 0.5) * dw / cols  # (cols,) cell centres
    ys = y0 + (np.arange(rows) + 0.5) * dh / rows  # (rows,)
    gx, gy = np.meshgrid(xs, ys)  # (rows, cols) each
    return _grid(fig, image, gx, gy, f"{name}{rows} by {cols} cells")


def _cells(fig: Plot, renderer: GlyphRenderer, name: str) -> str | None:
    """``rect`` cells coloured by a column (a colour mapper's field)."""
    glyph = renderer.glyph
    field = _field(glyph.fill_color)
    data = renderer.data_source.data
    if not field or field not in data or len(data[field]) == 0:
        return None
    xs, ys = _column(renderer, glyph.x), _column(renderer, glyph.y)
    if xs is None or ys is None:
        return None
    try:
        values = np.asarray(data[field], dtype=np.float64)
    except (TypeError, ValueError):
        return None  # cells coloured by a colour column (a tree's nodes): no values
    return _grid(fig, values, xs, ys, f"{name}{len(xs)} cells")


def _bars(fig: Plot, renderer: GlyphRenderer, name: str) -> str | None:
    """Bars: how many, and the tallest."""
    glyph = renderer.glyph
    vertical = isinstance(glyph, VBar)
    at = _column(renderer, glyph.x if vertical else glyph.y)
    size = _column(renderer, glyph.top if vertical else glyph.right)
    if at is None or size is None or len(size) == 0:
        return None
    values = np.asarray(size, dtype=np.float64)
    if not np.isfinite(values).any():
        return None
    k = int(np.nanargmax(values))
    axes = fig.xaxis if vertical else fig.yaxis
    where = _axis_name(axes)
    return (
        f"{name + ': ' if name else ''}{len(values)} bars, the tallest {number_text(values[k])} at "
        f"{where + ' ' if where else ''}{_tick_name(axes, at[k])}"
    )


def _renderer_name(fig: Plot, renderer: GlyphRenderer, labels: dict[int, str]) -> str:
    if id(renderer) in labels:
        return labels[id(renderer)]
    glyph = renderer.glyph
    field = _field(getattr(glyph, "y", None)) if hasattr(glyph, "y") else None
    if isinstance(glyph, (Image, Rect)):
        return ""  # a map is named by its figure
    if field and field not in ("y", "top"):
        return field
    return "the points" if isinstance(glyph, Scatter) else _axis_name(fig.yaxis) or "values"


def describe(fig: Plot) -> str:
    """One paragraph that says what ``fig`` shows and its newest values (module docstring).

    Examples
    --------
    >>> from bokeh.plotting import figure
    >>> fig = figure(title="Loss", x_axis_label="step", y_axis_label="loss")
    >>> _ = fig.line([1, 2, 3], [0.9, 0.5, 0.25], legend_label="training loss")
    >>> describe(fig)
    'Loss: training loss: 0.25 at step 3.'
    """
    title = getattr(getattr(fig, "title", None), "text", "") or ""
    if not title:
        x, y = _axis_name(fig.xaxis), _axis_name(fig.yaxis)
        title = f"{y} over {x}" if x and y else y or x or "A drawing"
    labels = _labels(fig)
    parts: list[str] = []
    named: set[str] = set()
    lines = 0
    for renderer in fig.renderers:
        if not isinstance(renderer, GlyphRenderer) or not renderer.visible:
            continue
        if renderer.name in (PLACEHOLDER, LEGEND_KEY):
            continue
        glyph, name = renderer.glyph, _renderer_name(fig, renderer, labels)
        text: str | None = None
        if isinstance(glyph, (Line, Step, Scatter)):
            if name in named:
                continue  # a line's markers: the line said it
            named.add(name)
            lines += 1
            text = _curve(fig, renderer, name) if lines <= MAX_ITEMS else None
        elif isinstance(glyph, Image):
            text = _image(fig, renderer, name + ", " if name else "a map of ")
        elif isinstance(glyph, Rect):
            text = _cells(fig, renderer, name + ", " if name else "a map of ")
        elif isinstance(glyph, (VBar, HBar)):
            text = _bars(fig, renderer, name if id(renderer) in labels else "")
        elif isinstance(glyph, ImageRGBA):
            count = len(renderer.data_source.data.get(_field(glyph.image) or "", []))
            text = f"{count} picture{'s' * (count != 1)}" if count else None
        elif isinstance(glyph, TextGlyph):
            words = _column(renderer, glyph.text)
            if words is not None and len(words):
                shown = ", ".join(str(w) for w in words[:MAX_WORDS])
                more = f" and {len(words) - MAX_WORDS} more" if len(words) > MAX_WORDS else ""
                text = f"the words {shown}{more}"
        elif isinstance(glyph, MultiLine):
            count = len(renderer.data_source.data.get(_field(glyph.xs) or "", []))
            text = f"{name}: {count} lines" if count else None
        if text:
            parts.append(text)
    label_sets = [a for a in _annotations(fig) if isinstance(a, LabelSet)]
    for labels_set in label_sets:  # a diagram's names, a tree's nodes
        names = list(labels_set.source.data.get(_field(labels_set.text) or "", []))
        if labels_set.visible and names:
            more = f" and {len(names) - MAX_WORDS} more" if len(names) > MAX_WORDS else ""
            parts.append("labels " + ", ".join(map(str, names[:MAX_WORDS])) + more)
    if lines > MAX_ITEMS:
        parts.append(f"and {lines - MAX_ITEMS} more lines")
    body = "; ".join(parts) if parts else "nothing drawn yet"
    return f"{title.rstrip('.:')}: {body}."


def describe_all(figures: Sequence[Plot]) -> str:
    """The paragraphs of ``figures`` one after another, each naming its plot."""
    return " ".join(describe(f) for f in figures)
