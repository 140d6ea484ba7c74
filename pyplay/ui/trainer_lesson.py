"""What the lesson states trained by a :class:`~pyplay.train.Trainer` share: rebuilding task,
model and trainer from the settings, applying new training settings to the current model, the
step loop (:meth:`StepLoop.run_trainer`: view -> state -> trainer -> state -> view, the same
for every lesson, the dynamic networks' :class:`FitLesson` included) and the lesson-file hooks of
:class:`~pyplay.ui.checkpoint.SavableLesson`.

Training stops by itself, with a note next to Train (``stopped``) and the details in the
lesson's message, when the trainer reports that the loss diverged (the model before it is
kept: the trainer restored it) and when one step took longer than :data:`SLOW_STEP_S` while
training ran on (Pause waits for the step under way, so such settings would make the page
slow to answer; they are named in the note).

A state provides ``_make_task()``, ``_build_model(task)`` and ``_make_trainer(model, task)``
(each raising ``ValueError`` or ``TypeError`` on settings that do not fit) and
``_status_text()``; the model lives in the attribute named by ``_model_attr``. On bad
settings the page shows a message and the previous task, model and trainer stay in use.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import numpy as np

from pyplay.train import StepRecord, Trainer
from pyplay.ui.base_state import before_label
from pyplay.ui.checkpoint import LoadedFile, SavableLesson, same_model

__all__ = ["SLOW_STEP_S", "FitLesson", "StepLoop", "TrainerLesson", "carry_over"]

SLOW_STEP_S = 1.5  # seconds: a longer step stops continuous training (Pause waits for a step)


class StepLoop:
    """The step loop every lesson state shares (a mixin of the lesson states, which give
    ``running``, ``status``, ``_record``, ``_status_text`` and ``stop_training``)."""

    running: bool
    status: str
    _record: Callable[[int, float, float], None]
    _status_text: Callable[[], str]
    stop_training: Callable[..., None]

    def run_trainer(
        self, trainer: Trainer, steps: int | None, budget_s: float | None
    ) -> list[StepRecord]:
        """Run ``steps`` steps of ``trainer``, or as many as fit in ``budget_s`` seconds,
        appending each to the history (``_record``); the status line follows. Returns the
        records of the steps taken.

        A ``diverged`` record stops training: the note next to Train says the model before it
        is kept (the trainer has restored it), the message gives the trainer's details. A step
        slower than :data:`SLOW_STEP_S` while training runs on stops it too, saying why.
        """
        records: list[StepRecord] = []
        start = time.perf_counter()
        for record in trainer.run(steps):
            if record.status != "ok":
                self.stop_training(
                    f"Training stopped: the loss diverged; the model before it is kept (step "
                    f"{record.step}). Try a smaller learning rate or gradient clipping.",
                    record.message,
                )
                break
            records.append(record)
            self._record(record.step, record.loss, record.seconds)
            if self.running and record.seconds > SLOW_STEP_S:
                self.stop_training(
                    f"Training paused: one step takes {record.seconds:.1f} s with these "
                    f"settings, too long for the page to answer quickly (more than "
                    f"{SLOW_STEP_S:g} s). Use a smaller batch, shorter sequences, fewer or "
                    "smaller layers; Step still trains one batch at a time."
                )
                break
            if budget_s is not None and time.perf_counter() - start >= budget_s:
                break
        self.status = self._status_text()
        return records


def step_beside(trainer: Trainer | None) -> tuple[float, float]:
    """One step of a model trained beside a lesson's own, on the same batches: its (loss,
    accuracy), both NaN when there is none or its step diverged."""
    if trainer is None:
        return float("nan"), float("nan")
    record = next(iter(trainer.run(1)))
    if record.status != "ok":
        return float("nan"), float("nan")
    return record.loss, record.metrics["accuracy"]


def carry_over(old: Trainer, new: Trainer) -> Trainer:
    """``new`` (new training settings, same model) continuing ``old``: its step count, and the
    optimiser's moments when the optimiser kind is the same (with the new learning rate)."""
    if type(new.optimizer) is type(old.optimizer):
        moments = old.optimizer.state_dict()
        moments["lr"] = new.optimizer.lr
        new.optimizer.load_state_dict(moments)
    new.step_count = old.step_count
    return new


class TrainerLesson(StepLoop, SavableLesson):
    """Rebuild, training settings and the lesson-file hooks of a state trained by
    ``self.trainer`` on ``self.task_obj``; the model is the attribute ``_model_attr``."""

    _model_attr: ClassVar[str] = "model"
    accuracy_metric: ClassVar[str] = ""  # a metric of the records, averaged into ``accuracy``
    accuracy: float | None = None  # its mean over the steps just trained; None: none yet
    trainer: Trainer | None
    task_obj: Any
    param: Any  # the lesson state's parameters (a param.Parameterized)

    def _start(self, rebuild: Iterable[str], training: Iterable[str] = ("lr",)) -> None:
        """The end of a state's ``__init__``: build the first task, model and trainer from the
        settings; from then on a change of a ``rebuild`` setting builds them afresh, and a
        change of a ``training`` setting applies to the current model (keeping its steps)."""
        self.task_obj = self.trainer = None
        setattr(self, self._model_attr, None)
        self.reset()
        self.param.watch(self._on_rebuild_setting, list(rebuild))
        training = list(training)
        on_training = self._on_lr if training == ["lr"] else self._on_training_setting
        self.param.watch(self._quiet(on_training), training)

    # hooks --------------------------------------------------------------
    def _make_task(self) -> Any:
        raise NotImplementedError

    def _build_model(self, task: Any) -> Any:
        raise NotImplementedError

    def _make_trainer(self, model: Any, task: Any) -> Any:
        raise NotImplementedError

    def _built(self, task: Any, model: Any) -> None:
        """A new task and model are in place, before the views hear of them (``version``):
        states with more to build for them (a model trained beside) extend this."""

    def _forget_progress(self) -> None:
        """A new model has no losses and no accuracy yet (states with more progress to forget
        extend this); the run before it is kept as ``previous_run`` when a setting built it."""
        self._new_run()
        self.history = {"step": [], "loss": []}
        self._elapsed = 0.0
        self.accuracy = None

    # rebuild and settings -----------------------------------------------
    def _on_rebuild_setting(self, *events: Any) -> None:
        """A setting that needs a new model changed: build it and let the experiment go on.
        Training that was running keeps running on the new model, and the run so far becomes
        ``previous_run``, named by the settings it had (the page draws it faded beside the
        new curve). Not while a file's settings are applied (a load builds its own model)."""
        if self._loading:
            return
        running = self.running
        self._next_before = self._run_before(events)
        try:
            self.reset()
        finally:
            self._next_before = None
        self.running = running  # refused settings keep the model, and it trains on too

    def _run_before(self, events: tuple[Any, ...]) -> tuple[str, list[float], list[float]] | None:
        """(label, steps, losses) of the run so far, labelled by the old values of the
        settings ``events`` changed; None before any step."""
        if not self.history["loss"]:
            return None
        changed = {e.name: (self.param[e.name].label, e.old) for e in events}
        first = self.history["step"][0] - 1  # the curves start together at step 1
        steps = [s - first for s in self.history["step"]]
        return before_label(changed), steps, list(self.history["loss"])

    def reset(self) -> bool:
        """Rebuild task, model and trainer from the settings; on bad settings the message
        explains and the previous model stays."""
        built = self._rebuild()
        if built is None:
            return False
        self.notify(self._built_message(*built), "info")
        return True

    def _built_message(self, task: Any, model: Any) -> str:
        """What the page says of a new model (by default: the task's description)."""
        return str(task.describe())

    def _on_lr(self, *_: Any) -> None:
        """A new learning rate applies to the current model."""
        self._apply_training_settings("Learning rate applied to the current model.")

    def _on_training_setting(self, *_: Any) -> None:
        """New training settings apply to the current model."""
        self._apply_training_settings("Training settings applied to the current model.")

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
        self._keep_before_replacing()  # autosave keeps a trained model
        self.task_obj, self.trainer = task, trainer
        setattr(self, self._model_attr, model)
        self._built(task, model)
        self._remember_settings()
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
        self._remember_settings()
        self.notify(done, "info")

    # training -------------------------------------------------------------
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[Any]:
        """Run ``steps`` steps of ``self.trainer``, or as many as fit in ``budget_s`` seconds,
        appending each to ``history``; returns the records (:class:`~pyplay.train.StepRecord`).

        A diverging step stops training with a message (the trainer restores its parameters).
        The status line follows; with an ``accuracy_metric`` the records report, ``accuracy``
        becomes its mean over these steps (for the status line's :meth:`_status_extra`).
        """
        if self.trainer is None:
            return []
        records = self.run_trainer(self.trainer, steps, budget_s)
        metric = self.accuracy_metric
        if metric and records and metric in records[-1].metrics:
            self.accuracy = float(np.mean([r.metrics.get(metric, 0.0) for r in records]))
            self.status = self._status_text()
        return records

    loss_name: ClassVar[str] = "loss"  # what the status line calls the loss

    def _status_text(self) -> str:
        """The status line: step, last loss (with :meth:`_status_extra`) and speed; before
        training, the step and :meth:`_untrained_note`."""
        if self.trainer is None:
            return ""
        n = self.trainer.step_count
        if not self.history["loss"]:
            return f"Step {n}: not trained yet{self._untrained_note()}"
        rate = self.steps_per_second(n)
        last = self.history["loss"][-1]
        return f"Step {n}: {self.loss_name} {last:.4f}{self._status_extra()}, {rate:.1f} steps/s"

    def _untrained_note(self) -> str:
        """The end of the status line before training (e.g. the loss to beat)."""
        return "."

    def _status_extra(self) -> str:
        """More after the last loss in the status line (nothing by default)."""
        return ""

    # lesson files ---------------------------------------------------------
    def _file_trainer(self) -> Trainer:
        if getattr(self, self._model_attr) is None or self.trainer is None:
            raise ValueError("there is no model yet: fix the settings first")
        return self.trainer

    def _file_model(self) -> Any:
        self._file_trainer()
        return getattr(self, self._model_attr)

    def _file_optimizer(self) -> Any:
        return self._file_trainer().optimizer

    def _file_step(self) -> int:
        return int(self._file_trainer().step_count)

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
        trainer.optimizer.lr = float(self.lr)  # the rate the page shows, not one hidden in it
        trainer.step_count = loaded.step

        def commit() -> None:
            self.task_obj, self.trainer = task, trainer
            setattr(self, self._model_attr, loaded.model)

        return commit


class FitLesson(StepLoop, SavableLesson):
    """The step loop of a lesson trained by :func:`pyplay.dynamic.fit` (time series, dynamic
    networks): ``_fit`` is its :class:`~pyplay.train.Trainer` over ``net`` (made at the first
    step, None after new settings), ``_step`` counts the steps, ``weights_version`` is bumped
    when the weights change."""

    net: Any
    lr: float
    seed: int
    _fit: Any
    _optimizer: Any
    _step: int
    weights_version: int

    loss_name: ClassVar[str] = "loss"  # what the status line calls the loss

    def _status_text(self) -> str:
        """The status line: step, last loss and speed; before training the step and
        :meth:`_untrained_note`."""
        if not self.history["loss"]:
            return f"Step {self._step}: not trained yet{self._untrained_note()}"
        rate = self.steps_per_second(self._step)
        last = self.history["loss"][-1]
        return f"Step {self._step}: {self.loss_name} {last:.5f}, {rate:.0f} steps/s"

    def _untrained_note(self) -> str:
        """The end of the status line before training."""
        return "."

    def _restart_training(self, *_: Any) -> None:
        """The next step starts :func:`pyplay.dynamic.fit` and the optimiser anew (new
        settings, same weights)."""
        self._fit = self._optimizer = None

    # lesson files: the network, its optimiser, the step count
    def _file_model(self) -> Any:
        return self.net

    def _file_optimizer(self) -> Any:
        return self._optimizer

    def _file_step(self) -> int:
        return self._step

    def _fit_arguments(self) -> tuple[Any, Any, dict[str, Any]]:
        """The inputs, targets and options :func:`pyplay.dynamic.fit` trains on (beyond the
        network, the optimiser, clipping and seed)."""
        raise NotImplementedError

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[StepRecord]:
        """Run ``steps`` steps (Adam, clipping 1), or as many as fit in ``budget_s`` seconds,
        through the same loop as every lesson (:func:`run_trainer`); the first builds the
        trainer of :func:`pyplay.dynamic.fit` on :meth:`_fit_arguments` (settings that do not
        fit stop training with a message). A step that diverges is undone by the trainer."""
        from pyplay.dynamic.train import OPTIMIZERS, fit_trainer  # not needed at start-up

        if self._fit is None:
            try:
                inputs, targets, options = self._fit_arguments()
                if self._optimizer is None:
                    self._optimizer = OPTIMIZERS["adam"](self.net.params, lr=self.lr)
                self._fit = fit_trainer(
                    self.net, inputs, targets, optimizer=self._optimizer, clip=1.0,
                    rng=self.seed, **options,
                )  # fmt: skip
            except (ValueError, TypeError) as err:
                self.running = False
                self.notify(f"Not trained: {err}", "danger")
                return []
            self._fit.step_count = self._step
        records = self.run_trainer(self._fit, steps, budget_s)
        if records or self._fit.step_count != self._step:  # trained, or a diverged step undone
            self.weights_version += 1
        self._step = self._fit.step_count
        self.status = self._status_text()  # with the step count the status line reads
        return records
