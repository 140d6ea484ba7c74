"""The transformer lesson's plot of what attention costs against sequence length (log-log):
one layer's multiply-adds for self-attention's T x T scores, its projections and an LSTM layer
of the same width, from :meth:`TransformerLessonState.attention_cost`."""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure

from pyplay.ui.plots import legend_outside, set_data, set_title

__all__ = ["cost_figure", "crossover", "update_cost"]

SERIES = (  # column, legend, colour, dash
    ("scores", "attention scores QKᵀ and AV: 2T²d", "#c0392b", "solid"),
    ("projections", "attention projections Q, K, V, out: 4Td²", "#e67e22", "dashed"),
    ("lstm", "LSTM layer of width d: 8Td²", "#27ae60", "dotted"),
)


def cost_figure() -> tuple[figure, ColumnDataSource]:
    """An empty log-log figure of multiply-adds against T, one line per ``SERIES``."""
    source = ColumnDataSource({"T": [], **{key: [] for key, *_ in SERIES}})
    fig = figure(
        height=280,
        sizing_mode="stretch_width",
        title="Multiply-adds of one layer",
        x_axis_label="sequence length T",
        y_axis_label="multiply-adds",
        x_axis_type="log",
        y_axis_type="log",
        tools="pan,wheel_zoom,reset,save",
    )
    legend_outside(fig, "below", stacked=True)  # long labels
    lines: list[Any] = [
        fig.line(
            "T", key, source=source, line_width=2, color=colour, line_dash=dash, legend_label=label
        )
        for key, label, colour, dash in SERIES
    ]
    tips = [("T", "@T{0}"), *((key, f"@{key}{{0.00a}}") for key, *_ in SERIES)]
    fig.add_tools(HoverTool(tooltips=tips, mode="vline", renderers=lines[:1]))
    return fig, source


def crossover(cost: dict[str, np.ndarray]) -> int | None:
    """The first T at which the scores cost more than the LSTM layer (None if none does)."""
    above = np.flatnonzero(cost["scores"] > cost["lstm"])
    return int(cost["T"][above[0]]) if above.size else None


def update_cost(fig: Any, source: ColumnDataSource, cost: dict[str, np.ndarray], d: int) -> str:
    """Draw ``cost`` (for width ``d``); returns the sentence that names the crossover."""
    set_data(source, {"T": cost["T"], **{key: cost[key] for key, *_ in SERIES}})
    set_title(fig, f"Multiply-adds of one layer, d_model = {d}")
    at = crossover(cost)
    if at is None:
        return f"Up to T = {int(cost['T'][-1])} the scores cost less than an LSTM layer."
    return (
        f"From T = {at} on (T > 4d), the T x T scores alone cost more than a whole LSTM layer "
        f"of width d = {d}; at T = {int(cost['T'][-1])} every head holds "
        f"{int(cost['weights'][-1]):,} attention weights."
    )
