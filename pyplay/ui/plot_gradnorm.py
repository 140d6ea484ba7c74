r"""The gradient norm of every training step, live, with the clipping threshold drawn on it.

Each step's global norm is taken before clipping (:attr:`pyplay.train.StepRecord.grad_norm`,
as ``torch.nn.utils.clip_grad_norm_`` returns it),

.. math::

    \lVert g \rVert = \sqrt{\textstyle\sum_k \lVert \partial L / \partial \theta_k \rVert^2},

and global-norm clipping with threshold :math:`c` rescales a step's gradient when it lies
above the line, :math:`g \leftarrow g \, c / \lVert g \rVert`, and leaves it unchanged below
(:func:`pyplay.optim.clip_grad_norm`). Points above the dashed line are the steps that were
clipped; a spike of several decades is an exploding gradient. The y axis is logarithmic:
norms span decades (vanishing and exploding alike).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, LegendItem, Span
from bokeh.plotting import figure

from pyplay.ui.curve_points import stream_curve
from pyplay.ui.plots import (
    follow_log_ticks,
    legend_key,
    legend_outside,
    line_figure,
    set_log_ticks,
    watch_placeholder,
)

__all__ = ["CLIP_STYLE", "GradNormPlot"]

NORM_COLOUR = "#8e44ad"
CLIP_STYLE: dict[str, Any] = {"line_color": "#c0392b", "line_dash": "dashed", "line_width": 2}
BOX = ((0.0, 10.0), (0.1, 10.0))  # the placeholder's extent before the first step


class GradNormPlot:
    """The gradient norm against step (log y) and the clipping threshold as a dashed line.

    Attributes
    ----------
    fig : figure
        The plot.
    source : ColumnDataSource
        Columns ``step`` and ``grad_norm``; :meth:`stream` appends, :meth:`clear` empties.
    clip_line : Span
        The threshold :math:`c`; hidden while clipping is off (:meth:`set_clip`).
    """

    def __init__(self) -> None:
        self.source = ColumnDataSource({"step": [], "grad_norm": []})
        title = "Gradient norm ||g|| before clipping"
        fig: figure = line_figure(title, "step", "||g|| (log scale)", log=True, box=BOX)
        line = fig.line("step", "grad_norm", source=self.source, line_width=1.5, color=NORM_COLOUR)
        self.clip_line = Span(location=1.0, dimension="width", name="clip-threshold", **CLIP_STYLE)
        fig.add_layout(self.clip_line)
        key = fig.line([np.nan], [np.nan], name="clip-key", **CLIP_STYLE)  # its legend sample
        # the threshold in the axes' range: one invisible point on it (NaN while it is off)
        # (its columns are named like the curve's: the log ticks read every column but step)
        self._reach = ColumnDataSource({"step": [0.0], "clip": [1.0]})
        fig.scatter("step", "clip", source=self._reach, visible=False, name="clip-range")
        self._legend = legend_outside(fig, "below", stacked=True)  # a long label
        self._legend.items = [
            LegendItem(label="||g|| of each step", renderers=[line, legend_key(fig, line)]),
            LegendItem(label=self.clip_label(1.0), renderers=[key]),
        ]
        self.clip_line.on_change("visible", lambda attr, old, new: setattr(key, "visible", new))
        set_log_ticks(fig, *BOX[1])
        follow_log_ticks(fig, self.source, self._reach, x="step")
        watch_placeholder(fig, self.source)
        fig.add_tools(
            HoverTool(
                tooltips=[("step", "@step"), ("||g||", "@grad_norm{0.000e}")],
                mode="vline",
                renderers=[line],
            )
        )
        self.fig = fig

    @staticmethod
    def clip_label(clip: float | None) -> str:
        """The threshold's legend entry."""
        if not clip:
            return "clipping off"
        return f"clip threshold c = {clip:g} (above: scaled to c)"

    def set_clip(self, clip: float | None) -> None:
        """Draw the threshold at ``clip`` (None or 0: clipping off, no line)."""
        on = bool(clip) and np.isfinite(float(clip or 0.0))
        if on:
            self.clip_line.location = float(clip)  # type: ignore[arg-type]
        self.clip_line.visible = on
        self._legend.items[-1].label = {"value": self.clip_label(clip if on else None)}
        x = float(self.source.data["step"][0]) if len(self.source.data["step"]) else 0.0
        self._reach.data = {"step": [x], "clip": [float(clip) if on else np.nan]}  # type: ignore[arg-type]

    @staticmethod
    def rows(records: list[Any]) -> dict[str, list[Any]]:
        """The columns of ``records`` (:class:`~pyplay.train.StepRecord`): ``step`` and
        ``grad_norm``, a norm that is not finite (a diverged step) as NaN, a gap."""
        norms = [r.grad_norm if np.isfinite(r.grad_norm) else np.nan for r in records]
        return {"step": [r.step for r in records], "grad_norm": norms}

    def stream(self, records: list[Any]) -> None:
        """Append the steps of ``records`` (:class:`~pyplay.train.StepRecord`)."""
        if records:
            self.stream_rows(self.rows(records))

    def stream_rows(self, rows: dict[str, list[Any]]) -> None:
        """Append ``rows`` (:meth:`rows`: steps kept before the plot was made, say)."""
        steps = rows.get("step", [])
        if not len(steps):
            return
        if not len(self.source.data["step"]):  # the threshold's point follows the first step
            clip = list(self._reach.data["clip"])
            self._reach.data = {"step": [float(steps[0])], "clip": clip}
        stream_curve(self.source, rows)

    def clear(self) -> None:
        """No steps (a new or loaded model: a file keeps the loss curve, not the norms)."""
        self.source.data = {"step": [], "grad_norm": []}
