r"""What one training step of a recursive network computes: the cross-entropy of the classes of
a batch of trees' labelled nodes, the strategy of :class:`pyplay.train.Trainer` for models whose
``objective`` is ``"tree"``.

.. math::

    L = \frac{1}{|S|} \sum_{v \in S} -\log \mathrm{softmax}(y_v)_{t_v}

over the counted nodes :math:`S` of the batch (every labelled node, or the roots only: the
task's ``supervise``), with the gradient of every parameter from
:meth:`~pyplay.models.recursive.network.RecursiveNet.backward` (backpropagation through
structure).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.losses import cross_entropy
from pyplay.objectives.base import BatchObjective, require_output_kind
from pyplay.tasks.binary_tree import TreeBatch

__all__ = ["TreeObjective", "tree_accuracy"]


def tree_accuracy(scores: np.ndarray, batch: TreeBatch) -> dict[str, float]:
    """The fraction of counted nodes, and of labelled roots, whose class is the highest
    score."""
    right = scores.argmax(axis=1) == batch.targets  # (N,)
    out = {"accuracy": float(right[batch.mask].mean()) if batch.mask.any() else float("nan")}
    out["root_accuracy"] = float(right[batch.roots].mean())
    return out


class TreeObjective(BatchObjective):
    """Cross-entropy of the counted nodes of a tree task's batches (module docstring)."""

    def __init__(self, model: Any, task: Any) -> None:
        require_output_kind(task, "tree classes", "a tree task (ExpressionTrees, SentimentTrees)")
        sizes = (len(task.vocab), task.num_classes)
        model_sizes = (model.vocab_size, model.num_classes)
        super().__init__(model, task, sizes, model_sizes, "has {} tokens and {} classes")

    def _forward(self, batch: TreeBatch) -> tuple[float, np.ndarray, Any, np.ndarray]:
        scores, cache = self.model.forward(batch)  # (N, C)
        loss, dscores = cross_entropy(scores, batch.targets, mask=batch.mask)
        return float(loss), dscores, cache, scores

    def step(self, batch: TreeBatch) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients and the batch's node and root accuracy."""
        loss, dscores, cache, scores = self._forward(batch)
        return loss, self.model.backward(dscores, cache).grads, tree_accuracy(scores, batch)

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """Loss, node accuracy and root accuracy on a fresh batch."""
        batch = task.batch(batch_size)
        loss, _, _, scores = self._forward(batch)
        return {"loss": loss, **tree_accuracy(scores, batch)}
