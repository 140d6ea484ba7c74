"""The encoder's sentence embedding as a map: a section of the "Sequence to sequence" lesson
(rendering only; the vectors and neighbours are :mod:`pyplay.ui.lessons.seq2seq.sentence_map`).
Sources are shown as text glyphs and plain text, never as HTML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, Range1d
from bokeh.plotting import figure

from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.seq2seq.sentence_map import MAP_SENTENCES, SentenceMap, sentence_map
from pyplay.ui.text import Text
from pyplay.ui.workbench import until_drawn

__all__ = ["SentenceMapSection"]

HELP = (
    f"{lecture('wand')}: the encoder reads the whole source into a fixed-size vector, its "
    'state at the end, and so "computes an embedding of the input sentence". **Map the '
    f"sentences** encodes {MAP_SENTENCES} sources of the task and the one in the Source box "
    "with the model as it is now, takes the state the encoder hands the decoder (the top "
    "layer's h, H numbers), and draws them on their two principal axes; the box's source is "
    "red. Below: the sources whose vectors are nearest to it (cosine similarity). Map "
    "before and after training to see what the encoder learned to keep."
)
COLOURS = {"query": "#e45756", "source": "#4c78a8"}
MAP_LINE = "Map the sentences draws the map here."


class SentenceMapSection:
    """The section's button, map and neighbour list. ``inputs()`` gives (model, task, query,
    reverse) as the lesson has them now (model None: nothing to map)."""

    def __init__(self, inputs: Callable[[], tuple[Any, Any, str, bool]]) -> None:
        self.inputs = inputs
        self.source = ColumnDataSource({"x": [], "y": [], "text": [], "colour": []})
        self.fig = figure(
            height=340,
            width=480,
            tools="pan,wheel_zoom,reset,save",
            x_axis_label="principal axis 1",
            y_axis_label="principal axis 2",
            name="seq2seq-sentence-map",
            x_range=Range1d(-1.0, 1.0),
            y_range=Range1d(-1.0, 1.0),
        )  # fixed ranges, set to the map in show(): an empty data range warns)
        self.fig.scatter("x", "y", source=self.source, size=8, color="colour")
        self.fig.text("x", "y", text="text", source=self.source, x_offset=5, y_offset=-3,
                      text_font_size="8pt")  # fmt: skip
        self.fig.add_tools(HoverTool(tooltips=[("source", "@text")]))
        self.text = Text("", css_classes=["pyplay-sentence-map"], sizing_mode="stretch_width")
        self.button = pn.widgets.Button(name="Map the sentences", width=160)
        self.button.on_click(lambda *_: self.show())
        self.found: SentenceMap | None = None

    def clear(self) -> None:
        """A new model: the old map no longer applies."""
        self.found = None
        self.source.data = {"x": [], "y": [], "text": [], "colour": []}
        self.text.object = "Press Map the sentences to encode them with the model."

    def show(self) -> None:
        model, task, query, reverse = self.inputs()
        if model is None or task is None:
            self.text.object = "No model yet."
            return
        try:
            found = sentence_map(model, task, query, reverse)
        except ValueError as err:
            self.text.object = f"Cannot map the box's source: {err}"
            return
        self.found = found
        xy = found.pca.xy  # (N, 2)
        for axis, rng, pad in ((0, self.fig.x_range, 0.3), (1, self.fig.y_range, 0.1)):
            lo, hi = float(xy[:, axis].min()), float(xy[:, axis].max())
            room = pad * (hi - lo) or 1.0  # the labels stand right of their points
            rng.update(start=lo - room, end=hi + room)
        self.source.data = {
            "x": xy[:, 0],
            "y": xy[:, 1],
            "text": np.array(found.sources),
            "colour": [COLOURS["query" if s == found.query else "source"] for s in found.sources],
        }
        a, b = (100 * e for e in found.pca.explained)
        near = "\n".join(f"  {s!r:<24} cosine {c:.3f}" for s, c in found.neighbours)
        self.text.object = (
            f"{len(found.sources)} sources, vectors of {found.table.weight.shape[1]} numbers; "
            f"the axes explain {a:.0f}% and {b:.0f}% of the variance.\n"
            f"Nearest to {found.query!r}:\n{near or '  (type a source in the box)'}"
        )

    def panel(self) -> list[Any]:
        return [
            "## The encoder's sentence embedding",
            pn.pane.Markdown(HELP),
            self.button,
            until_drawn(pn.pane.Bokeh(self.fig), [self.source], MAP_LINE),  # no empty axes
            self.text,
        ]
