"""Padding and packing, in the recurrent lesson: a ragged batch of the learner's lengths, its
mask, where each valid step lands in the packed data, the work each form does, and proof on the
current model that packing gives the masked result while padding without the mask does not
(:func:`pyplay.nn.packing.compare_padding` computes every number shown)."""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, Range1d
from bokeh.plotting import figure

from pyplay.nn.packing import compare_padding
from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.rnn.lecture8_docs import Lecture8Docs
from pyplay.ui.plot_maps import integer_axis, label_axis
from pyplay.ui.text import Text

__all__ = [
    "MAX_LENGTH",
    "MAX_SEQUENCES",
    "PACKING_TITLE",
    "PackingView",
    "lecture_count",
    "parse_lengths",
]

MAX_SEQUENCES = 8  # rows of the ragged batch the view draws
MAX_LENGTH = 24  # its longest sequence
DEFAULT = "6, 4, 4, 2, 1"
PACKING_TITLE = "Padding and packing"  # the section's title
VALID, PADDING = "#4c78a8", "#e0e0e0"

HELP = (
    "A batch must be rectangular, so sequences of different lengths "
    "T_i are padded at the end to T = max T_i: B·T steps of which only ΣT_i are real. Run "
    "through a recurrent cell, the padded steps would change the final state; the **mask** "
    "(`forward(x, lengths=...)`) keeps the state fixed there, but the cell is still computed on "
    "them. **Packing** (PyTorch's `pack_padded_sequence`) sorts the sequences longest first and "
    "stores the batch step by step, only the b_t sequences still running at step t: ΣT_i cell "
    "evaluations, nothing wasted. The numbers in the cells are each step's row in the packed "
    "data. Below, the current model's recurrent layer reads a random batch with these lengths "
    "in all three ways."
)


def parse_lengths(text: str) -> list[int]:
    """``"6, 4, 1"`` -> ``[6, 4, 1]``; a ``ValueError`` naming the box for anything else."""
    parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p]
    try:
        lengths = [int(p) for p in parts]
    except ValueError:
        raise ValueError(
            f"Lengths must be whole numbers separated by commas, got {text!r}"
        ) from None
    if not 1 <= len(lengths) <= MAX_SEQUENCES:
        raise ValueError(f"Lengths must name 1 to {MAX_SEQUENCES} sequences, got {len(lengths)}")
    if min(lengths) < 1 or max(lengths) > MAX_LENGTH:
        raise ValueError(
            f"Lengths must each lie between 1 and {MAX_LENGTH}, got {min(lengths)} to "
            f"{max(lengths)}"
        )
    return lengths


def lecture_count(lengths: list[int]) -> str:
    """The count of the "Problem With Padding" slide for these lengths, beside the page's.

    The slide multiplies the padded (B, T) batch with a weight matrix and counts the scalar
    operations of one output column: :math:`B T` multiplications and :math:`B (T - 1)`
    additions ("nrows x (n - 1) cols"); for its batch of 3, 2 and 1 words, 9 and 6. The page
    counts cell evaluations, :math:`B T` padded and :math:`\\sum_i T_i` real; for 3, 2, 1 the
    real ones are 6 too, another quantity that happens to be equal.
    """
    B, T, real = len(lengths), max(lengths), sum(lengths)
    name = lecture("nlp")
    adds = B * (T - 1)
    same = (
        f"; its {adds} additions and the {real} real steps are equal here by coincidence"
        if adds == real
        else ""
    )
    return (
        f'{name[:1].upper()}{name[1:]} ("Problem With Padding") counts differently: the '
        f"scalar operations of the padded ({B}, {T}) batch times one weight column, "
        f"B·T = {B * T} multiplications and B·(T − 1) = {adds} additions. The page counts "
        f"cell evaluations: B·T on the padded batch, ΣT_i = {real} on real tokens{same}."
    )


def _grid(lengths: list[int], sorted_indices: np.ndarray, batch_sizes: np.ndarray) -> dict:
    """The cells of the padded batch: position, colour, packed row (blank on padding)."""
    B, T = len(lengths), max(lengths)
    rank = np.empty(B, dtype=np.int64)
    rank[sorted_indices] = np.arange(B)  # (B,) place of each sequence in the sorted batch
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)])  # (T + 1,) packed row of step t
    t, i = np.meshgrid(np.arange(T), np.arange(B))  # (B, T) each
    valid = t < np.asarray(lengths)[:, None]  # (B, T)
    rows = offsets[t] + rank[i]  # (B, T) packed row, where valid
    return {
        "t": t.ravel(),
        "y": (B - 1 - i).ravel(),  # the first sequence on top
        "colour": np.where(valid, VALID, PADDING).ravel(),
        "label": np.where(valid, rows.astype(str), "").ravel(),
        "what": np.where(valid, "packed row " + rows.astype(str), "padding").ravel(),
    }


class PackingView:
    """The padding/packing section of the recurrent lesson (``panel``); ``refresh()`` reruns
    the comparison on the lesson's current model."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.lengths = pn.widgets.TextInput(name="Lengths", value=DEFAULT, width=220)
        self.note = Text("", visible=False, css_classes=["pyplay-packing-note"])
        self.heading = Text("", css_classes=["pyplay-packing-title"])
        self.lecture_count = Text("", css_classes=["pyplay-packing-lecture"])
        self.summary = Text("", css_classes=["pyplay-packing-summary"], sizing_mode="stretch_width")
        self.source = ColumnDataSource(_grid([1], np.zeros(1, dtype=np.int64), np.ones(1)))
        self.fig = figure(
            height=230, width=520, tools="save", x_axis_label="time step t",
            x_range=Range1d(-0.5, 0.5), y_range=Range1d(-0.5, 0.5),
        )  # fmt: skip
        self.fig.rect(
            "t", "y", 0.92, 0.86, fill_color="colour", line_color=None, source=self.source
        )
        self.fig.text(
            "t", "y", text="label", source=self.source, text_align="center",
            text_baseline="middle", text_color="white", text_font_size="9pt",
        )  # fmt: skip
        self.fig.add_tools(HoverTool(tooltips=[("step t", "@t"), ("", "@what")]))
        self.fig.grid.visible = False
        integer_axis(self.fig.xaxis[0])
        self.lengths.param.watch(lambda *_: self.refresh(), "value")
        self.docs = Lecture8Docs()  # the lecture's own three documents, step by step
        self.panel = pn.Column(
            f"## {PACKING_TITLE}",
            pn.pane.Markdown(HELP),
            self.lengths,
            self.note,
            self.heading,
            self.lecture_count,
            pn.pane.Bokeh(self.fig),
            self.summary,
            *self.docs.items(),
            sizing_mode="stretch_width",
        )
        self.refresh()

    def refresh(self, *_: Any) -> None:
        """Draw the batch of the typed lengths and compare the three runs on the model."""
        try:
            lengths = parse_lengths(self.lengths.value or "")
        except ValueError as err:
            self.note.object, self.note.visible = str(err), True  # the last good batch stays
            return
        self.note.visible = False
        self.lecture_count.object = lecture_count(lengths)
        model = getattr(self.state, "model", None)
        rnn = getattr(model, "rnn", None)
        if rnn is None:
            self.summary.object = "Build a model (Reset) to compare the runs on it."
            return
        bidirectional = bool(getattr(rnn, "bidirectional", False))
        found = compare_padding(rnn, lengths, rng=0) if not bidirectional else None
        if found is None:
            self.summary.object = "Packing steps forward in time: pick a one-direction model."
            return
        B, T = len(lengths), max(lengths)
        self.source.data = _grid(lengths, found.packed.sorted_indices, found.packed.batch_sizes)
        self.fig.x_range.update(start=-0.5, end=T - 0.5)
        self.fig.y_range.update(start=-0.5, end=B - 0.5)
        label_axis(self.fig.yaxis[0], [f"seq {i + 1} (T={n})" for i, n in enumerate(lengths)][::-1])
        sizes = ", ".join(str(int(b)) for b in found.packed.batch_sizes)
        self.heading.object = (
            f"Padded batch: B·T = {B}·{T} = {found.padded_steps} steps, "
            f"{found.packed_steps} real; packed batch sizes b_t = [{sizes}]"
        )
        wasted = 1 - found.packed_steps / found.padded_steps
        kind = type(rnn).__name__
        self.summary.object = (
            f"The current model's {kind} ({rnn.num_layers} layer(s), H={rnn.hidden_size}) on a "
            f"random batch of these lengths. Cell evaluations per layer: padded "
            f"{found.padded_steps}, packed {found.packed_steps} ({100 * wasted:.0f}% of the "
            f"padded work is padding). Final states, packed against masked: max |difference| "
            f"{found.packed_gap:.1e} (the same up to rounding). Padded without the mask: "
            f"{found.unmasked_gap:.3f}, because the padding's zeros ran through the cell."
        )
