"""The training loop: a generator of per-step records that every front end consumes.

The command line, a notebook and the browser playground all drive the same :class:`Trainer`:
``for record in trainer.run(steps): ...``. Stopping the iteration pauses training (all state
lives in the trainer: parameters, optimiser moments, step count, data generator, carried
recurrent state); calling :meth:`Trainer.run` again resumes it.

A run that diverges never raises and never costs the model: a non-finite output, loss or
gradient anywhere in a step (a layer's :class:`~pyplay._checks.NonFiniteError` on a gradient
that overflowed on its way back, or a floating-point error raised under ``np.seterr``) ends the
run with a final record whose ``status == "diverged"`` and whose ``message`` says so, after the
parameters, optimiser state and step count are put back to those of the last step that gave a
finite loss and gradient. An update that leaves a weight NaN or infinite ends the run the same
way (checked after each update: a step never reports ``ok`` with such weights), and so does a
learning rate that a schedule drives to NaN, infinity or <= 0 (checked before the step that
would use it, which keeps the weights of the last whole step and the last rate that was a
finite number > 0: the bad rate is never kept as a good state). NumPy's overflow warnings are
silenced inside a step (the checks decide, not the warnings). Nothing trained is lost.

The arguments are checked when the trainer is built: a learning rate that is not a finite
number > 0 (given, or held by the optimiser given), an ``rng`` that is not a Generator or seed,
a ``schedule`` that is not a schedule of this trainer's optimiser.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyplay._checks import NonFiniteError, as_generator, check_choice, check_float, check_int
from pyplay.models.contract import Model
from pyplay.objectives import make_objective, task_loss
from pyplay.optim import SGD, Adam, AdamW, Optimizer, RMSprop, clip_grad_norm, global_norm
from pyplay.tasks.base import MAX_BATCH

__all__ = ["OPTIMIZERS", "StepRecord", "Trainer", "task_loss"]

OPTIMIZERS: dict[str, Any] = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop}


@dataclass(frozen=True)
class StepRecord:
    """One training step, as yielded by :meth:`Trainer.run`.

    ``loss`` is the batch loss before the update, ``grad_norm`` the global L2 norm of the
    gradient before clipping, ``lr`` the learning rate used, ``seconds`` the wall time of the
    step (forward, backward, update), ``metrics`` the task's metrics on the batch.
    """

    step: int
    loss: float
    grad_norm: float
    lr: float
    seconds: float
    metrics: dict[str, float] = field(default_factory=dict)
    status: str = "ok"  # "ok" | "diverged"
    message: str = ""


class Trainer:
    """Trains a model on a task, one batch per step: the objective the model's class declares
    (:mod:`pyplay.models.contract`) says what each step computes (:mod:`pyplay.objectives`):
    a per-step model (:class:`~pyplay.models.SequenceModel`, ...) on a per-step task, an
    encoder-decoder on a pair task, a pointer network on positions, an LDDN on
    :class:`~pyplay.objectives.lddn.Windows`.

    Parameters
    ----------
    model : a pyplay model (:class:`pyplay.models.contract.Model`)
    task : a :mod:`pyplay.tasks` task (``batch(batch_size)``, ...) that fits the model
    optimizer : {"adam", "adamw", "sgd", "rmsprop"} or an optimiser object over ``model.params``
    lr : float
        Learning rate when ``optimizer`` is a name.
    batch_size : int
    clip : float or None
        Global-norm gradient clipping threshold (None: no clipping).
    schedule : schedule object, optional
        A learning-rate schedule of this trainer's optimiser (``StepLR``,
        ``CosineAnnealingLR`` or ``LinearWarmup`` of :mod:`pyplay.optim.schedules`, or any
        object with a ``step()`` method and that ``optimizer``), stepped once per training
        step. A rate it drives to NaN, infinity or <= 0 ends the run as diverged.
    tbptt : bool
        Truncated backpropagation through time for tasks with ``stream`` (the character
        model): consecutive chunks of a long text, the recurrent state carried from one chunk
        to the next without its gradient.
    optimizer_kwargs : dict, optional
        Extra arguments for the optimiser (momentum, weight_decay, ...).
    sampling : float
        EncoderDecoder only: scheduled-sampling probability of feeding the model's own
        prediction instead of the true previous token (0: pure teacher forcing).
    reverse_source : bool
        EncoderDecoder only: read every source backwards (Sutskever's trick).
    rng : Generator or seed
        For the scheduled-sampling draws.
    """

    def __init__(
        self,
        model: Model,
        task: Any,
        *,
        optimizer: Any = "adam",
        lr: float = 1e-2,
        batch_size: int = 32,
        clip: float | None = 1.0,
        schedule: Any = None,
        tbptt: bool = False,
        optimizer_kwargs: dict[str, Any] | None = None,
        sampling: float = 0.0,
        reverse_source: bool = False,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        rng = as_generator(rng)
        self.objective = make_objective(model, task, tbptt, sampling, reverse_source, rng)
        self.model = model
        self.task = task
        self.batch_size = check_int("batch_size", batch_size, min_value=1, max_value=MAX_BATCH)
        self.clip = (
            None if clip is None else check_float("clip", clip, min_value=0.0, min_inclusive=False)
        )
        if isinstance(optimizer, str):
            name = check_choice("optimizer", optimizer, tuple(OPTIMIZERS))
            lr = check_float("lr", lr, min_value=0.0, min_inclusive=False)
            self.optimizer = OPTIMIZERS[name](model.params, lr=lr, **(optimizer_kwargs or {}))
        else:
            if not hasattr(optimizer, "step") or not hasattr(optimizer, "state_dict"):
                raise TypeError(
                    "optimizer must be a name or a pyplay optimiser, got "
                    f"{type(optimizer).__name__}"
                )
            self.optimizer = optimizer
            check_float("optimizer.lr", optimizer.lr, min_value=0.0, min_inclusive=False)
        self.schedule = self._check_schedule(schedule)
        self.tbptt = bool(tbptt)
        self.step_count = 0
        self.message = ""
        self._stream: Iterator[Any] | None = None
        self._good_params = {k: v.copy() for k, v in model.params.items()}
        self._good_optim = self._copy_state(self.optimizer.state_dict())
        self._good_step = 0
        self._produced_step = 0  # the step count this trainer's own steps led to

    def _check_schedule(self, schedule: Any) -> Any:
        """``schedule`` if it is None or a schedule of this trainer's optimiser."""
        if schedule is None:
            return None
        accepted = (
            "None or a learning-rate schedule of this trainer's optimiser (pyplay.optim "
            "StepLR, CosineAnnealingLR or LinearWarmup, or an object with a step() method)"
        )
        if isinstance(schedule, str | bytes) or not callable(getattr(schedule, "step", None)):
            raise TypeError(f"schedule must be {accepted}, got {schedule!r:.60} "
                            f"({type(schedule).__name__})")  # fmt: skip
        owner = getattr(schedule, "optimizer", self.optimizer)
        if owner is not self.optimizer:
            raise ValueError(
                "schedule must set this trainer's optimiser's learning rate; it was built on "
                "another optimiser: build it on trainer.optimizer (or pass the optimiser itself)"
            )
        return schedule

    @staticmethod
    def _copy_state(state: dict[str, Any]) -> dict[str, Any]:
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in state.items()}

    # ------------------------------------------------------------------ data
    def _next_batch(self) -> Any:
        if not self.tbptt:
            return self.task.batch(self.batch_size)
        if self._stream is None:
            self._stream = iter(self.task.stream(self.batch_size))
            self.objective.carry = None
        return next(self._stream)

    # ------------------------------------------------------------------ one step
    def train_step(self, batch: Any = None) -> StepRecord:
        """Run one step: batch (``batch`` if given, else one drawn from the task), forward,
        loss, backward, clip, update. Never raises on divergence: returns a record with
        ``status == "diverged"`` after restoring. An exception that interrupts the step
        (``KeyboardInterrupt``) leaves the trainer at a whole step: an update it cut short is
        undone."""
        start = time.perf_counter()
        lr = float(self.optimizer.lr)
        given = batch is not None
        if given and (isinstance(batch, type) or not dataclasses.is_dataclass(batch)):
            raise TypeError(
                "batch must be None (one is drawn from the task) or a batch the task made "
                f"(task.batch(batch_size)), got {batch!r:.60} ({type(batch).__name__})"
            )
        if not (np.isfinite(lr) and lr > 0):  # a schedule drove it there
            by = "the schedule" if self.schedule is not None else "hand, on the optimiser"
            # the weights are those of the last whole step (checked finite after its update):
            # kept, with the last rate that was a finite number > 0, never this one
            self._remember_good(lr=self._good_optim["lr"])
            return self._diverged(
                lr, float("nan"), float("nan"), time.perf_counter() - start,
                f"the learning rate became {lr} (set by {by}), not a finite number > 0",
            )  # fmt: skip
        batch = self._next_batch() if batch is None else batch
        metrics: dict[str, float] = {}
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                loss, grads, metrics = self.objective.step(batch)
                norm = float(global_norm(grads))
            finite = bool(np.isfinite(loss) and np.isfinite(norm))
        except FloatingPointError as err:
            loss, norm, finite = float("nan"), float("nan"), False
            self.message = f"floating-point error ({err})"
        except NonFiniteError as err:  # raised by a layer on the way: the same divergence
            loss, norm, finite = float("nan"), float("nan"), False
            self.message = str(err)
        except AttributeError as err:
            if not given:
                raise
            raise TypeError(
                f"batch must be a batch the task makes (task.batch(batch_size)); the "
                f"{type(batch).__name__} given lacks {err.name!r}"
            ) from err
        if not finite:
            return self._diverged(lr, loss, norm, time.perf_counter() - start)
        self._remember_good()  # these parameters gave a finite loss and gradient
        try:
            if not self._update(grads, lr, norm):
                return self._diverged(lr, loss, norm, time.perf_counter() - start)
            if self.schedule is not None:
                try:
                    self.schedule.step()
                except (ArithmeticError, ValueError) as err:  # e.g. gamma ** t overflowed
                    cause = f"the schedule failed to set the next learning rate ({err})"
                    return self._diverged(lr, loss, norm, time.perf_counter() - start, cause)
            self.objective.accept()
            self.step_count += 1
            self._produced_step = self.step_count
        except BaseException:  # an interruption (Ctrl-C) half way: no half-done update stays
            self.restore_last_good()
            raise
        return StepRecord(self.step_count, loss, norm, lr, time.perf_counter() - start, metrics)

    def _update(self, grads: dict[str, np.ndarray], lr: float, norm: float) -> bool:
        """Clip (``norm``: the gradient's global norm) and apply ``grads``; False (with
        :attr:`message` saying why) when the update left a weight NaN or infinite, so that a
        step never reports ``ok`` with such weights."""
        if self.clip is not None:
            clip_grad_norm(grads, self.clip, norm)
        with np.errstate(over="ignore", invalid="ignore"):
            self.optimizer.step(grads)
        bad = [name for name, p in self.model.params.items() if not np.isfinite(p).all()]
        if bad:  # the update overflowed: back to the weights it started from
            self.message = f"the update made {bad[0]!r} non-finite (learning rate {lr:g})"
        return not bad

    def _remember_good(self, lr: float | None = None) -> None:
        """The current parameters, optimiser state and step count as the ones to go back to
        (with the learning rate ``lr`` instead of the optimiser's, when given)."""
        for name, value in self.model.params.items():
            np.copyto(self._good_params[name], value)
        state = self.optimizer.state_dict()  # pyplay's optimisers give copies already
        self._good_optim = (
            state if isinstance(self.optimizer, Optimizer) else self._copy_state(state)
        )
        if lr is not None:
            self._good_optim["lr"] = lr
        self._good_step = self.step_count

    def _diverged(
        self, lr: float, loss: float, norm: float, seconds: float, cause: str = ""
    ) -> StepRecord:
        failed = self.step_count + 1
        self.restore_last_good()
        reason = self.message or f"loss {loss} and gradient norm {norm}"
        what = cause or f"the loss diverged (non-finite values: {reason})"
        advice = "Check the learning rate's schedule" if cause else "Try a smaller learning rate"
        self.message = (
            f"Training stopped at step {failed}: {what}. The model before it is kept: "
            f"parameters restored to step {self.step_count}. {advice} (learning rate "
            f"now {lr:g}) or gradient clipping."
        )
        return StepRecord(self.step_count, loss, norm, lr, seconds, {}, "diverged", self.message)

    def restore_last_good(self) -> None:
        """Put back the parameters, optimiser state and step count of the last step that gave
        a finite loss and gradient (the state :meth:`run` started from, if none did since)."""
        for name, value in self._good_params.items():
            np.copyto(self.model.params[name], value)
        self.optimizer.load_state_dict(self._copy_state(self._good_optim))
        self.step_count = self._produced_step = self._good_step
        self.objective.carry = None

    # ------------------------------------------------------------------ the stream
    def run(self, steps: int | None = None, batch: Any = None) -> Iterator[StepRecord]:
        """Yield one :class:`StepRecord` per step, ``steps`` of them (forever if None), each
        on ``batch`` when given (two models trained on the same batches: draw one from the
        task and run each trainer one step on it), else on a batch drawn from the task.

        Stops early, after yielding a ``"diverged"`` record, if training diverges. Abandoning
        the generator pauses; calling ``run`` again resumes from the same state.
        """
        if steps is not None:
            steps = check_int("steps", steps, min_value=0)
        done = 0
        self.message = ""
        if self.step_count != self._produced_step:  # resumed from a file or carried over:
            self._remember_good()  # the state given is the one to go back to
            self._produced_step = self.step_count
        while steps is None or done < steps:
            record = self.train_step(batch)
            yield record
            if record.status != "ok":
                return
            done += 1

    def evaluate(
        self, batch_size: int = 256, rng: np.random.Generator | int | None = 1234
    ) -> dict[str, float]:
        """Loss and metrics on a fresh batch drawn from a copy of the task with its own seed.

        The training data generator is not advanced; dropout is off (``training=False``).
        """
        task = type(self.task)(**{**self.task.config, "rng": as_generator(rng)})
        return self.objective.evaluate(task, check_int("batch_size", batch_size, min_value=1))
