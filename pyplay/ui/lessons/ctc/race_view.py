"""The CTC lesson's comparison figure: loss and greedy label error of a one-way, a time-delay
and a bidirectional net trained on the same batches (:mod:`pyplay.ui.lessons.ctc.race`),
redrawn with the lesson's other views while it trains. Rendering only."""

from __future__ import annotations

from typing import Any

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource

from pyplay.ui.lectures import lecture
from pyplay.ui.lessons.ctc.race import EVAL_EVERY, KINDS
from pyplay.ui.lessons.ctc.state import CTCState
from pyplay.ui.plots import keep_legend_samples, legend_outside, line_figure, set_data, set_title
from pyplay.ui.text import Text

__all__ = ["RaceViews"]

COLOURS = {"one-way": "#7f7f7f", "time-delay": "#d62728", "bidirectional": "#1f77b4"}

RACE_HELP = (
    f'A bidirectional net includes future context; {lecture("solberg")} adds: "Could solve '
    'with time-delay for predictions, though need to specify fixed context." Tick '
    "the box and three nets of this cell and width learn beside the model above, each step on "
    "one shared batch: a **one-way** net (past frames only), a **time-delay** net (the same "
    "one-way net, its output for frame t read D frames later; D is the Time delay setting, "
    "3 when it is 0) and a **bidirectional** one. Left: their CTC losses; right: the greedy "
    f"(best path) label error rate on 64 held-out examples, every {EVAL_EVERY} steps. With "
    "CTC a one-way net can already wait before it emits a symbol (the alignment is free), so "
    "a delay changes less than one might expect: on some seeds it helps, on others it slows "
    "the net down (it must carry each frame D steps further). The bidirectional net, which "
    "sees the whole example, learns fastest."
)


def _figure(title: str, y_label: str, box: tuple[float, float]) -> tuple[Any, ColumnDataSource]:
    source = ColumnDataSource({k: np.zeros(0) for k in ("step", *KINDS)})
    fig = line_figure(title, "step", y_label, height=260, tools="save", box=((0.0, 100.0), box))
    legend_outside(fig, "below")
    for kind in KINDS:
        fig.line("step", kind, source=source, line_width=2, color=COLOURS[kind], legend_label=kind)
    keep_legend_samples(fig)
    return fig, source


class RaceViews:
    """The comparison's checkbox, figures and latest error rates."""

    def __init__(self, state: CTCState) -> None:
        self.state = state
        self.toggle = pn.widgets.Checkbox.from_param(
            state.param.compare, name="Train one-way, time-delay and bidirectional nets beside it"
        )
        self.loss_fig, self.loss_source = _figure("CTC loss on each batch", "CTC loss", (0.0, 5.0))
        self.error_fig, self.error_source = _figure(
            "Greedy label error rate (held out)", "label error rate", (0.0, 1.0)
        )
        self.note = Text("", css_classes=["pyplay-ctc-race-note"])
        self.figures = pn.GridBox(
            pn.pane.Bokeh(self.loss_fig), pn.pane.Bokeh(self.error_fig),
            ncols=2, sizing_mode="stretch_width",
        )  # fmt: skip

    def update(self) -> None:
        """Redraw from the state's comparison (hidden when it is off)."""
        race = self.state.race
        self.figures.visible = race is not None
        if race is None:
            self.note.object = "Off: tick the box to train the three nets as the model trains."
            return
        set_data(self.loss_source, {k: np.asarray(v, float) for k, v in race.history.items()})
        set_data(self.error_source, {k: np.asarray(v, float) for k, v in race.errors.items()})
        set_title(self.loss_fig, f"CTC loss on each batch (time delay D = {race.delay})")
        last = race.latest()
        if race.errors["step"]:
            shown = ", ".join(f"{k} {last[k]:.3f}" for k in KINDS)
            self.note.object = f"Step {race.steps}: label error rate {shown}"
        else:
            self.note.object = f"Step {race.steps}: the first error rates come at step {EVAL_EVERY}"

    def sections(self) -> list[Any]:
        return [
            "## Future context: one-way, time-delay, bidirectional",
            pn.pane.Markdown(RACE_HELP),
            self.toggle,
            self.note,
            self.figures,
        ]
