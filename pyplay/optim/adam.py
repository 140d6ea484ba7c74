"""Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019), torch's update rules.

.. math::

    m \\leftarrow \\beta_1 m + (1 - \\beta_1) g, \\quad
    v \\leftarrow \\beta_2 v + (1 - \\beta_2) g^2, \\quad
    p \\leftarrow p - \\eta\\,
        \\frac{m / (1 - \\beta_1^t)}{\\sqrt{v / (1 - \\beta_2^t)} + \\epsilon}

Adam adds ``weight_decay * p`` to the gradient (L2); AdamW instead shrinks
``p <- p (1 - lr * weight_decay)`` before the step (decoupled decay).

The moments of all parameters live side by side in one flat buffer per slot (each parameter's
``state`` a view of its part): without weight decay a step copies the gradients into one flat
buffer and runs each operation of the update once over all of them (about 15 NumPy calls plus
one copy and one subtraction per parameter, instead of 13 calls per parameter); the per-parameter
:meth:`Adam._update` is the same arithmetic, element for element, and the tests compare the two.
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
        self._flat = self._flatten()

    def _flatten(self) -> dict[str, Any] | None:
        """One flat buffer per slot, the gradient and the update, each parameter's state a
        view of its part (so ``state_dict`` and ``load_state_dict`` are unchanged); None when
        the parameters mix dtypes (then every step takes the per-parameter path)."""
        dtypes = {p.dtype for p in self.params.values()}
        if len(dtypes) != 1:
            return None
        dtype = dtypes.pop()
        n = sum(p.size for p in self.params.values())
        flat = {k: np.zeros(n, dtype=dtype) for k in (*self.slots, "grad", "update")}
        views: dict[str, dict[str, np.ndarray]] = {k: {} for k in flat}
        start = 0
        for name, p in self.params.items():
            for k, buf in flat.items():
                views[k][name] = buf[start : start + p.size].reshape(p.shape)
            start += p.size
        for slot in self.slots:
            self.state[slot] = views[slot]  # zeros, as the base class made them
        return {"flat": flat, "grad": views["grad"], "update": views["update"]}

    def step(self, grads: Mapping[str, np.ndarray]) -> None:
        """Update every parameter in place from ``grads``: without weight decay, the update
        of all parameters at once on the flat buffers (:meth:`_update` on each parameter's
        slice, in one call per operation); with it, :meth:`_update` per parameter."""
        self._check_grads(grads)
        self.step_count += 1
        if self._flat is None or self.weight_decay:
            self._update_each(grads)
            return
        for name, g in self._flat["grad"].items():
            np.copyto(g, grads[name], casting="unsafe")  # (n,) all gradients side by side
        flat = self._flat["flat"]
        self._adam(flat["exp_avg"], flat["exp_avg_sq"], flat["max_exp_avg_sq"],
                   flat["grad"], flat["update"])  # fmt: skip
        for name, p in self.params.items():
            p -= self._flat["update"][name]

    def state_dict(self) -> dict[str, Any]:
        """As :meth:`Optimizer.state_dict` (copies); with the flat buffers, one copy per slot
        and each parameter's entry a view of its part of that copy."""
        if self._flat is None:
            return super().state_dict()
        out: dict[str, Any] = {"lr": float(self.lr), "step": int(self.step_count)}
        for slot in self.slots:
            flat, start = self._flat["flat"][slot].copy(), 0  # (n,)
            for name, p in self.params.items():
                out[f"{slot}.{name}"] = flat[start : start + p.size].reshape(p.shape)
                start += p.size
        return out

    def _adam(
        self, m: np.ndarray, v: np.ndarray, vmax: np.ndarray, g: np.ndarray, buf: np.ndarray
    ) -> None:
        """The moments ``m``, ``v`` (and ``vmax``) after gradient ``g``, and the step to take
        (to subtract from the parameters) into ``buf``; every array the same shape."""
        b1, b2 = self.betas
        m *= b1
        np.multiply(g, 1 - b1, out=buf)
        m += buf
        v *= b2
        np.multiply(g, g, out=buf)
        buf *= 1 - b2
        v += buf
        t = self.step_count
        if self.amsgrad:
            np.maximum(vmax, v, out=vmax)
            v = vmax
        np.sqrt(v, out=buf)
        buf *= 1 / np.sqrt(1 - b2**t)
        buf += self.eps  # denominator
        np.divide(m, buf, out=buf)
        buf *= self.lr / (1 - b1**t)

    def _update(self, name: str, p: np.ndarray, g: np.ndarray) -> None:
        """One parameter's update (the plain path: weight decay, mixed dtypes; the flat path of
        :meth:`step` does the same operations on all parameters at once)."""
        st = self.state
        buf = self._buffer(name, g)  # scratch of g's shape, reused every step
        self._adam(st["exp_avg"][name], st["exp_avg_sq"][name], st["max_exp_avg_sq"][name], g, buf)
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
