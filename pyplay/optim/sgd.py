"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay (torch's rule).

.. math::

    g \\leftarrow g + \\lambda p, \\quad
    b \\leftarrow \\mu b + (1 - \\tau) g \\;(b = g \\text{ at the first step}), \\quad
    p \\leftarrow p - \\eta\\, (g + \\mu b \\text{ if Nesterov else } b)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pyplay._checks import check_float
from pyplay.optim.optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``torch.optim.SGD``: ``lr``, ``momentum``, ``dampening``, ``nesterov``, ``weight_decay``."""

    slots = ("momentum_buffer",)

    def __init__(
        self,
        params: Mapping[str, np.ndarray],
        lr: float = 1e-2,
        momentum: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, lr, weight_decay)
        self.momentum = check_float("momentum", momentum, min_value=0.0)
        self.dampening = check_float("dampening", dampening, min_value=0.0, max_value=1.0)
        if nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError(
                "nesterov=True needs momentum > 0 and dampening = 0, got "
                f"momentum={self.momentum}, dampening={self.dampening}"
            )
        self.nesterov = bool(nesterov)

    def _update(self, name: str, p: np.ndarray, g: np.ndarray) -> None:
        if self.momentum:
            buf = self.state["momentum_buffer"][name]
            if self.step_count == 1:
                buf[...] = g
            else:
                buf *= self.momentum
                buf += (1 - self.dampening) * g
            g = g + self.momentum * buf if self.nesterov else buf
        p -= self.lr * g
