"""State of the recurrent lesson's "Residual connections" section: the lesson's deep stack
trained twice, without and with residual connections between its layers, on the same batches
(no Panel).

Solberg's lecture (004, "Google's Neural Machine Translation system (2016)") says only that
GNMT has "plenty of residual connections in both encoder and decoder"; the form is Wu et al.'s
(2016): layer ``l + 1`` adds its input to its output, :math:`x^{(l+1)}_t = \\mathrm{cell}_l
(x^{(l)}_t, h^{(l)}_{t-1}) + x^{(l)}_t` (``residual=True`` of
:class:`~pyplay.nn.recurrent.Recurrent`: every layer after the first), so the loss's gradient
reaches the lowest layers along the sums as well as through every layer above them.

:meth:`ResidualComparison.begin` takes the lesson's settings (task, cell, hidden size, layers,
directions, LSTM variant, optimiser, learning rate, clipping, batch size, seed) and builds two
models of its own, the same initial weights (the same seed) but for the residual switch; the
lesson's model is never touched. :meth:`ResidualComparison.train` trains both one step at a
time on one batch drawn for both (the shared training loop,
:class:`~pyplay.ui.session.TrainingSession`, drives it) for :data:`COMPARE_STEPS` steps and
records each step's loss and, every :data:`PROBE_EVERY` steps, the norm of the gradient of the
first layer's weights on a fixed batch, :math:`\\|\\partial L/\\partial \\theta^{(1)}\\|`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.models import SequenceModel
from pyplay.tasks import make_task
from pyplay.train import Trainer, task_loss
from pyplay.ui.comparison import SideBySide

__all__ = ["COMPARE_STEPS", "KINDS", "PROBE_EVERY", "ResidualComparison", "StackSetting"]

COMPARE_STEPS = 150  # training steps of each model
PROBE_EVERY = 5  # steps between two measurements of the first layer's gradient
KINDS = {"plain": "plain stack", "residual": "residual stack"}


@dataclass(frozen=True)
class StackSetting:
    """What a comparison trains: the lesson's model and trainer settings when it began."""

    task: dict[str, Any]  # make_task's arguments (name and config)
    model: dict[str, Any]  # SequenceModel.for_task's arguments but residual
    trainer: dict[str, Any]  # Trainer's arguments
    seed: int
    baseline: float
    steps: int = COMPARE_STEPS

    @classmethod
    def of(cls, state: Any, steps: int = COMPARE_STEPS) -> StackSetting:
        """The settings of a :class:`~pyplay.ui.lessons.rnn.state.LessonState` now; a
        ValueError when its stack has a single layer (no connection between layers)."""
        if state.num_layers < 2:
            raise ValueError(
                "residual connections join stacked layers: set Layers to 2 or more (with 6 "
                "the difference is large)"
            )
        task = state.task_obj
        stack = {**state.stack_settings(), "residual": False}
        model = dict(
            cell=state.cell,
            hidden_size=int(state.hidden_size),
            nonlinearity=state.nonlinearity,
            **stack,
            **state.lstm_settings(),
        )
        trainer = dict(
            optimizer=state.optimizer,
            lr=float(state.lr),
            batch_size=int(state.batch_size),
            clip=float(state.clip) or None,
        )
        name_config = {"name": task.name, **task.config}
        return cls(name_config, model, trainer, int(state.seed), task.baseline_loss(), steps)

    def describe(self) -> str:
        m, t = self.model, self.trainer
        layers = f"{m['num_layers']} {'bidirectional ' if m['bidirectional'] else ''}layers"
        return (
            f"{m['cell'].upper()}, {layers} of {m['hidden_size']} units, on the lesson's task; "
            f"{self.steps} steps of {t['batch_size']} examples ({t['optimizer']}, learning rate "
            f"{t['lr']:g}, clip {t['clip'] or 'off'}, seed {self.seed})"
        )


class ResidualComparison(SideBySide):
    """The plain and the residual stack trained on the same batches (module docstring).

    ``running``, ``stopped``, ``train(budget_s=)`` and ``notify`` are what the shared training
    loop drives; ``message`` is what the section shows next to its buttons. ``losses[kind]``
    holds every step's loss, ``probes`` the steps at which ``first_layer[kind]`` (the norm of
    the gradient of the first layer's weights) was measured.
    """

    setting: StackSetting | None

    def __init__(self) -> None:
        super().__init__()
        self.losses: dict[str, list[float]] = {k: [] for k in KINDS}
        self.probes: list[int] = []
        self.first_layer: dict[str, list[float]] = {k: [] for k in KINDS}
        self._data: Any = None
        self._probe: Any = None

    # ------------------------------------------------------------------ building
    def begin(self, state: Any, steps: int = COMPARE_STEPS) -> bool:
        """New models from the lesson's settings now; False with a message if they do not fit
        (the comparison shown so far is kept)."""
        try:
            setting = StackSetting.of(state, steps)
            trainers = {kind: self._trainer(setting, kind == "residual") for kind in KINDS}
        except (ValueError, TypeError) as err:
            self.notify(f"Cannot compare: {err}")
            return False
        task = dict(setting.task)
        name = task.pop("name")
        self._data = make_task(name, **{**task, "rng": setting.seed})  # the lesson's batches
        probe_task = make_task(name, **{**task, "rng": 10_000 + setting.seed})
        self._probe = probe_task.batch(setting.trainer["batch_size"])
        self.setting, self.trainers, self.message = setting, trainers, ""
        self.losses = {k: [] for k in KINDS}
        self.first_layer = {k: [] for k in KINDS}
        self.probes = []
        self._measure()
        return True

    @staticmethod
    def _trainer(setting: StackSetting, residual: bool) -> Trainer:
        config = dict(setting.task)
        task = make_task(config.pop("name"), **{**config, "rng": setting.seed})
        model = SequenceModel.for_task(
            task, **{**setting.model, "residual": residual}, rng=setting.seed
        )
        return Trainer(model, task, **setting.trainer)

    # ------------------------------------------------------------------ training
    def _step(self) -> bool:
        """One step of both models on one batch, and the first layer's gradient every
        :data:`PROBE_EVERY` steps."""
        assert self.setting is not None
        batch = self._data.batch(self.setting.trainer["batch_size"])
        for kind, trainer in self.trainers.items():
            record = trainer.train_step(batch)
            if record.status != "ok":
                self.notify(f"The {KINDS[kind]} diverged: {record.message}")
                return False
            self.losses[kind].append(record.loss)
        if self.step_count % PROBE_EVERY == 0:
            self._measure()
        return True

    def _measure(self) -> None:
        """The norm of the first layer's weight gradient of both models on the fixed batch."""
        batch = self._probe
        for kind, trainer in self.trainers.items():
            model, task = trainer.model, trainer.task
            out, _, cache = model.forward(batch.inputs, None, batch.lengths, training=False)
            _, dout = task_loss(task, out, batch)
            grads = model.backward(dout, cache).grads
            first = [g for name, g in grads.items() if name.endswith(("_l0", "_l0_reverse"))]
            norm = np.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in first))
            self.first_layer[kind].append(norm)
        self.probes.append(self.step_count)

    # ------------------------------------------------------------------ results
    def recent(self, kind: str, window: int = 20) -> float:
        """Mean loss of ``kind``'s last ``window`` steps over the task's baseline (nan before
        the first step)."""
        losses = self.losses[kind][-window:]
        if not losses or self.setting is None:
            return float("nan")
        return float(np.mean(losses)) / self.setting.baseline

    def progress(self) -> str:
        """One line: the steps done and both models' recent loss against the baseline."""
        if self.setting is None:
            return "Not trained yet: press Compare."
        text = self.steps_line()
        if self.step_count:
            plain, residual = self.recent("plain"), self.recent("residual")
            text += (
                f" Loss over the last steps: plain {plain:.2f} x baseline, residual "
                f"{residual:.2f} x baseline."
            )
        return text
