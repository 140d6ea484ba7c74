"""Which layer and direction of a deep or bidirectional stack the recurrent lesson's
look-inside views show: the selector, the titles that follow it, and the gradient through
time of every layer at once.

A stack of ``L`` layers, each one-way or bidirectional (Schmidt's overview, eq. 19-20 and
22-24: layer l reads layer l - 1's states at the same step, a backward layer reads the
sequence from its end), records its internals per layer-direction under the keys
``"l0"``, ``"l0_reverse"``, ``"l1"``, ... (:meth:`pyplay.nn.recurrent.Recurrent.forward`);
the page numbers layers from 1. Rendering only: the data is
:meth:`~pyplay.ui.lessons.rnn.state.LessonState.inspect`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import panel as pn
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, LegendItem
from bokeh.plotting import figure

from pyplay.ui.plots import legend_key, positive, set_data

__all__ = ["LayerChoice", "LayerLines", "layer_key", "layer_title"]

DIRECTIONS = {"forward": "", "backward": "_reverse"}
# one colour per layer (1..6), the backward direction dashed
COLOURS = ("#2c6fbb", "#d35400", "#8e44ad", "#16a085", "#7f8c8d", "#b7950b")


def layer_key(layer: int, direction: str) -> str:
    """The record key of ``layer`` (from 0) in ``direction``: ``"l1"``, ``"l1_reverse"``."""
    return f"l{layer}{DIRECTIONS[direction]}"


def layer_title(layer: int, direction: str, num_layers: int, bidirectional: bool) -> str:
    """How a title names ``layer`` (from 0) and ``direction``: "Layer 2, backward direction"
    ("" for a one-layer one-way model, where there is nothing to choose)."""
    if num_layers == 1 and not bidirectional:
        return ""
    where = f"Layer {layer + 1}"
    return f"{where}, {direction} direction" if bidirectional else where


class LayerChoice:
    """The layer and direction selectors; ``on_change()`` is called when either changes (and
    the options follow the model: :meth:`follow`)."""

    def __init__(self, on_change: Callable[[], None], help_text: str) -> None:
        self.layer = pn.widgets.RadioButtonGroup(
            name="Layer", options={"Layer 1": 0}, value=0, button_type="default"
        )
        self.direction = pn.widgets.RadioButtonGroup(
            name="Direction", options=list(DIRECTIONS), value="forward", visible=False
        )
        self.layer.param.watch(lambda e: on_change(), "value")
        self.direction.param.watch(lambda e: on_change(), "value")
        self.num_layers, self.bidirectional = 1, False
        self.panel = pn.Column(
            pn.pane.Markdown(help_text),
            pn.Row(self.layer, self.direction),
            visible=False,
            name="layer choice",
            sizing_mode="stretch_width",
        )

    def follow(self, num_layers: int, bidirectional: bool) -> None:
        """Options for a stack of ``num_layers`` layers, one-way or bidirectional (the choice
        kept where it still exists, else the top layer)."""
        self.num_layers, self.bidirectional = num_layers, bidirectional
        options = {f"Layer {k + 1}": k for k in range(num_layers)}
        kept = self.layer.value if (self.layer.value or 0) < num_layers else num_layers - 1
        self.layer.param.update(options=options, value=kept)
        self.direction.visible = bidirectional
        if not bidirectional:
            self.direction.value = "forward"
        self.panel.visible = num_layers > 1 or bidirectional

    @property
    def key(self) -> str:
        """The record key of the chosen layer-direction."""
        return layer_key(int(self.layer.value or 0), str(self.direction.value))

    def title(self) -> str:
        """The chosen layer-direction as titles name it ("" when there is no choice)."""
        layer, direction = int(self.layer.value or 0), str(self.direction.value)
        return layer_title(layer, direction, self.num_layers, self.bidirectional)


class LayerLines:
    """One line per layer-direction in the gradient-through-time figure (up to ``max_layers``
    layers, both directions), each with its legend entry, shown in the "every layer" view."""

    def __init__(self, fig: figure, max_layers: int) -> None:
        self.fig = fig
        self.source = ColumnDataSource({"t": np.zeros(0)})
        self.keys = [layer_key(k, d) for k in range(max_layers) for d in DIRECTIONS]
        self.source.data = {"t": np.zeros(0), **{k: np.zeros(0) for k in self.keys}}
        self.items: dict[str, LegendItem] = {}  # made when first shown (:meth:`_add`)
        self.lines: dict[str, tuple[Any, Any]] = {}

    def _add(self, key: str) -> None:
        """The line, dots and legend entry of ``key``, made when it is first shown: all 12
        made up front were 231 Bokeh models, a sixth of what the lesson's first build made,
        for a view most learners never open."""
        layer = int(key[1:].split("_")[0])
        dash = "dashed" if key.endswith("_reverse") else "solid"
        colour = COLOURS[layer % len(COLOURS)]
        line = self.fig.line(
            "t", key, source=self.source, visible=False, line_width=2, color=colour,
            line_dash=dash,
        )  # fmt: skip
        dots = self.fig.scatter("t", key, source=self.source, visible=False, size=4, color=colour)
        self.lines[key] = (line, dots)  # dots: a layer with one non-zero step shows it
        item = LegendItem(label=key, renderers=[line, dots, legend_key(self.fig, line)])
        item.visible = False
        self.fig.legend[0].items.append(item)
        self.items[key] = item

    def show(self, norms: dict[str, np.ndarray] | None) -> None:
        """Draw ``norms`` (per record key, (T,) each) for every layer-direction of the model;
        None hides them all."""
        shown = set() if norms is None else set(norms)
        data: dict[str, Any] = {"t": np.zeros(0), **{k: np.zeros(0) for k in self.keys}}
        if norms:
            T = len(next(iter(norms.values())))
            data = {"t": np.arange(T), **{k: np.full(T, np.nan) for k in self.keys}}
            for key, values in norms.items():
                if key in data:
                    data[key] = positive(values)
        set_data(self.source, data)
        for key in self.keys:
            on = key in shown
            if key not in self.lines:
                if not on:
                    continue
                self._add(key)
            layer, _, back = key[1:].partition("_")
            label = f"layer {int(layer) + 1}" + (" backward" if back else "")
            for renderer in self.lines[key]:
                renderer.visible = on
            self.items[key].update(visible=on, label=value(label))
