r"""What one training step of an LDDN computes: the mean squared error of its output layers
over a batch of training sequences, the strategy of :class:`pyplay.train.Trainer` for models
whose ``objective`` is ``"lddn"``.

.. math::

    L = \frac{1}{B\,T\,O} \sum_{b, t, i} \bigl(a_i(t) - y_i(t)\bigr)^2, \qquad
    \frac{\partial L}{\partial a_i(t)} = \frac{2}{B\,T\,O} \bigl(a_i(t) - y_i(t)\bigr),

with :math:`a(t)` the output layers of :meth:`~pyplay.dynamic.lddn.LDDN.forward` and every
weight's gradient from :meth:`~pyplay.dynamic.lddn.LDDN.backward` (BPTT).

:class:`Windows` is the task: N sequences (windows of a series, say) with their targets and
initial conditions, of which each batch draws some without replacement (all of them, in order,
when the batch asks for as many as there are). Both are named in :mod:`pyplay.dynamic` too
(``pyplay.dynamic.Windows``), which imports them from here: this module needs nothing of the
dynamic package (the network is any model with the LDDN's ``forward(p, a0, p0)`` and
``backward``).

:func:`make_lddn` is the kind's factory: an LDDN takes none of the trainer's options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_int
from pyplay.losses import mse
from pyplay.objectives.base import Options, check_step_options

__all__ = ["LDDNObjective", "WindowBatch", "Windows", "make_lddn"]


@dataclass(frozen=True)
class WindowBatch:
    """B sequences: inputs ``p`` (B, T, R), ``targets`` (B, T, O), layer initial conditions
    ``a0`` (B, DL, S) and input initial conditions ``p0`` (B, DI, R) (None: zeros)."""

    p: np.ndarray
    targets: np.ndarray
    a0: np.ndarray | None = None
    p0: np.ndarray | None = None


def _rows(name: str, x: Any, n: int, dtype: Any) -> np.ndarray | None:
    if x is None:
        return None
    x = check_array(name, x, ndim=3, dtype=dtype, layout="(N, ., .)")
    if x.shape[0] != n:
        raise ValueError(
            f"{name} must have one entry per sequence of inputs ({n}), got {x.shape[0]}"
        )
    return x


class Windows:
    """N training sequences of a dynamic network, as a task for :class:`pyplay.train.Trainer`.

    Parameters
    ----------
    p : array (N, T, R)
        The inputs (e.g. windows of a long series, see :func:`~pyplay.dynamic.preparets`).
    targets : array (N, T, O)
    a0, p0 : arrays (N, DL, S) and (N, DI, R), optional
        Initial conditions of each sequence (zeros).
    dtype : numpy dtype
        The network's.
    rng : numpy.random.Generator or int seed
        For drawing the batches.
    """

    name = "windows"

    def __init__(
        self,
        p: Any,
        targets: Any,
        a0: Any = None,
        p0: Any = None,
        dtype: Any = np.float64,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.p = check_array("inputs", p, ndim=3, dtype=dtype, layout="(N, T, R)")
        self.targets = check_array("targets", targets, ndim=3, dtype=dtype, layout="(N, T, O)")
        N = self.p.shape[0]
        self.a0, self.p0 = _rows("a0", a0, N, dtype), _rows("p0", p0, N, dtype)
        self.rng = as_generator(rng)
        self.config: dict[str, Any] = {"p": p, "targets": targets, "a0": a0, "p0": p0}
        self.config["dtype"] = dtype

    def __len__(self) -> int:
        return int(self.p.shape[0])

    def batch(self, batch_size: int) -> WindowBatch:
        """``batch_size`` sequences drawn without replacement (all, in order, when that is N)."""
        N = len(self)
        B = check_int("batch_size", batch_size, min_value=1, max_value=N)
        idx = np.arange(N) if B == N else self.rng.choice(N, size=B, replace=False)  # (B,)
        a0 = None if self.a0 is None else self.a0[idx]  # (B, DL, S)
        p0 = None if self.p0 is None else self.p0[idx]  # (B, DI, R)
        return WindowBatch(self.p[idx], self.targets[idx], a0, p0)


class LDDNObjective:
    """The mean squared error of an :class:`~pyplay.dynamic.lddn.LDDN` on :class:`Windows`."""

    tbptt = False
    carry = None

    def __init__(self, model: Any, task: Any) -> None:
        if not isinstance(task, Windows):
            raise TypeError(f"task must be a pyplay.dynamic.Windows, got {type(task).__name__}")
        expected = (*task.p.shape[:2], model.output_size)
        if task.p.shape[2] != model.input_size or task.targets.shape != expected:
            raise ValueError(
                f"targets must have shape (N, T, O) = {expected} and inputs {model.input_size} "
                f"features, got {task.targets.shape} and {task.p.shape[2]}"
            )
        self.model, self.task = model, task

    def loss(self, batch: WindowBatch) -> tuple[float, np.ndarray, Any]:
        """The mean squared error of the batch, its gradient (B, T, O) and the cache."""
        out, cache = self.model.forward(batch.p, batch.a0, batch.p0)  # (B, T, O)
        loss, dout = mse(out, batch.targets)
        return float(loss), dout, cache

    def step(self, batch: WindowBatch) -> tuple[float, dict[str, np.ndarray], dict[str, float]]:
        """Loss and gradients of every weight (no other metric)."""
        loss, dout, cache = self.loss(batch)
        return loss, self.model.backward(dout, cache).grads, {}

    def accept(self) -> None:
        """Nothing is carried between batches."""

    def evaluate(self, task: Any, batch_size: int) -> dict[str, float]:
        """The mean squared error on a batch of ``task``."""
        return {"loss": self.loss(task.batch(min(batch_size, len(task))))[0]}


def make_lddn(model: Any, task: Any, options: Options) -> LDDNObjective:
    """:class:`LDDNObjective`; the options are refused as for a per-step model
    (:func:`~pyplay.objectives.base.check_step_options`: an LDDN carries no state between
    batches)."""
    check_step_options(model, options)
    return LDDNObjective(model, task)
