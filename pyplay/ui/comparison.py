"""Two (or more) models trained side by side, one click away, in a section of a lesson's
page: what such comparisons share.

:class:`SideBySide` is the state (no Panel): models of its own built from the lesson's
settings when it begins, trained one step each at a time for a fixed number of steps,
through the same protocol as a lesson state (``running``, ``stopped``, ``train(steps=,
budget_s=)``, ``notify``), so the shared loop, a
:class:`~pyplay.ui.session.TrainingSession`, drives it. :class:`ComparisonSection` owns such
a session around it and gives the section its three buttons (Compare, Pause comparison,
Continue comparison); one training at a time: the lesson view declares its session and its
comparisons' exclusive (:func:`~pyplay.ui.session.one_at_a_time`), so the lesson's training
pauses while a comparison runs, and the other way round.
"""

from __future__ import annotations

import time
from typing import Any

import panel as pn

from pyplay.ui.session import TrainingSession, timing_of

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


class ComparisonSection:
    """A section around a :class:`SideBySide` ``state`` begun from the lesson view's state
    (``begin(lesson_state, steps)``), trained by its ``session`` (a
    :class:`~pyplay.ui.session.TrainingSession`, timed as the class declares), with its
    three buttons (:attr:`button_names`: start, pause, continue); ``progress`` is the line
    under them. Subclasses redraw in :meth:`after_training` and say what they compare in
    :meth:`shown`. One training at a time: the sessions the lesson view declares exclusive
    with this one (its own, its other comparisons') pause when it starts."""

    steps: int
    progress: Any  # the line under the buttons
    setting: Any  # the line that says what is compared
    button_names: tuple[str, str, str] = ("Compare", "Pause comparison", "Continue comparison")

    def __init__(self, lesson: Any, state: SideBySide) -> None:
        self.lesson = lesson  # the lesson's view: its state gives the settings
        self.state: Any = state  # the subclass's SideBySide
        self.session = TrainingSession(state, self._stream, self.after_training, **timing_of(self))

    def shown(self) -> None:
        """A comparison has begun: show its setting (nothing by default)."""

    def compare(self, *_: Any) -> None:
        """New models from the lesson's settings, trained until done or paused (what this
        one excludes pauses before they are built)."""
        self.session.pause()
        self.session.pause_others()
        if not self.state.begin(self.lesson.state, self.steps):
            self.progress.object = self.state.message
            return
        self.shown()
        self.session.start()
        self.progress.object = self.state.progress()

    def resume(self, *_: Any) -> None:
        """Continue a paused comparison (nothing when there is none or it is done)."""
        if self.state.setting is None or self.state.finished or self.state.running:
            return
        self.session.start()
        self.progress.object = self.state.progress()

    # ------------------------------------------------------------------ the session's hooks
    def _stream(self, result: Any) -> None:
        self.progress.object = self.state.message or self.state.progress()

    def after_training(self) -> None:
        """Redraw the section's plots from the models as they are now (nothing by default)."""

    def comparison_buttons(self) -> pn.Row:
        """The section's start, pause and continue buttons."""
        row = []
        for label, kind, action in zip(
            self.button_names, ("primary", "default", "default"),
            (self.compare, self.session.pause, self.resume), strict=True,
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
