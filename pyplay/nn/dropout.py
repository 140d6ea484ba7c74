"""Inverted dropout: in training, zero each unit with probability ``p`` and scale the rest.

.. math::

    y = x \\odot m / (1 - p), \\quad m_k \\sim \\mathrm{Bernoulli}(1 - p), \\qquad
    \\partial L / \\partial x = \\delta y \\odot m / (1 - p).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_float

__all__ = ["Dropout"]


class Dropout:
    """``torch.nn.Dropout`` with its own seeded Generator; identity when ``training=False``."""

    def __init__(self, p: float = 0.5, rng: np.random.Generator | int | None = 0) -> None:
        self.p = check_float("p", p, min_value=0.0, max_value=1.0, max_inclusive=False)
        self._rng = as_generator(rng)
        self.params: dict[str, np.ndarray] = {}

    def forward(self, x: Any, training: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Returns ``y`` and the multiplier ``m / (1 - p)`` (None when nothing was dropped)."""
        x = check_array("x", x)
        if not training or self.p == 0.0:
            return x, None
        scale = (self._rng.random(x.shape) >= self.p).astype(x.dtype) / (1.0 - self.p)
        return x * scale, scale

    def backward(self, dy: Any, cache: np.ndarray | None) -> tuple[np.ndarray, dict]:
        """``dx = dy * m / (1 - p)``; no parameters."""
        dy = check_array("dy", dy)
        return (dy if cache is None else dy * cache), {}
