"""The Sequence to sequence lesson's "Encoder and decoder states" section: the hidden state of
one encoder layer and direction over the source, and of one decoder layer over the output
steps, for the source in the box as the model decodes it now (redrawn with the attention
map, live while training). The data is :class:`~pyplay.ui.lessons.seq2seq.state.Decoding`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn

from pyplay.ui.lessons.seq2seq.state import Decoding
from pyplay.ui.plot_maps import fixed_ticks
from pyplay.ui.plots import heatmap_figure, label_axis, set_title, update_heatmap

__all__ = ["HELP", "StatesSection", "direction_options", "layer_options"]

HELP = (
    "Each column is one step, each row one unit of the hidden state h (its value in the "
    "colour bar). **Encoder layer** picks a layer of the encoder (and, with a **bidirectional "
    "encoder**, its direction: the backward direction reads the source from its last token "
    "to its first, so its state at a position summarises the source from there to the end); "
    "**Decoder layer** a layer of the decoder, its state after writing each output token. "
    "Stacked layers (**Layers** above) feed each layer's states to the next as its input. A "
    "bidirectional encoder's two final states are joined for the decoder by a **bridge**: "
    "the forward state at the last token and the backward state at the first are "
    "concatenated and mapped to the decoder's width, s₀ = tanh(W [h→; h←] + b), one bridge "
    "for every layer (for an LSTM the cells through a second, linear one), as in Bahdanau et "
    "al. 2015; attention reads the two directions side by side, encoder states twice as wide. "
    "With **Share one RNN** encoder and decoder are one network: the decoder map goes on "
    "where the encoder map ends. The **GNMT** encoder reads both ways in layer 1 only, and "
    "from layer 3 each layer hands on its state plus its input (the residual sum); the maps "
    "show each layer's own state h."
)


def direction_options(num_layers: int, bidirectional: bool, gnmt: bool = False) -> dict[str, str]:
    """Select labels -> record keys of the encoder's layers and directions (with ``gnmt`` the
    bottom layer alone reads both ways)."""
    options = {}
    for layer in range(num_layers):
        if bidirectional or (gnmt and layer == 0):
            options[f"layer {layer + 1}, forward"] = f"l{layer}"
            options[f"layer {layer + 1}, backward"] = f"l{layer}_reverse"
        else:
            options[f"layer {layer + 1}"] = f"l{layer}"
    return options


def layer_options(num_layers: int) -> dict[str, int]:
    """Select labels -> decoder layer indices."""
    return {f"layer {layer + 1}": layer for layer in range(num_layers)}


def _label(fig: Any, tokens: list[str]) -> None:
    """Token labels on the x axis, sent only when they change (a live redraw a second)."""
    if fig.xaxis[0].major_label_overrides != {k: str(t) for k, t in enumerate(tokens)}:
        label_axis(fig.xaxis[0], tokens)


class StatesSection:
    """Two heatmaps, the encoder's and the decoder's states, each with its layer picker."""

    def __init__(self) -> None:
        self.enc_fig, self.enc_source = heatmap_figure(
            "h", "Encoder states", "source token", "unit"
        )
        self.dec_fig, self.dec_source = heatmap_figure("h", "Decoder states", "output", "unit")
        for fig in (self.enc_fig, self.dec_fig):
            fig.frame_width, fig.frame_height = 300, 170  # the cells' area, whatever the labels
            fixed_ticks(fig.xaxis[0], [])  # token labels at every update (see fixed_ticks)
        self.enc_part = pn.widgets.Select(name="Encoder layer", options=direction_options(1, False),
                                          width=200)  # fmt: skip
        self.dec_layer = pn.widgets.Select(name="Decoder layer", options=layer_options(1),
                                           width=200)  # fmt: skip
        self.decoding: Decoding | None = None
        self.shared = False
        for widget in (self.enc_part, self.dec_layer):
            widget.param.watch(lambda *_: self.show(), "value")

    def follow_model(self, model: Any) -> None:
        """Offer the layers and directions of ``model`` (kept if it still has them)."""
        if model is None:
            return
        self.shared = bool(getattr(model, "share_rnn", False))
        gnmt = getattr(model, "encoder", "stack") == "gnmt"
        enc = direction_options(model.num_layers, model.bidirectional_encoder, gnmt)
        if self.enc_part.options != enc:
            keep = str(self.enc_part.value).removesuffix("_reverse")  # the same layer
            keep = self.enc_part.value if self.enc_part.value in enc.values() else keep
            keep = keep if keep in enc.values() else "l0"
            self.enc_part.param.update(options=enc, value=keep)
        dec = layer_options(model.num_layers)
        if self.dec_layer.options != dec:
            keep_layer = self.dec_layer.value if self.dec_layer.value in dec.values() else 0
            self.dec_layer.param.update(options=dec, value=keep_layer)

    def update(self, decoding: Decoding | None) -> None:
        self.decoding = decoding
        self.show()

    def titles(self) -> tuple[str, str]:
        """The two maps' titles for the layers picked."""
        names = {v: k for k, v in self.enc_part.options.items()}
        enc_what = names.get(self.enc_part.value, "layer 1")
        dec_what = f"layer {int(self.dec_layer.value or 0) + 1}"
        if self.shared:
            return (f"Shared RNN reading the source, {enc_what}",
                    f"Shared RNN writing, {dec_what}")  # fmt: skip
        return f"Encoder states h, {enc_what}", f"Decoder states s, {dec_what}"

    def show(self) -> None:
        """Draw the picked layer (and direction) of the decoding shown."""
        enc_title, dec_title = self.titles()
        set_title(self.enc_fig, enc_title)
        set_title(self.dec_fig, dec_title)
        d = self.decoding
        if d is None or d.decoder is None or self.enc_part.value not in d.encoder:
            return
        layer = int(self.dec_layer.value or 0)
        if layer >= d.decoder.shape[1]:
            return
        update_heatmap(self.enc_fig, self.enc_source, d.encoder[self.enc_part.value], "h")
        _label(self.enc_fig, d.source)
        update_heatmap(self.dec_fig, self.dec_source, np.asarray(d.decoder[:, layer]), "h")
        _label(self.dec_fig, [*d.output, "<eos>"][: d.decoder.shape[0]])

    def panel(self) -> list[Any]:
        """The section's parts, for the lesson's column."""
        return [
            "## Encoder and decoder states",
            pn.pane.Markdown(HELP),
            pn.Row(self.enc_part, self.dec_layer),
            pn.pane.Bokeh(self.enc_fig),
            pn.pane.Bokeh(self.dec_fig),
        ]
