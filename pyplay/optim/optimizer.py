"""What every optimiser shares: the parameter dict it updates in place, per-parameter state
slots, argument checks, and a flat, ``.npz``-friendly state dict."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

import numpy as np

from pyplay._checks import check_float

__all__ = ["Optimizer"]


class Optimizer(abc.ABC):
    """Base of the optimisers. Subclasses define ``slots`` (names of per-parameter state arrays)
    and ``_update(name, p, g)``, which changes ``p`` in place.

    Weight decay :math:`\\lambda` (``weight_decay``) is applied here, once for all, before
    ``_update`` and as torch applies it: :math:`g \\leftarrow g + \\lambda p` (L2), or
    :math:`p \\leftarrow p (1 - \\eta \\lambda)` when the class is ``decoupled`` (AdamW).

    The parameters are the arrays of a dict such as ``model.params``; they are updated in place
    (never rebound), so layers that read from the same dict see the new values.
    """

    slots: tuple[str, ...] = ()
    nonnegative_slots: tuple[str, ...] = ()  # running averages of squared gradients
    decoupled: bool = False  # weight decay shrinks p (AdamW) instead of adding to g (L2)

    def __init__(
        self, params: Mapping[str, np.ndarray], lr: float, weight_decay: float = 0.0
    ) -> None:
        if not isinstance(params, Mapping) or not params:
            raise TypeError(
                f"params must be a non-empty dict of name -> ndarray, got {type(params).__name__}"
            )
        for name, p in params.items():
            if not isinstance(p, np.ndarray) or p.dtype.kind != "f":
                raise TypeError(f"params[{name!r}] must be a float ndarray, got {type(p).__name__}")
        self.params = params
        self.lr = check_float("lr", lr, min_value=0.0, min_inclusive=False)
        self.weight_decay = check_float("weight_decay", weight_decay, min_value=0.0)
        self.step_count = 0
        self.state: dict[str, dict[str, np.ndarray]] = {
            slot: {name: np.zeros_like(p) for name, p in params.items()} for slot in self.slots
        }

    @abc.abstractmethod
    def _update(self, name: str, p: np.ndarray, g: np.ndarray) -> None:
        """Apply one update to parameter ``name`` (array ``p``) given its gradient ``g``."""

    def step(self, grads: Mapping[str, np.ndarray]) -> None:
        """Update every parameter in place from ``grads`` (same keys and shapes as params)."""
        self._check_grads(grads)
        self.step_count += 1
        self._update_each(grads)

    def _check_grads(self, grads: Mapping[str, np.ndarray]) -> None:
        """Refuse ``grads`` without exactly the keys and shapes of :attr:`params`."""
        if not isinstance(grads, Mapping):
            raise TypeError(f"grads must be a dict of name -> ndarray, got {type(grads).__name__}")
        missing = [k for k in self.params if k not in grads]
        extra = [k for k in grads if k not in self.params]
        if missing or extra:
            raise ValueError(
                f"grads must have the keys of params: missing {missing or 'none'}, "
                f"unexpected {extra or 'none'}"
            )
        for name, p in self.params.items():
            g = grads[name]
            if np.shape(g) != p.shape:
                raise ValueError(f"grads[{name!r}] must have shape {p.shape}, got {np.shape(g)}")

    def _update_each(self, grads: Mapping[str, np.ndarray]) -> None:
        """One update of every parameter, one :meth:`_update` each (after the weight decay)."""
        decay = self.weight_decay
        for name, p in self.params.items():
            g = np.asarray(grads[name], dtype=p.dtype)
            if decay and self.decoupled:
                p *= 1 - self.lr * decay  # p <- p (1 - lr lambda), before the step
            elif decay:
                g = g + decay * p  # g <- g + lambda p (L2)
            self._update(name, p, g)

    def state_dict(self) -> dict[str, Any]:
        """Flat dict: ``"lr"``, ``"step"`` and ``"<slot>.<param name>"`` arrays (copies)."""
        out: dict[str, Any] = {"lr": float(self.lr), "step": int(self.step_count)}
        for slot, arrays in self.state.items():
            for name, value in arrays.items():
                out[f"{slot}.{name}"] = value.copy()
        return out

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned, all or nothing.

        Every value is checked before any is used (the state may come from a file): the keys,
        each slot's shape, finite numbers, no negative value in a slot of running squares
        (``nonnegative_slots``), a learning rate that is a finite number > 0 and a step count
        that is a whole number >= 0. A ValueError or TypeError names the first that is not;
        the optimiser is then unchanged.
        """
        from pyplay.io import whole_step  # the one check of a step count

        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a dict, got {type(state).__name__}")
        expected = {"lr", "step"} | {f"{s}.{n}" for s in self.slots for n in self.params}
        got = set(state)
        if got != expected:
            raise ValueError(
                f"optimizer state does not fit: missing {sorted(expected - got)}, "
                f"unexpected {sorted(got - expected)}"
            )
        lr = state["lr"]
        lr = check_float("optimizer state lr", lr.item() if isinstance(lr, np.ndarray) else lr,
                         min_value=0.0, min_inclusive=False)  # fmt: skip
        step = state["step"]
        step = whole_step(step.item() if isinstance(step, np.ndarray) else step,
                          "optimizer state step")  # fmt: skip
        checked: dict[tuple[str, str], np.ndarray] = {}
        for slot, arrays in self.state.items():
            for name, value in arrays.items():
                key = f"{slot}.{name}"
                new = np.asarray(state[key])
                if new.shape != value.shape:
                    raise ValueError(
                        f"optimizer state {key} must have shape {value.shape}, got {new.shape}"
                    )
                if new.dtype.kind not in "fiu" or not np.isfinite(new).all():
                    raise ValueError(f"optimizer state {key} must hold finite numbers")
                if slot in self.nonnegative_slots and (new < 0).any():
                    raise ValueError(
                        f"optimizer state {key} must be >= 0 (a running average of squares)"
                    )
                checked[slot, name] = new
        for (slot, name), new in checked.items():
            self.state[slot][name][...] = new
        self.lr = lr
        self.step_count = step
