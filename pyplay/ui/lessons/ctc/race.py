"""The CTC lesson's comparison of future context: a one-way net, a time-delay net (its output
for frame t read D frames later, the alternative in Solberg's lecture) and a bidirectional net,
trained on the very same batches, with their losses and greedy label error rates. No Panel
here: the lesson's view draws :attr:`DirectionRace.history`."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.models import SequenceModel
from pyplay.tasks.ctc_frames import CTCFrames
from pyplay.train import Trainer

__all__ = ["EVAL_EVERY", "KINDS", "DirectionRace"]

KINDS = ("one-way", "time-delay", "bidirectional")
EVAL_EVERY = 10  # steps between greedy label error measurements
DEFAULT_DELAY = 3  # the time-delay net's D when the lesson's own delay is 0


class DirectionRace:
    """Three nets of one cell and width, trained step for step on the same batches.

    Parameters
    ----------
    cell, hidden_size, noise, lr, seed : the lesson's settings
    delay : int
        D of the time-delay net (``DEFAULT_DELAY`` when 0).
    """

    def __init__(
        self, cell: str, hidden_size: int, delay: int, noise: float, lr: float, seed: int
    ) -> None:
        self.delay = int(delay) or DEFAULT_DELAY
        self.task = CTCFrames(noise=noise, rng=20_000 + seed)  # the race's own batches
        self.test = CTCFrames(noise=noise, rng=30_000 + seed).batch(64)  # held out
        options: dict[str, dict[str, Any]] = {
            "one-way": {"bidirectional": False},
            "time-delay": {"delay": self.delay},
            "bidirectional": {"bidirectional": True},
        }
        self.trainers = {}
        for kind in KINDS:
            model = SequenceModel.for_task(
                self.task, cell, hidden_size=hidden_size, rng=seed, **options[kind]
            )
            self.trainers[kind] = Trainer(model, self.task, lr=lr, batch_size=32, clip=5.0)
        self.history: dict[str, list[float]] = {"step": []}
        self.errors: dict[str, list[float]] = {"step": []}
        for kind in KINDS:
            self.history[kind], self.errors[kind] = [], []

    @property
    def steps(self) -> int:
        return len(self.history["step"])

    def step(self) -> None:
        """One batch, one step of each net; every ``EVAL_EVERY`` steps their greedy label
        error rate on the held-out batch."""
        batch = self.task.batch(32)
        for kind, trainer in self.trainers.items():
            record = next(iter(trainer.run(1, batch)))
            self.history[kind].append(record.loss if record.status == "ok" else float("nan"))
        self.history["step"].append(self.steps + 1)
        if self.steps % EVAL_EVERY == 0:
            self.errors["step"].append(self.steps)
            for kind in KINDS:
                self.errors[kind].append(self.label_error(kind))

    def label_error(self, kind: str) -> float:
        """Greedy (best path) label error rate of net ``kind`` on the held-out batch."""
        model = self.trainers[kind].model
        x = self.test.inputs.astype(model.dtype)  # (64, T, F)
        logits, _, _ = model.forward(x, None, self.test.lengths, training=False)
        return float(self.task.metric(logits, self.test)["label_error_rate"])

    def latest(self) -> dict[str, float]:
        """The last measured label error rate of each net (NaN before the first)."""
        return {k: (self.errors[k][-1] if self.errors[k] else float(np.nan)) for k in KINDS}

    def set_lr(self, lr: float) -> None:
        """A new learning rate for the three nets, keeping their steps and moments (as the
        lesson's own model keeps them)."""
        for trainer in self.trainers.values():
            trainer.optimizer.lr = float(lr)
