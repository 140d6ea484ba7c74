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
from pyplay.ui.style import LINE_MIN_PX

__all__ = ["TryThis", "try_box", "try_this"]


class TryThis(param.Parameterized):
    """The experiments of lesson ``spec`` for the lesson view ``view`` (its ``state`` and
    ``session``, which pauses); :attr:`note` says what the last click set up."""

    note = param.String(default="")

    def __init__(self, view: Any, spec: Any) -> None:
        super().__init__()
        self.view = view
        self.spec = spec

    def run(self, experiment: Experiment) -> None:
        """Set the lesson up for ``experiment`` (training paused first)."""
        self.view.session.pause()
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

    def note_pane(self, css: str) -> pn.pane.Markdown:
        """What the last click set up (hidden until one did); the lesson's own text, never
        the learner's."""
        return pn.pane.Markdown(
            self.param.note,
            visible=pn.bind(bool, self.param.note),
            css_classes=[css],
            sizing_mode="stretch_width",
        )

    def picker(self, width: int) -> pn.Column:
        """The experiments in the workbench, ``width`` pixels wide: a "Try this" menu on the
        first experiment and a **Set up** button beside it, so the first is one click away,
        and the note of what the click set up under them."""
        labels = [e.label for e in self.spec.experiments]
        menu = pn.widgets.Select(name="Try this", options=labels, width=width - 100)
        button = pn.widgets.Button(name="Set up", width=72, button_type="primary",
                                   button_style="outline", align="end")  # fmt: skip
        by_label = {e.label: e for e in self.spec.experiments}
        button.on_click(lambda _: self.run(by_label[str(menu.value)]))
        return pn.Column(
            pn.Row(menu, button, margin=0),
            self.note_pane("pyplay-try-note"),
            margin=0,
            css_classes=["pyplay-try-first"],
        )

    def panel(self) -> pn.Column:
        rows: list[Any] = []
        for experiment in self.spec.experiments:
            button = pn.widgets.Button(
                name=experiment.label, width=260, button_type="primary", button_style="outline"
            )
            button.on_click(self._runner(experiment))
            what = f"{experiment.expect} (about {experiment.steps:,} steps)"
            # on a phone the line goes under its button, not into a column a word wide
            text = pn.pane.Markdown(what, sizing_mode="stretch_width", min_width=LINE_MIN_PX)
            rows.append(pn.Row(button, text, css_classes=["pyplay-try-row"]))
        return pn.Column(
            "## Try this",
            *rows,
            self.note_pane("pyplay-try-note"),
            css_classes=["pyplay-try-this"],
            sizing_mode="stretch_width",
        )


def try_box(view: Any) -> TryThis | None:
    """The experiments of ``view``'s lesson (None when its spec declares none); kept as
    ``view.try_this``."""
    from pyplay.ui.lessons import spec_of

    try:
        spec = spec_of(type(view.state))
    except KeyError:
        return None
    if not spec.experiments:
        return None
    box = TryThis(view, spec)
    view.try_this = box
    return box


def try_this(view: Any) -> list[Any]:
    """The "Try this" box of ``view``'s lesson (nothing when its spec declares none)."""
    box = try_box(view)
    return [] if box is None else [box.panel()]
