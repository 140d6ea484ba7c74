"""The "Try this" box that opens a lesson: one button per experiment of its spec
(:class:`~pyplay.ui.lessons.experiment.Experiment`), each beside what to expect. A click
pauses training, sets the lesson up (:func:`~pyplay.ui.lessons.experiment.set_up`: the
experiment's settings, every other setting back to its default, a fresh model) and says
under the buttons what was set up and what to watch for; the learner then presses Train.

A model trained before the click is not lost: autosave keeps it in Saved work
(:mod:`pyplay.ui.autosave` saves a trained model before a rebuild replaces it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn
import param

from pyplay.ui.lessons.experiment import Experiment, set_up

__all__ = ["TryThis", "try_this"]


class TryThis(param.Parameterized):
    """The experiments of lesson ``spec`` for the lesson view ``view`` (its ``state`` and
    ``pause()``); :attr:`note` says what the last click set up."""

    note = param.String(default="")

    def __init__(self, view: Any, spec: Any) -> None:
        super().__init__()
        self.view = view
        self.spec = spec

    def run(self, experiment: Experiment) -> None:
        """Set the lesson up for ``experiment`` (training paused first)."""
        self.view.pause()
        state = self.view.state
        try:
            set_up(state, tuple(self.spec.params), experiment)
        except (ValueError, TypeError, KeyError) as err:
            self.note = f"Could not set this up: {err}"
            return
        self.note = (
            f"Set up: {experiment.label}. Press Train and watch for about "
            f"{experiment.steps:,} steps: {experiment.expect}"
        )

    def _runner(self, experiment: Experiment) -> Callable[[Any], None]:
        def click(_: Any) -> None:
            self.run(experiment)

        return click

    def panel(self) -> pn.Column:
        rows: list[Any] = []
        for experiment in self.spec.experiments:
            button = pn.widgets.Button(
                name=experiment.label, width=260, button_type="primary", button_style="outline"
            )
            button.on_click(self._runner(experiment))
            what = f"{experiment.expect} (about {experiment.steps:,} steps)"
            rows.append(pn.Row(button, pn.pane.Markdown(what, sizing_mode="stretch_width")))
        note = pn.pane.Markdown(  # the lesson's own text, never the learner's
            self.param.note,
            visible=pn.bind(bool, self.param.note),
            css_classes=["pyplay-try-note"],
            sizing_mode="stretch_width",
        )
        return pn.Column(
            "### Try this",
            *rows,
            note,
            css_classes=["pyplay-try-this"],
            sizing_mode="stretch_width",
        )


def try_this(view: Any) -> list[Any]:
    """The "Try this" box of ``view``'s lesson (nothing when its spec declares none)."""
    from pyplay.ui.lessons import spec_of

    try:
        spec = spec_of(type(view.state))
    except KeyError:
        return []
    if not spec.experiments:
        return []
    box = TryThis(view, spec)
    view.try_this = box
    return [box.panel()]
