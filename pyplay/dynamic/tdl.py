r"""Delays and tapped delay lines, the memory of a dynamic network (Hagan, ch. 14).

Time runs over the steps :math:`t = 1, \dots, T` of a sequence (index ``t - 1`` in the arrays).
A delay needs the values *before* the sequence starts, the **initial conditions**: a block of
``D`` steps :math:`u(1 - D), \dots, u(0)`, stored **oldest first** (MATLAB's ``Xi``), so that
``u0[:, -1]`` is :math:`u(0)`. Zeros when not given.

Delay
    :math:`a(t) = u(t - 1)`, with :math:`a(1) = u(0)` the initial condition.

Tapped delay line (TDL)
    For a delay set :math:`\{d_1 < \dots < d_K\}` (``0`` allowed: the undelayed tap), the taps
    :math:`u(t - d_1), \dots, u(t - d_K)`, needing :math:`D = d_K` initial conditions.

Horizontally stacked TDL (TDL_hstack, eq. 6.2)
    The taps of delays :math:`0, 1, \dots, D - 1` side by side as the columns of an
    :math:`S \times D` matrix :math:`[u(t)\; u(t-1)\; \cdots\; u(t - D + 1)]`; its columns
    stacked (``vec``) are what a layer reads with one weight matrix
    :math:`[IW(0)\; IW(1)\; \cdots\; IW(D-1)]` (the MATLAB layout of ``net.IW``).

Every operator here is linear, so its backward is the adjoint and needs no cache:
:math:`\partial L / \partial u(t) = \sum_k \partial L / \partial \text{tap}_k(t + d_k)`, where
taps that would read a time :math:`\le 0` send their gradient to the initial conditions.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int, check_shape
from pyplay.limits import MAX_DELAY

__all__ = ["TDL", "Delay", "TDL_hstack", "check_delays"]


def check_delays(name: str, delays: Any) -> tuple[int, ...]:
    """A non-empty, strictly increasing sequence of integer delays in 0..MAX_DELAY
    (:data:`pyplay.limits.MAX_DELAY`: a network keeps that many past steps of each sequence)."""
    if isinstance(delays, str | bytes) or not isinstance(delays, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a list of non-negative integers such as [0, 1, 2], got "
            f"{delays!r} ({type(delays).__name__})"
        )
    out = tuple(
        check_int(f"{name}[{k}]", d, min_value=0, max_value=MAX_DELAY) for k, d in enumerate(delays)
    )
    if not out:
        raise ValueError(f"{name} must hold at least one delay, got []")
    if any(b <= a for a, b in itertools.pairwise(out)):
        raise ValueError(f"{name} must be strictly increasing (no repeats), got {list(out)}")
    return out


def _history(
    u: Any, u0: Any, size: int, D: int, dtype: np.dtype | None = None
) -> tuple[np.ndarray, int]:
    """``[u0; u]`` along time: (B, D + T, S), after checking both."""
    u = check_array("u", u, ndim=3, dtype=dtype, layout="(B, T, S)")
    B, T, S = u.shape
    check_shape("u", u, (None, None, size), "(B, T, S)")
    if T < 1:
        raise ValueError(f"u must have at least one time step, got T={T}")
    U = np.zeros((B, D + T, S), dtype=u.dtype)  # (B, D+T, S)
    if u0 is not None:
        u0 = check_array("u0", u0, ndim=3, dtype=u.dtype, layout="(B, D, S)")
        check_shape("u0", u0, (B, D, S), "(B, D, S)")
        U[:, :D] = u0
    U[:, D:] = u
    return U, T


class Delay:
    """One unit delay :math:`a(t) = u(t - 1)` on a signal of ``size`` elements.

    ``forward(u, u0)`` with ``u`` (B, T, S) and the initial condition ``u0`` :math:`= u(0)`
    (B, S) (zeros if None) returns ``a`` (B, T, S); ``backward(da)`` returns ``du`` (B, T, S)
    and ``du0`` (B, S): :math:`\\partial L/\\partial u(t) = \\partial L/\\partial a(t+1)`, the last
    input gets none, and :math:`\\partial L/\\partial u(0) = \\partial L/\\partial a(1)`.
    """

    def __init__(self, size: int) -> None:
        self.size = check_int("size", size, min_value=1)

    def forward(self, u: Any, u0: Any = None) -> np.ndarray:
        """:math:`a(t) = u(t - 1)`, :math:`t = 1..T`."""
        u = check_array("u", u, ndim=3, layout="(B, T, S)")
        if u0 is not None:
            u0 = check_array("u0", u0, ndim=2, layout="(B, S)")
            check_shape("u0", u0, (u.shape[0], self.size), "(B, S)")
            u0 = u0[:, None, :]  # (B, 1, S)
        U, T = _history(u, u0, self.size, 1)  # (B, 1+T, S)
        return U[:, :T].copy()  # (B, T, S)

    def backward(self, da: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(du, du0)`` from ``da`` (B, T, S)."""
        da = check_array("da", da, ndim=3, layout="(B, T, S)")
        check_shape("da", da, (None, None, self.size), "(B, T, S)")
        du = np.zeros_like(da)  # (B, T, S)
        du[:, :-1] = da[:, 1:]
        return du, da[:, 0].copy()  # (B, T, S), (B, S)


class TDL:
    """Tapped delay line with delays ``delays`` on a signal of ``size`` elements.

    Parameters
    ----------
    size : int
        :math:`S`, elements of the delayed signal.
    delays : sequence of int
        Strictly increasing, non-negative: :math:`d_1 < \\dots < d_K`.

    Attributes
    ----------
    D : int
        :math:`d_K`, the number of initial conditions needed.
    """

    def __init__(self, size: int, delays: Sequence[int] = (0, 1)) -> None:
        self.size = check_int("size", size, min_value=1)
        self.delays = check_delays("delays", delays)
        self.D = self.delays[-1]

    def forward(self, u: Any, u0: Any = None) -> np.ndarray:
        """The taps: ``taps[:, t-1, k]`` :math:`= u(t - d_k)`.

        Parameters
        ----------
        u : array (B, T, S)
        u0 : array (B, D, S), optional
            :math:`u(1-D), \\dots, u(0)`, oldest first (zeros if None).

        Returns
        -------
        taps : array (B, T, K, S)
        """
        U, T = _history(u, u0, self.size, self.D)  # (B, D+T, S)
        D = self.D
        return np.stack([U[:, D - d : D - d + T] for d in self.delays], axis=2)  # (B, T, K, S)

    def backward(self, dtaps: Any) -> tuple[np.ndarray, np.ndarray]:
        """The adjoint: ``(du (B, T, S), du0 (B, D, S))`` from ``dtaps`` (B, T, K, S)."""
        dtaps = check_array("dtaps", dtaps, ndim=4, layout="(B, T, K, S)")
        check_shape("dtaps", dtaps, (None, None, len(self.delays), self.size), "(B, T, K, S)")
        B, T, _, S = dtaps.shape
        D = self.D
        dU = np.zeros((B, D + T, S), dtype=dtaps.dtype)  # (B, D+T, S)
        for k, d in enumerate(self.delays):
            dU[:, D - d : D - d + T] += dtaps[:, :, k]
        return dU[:, D:], dU[:, :D]  # (B, T, S), (B, D, S)

    def next_initial(self, u: Any, u0: Any = None) -> np.ndarray:
        """The initial conditions (B, D, S) that continue the sequence after ``u``."""
        U, T = _history(u, u0, self.size, self.D)  # (B, D+T, S)
        return U[:, T:].copy()  # (B, D, S)


class TDL_hstack:  # the textbook's name, not CapWords
    r"""The ``D`` taps side by side as the book's :math:`S \times D` matrix (eq. 6.2):

    .. math::

        A(t) = [u(t)\; u(t-1)\; \cdots\; u(t-D+1)],

    one :math:`S \times 1` vector in, one :math:`S \times D` matrix out (:math:`D - 1` delays).
    ``forward(u, u0)`` with ``u`` (B, T, S) and ``u0`` (B, D - 1, S) returns ``A`` (B, T, S, D),
    where ``A[:, t-1, :, k]`` :math:`= u(t - k)` (column ``k + 1`` of the book's matrix).
    :meth:`vec` stacks the columns into one vector (B, T, D*S), :math:`[u(t); u(t-1); \dots]`,
    so that a weight matrix :math:`W = [W(0)\; W(1)\; \cdots\; W(D-1)]` (S', D*S) gives
    :math:`W\, \mathrm{vec}(A(t)) = \sum_k W(k)\, u(t - k)` in one product.
    """

    def __init__(self, size: int, D: int) -> None:
        self.size = check_int("size", size, min_value=1)
        self.D = check_int("D", D, min_value=1)
        self._tdl = TDL(self.size, tuple(range(self.D)))

    def forward(self, u: Any, u0: Any = None) -> np.ndarray:
        """``A`` (B, T, S, D) from ``u`` (B, T, S) and ``u0`` (B, D-1, S)."""
        taps = self._tdl.forward(u, u0)  # (B, T, D, S)
        return taps.transpose(0, 1, 3, 2)  # (B, T, S, D) columns u(t), u(t-1), ...

    def backward(self, dA: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(du (B, T, S), du0 (B, D-1, S))`` from ``dA`` (B, T, S, D)."""
        dA = check_array("dA", dA, ndim=4, layout="(B, T, S, D)")
        check_shape("dA", dA, (None, None, self.size, self.D), "(B, T, S, D)")
        return self._tdl.backward(dA.transpose(0, 1, 3, 2))  # (B, T, D, S) in

    @staticmethod
    def vec(A: Any) -> np.ndarray:
        r"""The columns of ``A`` (..., S, D) stacked into one vector (..., D*S): MATLAB's
        ``A(:)``, :math:`[u(t); u(t-1); \dots; u(t-D+1)]`."""
        A = np.asarray(A)
        return np.swapaxes(A, -1, -2).reshape(*A.shape[:-2], -1)  # (..., D*S)

    def next_initial(self, u: Any, u0: Any = None) -> np.ndarray:
        """The initial conditions (B, D-1, S) that continue the sequence after ``u``."""
        return self._tdl.next_initial(u, u0)
