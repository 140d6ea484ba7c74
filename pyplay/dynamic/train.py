r"""Training an LDDN by gradient descent on the mean squared error: :func:`fit`, a generator
over :class:`pyplay.train.Trainer` (the one training loop, with its divergence rule) and the
objective of :mod:`pyplay.objectives.lddn`.

.. math::

    L = \frac{1}{B\,T\,O} \sum_{b, t, i} \bigl(a_i(t) - y_i(t)\bigr)^2 ,

where :math:`a(t)` are the output layers of :meth:`~pyplay.dynamic.lddn.LDDN.forward` and the
gradient of every weight comes from :meth:`~pyplay.dynamic.lddn.LDDN.backward` (BPTT). For an
open-loop NARX network there is no recurrence: this is the series-parallel training of the
book; the closed-loop network (:func:`~pyplay.dynamic.networks.closeloop`) shares the weights.

:func:`fit` yields the loss of every step (before its update), so that a caller can plot, stop
early or resume: ``for loss in fit(net, p, y, steps=500): ...``. The same training with the
trainer itself: ``Trainer(net, Windows(p, y, dtype=net.dtype), batch_size=len(p))``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int
from pyplay.dynamic.lddn import LDDN
from pyplay.losses import mse as mean_squared_error
from pyplay.objectives.lddn import Windows
from pyplay.train import OPTIMIZERS, Trainer

__all__ = ["OPTIMIZERS", "fit", "fit_trainer", "mse"]


def _check_targets(net: LDDN, targets: Any, shape: tuple[int, ...]) -> np.ndarray:
    y = check_array("targets", targets, ndim=3, dtype=net.dtype, layout="(B, T, O)")
    if y.shape != shape:
        raise ValueError(f"targets must have shape (N, T, O) = {shape}, got {y.shape}")
    return y


def mse(net: LDDN, p: Any, targets: Any, a0: Any = None, p0: Any = None) -> float:
    """The network's mean squared error on ``targets`` (B, T, O), without training."""
    out, _ = net.forward(p, a0, p0)  # (B, T, O)
    return float(mean_squared_error(out, _check_targets(net, targets, out.shape))[0])


def fit(
    net: LDDN,
    inputs: Any,
    targets: Any,
    steps: int,
    lr: float = 1e-2,
    optimizer: Any = "adam",
    **options: Any,
) -> Iterator[float]:
    """Train ``net`` in place; yield the mean squared error of each step before its update.

    Parameters
    ----------
    net : LDDN
    inputs : array (N, T, R)
        ``N`` training sequences (e.g. windows of a long series, see
        :func:`~pyplay.dynamic.networks.preparets`).
    targets : array (N, T, O)
    steps : int
    lr : float
        Learning rate when ``optimizer`` is a name.
    optimizer : {"adam", "adamw", "sgd", "rmsprop"} or a pyplay optimiser over ``net.params``
    **options
        Keyword arguments of :func:`fit_trainer`:
    a0, p0 : arrays (N, DL, S) and (N, DI, R), optional
        Initial conditions of each sequence (zeros).
    batch_size : int, optional
        Sequences per step, drawn without replacement from ``rng``; None: all of them.
    clip : float, optional
        Global-norm gradient clipping threshold.
    optimizer_kwargs : dict, optional
        Extra arguments for a named optimiser (momentum, weight_decay, ...).
    rng : numpy.random.Generator or int seed
        For drawing the mini-batches.

    Yields
    ------
    float
        The loss of the step (on its mini-batch). A step whose loss or gradient is not finite
        ends the run (the trainer's rule): its loss is the last one yielded, and the weights
        are those of the step before.
    """
    if not isinstance(net, LDDN):
        raise TypeError(f"net must be an LDDN, got {type(net).__name__}")
    steps = check_int("steps", steps, min_value=0)
    trainer = fit_trainer(net, inputs, targets, lr, optimizer, **options)
    return (record.loss for record in trainer.run(steps))


def fit_trainer(
    net: LDDN,
    inputs: Any,
    targets: Any,
    lr: float = 1e-2,
    optimizer: Any = "adam",
    *,
    a0: Any = None,
    p0: Any = None,
    batch_size: int | None = None,
    clip: float | None = None,
    optimizer_kwargs: dict[str, Any] | None = None,
    rng: np.random.Generator | int | None = 0,
) -> Trainer:
    """The :class:`~pyplay.train.Trainer` that :func:`fit` runs (same arguments but
    ``steps``): for a caller that wants the trainer's records (step, loss, seconds, the
    ``diverged`` record) rather than the losses alone, as the page's lessons do."""
    if not isinstance(net, LDDN):
        raise TypeError(f"net must be an LDDN, got {type(net).__name__}")
    task = Windows(inputs, targets, a0, p0, dtype=net.dtype, rng=rng)
    _check_targets(net, task.targets, (*task.p.shape[:2], net.output_size))
    N = len(task)
    B = N if batch_size is None else check_int("batch_size", batch_size, min_value=1, max_value=N)
    if not isinstance(optimizer, str) and not (
        hasattr(optimizer, "step") and getattr(optimizer, "params", None) is net.params
    ):
        raise TypeError(
            "optimizer must be a name or a pyplay optimiser built over net.params, got "
            f"{type(optimizer).__name__}"
        )
    return Trainer(
        net, task, optimizer=optimizer, lr=lr, batch_size=B, clip=clip,
        optimizer_kwargs=optimizer_kwargs,
    )  # fmt: skip
