"""Losses that return their value and their gradient, numerically stable.

Cross-entropy over logits uses log-sum-exp; with label smoothing :math:`\\varepsilon` over
:math:`V` classes the target distribution is :math:`q = (1 - \\varepsilon)\\,\\mathrm{onehot}(y)
+ \\varepsilon / V` (PyTorch's definition), so per position

.. math::

    \\ell = -\\sum_v q_v \\log \\mathrm{softmax}(z)_v, \\qquad
    \\partial \\ell / \\partial z = \\mathrm{softmax}(z) - q .
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import check_array, check_choice, check_float

__all__ = ["cross_entropy", "log_softmax", "mse", "softmax"]

REDUCTIONS = ("mean", "sum", "none")


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """``z - logsumexp(z)`` along ``axis``, without overflow."""
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """``exp(z) / sum(exp(z))`` along ``axis``, without overflow."""
    e = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _counted(name: str, mask: Any, shape: tuple[int, ...]) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype != bool:
        raise TypeError(f"{name} must be a boolean array, got dtype {m.dtype}")
    if m.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {m.shape}")
    return m


def cross_entropy(
    logits: Any,
    targets: Any,
    *,
    ignore_index: int = -100,
    mask: Any = None,
    label_smoothing: float = 0.0,
    reduction: str = "mean",
) -> tuple[Any, np.ndarray]:
    """Cross-entropy of integer ``targets`` under ``logits``, and d(loss)/d(logits).

    Parameters
    ----------
    logits : (B, T, V) or (N, V) array
    targets : (B, T) or (N,) integer class ids
    ignore_index : int
        Positions whose target equals it do not count (as in torch).
    mask : bool array shaped like ``targets``, optional
        Only positions where it is True count (in addition to ``ignore_index``).
    label_smoothing : float in [0, 1)
    reduction : {"mean", "sum", "none"}
        "mean" averages over counted positions (0.0 with zero gradient when none count;
        torch returns nan there), "none" returns per-position losses (zero where not
        counted) and the gradient of their sum.
    """
    z = check_array("logits", logits)
    if z.ndim not in (2, 3):
        raise ValueError(f"logits must be a 2-D (N, V) or 3-D (B, T, V) array, got shape {z.shape}")
    y = check_array("targets", targets, kind="i")
    if y.shape != z.shape[:-1]:
        raise ValueError(
            f"targets must have shape {z.shape[:-1]} to match logits {z.shape}, got {y.shape}"
        )
    eps = check_float(
        "label_smoothing", label_smoothing, min_value=0.0, max_value=1.0, max_inclusive=False
    )
    reduction = check_choice("reduction", reduction, REDUCTIONS)
    V = z.shape[-1]
    counted = y != ignore_index  # (...)
    if mask is not None:
        counted = counted & _counted("mask", mask, y.shape)
    bad = counted & ((y < 0) | (y >= V))
    if bad.any():
        raise ValueError(
            f"targets must be class ids in 0..{V - 1} (or ignore_index="
            f"{ignore_index}), got {int(y[bad][0])}"
        )
    safe_y = np.where(counted, y, 0)[..., None]  # (..., 1)
    shifted = z - z.max(axis=-1, keepdims=True)  # (..., V)
    grad = np.exp(shifted)  # (..., V) unnormalised softmax
    total = grad.sum(axis=-1, keepdims=True)  # (..., 1)
    grad /= total  # softmax
    logp_y = np.take_along_axis(shifted, safe_y, axis=-1)[..., 0] - np.log(total[..., 0])  # (...)
    per = -logp_y  # nll
    if eps:
        logp_mean = shifted.mean(axis=-1) - np.log(total[..., 0])  # (...)
        per = (1 - eps) * per - eps * logp_mean
    np.put_along_axis(grad, safe_y, np.take_along_axis(grad, safe_y, axis=-1) - (1 - eps), axis=-1)
    if eps:
        grad -= eps / V
    all_counted = bool(counted.all())
    if not all_counted:
        per = np.where(counted, per, 0.0)
        grad *= counted[..., None]
    n = int(counted.sum())
    if reduction == "none":
        return per.astype(z.dtype, copy=False), grad.astype(z.dtype, copy=False)
    if reduction == "sum":
        return float(per.sum()), grad.astype(z.dtype, copy=False)
    if n == 0:
        return 0.0, np.zeros_like(z)
    grad *= 1.0 / n
    return float(per.sum() / n), grad.astype(z.dtype, copy=False)


def mse(
    pred: Any, target: Any, *, mask: Any = None, reduction: str = "mean"
) -> tuple[Any, np.ndarray]:
    """Mean squared error ``mean((pred - target)^2)`` over counted elements, and its gradient.

    ``mask`` (bool, shaped like ``pred``) selects the elements that count; "mean" divides by
    their number (0.0 with zero gradient when none count), "sum" adds, "none" returns the
    per-element squared errors (zero where not counted) and the gradient of their sum.
    """
    p = check_array("pred", pred)
    t = check_array("target", target, dtype=p.dtype)
    if p.shape != t.shape:
        raise ValueError(f"target must have the shape of pred {p.shape}, got {t.shape}")
    reduction = check_choice("reduction", reduction, REDUCTIONS)
    diff = p - t
    if mask is not None:
        diff = diff * _counted("mask", mask, p.shape)
        n = int(np.count_nonzero(mask))
    else:
        n = p.size
    if reduction == "none":
        return diff**2, 2 * diff
    if reduction == "sum":
        return float(np.sum(diff**2)), 2 * diff
    if n == 0:
        return 0.0, np.zeros_like(p)
    return float(np.sum(diff**2) / n), (2 / n) * diff
