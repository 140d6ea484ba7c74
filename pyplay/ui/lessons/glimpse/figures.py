"""The figures of the "Soft and hard attention" lesson, built from the shared components of
:mod:`pyplay.ui.plots`: both models' attention over one example (the marked position outlined,
the hard model's drawn position marked), their batch accuracy, and the variance of the hard
model's gradient estimate with and without the baseline. Each builder returns the figure and
the sources the view updates; :func:`show_example` fills the attention figure."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from pyplay.ui.lessons.glimpse.state import GlimpseExample
from pyplay.ui.plots import (
    attention_figure,
    follow_log_ticks,
    keep_legend_samples,
    legend_outside,
    line_figure,
    positive,
    set_data,
    set_log_ticks,
    set_title,
    update_attention,
    watch_placeholder,
)

__all__ = [
    "ROWS",
    "accuracy_figure",
    "example_figure",
    "show_example",
    "show_spread",
    "symbol_names",
    "variance_figure",
]

ROWS = ["soft p", "hard p"]  # the attention figure's rows
HARD, SOFT = "#2c6fbb", "#27ae60"  # the two models' colours on every figure
MARKED, DRAWN = "#e74c3c", "#ff9f1a"  # red outline, orange mark: both read on viridis


def symbol_names(symbols: np.ndarray) -> list[str]:
    """Symbols 0, 1, 2 ... as the letters A, B, C ... (as numbers from 26 symbols on: a
    value set from code beyond the slider's range)."""
    if len(symbols) and int(np.max(symbols)) >= len(string.ascii_uppercase):
        return [str(int(s)) for s in symbols]
    return [string.ascii_uppercase[int(s)] for s in symbols]


def example_figure() -> tuple[figure, ColumnDataSource, ColumnDataSource, ColumnDataSource]:
    """Both models' weights p over the positions (rows :data:`ROWS`), the marked position
    outlined and the hard model's drawn position marked; returns the figure and the sources
    of the weights, the outline and the mark."""
    fig, weights = attention_figure(
        "Attention over example 1", "position (its symbol)", "model", height=230, width=620,
        name="glimpse-attention",
    )  # fmt: skip
    marked = ColumnDataSource({"x": [], "y": []}, name="glimpse-marked")
    drawn = ColumnDataSource({"x": [], "y": []}, name="glimpse-drawn")
    legend_outside(fig, "below")
    fig.rect(
        "x", "y", 0.92, 1.92, source=marked, fill_alpha=0, line_color=MARKED, line_width=3,
        legend_label="marked position (the answer)",
    )  # fmt: skip
    fig.scatter(
        "x", "y", source=drawn, marker="circle_x", size=16, fill_alpha=0, line_color=DRAWN,
        line_width=3, legend_label="position the hard model drew",
    )  # fmt: skip
    # no keep_legend_samples: both sources hold a point from the first redraw on (and a
    # rectangle has no one-point sample of its own)
    return fig, weights, marked, drawn


def show_example(
    fig: figure,
    sources: tuple[ColumnDataSource, ColumnDataSource, ColumnDataSource],
    view: GlimpseExample,
    index: int,
) -> None:
    """Draw ``view`` (example ``index``, counted from 0) in :func:`example_figure`."""
    weights, marked, drawn = sources
    names = symbol_names(view.symbols)
    update_attention(fig, weights, np.stack([view.soft_p, view.hard_p]), names, ROWS)
    set_data(marked, {"x": np.array([view.marked]), "y": np.array([0.5])})
    set_data(drawn, {"x": np.array([view.sampled]), "y": np.array([1])})
    set_title(fig, f"Attention over example {index + 1}: the marked symbol is {names[view.marked]}")


def accuracy_figure() -> tuple[figure, ColumnDataSource]:
    """Each model's accuracy on its training batch, step by step."""
    source = ColumnDataSource({"step": [], "hard": [], "soft": []})
    fig = line_figure("Accuracy on each training batch", "step", "accuracy", height=220,
                      box=((0.0, 1.0), (0.0, 1.0)))  # fmt: skip
    legend_outside(fig)
    fig.line("step", "hard", source=source, line_width=2, color=HARD, legend_label="hard")
    fig.line("step", "soft", source=source, line_width=2, color=SOFT, line_dash="dotted",
             legend_label="soft")  # fmt: skip
    keep_legend_samples(fig)
    watch_placeholder(fig, source)
    return fig, source


def variance_figure() -> tuple[figure, ColumnDataSource]:
    """tr Cov of the hard model's score-network gradient estimate over training, with b = 0
    and with the running-mean baseline (log scale)."""
    source = ColumnDataSource({"step": [], "plain": [], "baseline": []})
    fig = line_figure(
        "Variance of the gradient estimate (score network)", "step",
        "tr Cov (log scale)", height=240, log=True,
    )  # fmt: skip
    legend_outside(fig)
    for column, label, colour, dash in (
        ("plain", "b = 0", MARKED, "solid"),
        ("baseline", "b = running mean", HARD, "dashed"),
    ):
        fig.line("step", column, source=source, line_width=2, color=colour, line_dash=dash,
                 legend_label=label)  # fmt: skip
        fig.scatter("step", column, source=source, size=4, color=colour, legend_label=label)
    keep_legend_samples(fig)
    set_log_ticks(fig, 0.1, 1.0)  # the placeholder's box, then the data's
    follow_log_ticks(fig, source, x="step")
    watch_placeholder(fig, source)
    return fig, source


def show_spread(source: ColumnDataSource, spread: dict[str, Any]) -> None:
    """Put the state's measurements (``spread``) in :func:`variance_figure`'s source when there
    are new ones, from the second on (one point alone makes no range for the axes); zero
    variance, a model sure of its glimpse, is a gap on the log axis."""
    n = len(spread["step"])
    if n < 2 or len(source.data["step"]) == n:
        return
    set_data(
        source,
        {
            "step": np.asarray(spread["step"], dtype=np.int64),
            "plain": positive(np.asarray(spread["plain"])),
            "baseline": positive(np.asarray(spread["baseline"])),
        },
    )
