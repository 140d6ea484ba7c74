r"""The attention layers of Hagan's seq2seq (eq. 6.9-6.18), one decoder step, batched.

The memory is the book's matrix :math:`A^1(T) = [a^1(T)\; a^1(T-1)\; \cdots\; a^1(T-D+1)]`
(:math:`S^1 \times D`, eq. 6.8: the tapped delay line of encoder states, Hagan's
:class:`~pyplay.dynamic.tdl.TDL_hstack`, read at the source's last step :math:`T`, which
:func:`delay_line` gathers directly); the query is the decoder's **previous** output
:math:`a^2(t-1)` (:math:`S^2 = S^1`). The three forms:

``"dot"`` (eq. 6.9-6.11, Figure 6.5)
    :math:`n^4(t) = [A^1(T)]^T a^2(t-1)`, :math:`a^4(t) = \mathrm{softmax}(n^4(t))`,
    :math:`a^5(t) = A^1(T)\, a^4(t)`.
``"general"`` (eq. 6.12, Figure 6.7)
    :math:`n^4(t) = [A^1(T)]^T W_a\, a^2(t-1)`, then as "dot". The book asks for a positive
    definite :math:`W_a`; it is kept so by construction, :math:`W_a = L_a L_a^T + \epsilon I`
    with the trained parameter ``"L_a"`` (:math:`S^1 \times S^1`) and
    :math:`\epsilon` = :data:`EPS_PD` (every eigenvalue :math:`\ge \epsilon`, whatever the
    training does).
``"concat"`` (eq. 6.13-6.18, Figure 6.8)
    :math:`\bar A^{1,2}(t) = [A^1(T);\; a^2(t-1) \cdots a^2(t-1)]` (the query repeated under
    every column, NumPy broadcasting), :math:`A^4(t) = \mathrm{tansig}(LW^{4,2} \bar A^{1,2}(t)
    + b^4)` (:math:`S^4 \times D`), :math:`N^5(t) = LW^{5,4} A^4(t) + b^5` (:math:`1 \times D`),
    :math:`a^5(t) = \mathrm{softmax}([N^5(t)]^T)`, :math:`a^6(t) = A^1(T)\, a^5(t)`.
    The book names one matrix :math:`LW^{4,2}` (:math:`S^4 \times (S^1 + S^2)`) for the stacked
    input; so does this code. :math:`b^5` adds the same number to every score, which the softmax
    cancels: its gradient is exactly zero (kept because the book writes it).

A choice the book leaves open: when :math:`D > T` the last :math:`D - T` columns of
:math:`A^1(T)` are the delay line's initial conditions (zero vectors), not encoder states; they
are masked out of the softmax (weight exactly 0), so the weights spread over real states only.
Here ``n`` is the score net input (:math:`n^4` or :math:`N^5`), ``alpha`` the weights
(:math:`a^4` or :math:`a^5`) and ``ctx`` the context (:math:`a^5` or :math:`a^6`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array
from pyplay.nn.sdpa import masked_softmax

__all__ = [
    "ATTENTION_FORMS",
    "EPS_PD",
    "AttentionStepCache",
    "attend",
    "attend_backward",
    "attention_params",
    "delay_line",
    "delay_line_backward",
    "general_weight",
]

ATTENTION_FORMS = ("dot", "general", "concat")
EPS_PD = 1e-3  # W_a = L_a L_a^T + EPS_PD I: the smallest eigenvalue W_a can have


def _taps(lengths: np.ndarray, D: int) -> tuple[np.ndarray, np.ndarray]:
    """The source index of every column, :math:`T - 1 - k` (B, D), and whether it is a real
    state (index >= 0, ``keep``), for sources of ``lengths`` (B,)."""
    idx = lengths[:, None] - 1 - np.arange(D)[None, :]  # (B, D)
    return idx, idx >= 0


def delay_line(a1: np.ndarray, lengths: np.ndarray, D: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The memory :math:`A^1(T) = [a^1(T)\; a^1(T-1)\; \cdots\; a^1(T-D+1)]` (eq. 6.8).

    Parameters
    ----------
    a1 : ndarray (B, S, S1)
        The encoder outputs :math:`a^1(1..S)`.
    lengths : ndarray of int (B,)
        Each source's length :math:`T` (at least 1).
    D : int
        The columns of the delay line.

    Returns
    -------
    A : ndarray (B, S1, D)
        Column ``k`` is :math:`a^1(T - k)`; zero (the delay line's initial condition) where
        :math:`T - k < 1`. Equal to ``TDL_hstack(S1, D).forward(a1)[b, T - 1]`` of
        :mod:`pyplay.dynamic.tdl` (``tests/dynamic/test_dynamic_textbook.py``).
    keep : ndarray of bool (B, D)
        Which columns are encoder states.
    """
    idx, keep = _taps(lengths, D)
    rows = np.arange(a1.shape[0])[:, None]  # (B, 1)
    A = a1[rows, np.maximum(idx, 0)] * keep[:, :, None]  # (B, D, S1)
    return A.transpose(0, 2, 1), keep  # (B, S1, D)


def delay_line_backward(dA: np.ndarray, lengths: np.ndarray, S: int) -> np.ndarray:
    """The gradient (B, S, S1) of :func:`delay_line`'s ``a1`` from ``dA`` (B, S1, D): column
    ``k`` goes back to step :math:`T - k`."""
    B, H, D = dA.shape
    idx, keep = _taps(lengths, D)
    da1 = np.zeros((B, S, H), dtype=dA.dtype)  # (B, S, S1)
    b, k = np.nonzero(keep)
    np.add.at(da1, (b, idx[b, k]), dA[b, :, k])
    return da1


def general_weight(L: np.ndarray) -> np.ndarray:
    """:math:`W_a = L_a L_a^T + \\epsilon I` (S1, S1), positive definite for every ``L``."""
    return L @ L.T + EPS_PD * np.eye(L.shape[0], dtype=L.dtype)  # (S1, S1)


def attention_params(
    form: str, S1: int, S4: int, uniform: Any, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Fresh parameters of ``form``: ``uniform(shape, fan_in)`` draws
    :math:`U(\\pm 1/\\sqrt{fan_{in}})`. "general" starts near the dot form,
    :math:`L_a = I + U`, so :math:`W_a \\approx I`."""
    if form == "general":
        return {"L_a": np.eye(S1, dtype=dtype) + uniform((S1, S1), S1)}
    if form == "concat":
        return {
            "LW4,2": uniform((S4, 2 * S1), 2 * S1),
            "b4": uniform((S4,), 2 * S1),
            "LW5,4": uniform((1, S4), S4),
            "b5": uniform((1,), S4),
        }
    return {}


@dataclass(frozen=True)
class AttentionStepCache:
    """One step's forward values, for :func:`attend_backward`."""

    A: np.ndarray  # (B, S1, D) A^1(T)
    q: np.ndarray  # (B, S2) a^2(t-1)
    alpha: np.ndarray  # (B, D) a^4(t) or a^5(t)
    m: np.ndarray | None  # (B, S1) W_a a^2(t-1) ("general")
    Abar: np.ndarray | None  # (B, S1 + S2, D) ("concat")
    Z: np.ndarray | None  # (B, S4, D) A^4(t) ("concat")
    pinned: bool = False  # the weights were given (``attend``'s ``weights``), not the softmax's


def attend(
    form: str,
    params: dict[str, np.ndarray],
    A: np.ndarray,
    keep: np.ndarray,
    q: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, AttentionStepCache]:
    """``(ctx (B, S1), alpha (B, D), n (B, D), cache)`` for the memory ``A`` (B, S1, D), the
    real columns ``keep`` (B, D) and the queries ``q`` = :math:`a^2(t-1)` (B, S2).

    ``weights`` (B, D), if given, pins the attention weights (:math:`a^4(t)`, or :math:`a^5(t)`
    for "concat") to these values instead of the softmax of the scores, which are still
    computed and returned as ``n``: the context is then :math:`A^1(T)` times the given
    weights (eq. 6.11 / 6.18). One-hot on column 0 gives :math:`a^1(T)`, the plain seq2seq's
    context (eq. 6.10-6.11, :mod:`pyplay.models.textbook.pinned`). With pinned weights nothing
    flows back into the scores (:func:`attend_backward`).
    """
    m = Abar = Z = None
    if form == "dot":
        n = np.einsum("bsd,bs->bd", A, q)  # (B, D) n^4 = A^T a^2(t-1)
    elif form == "general":
        m = q @ general_weight(params["L_a"]).T  # (B, S1) W_a a^2(t-1)
        n = np.einsum("bsd,bs->bd", A, m)  # (B, D) n^4 = A^T W_a a^2(t-1)
    else:
        B, _, D = A.shape
        Q = np.broadcast_to(q[:, :, None], (B, q.shape[1], D))  # (B, S2, D) repeated columns
        Abar = np.concatenate([A, Q], axis=1)  # (B, S1 + S2, D) eq. 6.13
        net4 = params["LW4,2"] @ Abar + params["b4"][:, None]  # (B, S4, D)
        Z = np.tanh(net4)  # (B, S4, D) A^4(t), eq. 6.15
        n = (params["LW5,4"] @ Z)[:, 0] + params["b5"][0]  # (B, D) [N^5(t)]^T, eq. 6.16
    if weights is None:
        alpha = masked_softmax(n, keep)  # (B, D) eq. 6.10 / 6.17
    else:
        alpha = check_array("weights", weights, ndim=2, dtype=A.dtype, layout="(B, D)")
        if alpha.shape != n.shape:
            raise ValueError(f"weights must have shape (B, D) = {n.shape}, got {alpha.shape}")
    ctx = np.einsum("bsd,bd->bs", A, alpha)  # (B, S1) eq. 6.11 / 6.18
    return ctx, alpha, n, AttentionStepCache(A, q, alpha, m, Abar, Z, weights is not None)


def attend_backward(
    form: str, params: dict[str, np.ndarray], dctx: np.ndarray, cache: AttentionStepCache
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    r"""``(dA (B, S1, D), dq (B, S2), grads)`` from d(loss)/d(ctx) (B, S1).

    .. math::

        \delta A = \delta c\, \alpha^T, \quad \delta\alpha = A^T \delta c, \quad
        \delta n = \alpha \odot (\delta\alpha - \alpha^T \delta\alpha),

    then through the score (:math:`\delta n = 0` when the weights were pinned: they do not
    depend on the score); for "general", :math:`G = \sum_b (A\,\delta n)\, q^T` is
    :math:`\partial L / \partial W_a` and :math:`\partial L / \partial L_a = (G + G^T) L_a`.
    """
    A, q, alpha = cache.A, cache.q, cache.alpha
    dA = dctx[:, :, None] * alpha[:, None, :]  # (B, S1, D)
    dal = np.einsum("bsd,bs->bd", A, dctx)  # (B, D)
    dn = alpha * (dal - (dal * alpha).sum(axis=1, keepdims=True))  # (B, D) softmax adjoint
    if cache.pinned:
        dn = np.zeros_like(dn)  # (B, D) given weights: the score does not reach the loss
    grads: dict[str, np.ndarray] = {}
    if form == "dot":
        dq = np.einsum("bsd,bd->bs", A, dn)  # (B, S2)
        dA += q[:, :, None] * dn[:, None, :]
    elif form == "general":
        assert cache.m is not None
        La = params["L_a"]
        dm = np.einsum("bsd,bd->bs", A, dn)  # (B, S1)
        dA += cache.m[:, :, None] * dn[:, None, :]
        G = dm.T @ q  # (S1, S2) dL/dW_a
        grads["L_a"] = (G + G.T) @ La  # (S1, S1)
        dq = dm @ general_weight(La)  # (B, S2)
    else:
        assert cache.Abar is not None and cache.Z is not None
        Z, S1 = cache.Z, A.shape[1]
        grads["LW5,4"] = (Z @ dn[:, :, None]).sum(axis=0).T  # (1, S4)
        grads["b5"] = np.array([dn.sum()], dtype=dn.dtype)  # (1,) zero: softmax is shift-free
        dnet4 = params["LW5,4"][0][None, :, None] * dn[:, None, :] * (1.0 - Z * Z)  # (B,S4,D)
        grads["LW4,2"] = (dnet4 @ cache.Abar.transpose(0, 2, 1)).sum(axis=0)  # (S4, S1+S2)
        grads["b4"] = dnet4.sum(axis=(0, 2))  # (S4,)
        dAbar = params["LW4,2"].T @ dnet4  # (B, S1 + S2, D)
        dA += dAbar[:, :S1]
        dq = dAbar[:, S1:].sum(axis=2)  # (B, S2) the repeated query's columns add up
    return dA, dq, grads
