r"""Transfer functions by name, as in Hagan's *Neural Network Design* and MATLAB's toolbox.

Each layer ``m`` of a network applies its transfer function to its net input,
:math:`a^m = f^m(n^m)`. Backpropagation needs the derivative, written in the book as the
matrix :math:`\dot F^m(n^m)`, diagonal for the elementwise functions:

.. math::

    \dot F^m(n^m) = \operatorname{diag}\bigl(\dot f^m(n^m_1), \dots, \dot f^m(n^m_{S^m})\bigr),
    \qquad \frac{\partial L}{\partial n^m} = \dot F^m(n^m)^\top \frac{\partial L}{\partial a^m}.

============  ==========================================  =====================================
name          :math:`a = f(n)`                            derivative, from :math:`a` (or n)
============  ==========================================  =====================================
``tansig``    :math:`\tanh n = 2 / (1 + e^{-2n}) - 1`     :math:`\dot f = 1 - a^2`
``logsig``    :math:`1 / (1 + e^{-n})`                    :math:`\dot f = a (1 - a)`
``purelin``   :math:`n`                                   :math:`\dot f = 1`
``poslin``    :math:`\max(0, n)`                          :math:`\dot f = [n > 0]`
``softmax``   :math:`e^{n_i} / \sum_j e^{n_j}`            :math:`\dot F = \operatorname{diag}(a)
                                                          - a a^\top` (not diagonal)
============  ==========================================  =====================================

``softmax`` acts on the last axis (the ``S^m`` neurons of a layer); the others elementwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pyplay._checks import check_array, check_choice
from pyplay.nn._ops import sigmoid

__all__ = [
    "TRANSFERS",
    "Transfer",
    "get_transfer",
    "logsig",
    "poslin",
    "purelin",
    "softmax",
    "tansig",
]


def tansig(n: np.ndarray) -> np.ndarray:
    """Hyperbolic tangent sigmoid, :math:`a = 2 / (1 + e^{-2n}) - 1 = \\tanh n`."""
    return np.tanh(n)


def logsig(n: np.ndarray) -> np.ndarray:
    """Log-sigmoid, :math:`a = 1 / (1 + e^{-n})`, computed without overflow."""
    return sigmoid(np.asarray(n))


def purelin(n: np.ndarray) -> np.ndarray:
    """Linear, :math:`a = n` (a copy, so that callers may change it in place)."""
    return np.array(n, copy=True)


def poslin(n: np.ndarray) -> np.ndarray:
    """Positive linear (ReLU), :math:`a = \\max(0, n)`."""
    return np.maximum(n, 0.0)


def softmax(n: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, :math:`a_i = e^{n_i} / \\sum_j e^{n_j}`, shifted by
    :math:`\\max_j n_j` so that ``exp`` never overflows."""
    z = np.exp(n - np.max(n, axis=-1, keepdims=True))  # same shape as n
    z /= np.sum(z, axis=-1, keepdims=True)
    return z


def _d_tansig(n: np.ndarray, a: np.ndarray) -> np.ndarray:
    return 1.0 - a * a


def _d_logsig(n: np.ndarray, a: np.ndarray) -> np.ndarray:
    return a * (1.0 - a)


def _d_purelin(n: np.ndarray, a: np.ndarray) -> np.ndarray:
    return np.ones_like(n)


def _d_poslin(n: np.ndarray, a: np.ndarray) -> np.ndarray:
    return (n > 0).astype(n.dtype)


@dataclass(frozen=True)
class Transfer:
    """A transfer function with its derivative.

    Attributes
    ----------
    name : str
        The toolbox name (``"tansig"``, ...).
    elementwise : bool
        False only for ``softmax``, whose :math:`\\dot F` is a full matrix.
    f : callable
        :math:`a = f(n)`, any shape ``(..., S)``.
    derivative : callable or None
        The elementwise :math:`\\dot f(n)`, from ``(n, a)``; None for softmax.
    """

    name: str
    elementwise: bool
    f: Callable[[np.ndarray], np.ndarray]
    derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None

    def __call__(self, n: np.ndarray) -> np.ndarray:
        return self.f(n)

    def backward(self, da: np.ndarray, n: np.ndarray, a: np.ndarray) -> np.ndarray:
        """:math:`\\partial L / \\partial n = \\dot F(n)^\\top\\, \\partial L / \\partial a`.

        ``da``, ``n`` and ``a = f(n)`` have the same shape ``(..., S)``. Softmax:
        :math:`\\partial L / \\partial n = a \\odot (\\partial L / \\partial a -
        \\langle \\partial L / \\partial a, a \\rangle)`.
        """
        if self.derivative is not None:
            return da * self.derivative(n, a)
        inner = np.sum(da * a, axis=-1, keepdims=True)  # (..., 1)
        return a * (da - inner)

    def jacobian(self, n: np.ndarray) -> np.ndarray:
        """The book's :math:`\\dot F(n)`: ``(..., S, S)`` for ``n`` of shape ``(..., S)``."""
        n = check_array("n", n)
        if n.ndim < 1:
            raise ValueError(f"n must have at least one axis (the neurons), got shape {n.shape}")
        a = self.f(n)
        if self.derivative is not None:
            d = self.derivative(n, a)  # (..., S)
            return d[..., :, None] * np.eye(n.shape[-1], dtype=n.dtype)  # (..., S, S)
        outer = a[..., :, None] * a[..., None, :]  # (..., S, S)
        return a[..., :, None] * np.eye(n.shape[-1], dtype=n.dtype) - outer


TRANSFERS: dict[str, Transfer] = {
    "tansig": Transfer("tansig", True, tansig, _d_tansig),
    "logsig": Transfer("logsig", True, logsig, _d_logsig),
    "purelin": Transfer("purelin", True, purelin, _d_purelin),
    "poslin": Transfer("poslin", True, poslin, _d_poslin),
    "softmax": Transfer("softmax", False, softmax, None),
}


def get_transfer(name: str, argument: str = "transfer") -> Transfer:
    """The :class:`Transfer` called ``name``; ``argument`` names the field in messages."""
    return TRANSFERS[check_choice(argument, name, tuple(TRANSFERS))]
