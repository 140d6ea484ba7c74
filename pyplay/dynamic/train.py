r"""Training an LDDN by gradient descent on the mean squared error, with pyplay's optimisers.

.. math::

    L = \frac{1}{B\,T\,O} \sum_{b, t, i} \bigl(a_i(t) - y_i(t)\bigr)^2, \qquad
    \frac{\partial L}{\partial a_i(t)} = \frac{2}{B\,T\,O} \bigl(a_i(t) - y_i(t)\bigr),

where :math:`a(t)` are the output layers of :meth:`~pyplay.dynamic.lddn.LDDN.forward` and the
gradient of every weight comes from :meth:`~pyplay.dynamic.lddn.LDDN.backward` (BPTT). For an
open-loop NARX network there is no recurrence: this is the series-parallel training of the
book; the closed-loop network (:func:`~pyplay.dynamic.networks.closeloop`) shares the weights.

:func:`fit` is a generator yielding the loss of every step (before its update), so that a
caller can plot, stop early or resume: ``for loss in fit(net, p, y, steps=500): ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_float, check_int
from pyplay.dynamic.lddn import LDDN
from pyplay.optim import SGD, Adam, AdamW, RMSprop, clip_grad_norm

__all__ = ["OPTIMIZERS", "fit", "mse", "mse_loss"]

OPTIMIZERS: dict[str, Any] = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop}


def mse_loss(out: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """``(L, dL/dout)`` of the mean squared error over all elements."""
    diff = out - targets  # (B, T, O)
    return float(np.mean(diff * diff)), diff * (2.0 / diff.size)


def mse(net: LDDN, p: Any, targets: Any, a0: Any = None, p0: Any = None) -> float:
    """The network's mean squared error on ``targets`` (B, T, O), without training."""
    out, _ = net.forward(p, a0, p0)  # (B, T, O)
    targets = check_array("targets", targets, ndim=3, dtype=net.dtype, layout="(B, T, O)")
    if targets.shape != out.shape:
        raise ValueError(f"targets must have shape (B, T, O) = {out.shape}, got {targets.shape}")
    return mse_loss(out, targets)[0]


def _rows(name: str, x: Any, n: int, dtype: np.dtype) -> np.ndarray | None:
    if x is None:
        return None
    x = check_array(name, x, ndim=3, dtype=dtype, layout="(N, ., .)")
    if x.shape[0] != n:
        raise ValueError(
            f"{name} must have one entry per sequence of inputs ({n}), got {x.shape[0]}"
        )
    return x


def fit(
    net: LDDN,
    inputs: Any,
    targets: Any,
    steps: int,
    lr: float = 1e-2,
    optimizer: Any = "adam",
    *,
    a0: Any = None,
    p0: Any = None,
    batch_size: int | None = None,
    clip: float | None = None,
    optimizer_kwargs: dict[str, Any] | None = None,
    rng: np.random.Generator | int | None = 0,
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
        The loss of the step (on its mini-batch).
    """
    if not isinstance(net, LDDN):
        raise TypeError(f"net must be an LDDN, got {type(net).__name__}")
    steps = check_int("steps", steps, min_value=0)
    p = check_array("inputs", inputs, ndim=3, dtype=net.dtype, layout="(N, T, R)")
    y = check_array("targets", targets, ndim=3, dtype=net.dtype, layout="(N, T, O)")
    if y.shape != (*p.shape[:2], net.output_size):
        raise ValueError(
            f"targets must have shape (N, T, O) = {(*p.shape[:2], net.output_size)}, got {y.shape}"
        )
    N = p.shape[0]
    a0s, p0s = _rows("a0", a0, N, net.dtype), _rows("p0", p0, N, net.dtype)
    B = N if batch_size is None else check_int("batch_size", batch_size, min_value=1, max_value=N)
    clip = None if clip is None else check_float("clip", clip, min_value=0.0, min_inclusive=False)
    if isinstance(optimizer, str):
        name = check_choice("optimizer", optimizer, tuple(OPTIMIZERS))
        lr = check_float("lr", lr, min_value=0.0, min_inclusive=False)
        opt = OPTIMIZERS[name](net.params, lr=lr, **(optimizer_kwargs or {}))
    elif hasattr(optimizer, "step") and getattr(optimizer, "params", None) is net.params:
        opt = optimizer
    else:
        raise TypeError(
            "optimizer must be a name or a pyplay optimiser built over net.params, got "
            f"{type(optimizer).__name__}"
        )
    gen = as_generator(rng)
    return _loop(net, p, y, a0s, p0s, B, clip, opt, gen, steps)


def _loop(
    net: LDDN,
    p: np.ndarray,
    y: np.ndarray,
    a0: np.ndarray | None,
    p0: np.ndarray | None,
    B: int,
    clip: float | None,
    opt: Any,
    gen: np.random.Generator,
    steps: int,
) -> Iterator[float]:
    N = p.shape[0]
    for _ in range(steps):
        idx = np.arange(N) if B == N else gen.choice(N, size=B, replace=False)  # (B,)
        out, cache = net.forward(
            p[idx], None if a0 is None else a0[idx], None if p0 is None else p0[idx]
        )  # (B, T, O)
        loss, dout = mse_loss(out, y[idx])
        grads = net.backward(dout, cache).grads
        if clip is not None:
            clip_grad_norm(grads, clip)
        opt.step(grads)
        yield loss
