"""Log axes (Bokeh): labelled from the data, in plain numbers or powers of ten.

A log y axis is either Bokeh's own (:func:`set_log`: ticks at powers of ten, labelled 10^k)
or labelled from the data (:func:`set_log_ticks`, kept up to date by
:func:`follow_log_ticks`): 1-2-5 ticks over a decade or two, every power of ten over more,
labelled "0.05" from 0.001 to 9999 and "2×10⁻⁵" beyond (:func:`tick_label`). Those labels keep
one width as the data moves (monospace, padded), because BokehJS lays the whole plot out
again whenever the widest tick label's width changes. Values a log axis cannot show (zero,
negative) are sent as NaN, a gap (:func:`positive`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.models import (
    BasicTicker,
    ColumnDataSource,
    FixedTicker,
    LinearScale,
    LogScale,
    LogTicker,
)
from bokeh.models.formatters import BasicTickFormatter, LogTickFormatter
from bokeh.plotting import figure

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
LOG_LABEL_CHARS = 6  # a log axis's tick labels are at least this wide ("0.0015", "2×10⁻⁵")
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
    :func:`tick_label`), changing nothing when the ticks are already these.

    The labels keep one width while the data moves: monospace, right-aligned with spaces to
    at least :data:`LOG_LABEL_CHARS` characters and never narrower than the axis's labels
    before. (BokehJS lays the whole plot out again, about 150 ms of the page's main thread
    on a slow machine, each time the widest tick label's width changes: while a loss fell,
    "0.5" giving way to "0.05" did it every few seconds.)"""
    major, minor = log_ticks(low, high)
    for axis in fig.yaxis:
        ticker = axis.ticker
        if not isinstance(ticker, FixedTicker):
            ticker = axis.ticker = FixedTicker()
            axis.major_label_text_font = "monospace"
        if list(ticker.ticks) != major or list(ticker.minor_ticks) != minor:
            ticker.update(ticks=major, minor_ticks=minor)
            labels = {v: tick_label(v) for v in major}
            width = max(
                [LOG_LABEL_CHARS]
                + [len(text) for text in labels.values()]
                + [len(str(text)) for text in axis.major_label_overrides.values()]
            )
            axis.major_label_overrides = {v: text.rjust(width) for v, text in labels.items()}


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


def positive(values: np.ndarray) -> np.ndarray:
    """``values`` for a log axis: zeros and negatives become NaN (drawn as a gap)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(v > 0, v, np.nan)
