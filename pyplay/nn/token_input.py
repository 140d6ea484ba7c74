r"""Token ids read through an embedding table, as a recurrent stack's first input.

A character model's first recurrent layer reads embedded tokens :math:`e_t = E[x_t]` and
projects every one of them, :math:`XP_t = W_{ih} e_t + b`. Since :math:`e_t` is a row of the
table, so is its projection: with the table :math:`P = E W_{ih}^\top + b` (V, G),

.. math::

    XP_t = P[x_t], \qquad
    \frac{\partial L}{\partial P_v} = \sum_{t: x_t = v} \frac{\partial L}{\partial XP_t}, \qquad
    \frac{\partial L}{\partial W_{ih}} = \Big(\frac{\partial L}{\partial P}\Big)^{\!\top} E,
    \qquad
    \frac{\partial L}{\partial E} = \frac{\partial L}{\partial P} W_{ih} .

The products then have V rows instead of T * B (32 against 1,024 in the benchmark's character
model): :class:`~pyplay.nn.recurrent.Recurrent` projects a :class:`TokenInput` this way
(:func:`project`, :func:`input_gradients`), and :class:`~pyplay.models.SequenceModel` hands
one to it when nothing stands between its embedding and its recurrent stack. The result is
the same sum as embedding first and projecting after (up to rounding); the plain two-step
version is what the gradient tests compare against. What the shortcut does not form is
:math:`\partial L / \partial e_t`, the gradient at each embedded input: a caller that wants
it passes the embedded inputs themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyplay._checks import check_array, check_indices
from pyplay.nn._ops import matmul, scatter_rows
from pyplay.nn.sequences import PaddedBatch

__all__ = ["TokenInput", "input_gradients", "project", "reversed_input"]


@dataclass(frozen=True)
class TokenInput:
    """Token ids and the embedding table they index, standing for the rows ``weight[ids]``.

    ``ids`` is (B, T) batch-first as a caller passes it, or (T, B) inside
    :class:`~pyplay.nn.recurrent.Recurrent` (:meth:`time_major`); ``weight`` is (V, E).
    """

    ids: np.ndarray
    weight: np.ndarray

    def __post_init__(self) -> None:
        weight = check_array("weight", self.weight, ndim=2, kind="f", layout="(V, E)")
        ids = check_indices("ids", self.ids, weight.shape[0], ndim=2)  # (B, T) or (T, B)
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "weight", weight)

    @property
    def shape(self) -> tuple[int, int, int]:
        """The shape of the embedded input it stands for: ``ids.shape + (E,)``."""
        return (*self.ids.shape, self.weight.shape[1])

    def time_major(self) -> TokenInput:
        """The same tokens with ``ids`` (B, T) -> (T, B)."""
        return TokenInput(np.ascontiguousarray(self.ids.T), self.weight)  # ids (T, B)

    def with_ids(self, ids: np.ndarray) -> TokenInput:
        """The same table read at other ``ids`` (a reversed reading order, say)."""
        return TokenInput(ids, self.weight)


def project(X: np.ndarray | TokenInput, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``XP = X W^T + b`` (T*B, G) of an input ``X`` (T, B, F) or of tokens (ids (T, B)),
    the latter as rows of the projected table :math:`P = E W^\\top + b` (V, G)."""
    if isinstance(X, TokenInput):
        table = matmul(X.weight, W.T)  # (V, G)
        table += b
        return table[X.ids.reshape(-1)]  # (T*B, G)
    T, B, _ = X.shape
    XP = matmul(X.reshape(T * B, -1), W.T)  # (T*B, G)
    XP += b
    return XP


def input_gradients(
    X: np.ndarray | TokenInput, dXP: np.ndarray, W: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(dW, dX)`` from ``dXP`` (T*B, G) = dL/dXP and the input ``X`` of :func:`project`.

    For an input (T, B, F): ``dW = dXP^T X`` (G, F) and ``dX = dXP W`` (T, B, F). For tokens:
    ``dP`` (V, G) is ``dXP`` summed per token, ``dW = dP^T E`` (G, E) and ``dX = dP W`` (V, E),
    the gradient of the embedding table.
    """
    if isinstance(X, TokenInput):
        V = X.weight.shape[0]
        dP = scatter_rows(dXP, X.ids.reshape(-1), V)  # (V, G)
        return matmul(dP.T, X.weight), matmul(dP, W)  # (G, E), (V, E)
    T, B, _ = X.shape
    dW = matmul(dXP.T, X.reshape(T * B, -1))  # (G, F)
    return dW, matmul(dXP, W).reshape(T, B, -1)  # (T, B, F)


def reversed_input(X: np.ndarray | TokenInput, batch: PaddedBatch) -> np.ndarray | TokenInput:
    """``X`` in the reverse direction's reading order: (T, B, F), or tokens with ids (T, B),
    each sequence reversed within its length."""
    if isinstance(X, TokenInput):
        return X.with_ids(np.ascontiguousarray(batch.reverse(X.ids)))  # ids (T, B)
    return np.ascontiguousarray(batch.reverse(X))  # (T, B, F)
