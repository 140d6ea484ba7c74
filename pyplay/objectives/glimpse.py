"""What one training step of a :class:`~pyplay.models.glimpse.GlimpseNet` computes: the mean
cross-entropy of its classes, and for hard attention the score-function term with a baseline,
the strategy of :class:`pyplay.train.Trainer` for models whose ``objective`` is ``"glimpse"``.

The baseline :math:`b` is a running mean of the batches' mean losses,
:math:`b \\leftarrow 0.9\\, b + 0.1\\, \\bar L` after each applied step (0 before the first), so
it never depends on the position a row looked at, and the estimator stays unbiased. With
``use_baseline = False`` (an attribute of the objective, ``trainer.objective.use_baseline``) the
hard model's steps use :math:`b = 0`, the plain REINFORCE estimator; the running mean is kept
either way (:attr:`GlimpseObjective.baseline`), so what it would be can still be measured.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.losses import cross_entropy
from pyplay.models.score_function import RunningBaseline
from pyplay.objectives.base import BatchObjective, require_output_kind

__all__ = ["GlimpseObjective"]


class GlimpseObjective(RunningBaseline, BatchObjective):
    """Cross-entropy of a glimpse task's targets (module docstring)."""

    def __init__(self, model: Any, task: Any) -> None:
        require_output_kind(task, "glimpse classes", "a glimpse task (MarkedSymbol)")
        sizes = (task.input_size, task.num_classes)
        model_sizes = (model.input_size, model.num_classes)
        super().__init__(model, task, sizes, model_sizes, "has {} features and {} classes")

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients (the score-function term for hard attention) and accuracy."""
        y, cache = self.model.forward(batch.inputs)  # (B, C)
        losses, _ = cross_entropy(y, batch.targets, reduction="none")  # (B,)
        loss, dy = cross_entropy(y, batch.targets)
        b = self.used_baseline()
        grads = self.model.backward(dy, cache, losses=losses, baseline=b).grads
        self.hold(float(loss))
        return float(loss), grads, self._metrics(y, batch, cache)

    @staticmethod
    def _metrics(y: np.ndarray, batch: Any, cache: Any) -> dict[str, float]:
        looked = cache.alpha.argmax(axis=1) if cache.index is None else cache.index
        return {
            "accuracy": float((y.argmax(axis=1) == batch.targets).mean()),
            "on_mark": float((looked == batch.marked).mean()),  # glimpses at the answer
        }

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """Loss and accuracy on a fresh batch, a hard model looking where alpha is largest."""
        batch = task.batch(batch_size)
        y, cache = self.model.forward(batch.inputs, training=False)
        loss, _ = cross_entropy(y, batch.targets)
        return {"loss": float(loss), **self._metrics(y, batch, cache)}
