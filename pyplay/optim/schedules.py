"""Learning-rate schedules. Each sets ``optimizer.lr`` from a step counter.

Call ``schedule.step()`` once per optimiser step (after it), as with torch's schedulers;
``lr_at(t)`` gives the rate used at step ``t`` (``t = 0`` first) in closed form.

- :class:`StepLR`: :math:`\\eta_t = \\eta_0 \\gamma^{\\lfloor t / s \\rfloor}`.
- :class:`CosineAnnealingLR`: :math:`\\eta_t = \\eta_{min} + (\\eta_0 - \\eta_{min})
  (1 + \\cos(\\pi t / T_{max})) / 2`.
- :class:`LinearWarmup`: :math:`\\eta_t = \\eta_0 (t + 1) / w` for :math:`t < w`, then the
  following schedule (or :math:`\\eta_0`).
"""

from __future__ import annotations

import math
from typing import Any

from pyplay._checks import check_float, check_int

__all__ = ["CosineAnnealingLR", "LinearWarmup", "StepLR"]


class _Schedule:
    """Shared counter and state dict; subclasses define ``lr_at``."""

    def __init__(self, optimizer: Any) -> None:
        if not hasattr(optimizer, "lr"):
            raise TypeError(f"optimizer must be a pyplay optimiser, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.base_lr = float(optimizer.lr)
        self.t = 0
        optimizer.lr = self.lr_at(0)

    def lr_at(self, t: int) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def step(self) -> None:
        """Advance one step and set the optimiser's learning rate."""
        self.t += 1
        self.optimizer.lr = self.lr_at(self.t)

    def state_dict(self) -> dict[str, float]:
        """``base_lr`` and the step counter."""
        return {"base_lr": self.base_lr, "t": self.t}

    def load_state_dict(self, state: dict[str, float]) -> None:
        """Restore what :meth:`state_dict` returned."""
        self.base_lr = float(state["base_lr"])
        self.t = int(state["t"])
        self.optimizer.lr = self.lr_at(self.t)


class StepLR(_Schedule):
    """Multiply the rate by ``gamma`` every ``step_size`` steps (``torch.optim.lr_scheduler``)."""

    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1) -> None:
        self.step_size = check_int("step_size", step_size, min_value=1)
        self.gamma = check_float("gamma", gamma, min_value=0.0, min_inclusive=False)
        super().__init__(optimizer)

    def lr_at(self, t: int) -> float:
        return self.base_lr * self.gamma ** (t // self.step_size)


class CosineAnnealingLR(_Schedule):
    """Half a cosine from the base rate down to ``eta_min`` over ``T_max`` steps."""

    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0) -> None:
        self.T_max = check_int("T_max", T_max, min_value=1)
        self.eta_min = check_float("eta_min", eta_min, min_value=0.0)
        super().__init__(optimizer)

    def lr_at(self, t: int) -> float:
        return (
            self.eta_min
            + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * t / self.T_max)) / 2
        )


class LinearWarmup(_Schedule):
    """Ramp linearly up to the base rate over ``warmup_steps``, then hand over to ``after``
    (a schedule class and its keyword arguments, e.g. ``(CosineAnnealingLR, {"T_max": 900})``)
    or stay at the base rate."""

    def __init__(
        self, optimizer: Any, warmup_steps: int, after: tuple[type, dict[str, Any]] | None = None
    ) -> None:
        self.warmup_steps = check_int("warmup_steps", warmup_steps, min_value=1)
        self._after: _Schedule | None = None
        self.base_lr = float(optimizer.lr)
        if after is not None:
            cls, kwargs = after
            self._after = cls(optimizer, **kwargs)
        super().__init__(optimizer)

    def lr_at(self, t: int) -> float:
        if t < self.warmup_steps:
            return self.base_lr * (t + 1) / self.warmup_steps
        if self._after is None:
            return self.base_lr
        return self._after.lr_at(t - self.warmup_steps)
