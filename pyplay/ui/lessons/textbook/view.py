"""The "Textbook seq2seq" view, a sub-tab of the dynamic networks lesson: pick the score
(context only, dot, general, concatenation), train on reversal, type a source, and read every
textbook quantity of the decoding beside the library code that computes it, with the attention
heatmap; download or load the model (:class:`~pyplay.ui.export_bar.ExportBar`).

Equations are shown as plain Unicode text (``n(t) = Aᵀ W a²(t)``), as in the rest of the
dynamic-networks lesson: Panel's LaTeX pane loads KaTeX/MathJax from a CDN, which the offline
page does not have. Rendering only: actions call
:class:`~pyplay.ui.lessons.textbook.state.TextbookSeq2SeqState`.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.textbook.state import (
    FORM_LABELS,
    Explanation,
    TextbookSeq2SeqState,
    format_value,
)
from pyplay.ui.plots import attention_figure, update_attention
from pyplay.ui.text import Text
from pyplay.ui.training import lr_input, seed_input

__all__ = ["TextbookSeq2SeqView"]

HELP = (
    "The book's sequence-to-sequence network: layer 1 (the encoder) reads the source, layer 2 "
    "(the decoder) writes the target one symbol at a time. **Context only** hands the "
    "encoder's last output c = a¹(S) to every decoder step as a constant input. With "
    "**attention**, a tapped delay line of D = S taps holds all encoder outputs, read as the "
    "memory matrix A = [a¹(S) a¹(S−1) … a¹(1)] (newest first); at every step the decoder "
    "output a²(t) scores each column (**dot** Aᵀ a²(t), **general** Aᵀ W a²(t), "
    "**concatenation** vᵀ tansig(W [a¹ⱼ; a²(t)] + b)), the softmax turns the scores into "
    "weights α(t), and the context is c(t) = A α(t). Train on reversal with each score: the "
    "constant context has to squeeze the whole source into one vector, attention looks it up."
)
DECODE_HELP = (
    "Type a source (letters a-f) and **Explain**: the network decodes it greedily and every "
    "quantity is listed with its equation, the library code that computes it, and its value. "
    "α(t) and n(t) list the columns of A, newest first; the heatmap shows the same weights in "
    "source order. The last line checks that the library's own forward pass gives the same "
    "numbers."
)
EMPTY = {"x": [], "y": [], "weight": [], "src": [], "out": []}


def steps_text(explanation: Explanation, t: int) -> str:
    """The encoder's quantities and decoder step ``t``'s, one block each: equation, code path,
    value (plain text)."""
    trace = explanation.trace
    blocks = [f"source {' '.join(explanation.source)}  →  output {' '.join(explanation.output)}"]
    for step in trace.steps:
        if step.t is not None and step.t != t:
            continue
        blocks.append(f"{step.text}\n    code : {step.code}\n    value: {format_value(step.value)}")
    blocks.append(
        "library EncoderDecoder.forward vs the textbook path: largest difference "
        f"{explanation.max_difference:.1e}"
    )
    return "\n\n".join(blocks)


class TextbookSeq2SeqView(LessonView):
    """The sub-tab's layout around a :class:`TextbookSeq2SeqState`; ``panel()`` returns it."""

    heading = "## The textbook's seq2seq"
    help_text = HELP
    status_css = "pyplay-textbook-status"

    def __init__(self, state: TextbookSeq2SeqState | None = None) -> None:
        super().__init__(state or TextbookSeq2SeqState())
        self.baseline.visible = False
        self.attn_fig, self.attn_source = attention_figure()
        self.source_box = pn.widgets.TextInput(
            name="Source", value=self.state.example_source(), width=240
        )
        self.step_slider = pn.widgets.IntSlider(
            name="Decoder step t", start=1, end=2, value=1, width=240
        )
        self.step_slider.param.watch(lambda *_: self._show_steps(), "value")
        self.steps = Text("", css_classes=["pyplay-textbook-steps"])
        self.explanation: Explanation | None = None
        self.state.param.watch(self._on_version, "version")

    # ------------------------------------------------------------------ training
    def after_training(self) -> None:
        """While training and after: the last explanation redone with the model as it is
        now (the same source and step)."""
        if self.explanation is not None:
            self.explain()

    def _on_version(self, *_: Any) -> None:
        self.pause()
        self.reset_curve()
        self.attn_source.data = dict(EMPTY)
        self.explanation = None
        self.steps.object = ""

    # ------------------------------------------------------------------ explaining
    def explain(self, *_: Any) -> None:
        result = self.state.explain(self.source_text())
        if result is None:
            return
        self.explanation = result
        U = result.trace.logits.shape[0]
        self.step_slider.end = max(U, 2)  # a slider needs start < end
        self.step_slider.value = min(self.step_slider.value, U)
        self._show_steps()
        if result.weights is None:
            self.attn_source.data = dict(EMPTY)
            self.state.notify("Context only: no attention, the same c = a¹(S) at every step.")
        else:
            update_attention(
                self.attn_fig, self.attn_source, result.weights, result.source, result.output
            )

    def _show_steps(self) -> None:
        if self.explanation is not None:
            self.steps.object = steps_text(self.explanation, int(self.step_slider.value or 1))

    def new_example(self, *_: Any) -> None:
        self.source_box.value = self.state.example_source()

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.RadioButtonGroup.from_param(
                s.param.form, name="Score", options=FORM_LABELS, orientation="vertical"
            ),
            pn.widgets.IntSlider.from_param(s.param.hidden_size, name="Hidden size S¹ = S²"),
            lr_input(s),
            seed_input(s),
        ]

    def sections(self) -> list[Any]:
        explain = pn.widgets.Button(name="Explain", button_type="primary", width=90)
        explain.on_click(self.explain)
        example = pn.widgets.Button(name="New example", width=110)
        example.on_click(self.new_example)
        return [
            "## Step by step",
            pn.pane.Markdown(DECODE_HELP),
            pn.Row(self.source_box, explain, example),
            self.step_slider,
            pn.Row(self.steps, pn.pane.Bokeh(self.attn_fig)),
        ]
