"""RMSprop (Tieleman & Hinton 2012), torch's update rule.

.. math::

    s \\leftarrow \\alpha s + (1 - \\alpha) g^2, \\quad
    \\bar g \\leftarrow \\alpha \\bar g + (1 - \\alpha) g \\;(\\text{centered}), \\quad
    p \\leftarrow p - \\eta\\, g / (\\sqrt{s - \\bar g^2} + \\epsilon)

with momentum ``b <- mu b + g / (sqrt(.) + eps)``, ``p <- p - lr b``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pyplay._checks import check_float
from pyplay.optim.optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``torch.optim.RMSprop``: ``lr``, ``alpha``, ``eps``, ``weight_decay``, ``momentum``,
    ``centered``."""

    slots = ("square_avg", "grad_avg", "momentum_buffer")
    nonnegative_slots = ("square_avg",)

    def __init__(
        self,
        params: Mapping[str, np.ndarray],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
    ) -> None:
        super().__init__(params, lr, weight_decay)
        self.alpha = check_float("alpha", alpha, min_value=0.0, max_value=1.0)
        self.eps = check_float("eps", eps, min_value=0.0)
        self.momentum = check_float("momentum", momentum, min_value=0.0)
        self.centered = bool(centered)

    def _update(self, name: str, p: np.ndarray, g: np.ndarray) -> None:
        a = self.alpha
        sq = self.state["square_avg"][name]
        sq *= a
        sq += (1 - a) * (g * g)
        if self.centered:
            ga = self.state["grad_avg"][name]
            ga *= a
            ga += (1 - a) * g
            avg = np.sqrt(sq - ga * ga) + self.eps
        else:
            avg = np.sqrt(sq) + self.eps
        if self.momentum:
            buf = self.state["momentum_buffer"][name]
            buf *= self.momentum
            buf += g / avg
            p -= self.lr * buf
        else:
            p -= self.lr * (g / avg)
