r"""The Gaussian location policy of the recurrent attention model and its REINFORCE gradient.

At step :math:`t < \tau` the location network proposes the mean of the next glimpse's centre,
:math:`\mu^t = \tanh(W_\mu h^t + b_\mu) \in (-1, 1)^2`, and the centre is drawn around it
with a fixed spread :math:`\sigma` (Mnih et al. 2014):

.. math::

    l^t \sim \mathcal{N}(\mu^t, \sigma^2 I), \qquad
    \log \pi(l^t \mid h^t) = -\frac{\lVert l^t - \mu^t \rVert^2}{2 \sigma^2}
        - \log (2 \pi \sigma^2), \qquad
    \frac{\partial \log \pi(l^t \mid h^t)}{\partial \mu^t} = \frac{l^t - \mu^t}{\sigma^2}.

The draw passes no gradient, so the location network learns by REINFORCE (Williams 1992):
with the reward :math:`R` (1 when the class is right, 0 otherwise) and a baseline
:math:`b^t` that does not depend on :math:`l^t`, the gradient of the expected reward is
estimated by :math:`\sum_t (R - b^t)\, \nabla \log \pi(l^t \mid h^t)`; through the tanh,
:math:`\partial \mu^t / \partial a^t = 1 - (\mu^t)^2` with :math:`a^t = W_\mu h^t + b_\mu`.
A location outside :math:`[-1, 1]^2` is *looked at* where it is clipped to (the sensor's
business); the policy's density is that of the unclipped draw, so the estimator stays unbiased.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw", "draw_uniform", "log_prob", "log_prob_grad"]


def draw(mu: np.ndarray, sigma: float, generator: np.random.Generator) -> np.ndarray:
    r""":math:`l = \mu + \sigma \varepsilon`, :math:`\varepsilon \sim \mathcal{N}(0, I)`, of
    the shape and dtype of ``mu`` (B, 2)."""
    eps = generator.standard_normal(mu.shape)  # (B, 2)
    return (mu + sigma * eps).astype(mu.dtype, copy=False)


def draw_uniform(B: int, generator: np.random.Generator, dtype: np.dtype) -> np.ndarray:
    r"""Random glimpse centres :math:`l \sim \mathcal{U}[-1, 1]^2` (B, 2), the policy that
    ignores what it has seen."""
    return generator.uniform(-1.0, 1.0, size=(B, 2)).astype(dtype)  # (B, 2)


def log_prob(l: np.ndarray, mu: np.ndarray, sigma: float) -> np.ndarray:
    r""":math:`\log \mathcal{N}(l; \mu, \sigma^2 I)` over the last axis (2 coordinates): the
    shape of ``l`` without it."""
    d = l.shape[-1]
    return -((l - mu) ** 2).sum(axis=-1) / (2 * sigma**2) - d / 2 * np.log(2 * np.pi * sigma**2)


def log_prob_grad(l: np.ndarray, mu: np.ndarray, sigma: float) -> np.ndarray:
    r""":math:`\partial \log \mathcal{N}(l; \mu, \sigma^2 I) / \partial \mu = (l - \mu) /
    \sigma^2`, the shape of ``l``."""
    return (l - mu) / sigma**2
