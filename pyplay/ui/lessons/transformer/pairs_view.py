"""The encoder-decoder part of the "Transformers" page: the three kinds of attention of the
chosen layer and head (encoder self-attention, the decoder's masked self-attention and
cross-attention) on one pair, redrawn live while training, and a decode box where the
transformer and the LSTM encoder-decoder beside it both answer a typed source.

Rendering only: actions call :class:`~pyplay.ui.lessons.transformer.state.TransformerLessonState`
(:meth:`pair_heads`, :meth:`decode`).
"""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.ui.lessons.transformer.pairs import PairView
from pyplay.ui.plots import attention_figure, set_title, update_attention
from pyplay.ui.text import Text

__all__ = ["PAIRS_HELP", "PairsPanel", "chosen_head", "follow_heads", "head_menus"]

PAIRS_HELP = (
    "An **encoder-decoder** transformer reads the whole source with the **encoder** (its "
    "self-attention: every source token looks at every other), then writes the target one "
    "token at a time with the **decoder**. The decoder's **self-attention is masked** (causal): "
    "output step u sees only the tokens written before it, as when it decodes. Then "
    "**cross-attention**: the queries come from the decoder (the step being written), the keys "
    "and values from the encoder's output, so each row of the cross-attention map says where in "
    "the source that step looked, the transformer's counterpart of the recurrent model's "
    "attention. The LSTM encoder-decoder with Luong attention (the Sequence to sequence lesson's "
    "model) trains beside it on the very same batches of pairs. Rows are queries, columns "
    "keys; each row sums to 1. The decoder reads `<bos>` and the target and writes the "
    "target and `<eos>`: its self-attention is labelled by the tokens read, cross-attention's "
    "rows by the token written."
)

# (attribute, title, x label, y label, data-source name)
MAPS = (
    ("encoder", "Encoder self-attention", "source key", "source query", "tf-encoder-attention"),
    ("decoder", "Decoder self-attention (masked)", "target key (read)", "target query (read)",
     "tf-decoder-attention"),
    ("cross", "Cross-attention", "source key", "target step (written)", "tf-cross-attention"),
)  # fmt: skip


MAP_PX = 300  # each map's width and height: the three side by side in the workbench


def head_menus() -> tuple[pn.widgets.Select, pn.widgets.Select]:
    """The Layer and Head menus (counting from 1) of a transformer's attention views."""
    layer = pn.widgets.Select(name="Layer", options=[1], value=1, width=100)
    head = pn.widgets.Select(name="Head", options=[1], value=1, width=100)
    return layer, head


def follow_heads(layer: pn.widgets.Select, head: pn.widgets.Select, state: Any) -> None:
    """The menus offer the layers and heads of ``state``'s model; a pick it still has stays."""
    layer.options = list(range(1, state.num_layers + 1))
    layer.value = min(int(layer.value or 1), state.num_layers)
    head.options = list(range(1, state.nhead + 1))
    head.value = min(int(head.value or 1), state.nhead)


def chosen_head(
    layer: pn.widgets.Select, head: pn.widgets.Select, weights: list[Any]
) -> tuple[int, int] | None:
    """The picked layer and head, counted from 0, when ``weights`` (one ``(heads, queries,
    keys)`` array a layer, from the last forward pass) has them; None while the menus and
    the pass disagree (a model rebuilt between the two)."""
    i = int(layer.value or 1) - 1
    k = int(head.value or 1) - 1
    if i >= len(weights) or k >= weights[i].shape[0]:
        return None
    return i, k


class PairsPanel:
    """The encoder-decoder's views (shown only when the lesson trains one), around ``state``."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.figs: dict[str, Any] = {}
        self.sources: dict[str, Any] = {}
        for key, title, x_label, y_label, name in MAPS:
            self.figs[key], self.sources[key] = attention_figure(
                title, x_label, y_label, height=MAP_PX, width=MAP_PX, name=name
            )
        self.layer, self.head = head_menus()
        self.example = pn.widgets.IntSlider(name="Pair", start=0, end=7, value=0, width=200)
        for w in (self.layer, self.head):  # another head of the same forward pass: at once
            w.param.watch(lambda e: self.show(), "value")
        self.example.param.watch(lambda e: self.refresh(), "value")
        self.title = Text("", css_classes=["pyplay-pairs-title"])
        self.source_box = pn.widgets.TextInput(name="Source", value="", width=260)
        self.source_box.param.watch(lambda e: self.decode(), "value")
        self.outputs = Text("", css_classes=["pyplay-pairs-output"])
        self.view: PairView | None = None

    def new_model(self) -> None:
        """A new or loaded model: the menus follow its layers and heads, the decode box gets
        an example of its task, and the views are redrawn."""
        s = self.state
        follow_heads(self.layer, self.head, s)
        if s.encoder_decoder and s.task_obj is not None:
            self.source_box.value = s.task_obj.example()[0]
        self.outputs.object = ""
        self.refresh()

    def refresh(self) -> None:
        """A forward pass of the chosen pair through the model as it is now (live while
        training), then the chosen layer and head."""
        self.view = self.state.pair_heads(int(self.example.value or 0))
        self.show()

    def show(self) -> None:
        """The chosen layer and head of the last forward pass (no new pass)."""
        view = self.view
        picked = None if view is None else chosen_head(self.layer, self.head, view.encoder)
        if view is None or picked is None:
            return
        layer, head = picked
        pair = int(self.example.value or 0)
        axes = {
            "encoder": (view.source, view.source),
            "decoder": (view.read, view.read),
            "cross": (view.source, view.written[:-1]),  # the last row: <eos>
        }
        for key, title, *_ in MAPS:
            w = getattr(view, key)[layer][head]  # (queries, keys)
            keys, queries = axes[key]
            update_attention(self.figs[key], self.sources[key], w, keys, queries)
            set_title(self.figs[key], title)  # the line above the maps names layer, head, pair
        self.title.object = f"Layer {layer + 1}, head {head + 1}, pair {pair}: {view.text}"

    def decode(self, *_: Any) -> None:
        """Both models' greedy outputs for the typed source."""
        text = str(self.source_box.value_input or self.source_box.value or "")
        if not self.state.encoder_decoder or not text.strip():
            self.outputs.object = ""
            return
        result = self.state.decode(text)
        if result is None:
            self.outputs.object = ""
            return
        transformer, lstm = result
        self.outputs.object = (
            f"Transformer:         {transformer or '(nothing)'}\n"
            f"LSTM with attention: {lstm or '(nothing)'}"
        )

    def maps(self) -> pn.Column:
        """The workbench's view of the encoder-decoder: the menus and the three maps of the
        chosen layer, head and pair, live while training."""
        return pn.Column(
            pn.Row(self.layer, self.head, self.example),
            self.title,
            pn.GridBox(
                *(pn.pane.Bokeh(self.figs[key]) for key, *_ in MAPS),
                ncols=3,
                sizing_mode="stretch_width",
                css_classes=["pyplay-bench-maps"],
            ),
            sizing_mode="stretch_width",
        )

    def panel(self) -> pn.Column:
        """The section: what the maps in the workbench show (:meth:`maps`), the decode box."""
        button = pn.widgets.Button(name="Decode", button_type="primary", width=100)
        button.on_click(self.decode)
        return pn.Column(
            "## Encoder-decoder attention",
            pn.pane.Markdown(PAIRS_HELP),
            "### Decode a source",
            pn.pane.Markdown(
                "Type a source of the task and **Decode**: both models' greedy outputs."
            ),
            pn.Row(self.source_box, button),
            self.outputs,
            sizing_mode="stretch_width",
        )
