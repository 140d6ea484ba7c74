r"""The objective of a pointer network (``objective = "pointer"``, see
:mod:`pyplay.models.contract`): the cross-entropy of the source positions a
:class:`~pyplay.models.pointer.PointerNetwork` points at, with teacher forcing.

.. math::

    L = -\frac{1}{|S|} \sum_{(b, t) \in S} \log p_t^{(b)}(\pi_t^{(b)})

over the counted steps :math:`S` (the mask), with :math:`p_t^{(b)}` the decoder's distribution
over the source positions of row :math:`b` at step :math:`t` and :math:`\pi_t^{(b)}` the true
position; the decoder reads the true previous position (-1 at the first step). The loss and
its gradient are the model's own (:meth:`~pyplay.models.pointer.PointerNetwork.loss`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.objectives.base import BatchObjective
from pyplay.tasks.pairs import SPECIALS, PairBatch, PointerBatch

__all__ = ["PointerObjective"]


class PointerObjective(BatchObjective):
    """Cross-entropy of the source positions a :class:`~pyplay.models.pointer.PointerNetwork`
    points at, on a task whose targets are positions: a pair task (``Sorting(output=
    "positions")``, every source position once) or a task whose batches are
    :class:`~pyplay.tasks.pairs.PointerBatch` (:class:`~pyplay.tasks.hull.ConvexHull`: the
    hull's vertices, then the end). Teacher forcing: the decoder reads the true previous
    position (-1 at the first step)."""

    def __init__(self, model: Any, task: Any) -> None:
        if getattr(task, "output", None) != "positions":
            raise TypeError(
                "task must be a task whose targets are source positions "
                f"(Sorting(output='positions'), ConvexHull), got {type(task).__name__}"
            )
        if getattr(task, "input_kind", "tokens") == "real":
            sizes, model_sizes = (task.input_size,), (model.input_size,)
            super().__init__(model, task, sizes, model_sizes, "gives {} features a position")
        else:
            sizes = (len(task.src_vocab),)
            super().__init__(model, task, sizes, (model.vocab_size,), "has {} source tokens")

    @staticmethod
    def positions(batch: PairBatch | PointerBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Decoder inputs (B, U), target positions (B, U) and the counted steps (B, U)."""
        if isinstance(batch, PointerBatch):
            targets, mask = batch.targets, batch.mask
        else:  # a pair batch whose target ids are positions: every source position once
            S = batch.src.shape[1]
            mask = np.arange(S)[None, :] < batch.src_lengths[:, None]  # (B, S)
            targets = np.where(mask, batch.tgt_out[:, :S] - len(SPECIALS), 0)  # ids -> positions
        ptr_in = np.concatenate([np.full((len(targets), 1), -1), targets[:, :-1]], axis=1)
        return ptr_in, targets, mask

    def _forward(self, batch: Any) -> tuple[float, np.ndarray, Any, np.ndarray, Any]:
        ptr_in, targets, mask = self.positions(batch)
        probs, cache = self.model.forward(batch.src, batch.src_lengths, ptr_in)  # (B, U, S)
        loss, du = self.model.loss(probs, targets, mask)
        hits = (probs.argmax(axis=2) == targets)[mask]
        return loss, du, cache, hits, (targets, mask)

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients and the batch's teacher-forced pointing accuracy."""
        loss, du, cache, hits, _ = self._forward(batch)
        return loss, self.model.backward(du, cache).grads, {"accuracy": float(hits.mean())}

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """Teacher-forced loss and the fraction of rows whose greedy pointers are all right
        (``exact_match``; a row with an end position stops after pointing at it)."""
        batch = task.batch(batch_size)
        loss, _, _, _, (targets, mask) = self._forward(batch)
        predicted = self.model.greedy(batch.src, batch.src_lengths, getattr(batch, "end", None))
        right = [p == targets[b, : mask[b].sum()].tolist() for b, p in enumerate(predicted)]
        return {"loss": loss, "exact_match": float(np.mean(right))}
