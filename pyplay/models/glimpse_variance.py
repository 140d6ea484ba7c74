r"""How much the score-function gradient of a hard :class:`~pyplay.models.glimpse.GlimpseNet`
varies from draw to draw, measured, with and without a baseline.

On one fixed batch, :func:`score_gradient_variance` draws the positions looked at
``repeats`` times from the model's own attention weights :math:`\alpha`, and each time computes
the gradient the model's backward pass gives (the same code that trains it) of the *score
network*, :math:`\theta = (W_a, b_a, v)`, the parameters that only the score-function term

.. math::

    \hat g(b) = \frac{1}{B} \sum_{i=1}^{B} (L_{i, j_i} - b)\,
        \nabla_\theta \log \alpha_{i, j_i}, \qquad j_i \sim \mathrm{Categorical}(\alpha_i)

reaches. Every baseline is applied to the *same* draws, so the figures differ only by
:math:`b`. The result is the total variance
:math:`\operatorname{tr} \operatorname{Cov}[\hat g(b)] = \sum_k \operatorname{Var}[\hat g_k(b)]`
over the draws (unbiased sample variance, ``ddof=1``). The expectation is the same for every
``b`` (``tests/models/test_glimpse.py`` enumerates it); a ``b`` near :math:`\mathbb{E}[L]` makes the
spread smaller. The model's own generator is not used: measuring never changes its training.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_int
from pyplay.losses import cross_entropy
from pyplay.models.glimpse import GlimpseNet
from pyplay.models.score_function import sample

__all__ = ["SCORE_PARAMS", "score_gradient_variance"]

SCORE_PARAMS = ("attn.weight", "attn.bias", "attn.v")  # the score network: W_a, b_a, v


def score_gradient_variance(
    model: GlimpseNet,
    inputs: Any,
    targets: Any,
    baselines: Sequence[float],
    repeats: int = 32,
    rng: np.random.Generator | int | None = 0,
) -> list[float]:
    """The total variance of the score network's gradient estimate, one figure per baseline.

    Parameters
    ----------
    model : GlimpseNet
        A hard-attention model (``attention="hard"``).
    inputs : array (B, T, F)
        The fixed batch.
    targets : array (B,) of int
        Its classes.
    baselines : sequence of float
        The values of :math:`b` to compare (on the same draws).
    repeats : int
        Draws of the positions (at least 2).
    rng : numpy.random.Generator or int seed
        The draws' generator (not the model's).

    Returns
    -------
    list of float
        :math:`\\operatorname{tr}\\operatorname{Cov}[\\hat g(b)]` for each ``b``, in order.
    """
    if not isinstance(model, GlimpseNet) or model.attention != "hard":
        raise TypeError("model must be a GlimpseNet with attention='hard'")
    n = check_int("repeats", repeats, min_value=2, max_value=10_000)
    values = [float(b) for b in baselines]
    if not values or not all(np.isfinite(values)):
        raise ValueError(f"baselines must be one or more finite numbers, got {baselines!r}")
    gen = as_generator(rng)
    x, _, alpha = model.scores(inputs)  # (B, T, F), _, (B, T)
    y = np.asarray(targets)
    if y.shape != (x.shape[0],):
        raise ValueError(f"targets must have shape (B,) = ({x.shape[0]},), got {y.shape}")
    draws = np.empty((len(values), n, sum(model.params[k].size for k in SCORE_PARAMS)))
    for r in range(n):
        out, cache = model.forward(x, index=sample(alpha, gen))  # (B, C)
        losses, _ = cross_entropy(out, y, reduction="none")  # (B,)
        _, dy = cross_entropy(out, y)
        for k, b in enumerate(values):
            g = model.backward(dy, cache, losses=losses, baseline=b).grads
            draws[k, r] = np.concatenate([g[name].ravel() for name in SCORE_PARAMS])
    return [float(v) for v in draws.var(axis=1, ddof=1).sum(axis=1)]  # one per baseline
