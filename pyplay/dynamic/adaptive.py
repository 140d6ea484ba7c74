r"""The adaptive filter: a tapped delay line whose weights adapt online by LMS (Widrow-Hoff).

The adaptive filter of lecture 8 of the NLP course (its "Adaptive Filter" slide) is one linear
neuron reading a tapped delay line of the input signal :math:`y`:

.. math::

    a(k) = \mathrm{purelin}(W p(k) + b) = \sum_{i=1}^{R} w_{1,i}\, y(k - i + 1) + b,
    \qquad p(k) = [y(k);\; y(k-1);\; \dots;\; y(k-R+1)],

and after every sample the LMS rule (Hagan, *NND2* ch. 10) moves the weights along the
instantaneous gradient of :math:`e^2(k)`, with :math:`e(k) = t(k) - a(k)` and learning rate
:math:`\alpha`:

.. math::

    W(k+1) = W(k) + 2\alpha\, e(k)\, p^T(k), \qquad b(k+1) = b(k) + 2\alpha\, e(k).

:func:`lms_filter` streams the signal and yields one :class:`LMSRecord` per sample (weights,
output, error), so a page can plot the weight trajectory and the error live.
:func:`noise_cancellation` builds the noise-cancellation setting (NND2 ch. 10: an EEG-like
signal :math:`s` contaminated by a filtered copy :math:`m` of a noise source :math:`v`; the
filter reads :math:`v` and learns to predict :math:`m`, so its error :math:`e` is the restored
signal). :func:`wiener_solution` gives the weights LMS converges to in the mean,
:math:`x^* = R^{-1} h` with :math:`R = E[p p^T]`, :math:`h = E[t p]`; the mean weights converge
for :math:`0 < \alpha < 1 / \lambda_{max}(R)`, and the weights jitter around :math:`x^*`,
adding to the mean squared error (misadjustment: a smaller :math:`\alpha` adapts more slowly
and cancels better). A diverging filter
(too large :math:`\alpha`) yields inf/nan records rather than raising.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_int

_F64 = np.dtype(np.float64)  # the algorithms run in float64

__all__ = ["LMSRecord", "NoiseCancellation", "lms_filter", "noise_cancellation", "wiener_solution"]


@dataclass(frozen=True)
class LMSRecord:
    """Sample ``k`` (1-based): the weights ``w`` (R,) and bias ``b`` used for it, the filter
    output ``a``, the target ``t`` and the error ``e = t - a`` (the weights after the update are
    the next record's)."""

    k: int
    w: np.ndarray
    b: float
    a: float
    t: float
    e: float


def _taps(y: np.ndarray, R: int) -> np.ndarray:
    """p(k) for every k: (K, R), row k-1 = [y(k) y(k-1) ... y(k-R+1)], zeros before k = 1."""
    padded = np.concatenate([np.zeros(R - 1), y])  # (R-1+K,)
    return np.stack([padded[R - 1 - i : R - 1 - i + y.shape[0]] for i in range(R)], axis=1)


def lms_filter(
    y: Any, t: Any, n_taps: int, lr: float, bias: bool = False, w0: Any = None
) -> Iterator[LMSRecord]:
    """Run the LMS adaptive filter over the input ``y`` (K,) with targets ``t`` (K,).

    Parameters
    ----------
    y, t : array (K,)
        The signal the delay line reads and the desired output.
    n_taps : int
        :math:`R`, the taps :math:`y(k), \\dots, y(k-R+1)` (zero initial conditions).
    lr : float
        :math:`\\alpha` > 0.
    bias : bool
        Whether the neuron has (and adapts) a bias :math:`b` (else :math:`b = 0`).
    w0 : array (R,), optional
        Initial weights (zeros by default).

    Yields
    ------
    LMSRecord
        One per sample, in order.
    """
    y = check_array("y", y, ndim=1, dtype=_F64, layout="(K,)")
    t = check_array("t", t, ndim=1, dtype=_F64, layout="(K,)")
    if t.shape != y.shape:
        raise ValueError(f"t must have the shape of y {y.shape}, got {t.shape}")
    R = check_int("n_taps", n_taps, min_value=1)
    if isinstance(lr, bool) or not isinstance(lr, int | float) or not 0 < lr < np.inf:
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    w = np.zeros(R) if w0 is None else check_array("w0", w0, ndim=1, dtype=_F64).copy()
    if w.shape != (R,):
        raise ValueError(f"w0 must have shape ({R},), got {w.shape}")
    b = 0.0
    P = _taps(y, R)  # (K, R)
    for k in range(y.shape[0]):
        with np.errstate(over="ignore", invalid="ignore"):  # a too large lr diverges to inf
            a = float(w @ P[k] + b)  # a(k) = W p(k) + b
            e = float(t[k] - a)
        yield LMSRecord(k + 1, w.copy(), b, a, float(t[k]), e)
        with np.errstate(over="ignore", invalid="ignore"):
            w += 2.0 * lr * e * P[k]  # W(k+1) = W(k) + 2 alpha e(k) p(k)^T
            if bias:
                b += 2.0 * lr * e


def wiener_solution(y: Any, t: Any, n_taps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x_star (R,), R (R, R), h (R,))`` from sample averages over the whole signal:
    :math:`R = \\langle p p^T \\rangle`, :math:`h = \\langle t p \\rangle`, :math:`x^* = R^{-1}h`
    (no bias)."""
    y = check_array("y", y, ndim=1, dtype=_F64, layout="(K,)")
    t = check_array("t", t, ndim=1, dtype=_F64, layout="(K,)")
    P = _taps(y, check_int("n_taps", n_taps, min_value=1))  # (K, R)
    Rm = P.T @ P / P.shape[0]  # (R, R)
    h = P.T @ t / P.shape[0]  # (R,)
    return np.linalg.solve(Rm, h), Rm, h


@dataclass(frozen=True)
class NoiseCancellation:
    """The signals of the noise-cancellation setting, each (K,): the signal ``s`` (uniform on
    [-0.2, 0.2]), the noise source ``v`` :math:`= 1.2 \\sin(2\\pi k/3)` that the filter reads,
    the contaminating noise ``m`` :math:`= 0.12 \\sin(2\\pi k/3 + \\pi/2)`, and the measured
    ``t = s + m`` (the filter's target)."""

    s: np.ndarray
    v: np.ndarray
    m: np.ndarray
    t: np.ndarray


def noise_cancellation(
    n_samples: int, rng: np.random.Generator | int | None = 0
) -> NoiseCancellation:
    """``n_samples`` samples (k = 1..K) of the noise-cancellation setting."""
    K = check_int("n_samples", n_samples, min_value=1)
    k = np.arange(1, K + 1)  # (K,)
    s = as_generator(rng).uniform(-0.2, 0.2, K)  # (K,)
    v = 1.2 * np.sin(2 * np.pi * k / 3)
    m = 0.12 * np.sin(2 * np.pi * k / 3 + np.pi / 2)
    return NoiseCancellation(s, v, m, s + m)
