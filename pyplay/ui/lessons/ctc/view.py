"""The "CTC" lesson: train a recurrent network with the CTC loss to read symbols out of noisy
frames; see its per-frame probabilities (blank included), the best path and its collapse, and
three decoders side by side (best path, prefix beam search, lexicon beam search).

Rendering only: actions call :class:`~pyplay.ui.lessons.ctc.state.CTCState`.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons.ctc.assumptions_view import AssumptionsSection
from pyplay.ui.lessons.ctc.decoding_view import DecodingViews
from pyplay.ui.lessons.ctc.lattice_view import LatticeViews
from pyplay.ui.lessons.ctc.race_view import RaceViews
from pyplay.ui.lessons.ctc.state import CTCState
from pyplay.ui.plots import heatmap_figure, label_axis, update_heatmap
from pyplay.ui.text import Text

__all__ = ["CTCLesson"]


class CTCLesson(LessonView):
    """Builds the CTC lesson around a :class:`CTCState`."""

    state_class = CTCState

    def build(self) -> None:
        self.prob_fig, self.prob_source = heatmap_figure("p", "P(class | frame)", "frame", "class")
        self.prob_fig.width = 520
        self._classes: list[str] = []
        self.example = pn.widgets.IntSlider(name="Example", start=0, end=7, value=0, width=200)
        self.example.param.watch(lambda e: self.refresh(), "value")
        self.paths = Text("", css_classes=["pyplay-ctc-paths"])
        self.lattice = LatticeViews()
        self.decoding = DecodingViews(self.state)
        self.race = RaceViews(self.state)
        self.assumptions = AssumptionsSection()
        self.state.param.watch(lambda e: self.race.update(), "compare")
        self.delay = pn.widgets.IntSlider.from_param(
            self.state.param.delay, name="Time delay: future frames (one-way net)"
        )
        self.state.param.watch(self._show_delay, "bidirectional")
        self._show_delay()
        self.state.param.watch(lambda e: self.refresh(), ["beam_width", "lexicon"])
        self.watch_version()

    def _show_delay(self, *_: Any) -> None:
        """The time delay is the one-way net's alternative to reading backwards."""
        self.delay.disabled = bool(self.state.bidirectional)

    def refresh(self, *_: Any) -> None:
        self.race.update()
        view = self.state.view(int(self.example.value or 0))
        if view is None:
            return
        update_heatmap(self.prob_fig, self.prob_source, view.probs, "p")  # class k on row k
        if self._classes != view.classes:
            self._classes = list(view.classes)
            label_axis(self.prob_fig.yaxis[0], view.classes)
        self.paths.object = (
            f"true frames : {view.frames}\n"
            f"best path   : {view.best_path}\n"
            f"collapse    : {view.decoded}\n"
            f"target      : {view.target}   "
            + ("(right)" if view.decoded == view.target else "(not yet)")
        )
        self.decoding.update(self.state.decodings(view))
        self.lattice.update(view)

    def controls(self) -> list[Any]:
        s = self.state
        return [
            pn.widgets.RadioButtonGroup.from_param(
                s.param.cell, name="Cell", options={"GRU": "gru", "LSTM": "lstm", "RNN": "rnn"}
            ),
            pn.widgets.IntSlider.from_param(s.param.hidden_size, name="Hidden size"),
            pn.widgets.Checkbox.from_param(s.param.bidirectional, name="Bidirectional"),
            self.delay,
            pn.widgets.FloatSlider.from_param(s.param.noise, name="Frame noise", step=0.05),
        ]

    def inside(self) -> list[Any]:
        """The workbench's view: the per-frame probabilities and the best path, live."""
        return [self.example, pn.pane.Bokeh(self.prob_fig), self.paths]

    def sections(self) -> list[Any]:
        return [
            *self.decoding.sections(),
            *self.race.sections(),
            *self.lattice.sections(),
            *self.assumptions.sections(),
        ]
