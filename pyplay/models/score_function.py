r"""The score-function (REINFORCE, Williams 1992) estimator for a discrete choice, shared by the
hard glimpse (:mod:`pyplay.models.glimpse`) and the hard memory heads
(:mod:`pyplay.models.memory.hard`).

A choice :math:`j \sim \mathrm{Categorical}(p)` passes no gradient; the estimator uses

.. math::

    \nabla_\theta\, \mathbb{E}_{j \sim p}[L_j]
        = \mathbb{E}_{j \sim p}\bigl[\nabla_\theta L_j
        + (L_j - b)\, \nabla_\theta \log p_j\bigr]

for any baseline :math:`b` that does not depend on :math:`j`. Each row's loss :math:`L` is
given so that the batch loss is their mean (weighted like ``dy``: row b's term is
:math:`(L_b - b)/B`, :func:`advantage`). The gradient of :math:`\log p_j` is
:math:`[t = j] - p_t` on the logits (:func:`logit_grad`) or :math:`[t = j]/p_j` on the
probabilities (:func:`probability_grad`, for choices whose probabilities come out of a longer
chain of functions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import check_array

__all__ = [
    "DECAY",
    "RunningBaseline",
    "advantage",
    "logit_grad",
    "probability_grad",
    "sample",
    "update_baseline",
]

DECAY = 0.9  # of the baseline's running mean of the batch losses
TINY = 1e-30  # the smallest probability divided by (a choice drawn with p_j = 0 is a rounding)


def sample(p: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    """One draw per row of ``p`` (B, K), by the inverse of its cumulative sum: indices (B,)."""
    cdf = np.cumsum(p, axis=1)  # (B, K)
    draws = generator.random((p.shape[0], 1))  # (B, 1)
    return np.minimum((cdf < draws).sum(axis=1), p.shape[1] - 1)  # (B,)


def advantage(losses: Any, baseline: float, B: int, dtype: Any) -> np.ndarray:
    """Each row's weight :math:`(L_b - b)/B` (B,) of the score term; ``losses`` is refused with
    a clear message when missing or not one loss per row."""
    if losses is None:
        raise ValueError("losses (B,) are needed for the gradient of a hard (sampled) choice")
    L = check_array("losses", losses, ndim=1, layout="(B,)")
    if L.shape[0] != B:
        raise ValueError(f"losses must hold one loss per row (B={B}), got {L.shape}")
    return ((L - baseline) / B).astype(dtype, copy=False)  # (B,)


def logit_grad(p: np.ndarray, index: np.ndarray, adv: np.ndarray) -> np.ndarray:
    """:math:`(L_b - b)/B\\; \\partial \\log p_j / \\partial e = adv ([t = j] - p)` (B, K), for
    ``p = softmax(e)``."""
    onehot = np.zeros_like(p)  # (B, K)
    onehot[np.arange(len(p)), index] = 1
    return adv[:, None] * (onehot - p)  # (B, K)


def probability_grad(p: np.ndarray, index: np.ndarray, adv: np.ndarray) -> np.ndarray:
    """:math:`(L_b - b)/B\\; \\partial \\log p_j / \\partial p = adv\\, [t = j] / p_j` (B, K)."""
    rows = np.arange(len(p))
    d = np.zeros_like(p)  # (B, K)
    d[rows, index] = adv / np.maximum(p[rows, index], TINY)
    return d


def update_baseline(baseline: float, loss: float) -> float:
    """The running mean :math:`b \\leftarrow 0.9\\, b + 0.1\\, \\bar L` after an applied step (it
    never depends on a row's choice, so the estimator stays unbiased)."""
    return DECAY * baseline + (1 - DECAY) * loss


class RunningBaseline:
    """The baseline of an objective trained by the score-function estimator: ``baseline`` the
    running mean of the batches' losses (:func:`update_baseline`), kept whether or not it is
    used; ``use_baseline = False`` makes the estimator use :math:`b = 0` (plain REINFORCE).
    An objective calls :meth:`used_baseline` in its step and :meth:`hold` with the step's
    loss; :meth:`accept` (the step was applied) moves the mean."""

    baseline: float = 0.0
    use_baseline: bool = True
    _pending: float = 0.0

    def used_baseline(self) -> float:
        """The :math:`b` of this step's estimator."""
        return self.baseline if self.use_baseline else 0.0

    def hold(self, loss: float) -> None:
        """The step's loss, for :meth:`accept`."""
        self._pending = float(loss)

    def accept(self) -> None:
        """The step was applied: move the baseline toward its loss."""
        self.baseline = update_baseline(self.baseline, self._pending)
