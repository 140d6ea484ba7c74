"""Two (or more) models trained side by side, one click away, in a section of a lesson's
page: what such comparisons share.

:class:`SideBySide` is the state (no Panel): models of its own built from the lesson's
settings when it begins, trained one step each at a time for a fixed number of steps,
through the same protocol as a lesson state (``running``, ``stopped``, ``train(steps=,
budget_s=)``, ``notify``), so the shared loop of :class:`~pyplay.ui.training.TrainingView`
drives it. :class:`ComparisonSection` is that loop around it with the section's three
buttons (Compare, Pause comparison, Continue comparison); one training at a time: the
lesson's training pauses while a comparison runs.
"""

from __future__ import annotations

import time
from typing import Any

import panel as pn

from pyplay.ui.training import TrainingView

__all__ = ["ComparisonSection", "SideBySide"]


class SideBySide:
    """The state of a comparison: subclasses set ``setting`` (with its ``steps``) and
    ``trainers`` in ``begin`` and give one step of every model in :meth:`_step`."""

    def __init__(self) -> None:
        self.running = False
        self.stopped = ""
        self.message = ""
        self.setting: Any = None
        self.trainers: dict[str, Any] = {}

    @property
    def step_count(self) -> int:
        return min((t.step_count for t in self.trainers.values()), default=0)

    @property
    def finished(self) -> bool:
        return self.setting is not None and self.step_count >= self.setting.steps

    def steps_line(self) -> str:
        """ "Training: step N of M." (or Paused, Done) of a begun comparison."""
        verb = "Training" if self.running else ("Done" if self.finished else "Paused")
        return f"{verb}: step {self.step_count} of {self.setting.steps}."

    def notify(self, text: str, kind: str = "info") -> None:
        """A message for the section (``kind`` is ignored: the section shows it as text)."""
        del kind
        self.message = text

    def _step(self) -> bool:
        """One training step of every model; False (with a message) when one diverged."""
        raise NotImplementedError

    def train(self, steps: int | None = None, budget_s: float | None = None) -> int:
        """One step of each model at a time, ``steps`` of them or as many as fit in
        ``budget_s`` seconds, never past the setting's steps; returns the steps taken. Stops
        (``running`` False) when done or when a model's loss diverges."""
        if self.setting is None:
            self.running = False
            return 0
        start, done = time.perf_counter(), 0
        while not self.finished and (steps is None or done < steps):
            if not self._step():
                self.running = False
                return done
            done += 1
            if budget_s is not None and time.perf_counter() - start >= budget_s:
                break
        if self.finished:
            self.running = False
        return done


class ComparisonSection(TrainingView):
    """The shared training loop around a :class:`SideBySide` ``state`` begun from the
    lesson view's state (``begin(lesson_state, steps)``), with its three buttons
    (:attr:`button_names`: start, pause, continue); ``progress`` is the line under them.
    Subclasses redraw in ``after_training`` and say what they compare in :meth:`shown`.
    One training at a time: starting a comparison pauses the lesson's training and the
    lesson view's other ``comparisons``."""

    steps: int
    state: Any
    progress: Any  # the line under the buttons
    setting: Any  # the line that says what is compared
    button_names: tuple[str, str, str] = ("Compare", "Pause comparison", "Continue comparison")

    def __init__(self, lesson: Any) -> None:
        self.lesson = lesson  # the lesson's view: its state gives the settings

    def shown(self) -> None:
        """A comparison has begun: show its setting (nothing by default)."""

    def quiet_others(self) -> None:
        """The lesson's model and the lesson's other comparisons pause, so the page stays
        quick to answer."""
        self.lesson.pause()
        for other in getattr(self.lesson, "comparisons", ()):
            if other is not self:
                other.pause()

    def compare(self, *_: Any) -> None:
        """New models from the lesson's settings, trained until done or paused."""
        self.pause()
        self.quiet_others()
        if not self.state.begin(self.lesson.state, self.steps):
            self.progress.object = self.state.message
            return
        self.shown()
        self.start()
        self.progress.object = self.state.progress()

    def resume(self, *_: Any) -> None:
        """Continue a paused comparison (nothing when there is none or it is done)."""
        if self.state.setting is None or self.state.finished or self.state.running:
            return
        self.quiet_others()
        self.start()
        self.progress.object = self.state.progress()

    def _stream(self, result: Any) -> None:
        self.progress.object = self.state.message or self.state.progress()

    def comparison_buttons(self) -> pn.Row:
        """The section's start, pause and continue buttons."""
        row = []
        for label, kind, action in zip(
            self.button_names, ("primary", "default", "default"),
            (self.compare, self.pause, self.resume), strict=True,
        ):  # fmt: skip
            button = pn.widgets.Button(name=label, button_type=kind, width=90 + 5 * len(label))
            button.on_click(action)
            row.append(button)
        return pn.Row(*row)

    def section(self, title: str, help_text: str, *plots: Any) -> list[Any]:
        """The section's parts for the lesson's column: its heading ``title``, ``help_text``,
        the buttons, the progress and setting lines (``self.setting``), then ``plots``."""
        return [
            f"## {title}",
            pn.pane.Markdown(help_text),
            self.comparison_buttons(),
            self.progress,
            self.setting,
            *plots,
        ]
