"""The "Textbook seq2seq" view, a sub-tab of the dynamic networks lesson: pick the score
(context only, dot, general, concatenation) and see the model drawn as Hagan's fig. 6.4, or
fig. 6.6 with its attention's fig. 6.5, 6.7 or 6.8 (:mod:`.figure_plot`, from the model's
parameters); train on reversal, type a source, and read every textbook quantity of the decoding
beside the library code that computes it, with the attention heatmap and, on request, the
weights pinned one-hot beside the plain seq2seq (eq. 6.10-6.11); download or load the model
(:class:`~pyplay.ui.export_bar.ExportBar`).

Equations are shown as plain Unicode text (``n⁴(t) = [A¹(T)]ᵀ W_a a²(t−1)``), as in the rest of the
dynamic-networks lesson: Panel's LaTeX pane loads KaTeX/MathJax from a CDN, which the offline
page does not have. Rendering only: actions call
:class:`~pyplay.ui.lessons.textbook.state.TextbookSeq2SeqState`.
"""

from __future__ import annotations

import textwrap
from typing import Any

import panel as pn

from pyplay.ui.lectures import lecture_label
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.textbook.figure_plot import book_figure, update_book_figure
from pyplay.ui.lessons.textbook.state import (
    FORM_LABELS,
    PIN_LABEL,
    Explanation,
    TextbookSeq2SeqState,
    format_value,
    one_hot_text,
)
from pyplay.ui.plots import attention_figure, update_attention
from pyplay.ui.style import SCROLL_X
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["TextbookSeq2SeqView"]

FIGURE_MIN_PX = 820  # a figure of the chapter narrower than this crowds its labels

DECODE_HELP = (
    "Type a source (letters a-f) and **Explain**: the network decodes it greedily and every "
    "quantity is listed with its equation (numbered as in the chapter, in the book's time: "
    "the decoder continues at t = T+1), the library code that computes it, and its value. "
    "a⁴(t) and n⁴(t) list the columns of A¹(T), newest first; the heatmap shows the same "
    "weights in source order. The last lines check that the batched model gives the same "
    "numbers and say which choices the book leaves open were taken."
)
FIGURE_HELP = (
    "The model as the chapter draws it, made from the model as built: every IW, LW and b is "
    "one of its parameters (named as in the book), every other arrow a value it computes, the "
    "sizes are its own. Boxes: inputs and layers; circles: operations (T the transpose, "
    "t = T the sampler, TDL the delay line A¹(T), [ ; ] the stacking); dashed blue: a signal "
    "used as a weight (the attention multiplies by A¹(T)); dotted: a value fixed while the "
    "decoder runs; the arc above: the decoder's initial condition; arcs below: delayed "
    "feedback (D). The layers, weights and signals are the chapter's (eq. 6.5-6.18); the "
    "layout is pyplay's."
)
PIN_HELP = (
    "The book: if a⁴(t) is one-hot on its first element, the context is a¹(T) again, as in "
    "the plain seq2seq. **Pin** runs this model with its weights pinned so and sets its "
    "contexts beside those of the plain network of fig. 6.4 with the same weights (LW²˒¹ = "
    "the context weight): equal, up to float rounding. Unpinned, the softmax's weights give "
    "another context."
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
        self.pin_text = Text("", css_classes=["pyplay-textbook-pinned"])
        self.explanation: Explanation | None = None
        self.figures = [book_figure() for _ in range(2)]  # the network, then its attention
        for fig, _ in self.figures:
            fig.min_width = FIGURE_MIN_PX
        # a figure keeps FIGURE_MIN_PX (its labels apart); a narrower page scrolls it sideways
        self.figure_panes = [
            pn.Column(
                pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_width=FIGURE_MIN_PX),
                sizing_mode="stretch_width",
                css_classes=[SCROLL_X],
            )
            for fig, _ in self.figures
        ]
        self.figure_note = Text("", css_classes=["pyplay-textbook-figure-note"])
        self._draw_figures()
        self.state.param.watch(self._on_version, "version")
        self.state.param.watch(lambda *_: self._show_steps(), "pin_weights")

    def _draw_figures(self) -> None:
        """The model's figures in the chapter, from its parameters (none if it failed)."""
        books = self.state.figures()
        for k, ((fig, sources), pane) in enumerate(
            zip(self.figures, self.figure_panes, strict=True)
        ):
            if k < len(books):
                update_book_figure(fig, sources, books[k])
            pane.visible = k < len(books)
        self.figure_note.object = "\n".join(f"fig. {b.number}: {b.note}" for b in books if b.note)

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
        self.steps.object = self.pin_text.object = ""
        self._draw_figures()

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
            u = int(self.step_slider.value or 1)
            self.steps.object = steps_text(self.explanation, u)
            self.pin_text.object = one_hot_text(self.explanation, u, self.state.pin_weights)

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
        pin = pn.widgets.Checkbox.from_param(self.state.param.pin_weights, name=PIN_LABEL)
        return [
            f"## {lecture_label('hagan')}'s figures of this network",
            pn.pane.Markdown(FIGURE_HELP),
            *self.figure_panes,
            self.figure_note,
            "## Step by step",
            pn.pane.Markdown(DECODE_HELP),
            pn.Row(self.source_box, explain, example),
            self.step_slider,
            pn.Row(self.steps, pn.pane.Bokeh(self.attn_fig)),
            pn.pane.Markdown(PIN_HELP),
            pin,
            self.pin_text,
        ]
