r"""What one training step of a :class:`~pyplay.models.captioner.Captioner` computes (the
strategy of :class:`pyplay.train.Trainer` for models whose ``objective`` is ``"caption"``), and
how well a captioner does: words right, captions right, and whether it looks where the word is.

The loss is the mean cross-entropy of the caption's words (teacher forcing, EOS counted, PAD
not). For hard attention each caption's loss :math:`L_b` also weighs its choices' score
(:mod:`pyplay.models.score_function`); with :math:`N` counted words in a batch of :math:`B`,
:math:`L_b = \tfrac{B}{N} \sum_t \ell_{bt}`, so the batch loss is their mean, as the estimator
expects. The baseline :math:`b` is a running mean of the batches' losses,
:math:`b \leftarrow 0.9\, b + 0.1\, \bar L` after each applied step (0 before the first): it never
depends on a caption's own choices, so the estimate stays unbiased
(``use_baseline = False``: :math:`b = 0`, the plain REINFORCE estimator).

:func:`attention_on_words` measures grounding: for each counted word that names a shape's colour
or kind, is the cell the model attends most to (:math:`\arg\max_i \alpha_{ti}`) one of the cells
that shape touches (:func:`pyplay.tasks.scenes.regions_on_grid`)? Chance is the share of the
grid the shape covers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.losses import cross_entropy
from pyplay.models.score_function import RunningBaseline
from pyplay.objectives.base import BatchObjective, require_output_kind
from pyplay.optim import Adam
from pyplay.optim.clip import clip_grad_norm
from pyplay.tasks.scenes import COLOURS, SHAPES, regions_on_grid

__all__ = ["CaptionObjective", "attention_on_words", "caption_loss", "train"]


def caption_loss(logits: np.ndarray, batch: Any) -> tuple[float, np.ndarray, np.ndarray]:
    """The mean cross-entropy of ``batch.tgt_out`` under ``logits`` (B, U, V), its gradient
    (B, U, V) and each caption's loss :math:`L_b` (B,), weighted so that their mean is the
    batch loss (module docstring)."""
    per, _ = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask, reduction="none")  # (B, U)
    loss, dlogits = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)
    B, N = per.shape[0], max(int(batch.tgt_mask.sum()), 1)
    return float(loss), dlogits, per.sum(axis=1) * (B / N)  # (B,)


def attention_on_words(
    alpha: np.ndarray, batch: Any, grid: tuple[int, int], vocab: Any
) -> tuple[float, float]:
    """``(hits, chance)``: over the counted colour and shape words of ``batch``, the share whose
    most attended cell of ``alpha`` (B, U, L) lies on the named shape, and the share of the grid
    that shape covers (what a blind guess would hit)."""
    named = np.array(vocab.encode([*COLOURS, *SHAPES]))  # ids of colour and shape words
    words = batch.tgt_mask & np.isin(batch.tgt_out, named) & (batch.objects >= 0)  # (B, U)
    b, t = np.nonzero(words)
    if b.size == 0:
        return 0.0, 0.0
    cells = regions_on_grid(batch.regions, *grid).reshape(*batch.regions.shape[:2], -1)  # (B,K,L)
    on = cells[b, batch.objects[b, t]]  # (n, L) the cells of each word's shape
    look = alpha[b, t].argmax(axis=1)  # (n,)
    return float(on[np.arange(b.size), look].mean()), float(on.mean())


class CaptionObjective(RunningBaseline, BatchObjective):
    """Teacher-forced cross-entropy of a captioner on a task of captioned scenes, with the
    running-mean baseline of the hard model (module docstring); the interface of
    :class:`~pyplay.objectives.base.BatchObjective` (``step``, ``accept``, ``evaluate``)."""

    def __init__(self, model: Any, task: Any) -> None:
        require_output_kind(task, "caption", "a captioning task (CaptionedScenes)")
        sizes = (task.vocab_size, task.image_size)
        model_sizes = (model.vocab_size, model.image_size)
        super().__init__(model, task, sizes, model_sizes, "has {} words and {}-pixel images")

    def step(self, batch: Any) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss, gradients (the score-function term for hard attention) and word accuracy."""
        logits, _, cache = self.model.forward(batch.images, batch.tgt_in)  # (B, U, V)
        loss, dlogits, losses = caption_loss(logits, batch)
        b = self.used_baseline()
        grads = self.model.backward(dlogits, cache, losses=losses, baseline=b).grads
        self.hold(loss)
        hits = (logits.argmax(axis=-1) == batch.tgt_out)[batch.tgt_mask]
        return loss, grads, {"accuracy": float(hits.mean())}

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """:meth:`scores` on a fresh batch of ``task``."""
        return self.scores(task.batch(batch_size))

    def scores(self, batch: Any) -> dict[str, float]:
        """On ``batch``, a hard model looking where alpha is largest: the loss, word accuracy
        (teacher forcing), exact greedy captions and the attention's grounding
        (:func:`attention_on_words`)."""
        model = self.model
        logits, alpha, _ = model.forward(batch.images, batch.tgt_in, training=False)
        loss, _, _ = caption_loss(logits, batch)
        right = (logits.argmax(axis=-1) == batch.tgt_out)[batch.tgt_mask]
        ids, _ = model.greedy(batch.images, max_len=batch.tgt_out.shape[1])
        U = batch.tgt_out.shape[1]
        exact = ((ids[:, :U] == batch.tgt_out) | ~batch.tgt_mask).all(axis=1)
        hits, chance = attention_on_words(alpha, batch, model.grid, self.task.vocab)
        return {
            "loss": loss,
            "accuracy": float(right.mean()),
            "exact": float(exact.mean()),
            "on_shape": hits,
            "chance": chance,
        }


def train(
    model: Any,
    task: Any,
    steps: int,
    batch_size: int = 32,
    lr: float = 0.01,
    clip: float = 1.0,
) -> CaptionObjective:
    """``steps`` Adam steps (global-norm clipping ``clip``) on fresh batches of ``task``; the
    objective comes back, its baseline where training left it."""
    objective = CaptionObjective(model, task)
    opt = Adam(model.params, lr=lr)
    for _ in range(steps):
        _, grads, _ = objective.step(task.batch(batch_size))
        clip_grad_norm(grads, clip)
        opt.step(grads)
        objective.accept()
    return objective
