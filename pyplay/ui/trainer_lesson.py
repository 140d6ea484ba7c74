"""What the lesson states trained by a :class:`~pyplay.train.Trainer` share: rebuilding task,
model and trainer from the settings, applying new training settings to the current model, and
the lesson-file hooks of :class:`~pyplay.ui.checkpoint.SavableLesson`.

A state provides ``_make_task()``, ``_build_model(task)`` and ``_make_trainer(model, task)``
(each raising ``ValueError`` or ``TypeError`` on settings that do not fit) and
``_status_text()``; the model lives in the attribute named by ``_model_attr``. On bad
settings the page shows a message and the previous task, model and trainer stay in use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pyplay.train import Trainer
from pyplay.ui.checkpoint import LoadedFile, SavableLesson, same_model

__all__ = ["TrainerLesson", "carry_over"]


def carry_over(old: Trainer, new: Trainer) -> Trainer:
    """``new`` (new training settings, same model) continuing ``old``: its step count, and the
    optimiser's moments when the optimiser kind is the same (with the new learning rate)."""
    if type(new.optimizer) is type(old.optimizer):
        moments = old.optimizer.state_dict()
        moments["lr"] = new.optimizer.lr
        new.optimizer.load_state_dict(moments)
    new.step_count = old.step_count
    return new


class TrainerLesson(SavableLesson):
    """Rebuild, training settings and the lesson-file hooks of a state trained by
    ``self.trainer`` on ``self.task_obj``; the model is the attribute ``_model_attr``."""

    _model_attr: ClassVar[str] = "model"
    trainer: Any
    task_obj: Any
    # from LessonBase and the state itself (annotations only: the MRO must find theirs)
    running: bool
    version: int
    status: str
    notify: Callable[..., None]
    _status_text: Callable[[], str]

    # hooks --------------------------------------------------------------
    def _make_task(self) -> Any:
        raise NotImplementedError

    def _build_model(self, task: Any) -> Any:
        raise NotImplementedError

    def _make_trainer(self, model: Any, task: Any) -> Any:
        raise NotImplementedError

    def _forget_progress(self) -> None:
        """A new model has no losses yet (states with more progress to forget extend this)."""
        self.history = {"step": [], "loss": []}
        self._elapsed = 0.0

    # rebuild and settings -----------------------------------------------
    def _rebuild(self) -> tuple[Any, Any] | None:
        """Stop training and build task, model and trainer afresh from the settings.

        Returns the new ``(task, model)``, which the caller announces; on bad settings the
        message explains, nothing changes and the result is None.
        """
        self.running = False
        try:
            task = self._make_task()
            model = self._build_model(task)
            trainer = self._make_trainer(model, task)
        except (ValueError, TypeError) as err:
            self.notify(f"Not rebuilt: {err}", "danger")
            return None
        self.task_obj, self.trainer = task, trainer
        setattr(self, self._model_attr, model)
        self._forget_progress()
        self.version += 1
        self.status = self._status_text()
        return task, model

    def _apply_training_settings(self, done: str) -> None:
        """A new trainer for the current model with the current training settings, carrying
        over the step count and (same optimiser kind) its moments; ``done`` is the message."""
        model = getattr(self, self._model_attr)
        if model is None or self.task_obj is None or self.trainer is None:
            return
        try:
            trainer = self._make_trainer(model, self.task_obj)
        except (ValueError, TypeError) as err:
            self.notify(f"Setting not applied: {err}", "danger")
            return
        self.trainer = carry_over(self.trainer, trainer)
        self.notify(done, "info")

    # lesson files ---------------------------------------------------------
    def _file_model(self) -> Any:
        model = getattr(self, self._model_attr)
        if model is None or self.trainer is None:
            raise ValueError("there is no model yet: fix the settings first")
        return model

    def _file_optimizer(self) -> Any:
        return self.trainer.optimizer

    def _file_step(self) -> int:
        return int(self.trainer.step_count)

    def _file_prepare(self, loaded: LoadedFile) -> Callable[[], None]:
        task = self._make_task()
        same_model(loaded.model, self._build_model(task))
        trainer = self._make_trainer(loaded.model, task)
        if loaded.optimizer_state:
            try:
                trainer.optimizer.load_state_dict(loaded.optimizer_state)
            except (ValueError, TypeError) as err:
                if not loaded.native:  # a native file's optimiser may differ: start afresh
                    raise ValueError(f"its optimiser state does not fit: {err}") from err
        trainer.step_count = loaded.step

        def commit() -> None:
            self.task_obj, self.trainer = task, trainer
            setattr(self, self._model_attr, loaded.model)

        return commit
