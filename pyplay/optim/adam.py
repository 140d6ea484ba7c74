"""Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019), torch's update rules.

.. math::

    m \\leftarrow \\beta_1 m + (1 - \\beta_1) g, \\quad
    v \\leftarrow \\beta_2 v + (1 - \\beta_2) g^2, \\quad
    p \\leftarrow p - \\eta\\,
        \\frac{m / (1 - \\beta_1^t)}{\\sqrt{v / (1 - \\beta_2^t)} + \\epsilon}

Adam adds ``weight_decay * p`` to the gradient (L2); AdamW instead shrinks
``p <- p (1 - lr * weight_decay)`` before the step (decoupled decay).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pyplay._checks import check_float
from pyplay.optim.optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """``torch.optim.Adam``: ``lr``, ``betas``, ``eps``, ``weight_decay`` (L2), ``amsgrad``."""

    slots = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    nonnegative_slots = ("exp_avg_sq", "max_exp_avg_sq")

    def __init__(
        self,
        params: Mapping[str, np.ndarray],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ) -> None:
        super().__init__(params, lr, weight_decay)
        if not isinstance(betas, tuple | list) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = (
            check_float("betas[0]", betas[0], min_value=0.0, max_value=1.0, max_inclusive=False),
            check_float("betas[1]", betas[1], min_value=0.0, max_value=1.0, max_inclusive=False),
        )
        self.eps = check_float("eps", eps, min_value=0.0)
        self.amsgrad = bool(amsgrad)
        self._scratch: dict[str, np.ndarray] = {}  # per-parameter work buffers (not state)

    def _update(self, name: str, p: np.ndarray, g: np.ndarray) -> None:
        b1, b2 = self.betas
        m, v = self.state["exp_avg"][name], self.state["exp_avg_sq"][name]
        buf = self._buffer(name, g)  # scratch of g's shape, reused every step
        m *= b1
        np.multiply(g, 1 - b1, out=buf)
        m += buf
        v *= b2
        np.multiply(g, g, out=buf)
        buf *= 1 - b2
        v += buf
        t = self.step_count
        if self.amsgrad:
            vmax = self.state["max_exp_avg_sq"][name]
            np.maximum(vmax, v, out=vmax)
            v = vmax
        np.sqrt(v, out=buf)
        buf *= 1 / np.sqrt(1 - b2**t)
        buf += self.eps  # denominator
        np.divide(m, buf, out=buf)
        buf *= self.lr / (1 - b1**t)
        p -= buf

    def _buffer(self, name: str, g: np.ndarray) -> np.ndarray:
        buf = self._scratch.get(name)
        if buf is None or buf.shape != g.shape or buf.dtype != g.dtype:
            buf = self._scratch[name] = np.empty_like(g)
        return buf


class AdamW(Adam):
    """``torch.optim.AdamW``: Adam with decoupled weight decay (the module docstring);
    ``weight_decay`` defaults to 1e-2; the arguments after ``lr`` by keyword, as :class:`Adam`'s."""

    decoupled = True

    def __init__(self, params: Mapping[str, np.ndarray], lr: float = 1e-3, **kwargs: Any) -> None:
        kwargs.setdefault("weight_decay", 1e-2)
        super().__init__(params, lr, **kwargs)
