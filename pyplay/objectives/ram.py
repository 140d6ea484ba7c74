r"""What one training step of a :class:`~pyplay.models.ram.RecurrentAttention` computes: Mnih et
al.'s hybrid of the cross-entropy of the class (backpropagation), REINFORCE for the glimpse
locations with the reward :math:`R = [\arg\max y = \text{class}]` and the learned baseline's
squared error (:mod:`pyplay.models.ram`).

The objective has the interface of :class:`~pyplay.objectives.base.BatchObjective`
(``step``, ``accept``, ``evaluate``), so :class:`~pyplay.train.Trainer` trains the model
(``objective = "ram"``), and so does a loop over an optimiser::

    objective = RamObjective(model, task)
    optimizer = Adam(model.params, lr=3e-3)
    for _ in range(steps):
        loss, grads, metrics = objective.step(task.batch(32))
        optimizer.step(grads)

The reported loss is the cross-entropy; the metrics are the accuracy, the mean reward (the
accuracy of the drawn glimpses while training), the baseline's mean squared error and
``on_target``, the fraction of examples whose last glimpse centre :math:`l^{\tau-1}` lies on
the target's box.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.losses import cross_entropy
from pyplay.objectives.base import BatchObjective, require_output_kind

__all__ = ["RamObjective", "on_target"]


def on_target(l: np.ndarray, boxes: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Whether each centre ``l`` (B, 2) in [-1, 1] falls on its box ``boxes`` (B, 4)
    ``(top, left, height, width)`` of an image of ``shape`` (H, W): (B,) bool."""
    c = (np.clip(l, -1.0, 1.0) + 1.0) * np.array(shape) / 2.0  # (B, 2) pixel coordinates
    lo, size = boxes[:, :2], boxes[:, 2:]  # (B, 2), (B, 2)
    return np.all((c >= lo) & (c <= lo + size), axis=1)  # (B,)


class RamObjective(BatchObjective):
    """The hybrid loss of the recurrent attention model (module docstring)."""

    def __init__(self, model: Any, task: Any) -> None:
        require_output_kind(
            task, "image classes", "an image task (ClutteredGlyphs, output_kind 'image classes')"
        )
        sizes = (task.channels, task.num_classes)
        model_sizes = (model.channels, model.num_classes)
        super().__init__(model, task, sizes, model_sizes, "has {} channels and {} classes")

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Cross-entropy, the gradients of the hybrid loss, and the batch's metrics."""
        y, cache = self.model.forward(batch.inputs, training=True)  # (B, C)
        loss, dy = cross_entropy(y, batch.targets)
        rewards = (y.argmax(axis=1) == batch.targets).astype(np.float64)  # (B,) R
        grads = self.model.backward(dy, cache, rewards=rewards).grads
        metrics = self._metrics(y, batch, cache)
        if cache.baseline.size:
            metrics["baseline_mse"] = float(((cache.baseline - rewards) ** 2).mean())
        metrics["reward"] = float(rewards.mean())
        return float(loss), grads, metrics

    @staticmethod
    def _metrics(y: np.ndarray, batch: Any, cache: Any) -> dict[str, float]:
        shape = batch.inputs.shape[2:]
        return {
            "accuracy": float((y.argmax(axis=1) == batch.targets).mean()),
            "on_target": float(on_target(cache.l[-1], batch.boxes, shape).mean()),
        }

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """Loss and metrics on a fresh batch, a learned policy looking at :math:`\\mu^t`."""
        batch = task.batch(batch_size)
        y, cache = self.model.forward(batch.inputs, training=False)
        loss, _ = cross_entropy(y, batch.targets)
        return {"loss": float(loss), **self._metrics(y, batch, cache)}
