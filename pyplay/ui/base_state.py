"""What every lesson state has: whether it is training, the message the page shows, a status
line, and a version number that views watch to redraw after a rebuild; and the learning rate
and seed parameters every lesson declares alike. No Panel here.

A setting's range is declared once, on its parameter: ``bounds`` where no other value can be
used, else ``softbounds``, the range of the page's slider or number box and of what the page
address and lesson files accept (:mod:`pyplay.ui.inputs`, :mod:`pyplay.ui.urlstate`,
:mod:`pyplay.ui.checkpoint`), while a value set from code outside it is the model's or
trainer's to refuse, with a message."""

from __future__ import annotations

from typing import Any

import param

__all__ = ["MESSAGE_KINDS", "SEED_MAX", "LessonBase", "before_label", "lr_param", "seed_param"]

MESSAGE_KINDS = ["info", "success", "warning", "danger"]
SEED_MAX = 2**32 - 1


def lr_param(default: float) -> param.Number:
    """A lesson's learning rate: ``softbounds`` are the range the page's box, the page address
    and lesson files accept (a value set from code outside is the trainer's to refuse, with a
    message)."""
    return param.Number(default=default, softbounds=(1e-6, 10.0))


def seed_param() -> param.Integer:
    """A lesson's seed (what the page's box, the page address and lesson files accept: 0 to
    2**32 - 1)."""
    return param.Integer(default=0, softbounds=(0, SEED_MAX))


def before_label(settings: dict[str, tuple[str, Any]]) -> str:
    """The legend label of the run a rebuild replaced: ``settings`` maps each changed
    setting's name to (its label, its value in that run), e.g. "before: Hidden size 32"."""
    parts = [f"{label} {_shown(old)}" for label, old in settings.values()]
    return "before: " + ", ".join(parts) if parts else "before"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class LessonBase(param.Parameterized):
    """Base of the lesson states.

    ``running`` is True while the page's training loop runs; ``stopped`` says why it stopped
    by itself (diverged, too slow), shown next to Train until it starts again; ``message`` and
    ``message_kind`` are shown as an alert (:meth:`notify`); ``status`` is the line under the
    controls (step, loss, speed); ``version`` is bumped whenever the model is rebuilt or
    loaded, so views reset their plots. ``history`` is the loss curve (``step``, ``loss`` and
    any column a lesson adds); the state's training loop appends to it (:meth:`_record`).
    """

    running = param.Boolean(default=False)
    message = param.String(default="")
    message_kind = param.Selector(objects=MESSAGE_KINDS, default="info")
    status = param.String(default="")
    version = param.Integer(default=0, doc="bumped whenever the model is rebuilt or loaded")
    stopped = param.String(default="", doc="why training stopped by itself (next to Train)")
    replacing = param.Integer(
        default=0, doc="bumped just before a trained model is replaced (autosave keeps it)"
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.history: dict[str, list[float]] = {"step": [], "loss": []}
        self._elapsed = 0.0  # seconds spent training the current model
        # the run a setting's rebuild replaced: (label, steps, losses), drawn faded
        self.previous_run: tuple[str, list[float], list[float]] | None = None
        self._next_before: tuple[str, list[float], list[float]] | None = None

    def _new_run(self) -> None:
        """A new model is in place: ``previous_run`` is the run a setting's rebuild replaced
        (set just before it), None after any other rebuild (Reset, Try this, a load)."""
        self.previous_run, self._next_before = self._next_before, None

    def _record(self, step: int, loss: float, seconds: float) -> None:
        """One training step done: its loss on the curve, its time in the speed."""
        self.history["step"].append(step)
        self.history["loss"].append(loss)
        self._elapsed += seconds

    def steps_per_second(self, steps: int) -> float:
        """``steps`` over the time spent training (0 before any)."""
        return steps / self._elapsed if self._elapsed else 0.0

    def notify(self, text: str, kind: str = "info") -> None:
        """Show ``text`` in the page (kind: info, success, warning, danger)."""
        self.message_kind = kind
        self.message = text

    def stop_training(self, note: str, detail: str | None = None) -> None:
        """Training stops by itself: ``note`` goes next to the Train button (``stopped``, until
        training starts again), ``detail`` (or the note) into the lesson's message."""
        self.running = False
        self.stopped = note
        self.notify(detail or note, "danger" if detail else "warning")
