"""The "Textbook seq2seq" view, a sub-tab of the dynamic networks lesson: pick the score
(context only, dot, general, concatenation), train on reversal, type a source, and read every
textbook quantity of the decoding beside the library code that computes it, with the attention
heatmap; download or load the model (:class:`~pyplay.ui.export_bar.ExportBar`).

Equations are shown as plain Unicode text (``n⁴(t) = [A¹(T)]ᵀ W_a a²(t−1)``), as in the rest of the
dynamic-networks lesson: Panel's LaTeX pane loads KaTeX/MathJax from a CDN, which the offline
page does not have. Rendering only: actions call
:class:`~pyplay.ui.lessons.textbook.state.TextbookSeq2SeqState`.
"""

from __future__ import annotations

import textwrap
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
from pyplay.ui.training import int_sliders

__all__ = ["TextbookSeq2SeqView"]

DECODE_HELP = (
    "Type a source (letters a-f) and **Explain**: the network decodes it greedily and every "
    "quantity is listed with its equation (numbered as in the chapter, in the book's time: "
    "the decoder continues at t = T+1), the library code that computes it, and its value. "
    "a⁴(t) and n⁴(t) list the columns of A¹(T), newest first; the heatmap shows the same "
    "weights in source order. The last lines check that the batched model gives the same "
    "numbers and say which choices the book leaves open were taken."
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
        "library TextbookSeq2Seq.forward (batched) vs the equations one by one:\n"
        f"    largest difference {explanation.max_difference:.1e}"
    )
    choices = [
        textwrap.fill(c, 72, initial_indent="  • ", subsequent_indent="    ") for c in trace.choices
    ]
    blocks.append("choices the book leaves open:\n" + "\n".join(choices))
    return "\n\n".join(blocks)


class TextbookSeq2SeqView(LessonView):
    """The sub-tab's layout around a :class:`TextbookSeq2SeqState`; ``panel()`` returns it."""

    state_class = TextbookSeq2SeqState

    def build(self) -> None:
        self.baseline.visible = False
        self.attn_fig, self.attn_source = attention_figure(name="textbook-attention")
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
        self.session.pause()
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
            self.state.notify("Context only: no attention, the same c = a¹(T) at every step.")
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
            *int_sliders(s, hidden_size="Hidden size S¹ = S²", D="Delay line D (columns of A¹(T))"),
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
