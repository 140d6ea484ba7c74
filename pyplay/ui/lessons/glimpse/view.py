"""The "Soft and hard attention" lesson: a soft and a hard glimpse network learn the same task on
the same batches; watch where each one looks in an example, the position the hard one draws,
both learning curves, and how much the hard one's gradient estimate varies with and without
its baseline.

Rendering only: actions call :class:`~pyplay.ui.lessons.glimpse.state.GlimpseLessonState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn

from pyplay.ui.curve_points import stream_curve, thinned
from pyplay.ui.lectures import lecture
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.glimpse.figures import (
    HARD,
    SOFT,
    accuracy_figure,
    example_figure,
    show_example,
    show_spread,
    symbol_names,
    variance_figure,
)
from pyplay.ui.lessons.glimpse.state import (
    EXAMPLES,
    REPEATS,
    VARIANCE_EVERY,
    GlimpseExample,
    GlimpseLessonState,
)
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

__all__ = ["GlimpseLesson"]

LECTURE = (
    f"**In the notation of {lecture('solberg')}** (content-based addressing): score every memory "
    "cell, `αⱼ = f(q, K(Mⱼ))`, take `p = softmax(α)` and return\n\n"
    "- hard addressing: `v = Mⱼ` with probability `pⱼ`,\n"
    "- soft addressing: `v = Σⱼ pⱼ Mⱼ`.\n\n"
    "Here the cells are the positions of the example, `Mⱼ = xⱼ`, and the score is a small "
    "network of the position itself, `αⱼ = v_aᵀ tanh(W_a xⱼ + b_a)`; the read-out classifies "
    "what was read, `y = U tanh(W_h r + b_h) + c`, with `r = Σⱼ pⱼ xⱼ` (soft) or `r = xⱼ`, "
    "`j ~ p` (hard). For the loss `Lⱼ` of reading position j, hard attention is trained with "
    "the score-function (REINFORCE) gradient\n\n"
    "`∇θ E_{j~p}[Lⱼ] = E_{j~p}[ ∇θ Lⱼ + (Lⱼ − b) ∇θ log pⱼ ]`,   "
    "`∂ log pⱼ / ∂αₖ = [k = j] − pₖ`\n\n"
    "with one draw per example, averaged over the batch. A baseline `b` that does not depend "
    "on j leaves the expectation unchanged (`Σⱼ ∇θ pⱼ = 0`); near `E[L]` it makes the estimate "
    "vary less. The page's `b` is a running mean of the batch losses, `b ← 0.9 b + 0.1 L̄` "
    "after each step (0 at first); with **Baseline** off the hard model uses `b = 0`.\n\n"
    f"**Where the page departs from {lecture('solberg')}:** its glimpses are crops of an "
    "image, τ of them chosen in turn by an RNN, and it says the glimpse policy is trained "
    '"with reinforcement learning (policy gradient)" without writing the gradient: the '
    "formula above is Williams' REINFORCE and the baseline a running mean, the page's "
    "choices. Here there is one glimpse and no query `q`: the score asks every example the "
    "same question, so `v_a` plays the part of `q` and `tanh(W_a xⱼ + b_a)` that of `K(Mⱼ)`. "
    "The library's code calls the scores `e` and the weights `alpha`."
)
VARIANCE_HELP = (
    f"Every {VARIANCE_EVERY} steps the page draws the hard model's positions {REPEATS} times "
    "on one fixed batch of 32 examples and computes, each time, the gradient of the score "
    "network (W_a, b_a, v_a) with its own backward pass, once with b = 0 and once with the "
    "running-mean b, on the same draws. The curves are the total variance over the draws, "
    "tr Cov = Σ over the parameters of their variance. Both are measured whether or not "
    "training uses the baseline. Once the model is sure where to look, every draw is the "
    "same and the variance falls to 0 (a gap on the log axis)."
)


class GlimpseLesson(LessonView):
    """Builds the "Soft and hard attention" lesson around a :class:`GlimpseLessonState`."""

    state_class = GlimpseLessonState
    curve = ("step", "loss", "soft")

    def build(self) -> None:
        self.loss_source.data = {"step": [], "loss": [], "soft": []}
        self.loss_plot.style_curve("hard attention", HARD)
        self.loss_plot.add_curve("soft", "soft attention", SOFT)
        self.example_fig, *sources = example_figure()
        self.example_sources = (sources[0], sources[1], sources[2])
        self.accuracy_fig, self.accuracy_source = accuracy_figure()
        self.variance_fig, self.variance_source = variance_figure()
        self.example = pn.widgets.IntSlider(
            name="Example", start=1, end=EXAMPLES, value=1, width=220
        )
        self.example.param.watch(lambda e: self.refresh(), "value")
        self.answer = Text("", css_classes=["pyplay-glimpse-answer"])
        self.watch_version()

    # ------------------------------------------------------------------ training
    def _stream(self, records: list[Any]) -> None:
        if not records:
            return
        n, h = len(records), self.state.history
        stream_curve(
            self.loss_source,
            {"step": [r.step for r in records], "loss": [r.loss for r in records],
             "soft": h["soft"][-n:]},
        )  # fmt: skip
        stream_curve(
            self.accuracy_source,
            {"step": h["step"][-n:], "hard": h["accuracy"][-n:], "soft": h["soft_accuracy"][-n:]},
        )
        show_spread(self.variance_source, self.state.spread)

    def reset_curve(self) -> None:
        super().reset_curve()
        h = self.state.history
        self.accuracy_source.data = thinned(
            {"step": list(h["step"]), "hard": list(h["accuracy"]), "soft": list(h["soft_accuracy"])}
        )
        self.variance_source.data = {"step": [], "plain": [], "baseline": []}
        show_spread(self.variance_source, self.state.spread)

    def refresh(self, *_: Any) -> None:
        k = int(self.example.value or 1) - 1
        view = self.state.example(k)
        if view is None:
            return
        show_example(self.example_fig, self.example_sources, view, k)
        self.answer.object = self._answer(view)

    @staticmethod
    def _answer(view: GlimpseExample) -> str:
        names = symbol_names(view.symbols)
        shown = [f"[{s}]" if t == view.marked else s for t, s in enumerate(names)]
        truth = names[view.marked]

        def verdict(answer: int) -> str:
            name = symbol_names(np.array([answer]))[0]
            return f"{name} ({'right' if answer == view.target else 'wrong'})"

        p = float(view.hard_p[view.marked])
        return "\n".join(
            [
                "input        : "
                + " ".join(shown)
                + f"   (marked: position {view.marked}, {truth})",
                f"soft answers : {verdict(view.soft_answer)}, "
                f"weight on the mark {float(view.soft_p[view.marked]):.2f}",
                f"hard drew    : position {view.sampled} ({names[view.sampled]}), answers "
                f"{verdict(view.hard_answer)}; p of the mark {p:.2f}",
            ]
        )

    # ------------------------------------------------------------------ layout
    def controls(self) -> list[Any]:
        s = self.state
        return [
            *int_sliders(
                s, seq_len="Sequence length T", n_symbols="Symbols", hidden_size="Read-out size H"
            ),
            pn.widgets.Checkbox.from_param(
                s.param.baseline, name="Baseline: hard attention subtracts b"
            ),
        ]

    def inside(self) -> list[Any]:
        """The workbench's view: where each model looks on one example, live."""
        return [self.example, self.answer, pn.pane.Bokeh(self.example_fig)]

    def sections(self) -> list[Any]:
        return [
            "### Accuracy",
            pn.pane.Bokeh(self.accuracy_fig, sizing_mode="stretch_width"),
            "## How noisy is the hard model's gradient?",
            pn.pane.Bokeh(self.variance_fig, sizing_mode="stretch_width"),
            pn.pane.Markdown(VARIANCE_HELP, sizing_mode="stretch_width"),
            "## The equations",
            pn.pane.Markdown(LECTURE, sizing_mode="stretch_width"),
        ]
