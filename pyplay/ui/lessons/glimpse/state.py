"""State of the "Soft and hard attention" lesson: two :class:`~pyplay.models.glimpse.GlimpseNet`
learn the marked-symbol task side by side on the same batches, one reading a weighted average
of the positions (soft), one reading a single position drawn from its attention weights
(hard, trained with the score-function gradient, with or without the running-mean baseline);
the views show both models' attention over one example, the position the hard one drew, and
how much the hard one's gradient estimate varies with and without the baseline. No Panel here;
errors become messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.io import Checkpoint, model_checkpoint, model_entry, resume
from pyplay.models.glimpse import GlimpseNet
from pyplay.models.glimpse_variance import score_gradient_variance
from pyplay.models.registry import build_model
from pyplay.models.score_function import sample
from pyplay.tasks.glimpse import MarkedSymbol
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.checkpoint import LoadedFile, same_model
from pyplay.ui.trainer_lesson import TrainerLesson, carry_over, step_beside

__all__ = ["EXAMPLES", "REPEATS", "VARIANCE_EVERY", "GlimpseExample", "GlimpseLessonState"]

EXAMPLES = 8  # examples of the fixed batch the views show (and the variance is measured on)
FIXED_BATCH = 32  # rows of the fixed batch the gradient's variance is measured on
REPEATS = 20  # draws of the positions per variance measurement
VARIANCE_EVERY = 20  # training steps between two measurements
_FIXED_SEED = 10_000  # the fixed batch comes from MarkedSymbol(rng=10_000 + seed)


@dataclass(frozen=True)
class GlimpseExample:
    """One example as both models read it now: ``symbols`` (T,) its symbols, ``marked`` the
    marked position (the answer's), ``target`` the answer; ``soft_p`` and ``hard_p`` (T,)
    each model's attention weights p = softmax(α); ``sampled`` the position the hard model drew
    from ``hard_p`` this time; ``soft_answer`` and ``hard_answer`` their classes (the hard one
    reading the drawn position)."""

    symbols: np.ndarray
    marked: int
    target: int
    soft_p: np.ndarray
    hard_p: np.ndarray
    sampled: int
    soft_answer: int
    hard_answer: int


class GlimpseLessonState(TrainerLesson, LessonBase):
    """Settings and actions of the lesson (the hard model is :attr:`model`, trained by
    :attr:`trainer`; the soft one :attr:`soft_trainer`'s model, saved beside it in files)."""

    seq_len = param.Integer(default=10, softbounds=(2, 40), doc="positions per example")
    n_symbols = param.Integer(default=8, softbounds=(2, 20), doc="symbols (classes)")
    hidden_size = param.Integer(default=32, softbounds=(4, 64), doc="H of the read-out")
    baseline = param.Boolean(default=True, doc="hard attention subtracts a running-mean baseline")
    lr = lr_param(0.01)
    seed = seed_param()
    model: GlimpseNet | None
    loss_name = "hard loss"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.soft_trainer: Trainer | None = None
        self.history = _empty_history()
        # the measurements (:meth:`_measure`): at which step, tr Cov with b = 0 ("plain") and
        # with the running mean ("baseline"), and that mean b
        self.spread: dict[str, list[float]] = {"step": [], "plain": [], "baseline": [], "b": []}
        self._start(rebuild=["seq_len", "n_symbols", "hidden_size", "seed"])
        self.param.watch(self._quiet(self._on_baseline), ["baseline"])

    # ------------------------------------------------------------------ building
    def _make_task(self) -> MarkedSymbol:
        return MarkedSymbol(n_symbols=self.n_symbols, seq_len=self.seq_len, rng=self.seed)

    def _build_model(self, task: Any, attention: str = "hard") -> GlimpseNet:
        return GlimpseNet(
            task.input_size, task.num_classes, attention, hidden_size=self.hidden_size,
            rng=self.seed,
        )  # fmt: skip

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        trainer = Trainer(model, task, lr=self.lr, batch_size=32, clip=5.0)
        trainer.objective.use_baseline = bool(self.baseline)
        return trainer

    def _soft(self, model: Any = None) -> Trainer:
        """The soft model's trainer on its own copy of the task (the same seed draws the same
        batches, step for step): a new soft model, or ``model``."""
        task = self._make_task()
        return self._make_trainer(model or self._build_model(task, "soft"), task)

    def _built(self, task: Any, model: Any) -> None:
        self.soft_trainer = self._soft()

    def _forget_progress(self) -> None:
        super()._forget_progress()
        self.history = _empty_history()
        self.spread = {k: [] for k in self.spread}
        fixed = MarkedSymbol(self.n_symbols, self.seq_len, rng=_FIXED_SEED + self.seed)
        self._fixed_batch = fixed.batch(FIXED_BATCH)
        self._view_rng = np.random.default_rng(self.seed)  # the shown example's draws
        if self.model is not None:
            self._measure()

    def _built_message(self, task: Any, model: Any) -> str:
        return (
            f"{task.describe()} Two glimpse networks of {model.num_parameters():,} parameters "
            "each train on the same batches: soft attention reads the weighted average of the "
            "positions, hard attention one position drawn from its weights."
        )

    def _on_baseline(self, *_: Any) -> None:
        """Baseline on or off applies to the current hard model (its running mean is kept)."""
        if self.trainer is not None:
            self.trainer.objective.use_baseline = bool(self.baseline)
            self._remember_settings()
            on = "subtracts its running-mean baseline" if self.baseline else "uses b = 0"
            self.notify(f"From the next step the hard model {on}.", "info")

    def _on_lr(self, *_: Any) -> None:
        """A new learning rate applies to both models, which keep their progress (and the hard
        one its running-mean baseline)."""
        old = self.trainer
        super()._on_lr()
        new = self.trainer
        if old is not None and new is not None and new is not old:
            new.objective.baseline = old.objective.baseline
            soft = self.soft_trainer
            if soft is not None:
                self.soft_trainer = carry_over(soft, self._make_trainer(soft.model, soft.task))

    # ------------------------------------------------------------------ files
    def _file_beside(self) -> dict[str, Checkpoint]:
        """The soft model, its optimiser state and step count (``pyplay.io.load_model(file,
        beside="soft")`` reads it natively)."""
        t = self.soft_trainer
        return {} if t is None else {"soft": model_checkpoint(t.model, t.optimizer, t.step_count)}

    def _file_meta(self) -> dict[str, Any]:
        """The hard model's running-mean baseline b, which its next steps use."""
        return {
            "glimpse_baseline": 0.0 if self.trainer is None else self.trainer.objective.baseline
        }

    def _file_prepare(self, loaded: LoadedFile) -> Any:
        commit = super()._file_prepare(loaded)
        b = loaded.checkpoint.meta.get("glimpse_baseline", 0.0)
        if isinstance(b, bool) or not isinstance(b, int | float) or not np.isfinite(b):
            raise ValueError(f"its baseline must be a finite number, got {b!r}"[:200])
        part = loaded.checkpoint.beside.get("soft")
        soft = None  # a file without the soft model starts it afresh
        if part is not None:
            try:
                soft = build_model(model_entry(part.meta), part.params)
                same_model(soft, self._build_model(self._make_task(), "soft"))
                resume(self._soft(soft), part)  # its optimiser state fits
            except (ValueError, TypeError, KeyError) as err:
                raise ValueError(f"the soft model in it does not fit: {err}") from err

        def commit_both() -> None:
            commit()
            assert self.trainer is not None
            self.trainer.objective.baseline = float(b)
            self.soft_trainer = self._soft(soft)
            if part is not None:
                resume(self.soft_trainer, part)
            self._forget_progress()  # the fixed batch and a first measurement at its step

        return commit_both

    # ------------------------------------------------------------------ training
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[Any]:
        """The hard model's steps (:meth:`run_trainer`), each followed by one step of the soft
        model on the same batch and, every :data:`VARIANCE_EVERY` steps, a measurement of the
        hard model's gradient variance (:meth:`_record`); then the hard model's accuracies."""
        records = super().train(steps, budget_s)
        self.history["accuracy"] += [r.metrics["accuracy"] for r in records]
        if records:
            self.status = self._status_text()
        return records

    def _record(self, step: int, loss: float, seconds: float) -> None:
        """One hard step done (called by :meth:`run_trainer` as it runs): its loss, then one
        soft step on the same batch (NaN if it diverged), then the measurement when due."""
        super()._record(step, loss, seconds)
        soft_loss, accuracy = step_beside(self.soft_trainer)
        self.history["soft"].append(soft_loss)
        self.history["soft_accuracy"].append(accuracy)
        if step % VARIANCE_EVERY == 0:
            self._measure()

    def _measure(self) -> None:
        """The score network's gradient variance on the fixed batch, now, with b = 0 and with
        the running-mean baseline the hard model has (used or not)."""
        if self.model is None or self.trainer is None:
            return
        b = float(self.trainer.objective.baseline)
        batch = self._fixed_batch
        x = batch.inputs.astype(self.model.dtype)
        rng = [self.seed, self.trainer.step_count]  # the same draws whatever came before
        plain, with_b = score_gradient_variance(
            self.model, x, batch.targets, [0.0, b], REPEATS, np.random.default_rng(rng)
        )
        for key, value in (("plain", plain), ("baseline", with_b), ("b", b)):
            self.spread[key].append(value)
        self.spread["step"].append(self.trainer.step_count)

    def _untrained_note(self) -> str:
        assert self.task_obj is not None
        return f". Uniform guess: {self.task_obj.baseline_loss():.3f}"

    def _status_extra(self) -> str:
        h = self.history
        text = ""
        if h["accuracy"]:  # the hard model's accuracies come after its steps
            text += f", accuracy {_recent(h['accuracy']):.2f}"
        if h["soft"]:
            soft = f"soft loss {h['soft'][-1]:.4f}, accuracy {_recent(h['soft_accuracy']):.2f}"
            text += f"; {soft}"
        return text

    # ------------------------------------------------------------------ looking inside
    def example(self, index: int = 0) -> GlimpseExample | None:
        """Example ``index`` (0..7) of the fixed batch as both models read it now; the hard
        model draws a position anew each time (the view's own generator, not the model's)."""
        if self.model is None or self.soft_trainer is None:
            return None
        k = int(np.clip(index, 0, EXAMPLES - 1))
        batch = self._fixed_batch
        x = batch.inputs[k : k + 1].astype(self.model.dtype)  # (1, T, F)
        soft = self.soft_trainer.model
        soft_y, soft_cache = soft.forward(x)  # (1, C)
        hard_p = self.model.scores(x)[2]  # (1, T)
        sampled = sample(hard_p, self._view_rng)  # (1,)
        hard_y, _ = self.model.forward(x, index=sampled)  # (1, C)
        return GlimpseExample(
            symbols=np.argmax(batch.inputs[k, :, :-1], axis=1),
            marked=int(batch.marked[k]),
            target=int(batch.targets[k]),
            soft_p=soft_cache.alpha[0],
            hard_p=hard_p[0],
            sampled=int(sampled[0]),
            soft_answer=int(soft_y[0].argmax()),
            hard_answer=int(hard_y[0].argmax()),
        )


def _recent(values: list[float]) -> float:
    """The mean of the last 20 finite ``values`` (NaN when there is none)."""
    finite = [v for v in values[-20:] if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def _empty_history() -> dict[str, list[float]]:
    """The columns of the loss curve: the hard model's loss and batch accuracy, the soft
    model's (NaN where a soft step diverged)."""
    return {"step": [], "loss": [], "soft": [], "accuracy": [], "soft_accuracy": []}
