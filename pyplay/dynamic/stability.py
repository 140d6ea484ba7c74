r"""Stability and memory of a recurrent layer: the eigenvalues of :math:`LW^{1,1}`, the impulse
response, and the gradient through time ("learning long term dependencies" in lecture 8 of the NLP
course).

For the recurrent layer :math:`a^1(t) = f(IW^{1,1} p(t) + LW^{1,1} a^1(t-1))` with
:math:`a^1(0) = 0` and an impulse :math:`p(1) = 1`, :math:`p(t > 1) = 0`, a linear layer
(``purelin``) answers

.. math::

    a^1(t) = (LW^{1,1})^{t-1} IW^{1,1},

which decays to zero when every eigenvalue of :math:`LW^{1,1}` lies inside the unit circle
(spectral radius :math:`\rho < 1`), and grows without bound when one lies outside
(:math:`\rho > 1`: unstable). With the error only at the last step :math:`T`, BPTT's

.. math::

    \frac{\partial F}{\partial a^1(t)} = \frac{\partial^e F}{\partial a^1(t)}
        + [LW^{1,1}]^T \dot F(n^1(t+1))\, \frac{\partial F}{\partial a^1(t+1)}

gives :math:`\partial F / \partial a^1(t) = ([LW^{1,1}]^T)^{T-t}\, \partial^e F / \partial
a^1(T)` for a linear layer: the lecture's example, :math:`lw_{1,1} = 0.5`, has
:math:`0.5^{T-t}`. A ``tansig`` layer multiplies every step by :math:`\dot f = 1 - a^2 \le 1`,
so the gradient decays faster ("nonlinear transfer function increases decay"; the slide writes
the derivative as :math:`\dot f(n(t))`, this module evaluates it at :math:`n^1(t+1)`, the net
input that :math:`a^1(t)` feeds). The constant error carousel, :math:`LW^{1,1} = I` with a
linear transfer, keeps it constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import check_array, check_choice, check_int

_F64 = np.dtype(np.float64)  # the algorithms run in float64

__all__ = ["eigenvalues", "gradient_through_time", "impulse_response", "spectral_radius"]

_TRANSFERS = ("purelin", "tansig")


def _check_lw(LW: Any) -> np.ndarray:
    LW = check_array("LW", LW, dtype=_F64, layout="(S, S)")
    if LW.ndim == 0:
        LW = LW.reshape(1, 1)  # a scalar lw_{1,1}
    if LW.ndim != 2 or LW.shape[0] != LW.shape[1]:
        raise ValueError(f"LW must be a square (S, S) matrix or a number, got shape {LW.shape}")
    return LW


def eigenvalues(LW: Any) -> np.ndarray:
    """The eigenvalues (S,) of :math:`LW^{1,1}` (complex), largest modulus first."""
    lam = np.linalg.eigvals(_check_lw(LW))  # (S,)
    return lam[np.argsort(-np.abs(lam), kind="stable")]


def spectral_radius(LW: Any) -> float:
    """:math:`\\rho(LW^{1,1}) = \\max_i |\\lambda_i|`: < 1 stable, > 1 unstable."""
    return float(np.max(np.abs(np.linalg.eigvals(_check_lw(LW)))))


def _iw(IW: Any, S: int) -> np.ndarray:
    if IW is None:
        return np.ones(S)  # (S,)
    iw = check_array("IW", IW, dtype=_F64, layout="(S,)").reshape(-1)
    if iw.shape != (S,):
        raise ValueError(f"IW must have {S} entries (one input), got shape {iw.shape}")
    return iw


def impulse_response(LW: Any, T: int, IW: Any = None, transfer: str = "purelin") -> np.ndarray:
    """``a`` (T, S): :math:`a^1(1..T)` for an impulse at :math:`t = 1` through ``IW`` (S,)
    (ones by default), zero initial condition, no bias."""
    LW = _check_lw(LW)
    T = check_int("T", T, min_value=1)
    f = check_choice("transfer", transfer, _TRANSFERS)
    S = LW.shape[0]
    a = np.zeros((T, S))  # (T, S)
    prev = np.zeros(S)
    with np.errstate(over="ignore", invalid="ignore"):  # an unstable layer may overflow
        for t in range(T):
            n = LW @ prev + (_iw(IW, S) if t == 0 else 0.0)  # (S,) n^1(t)
            prev = np.tanh(n) if f == "tansig" else n
            a[t] = prev
    return a


def gradient_through_time(
    LW: Any, T: int, IW: Any = None, transfer: str = "purelin", dF: Any = None
) -> np.ndarray:
    """``g`` (T, S): :math:`\\partial F / \\partial a^1(t)`, t = 1..T, along the impulse
    response, when the error reaches the output only at :math:`T` with
    :math:`\\partial^e F / \\partial a^1(T)` = ``dF`` (S,) (ones by default)."""
    LW = _check_lw(LW)
    T = check_int("T", T, min_value=1)
    f = check_choice("transfer", transfer, _TRANSFERS)
    S = LW.shape[0]
    a = impulse_response(LW, T, IW, f)  # (T, S)
    g = np.zeros((T, S))  # (T, S)
    g[-1] = np.ones(S) if dF is None else check_array("dF", dF, dtype=_F64).reshape(S)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T - 2, -1, -1):
            fdot = 1.0 - a[t + 1] ** 2 if f == "tansig" else np.ones(S)  # f'(n^1(t+1))
            g[t] = LW.T @ (fdot * g[t + 1])  # (S,)
    return g
