r"""The pieces shared by the memory nets: the controller's LSTM step, content addressing, the
soft read and the two write rules, each as a forward function and its hand-written backward.

Content addressing (Graves et al. 2014, NTM; 2016, DNC). A head emits a key :math:`k` (W,) and
a raw strength :math:`\hat\beta`; over the N cells :math:`M_j` (W,) of the memory

.. math::

    \beta = 1 + \mathrm{softplus}(\hat\beta), \qquad
    K_j = \frac{k \cdot M_j}{\lVert k \rVert_\epsilon \, \lVert M_j \rVert_\epsilon}, \qquad
    w_j = \frac{\exp(\beta K_j)}{\sum_i \exp(\beta K_i)},

with :math:`\lVert a \rVert_\epsilon = \sqrt{a \cdot a + \epsilon}` (a smooth norm: cosine
similarity that stays differentiable at zero). Reading gives :math:`r = \sum_j w_j M_j`; writing a
vector :math:`v` with weights :math:`w` either overwrites or adds:

.. math::

    \text{overwrite: } M_j \leftarrow (1 - w_j) M_j + w_j v, \qquad
    \text{residual: } M_j \leftarrow M_j + w_j v .

Everything is batched: keys (B, W), memories (B, N, W), weights (B, N).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "EPS",
    "KEY_FUNCTIONS",
    "UPDATES",
    "Address",
    "LSTMStep",
    "address",
    "address_backward",
    "cell_keys",
    "cell_keys_backward",
    "lstm_step",
    "lstm_step_backward",
    "oneplus",
    "sigmoid",
    "write",
    "write_backward",
]

EPS = 1e-6
UPDATES = ("overwrite", "residual")
KEY_FUNCTIONS = ("identity", "linear")  # the key of cell j: M_j itself, or a learned K M_j


def sigmoid(a: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow for large negative inputs."""
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)


def oneplus(a: np.ndarray) -> np.ndarray:
    """:math:`1 + \\log(1 + e^a)`, the key strength (>= 1)."""
    return (1.0 + np.logaddexp(0.0, a)).astype(a.dtype, copy=False)


# ---------------------------------------------------------------------- controller
@dataclass(frozen=True)
class LSTMStep:
    """One LSTM step's saved values: input, previous state, gates (i, f, g, o), cell."""

    u: np.ndarray  # (B, F') the step's input
    h_prev: np.ndarray  # (B, H)
    c_prev: np.ndarray  # (B, H)
    gates: np.ndarray  # (B, 4, H) i, f, g, o after their nonlinearities
    tanh_c: np.ndarray  # (B, H)


def lstm_step(
    u: np.ndarray,
    h_prev: np.ndarray,
    c_prev: np.ndarray,
    W_ih: np.ndarray,
    W_hh: np.ndarray,
    b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, LSTMStep]:
    r"""One LSTM step (gate rows i, f, g, o as in PyTorch):
    :math:`a = W_{ih} u + W_{hh} h_{t-1} + b`, :math:`c_t = f c_{t-1} + i g`,
    :math:`h_t = o \tanh c_t`. Returns ``h_t, c_t`` (B, H) and the saved values."""
    B, H = h_prev.shape
    a = (u @ W_ih.T + h_prev @ W_hh.T + b).reshape(B, 4, H)  # (B, 4H) -> (B, 4, H)
    gates = np.empty_like(a)
    gates[:, [0, 1, 3]] = sigmoid(a[:, [0, 1, 3]])  # i, f, o
    gates[:, 2] = np.tanh(a[:, 2])  # g
    i, f, g, o = gates[:, 0], gates[:, 1], gates[:, 2], gates[:, 3]  # (B, H) each
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    return o * tanh_c, c, LSTMStep(u, h_prev, c_prev, gates, tanh_c)


def lstm_step_backward(
    dh: np.ndarray, dc: np.ndarray, s: LSTMStep
) -> tuple[np.ndarray, np.ndarray]:
    r"""Pre-activation gradients ``da`` (B, 4H) of one step and :math:`\partial L/\partial
    c_{t-1}` from :math:`\partial L/\partial h_t` and the gradient ``dc`` reaching :math:`c_t`
    from step t + 1. The caller turns ``da`` into input, recurrent and weight gradients."""
    i, f, g, o = s.gates[:, 0], s.gates[:, 1], s.gates[:, 2], s.gates[:, 3]  # (B, H) each
    dc = dc + dh * o * (1.0 - s.tanh_c**2)  # total dL/dc_t
    da = np.empty_like(s.gates)  # (B, 4, H)
    da[:, 0] = dc * g * i * (1.0 - i)
    da[:, 1] = dc * s.c_prev * f * (1.0 - f)
    da[:, 2] = dc * i * (1.0 - g * g)
    da[:, 3] = dh * s.tanh_c * o * (1.0 - o)
    B = da.shape[0]
    return da.reshape(B, -1), dc * f  # (B, 4, H) -> (B, 4H); dL/dc_{t-1}


# ---------------------------------------------------------------------- addressing
@dataclass(frozen=True)
class Address:
    """Saved values of one content-addressing: key, raw and actual strength, cosine
    similarities, the norms and the resulting weights."""

    k: np.ndarray  # (B, W)
    beta_raw: np.ndarray  # (B,)
    beta: np.ndarray  # (B,)
    K: np.ndarray  # (B, N) cosine similarities
    nk: np.ndarray  # (B, 1) smooth norm of k
    nM: np.ndarray  # (B, N) smooth norms of the cells
    w: np.ndarray  # (B, N) weights


def address(M: np.ndarray, k: np.ndarray, beta_raw: np.ndarray) -> Address:
    """Weights ``w`` (B, N) = softmax over cells of beta * cosine(k, M_j)."""
    nk = np.sqrt((k * k).sum(axis=1, keepdims=True) + EPS)  # (B, 1)
    nM = np.sqrt((M * M).sum(axis=2) + EPS)  # (B, N)
    K = np.einsum("bnw,bw->bn", M, k) / (nM * nk)  # (B, N)
    beta = oneplus(beta_raw)  # (B,)
    s = beta[:, None] * K  # (B, N)
    e = np.exp(s - s.max(axis=1, keepdims=True))  # (B, N)
    w = e / e.sum(axis=1, keepdims=True)  # (B, N)
    return Address(k, beta_raw, beta, K, nk, nM, w)


def address_backward(
    dw: np.ndarray, M: np.ndarray, a: Address
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From dL/dw (B, N): dL/dM (B, N, W) through the similarities, dL/dk (B, W) and
    dL/d(beta_raw) (B,)."""
    ds = a.w * (dw - (a.w * dw).sum(axis=1, keepdims=True))  # (B, N) softmax backward
    dbeta = (ds * a.K).sum(axis=1) * sigmoid(a.beta_raw)  # (B,) through oneplus
    dK = ds * a.beta[:, None]  # (B, N)
    g = dK / (a.nM * a.nk)  # (B, N) dK_j / (|M_j| |k|)
    dk = np.einsum("bn,bnw->bw", g, M) - (dK * a.K).sum(axis=1, keepdims=True) * a.k / a.nk**2
    dM = g[:, :, None] * a.k[:, None, :] - (dK * a.K / a.nM**2)[:, :, None] * M  # (B, N, W)
    return dM, dk, dbeta


def write(M: np.ndarray, w: np.ndarray, v: np.ndarray, update: str) -> np.ndarray:
    """The memory after writing ``v`` (B, W) with weights ``w`` (B, N) (see the module
    docstring for the two rules)."""
    add = w[:, :, None] * v[:, None, :]  # (B, N, W)
    if update == "residual":
        return M + add
    return (1.0 - w)[:, :, None] * M + add


def write_backward(
    dM_new: np.ndarray, M: np.ndarray, w: np.ndarray, v: np.ndarray, update: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From dL/dM' (B, N, W): dL/dM (B, N, W) through the update (not through the weights'
    dependence on M), dL/dw (B, N) and dL/dv (B, W)."""
    dv = np.einsum("bn,bnw->bw", w, dM_new)  # (B, W)
    if update == "residual":
        return dM_new, np.einsum("bnw,bw->bn", dM_new, v), dv
    dw = (dM_new * (v[:, None, :] - M)).sum(axis=2)  # (B, N)
    return (1.0 - w)[:, :, None] * dM_new, dw, dv


def cell_keys(M: np.ndarray, p: dict[str, np.ndarray], key_function: str, which: str) -> np.ndarray:
    """The key of every cell, k_j = K(M_j) (B, N, W): M_j itself (``"identity"``), or
    K^(w) M_j / K^(r) M_j with ``which`` "write" / "read" (``p[which + "_key.weight"]``)."""
    if key_function == "identity":
        return M
    return M @ p[f"{which}_key.weight"].T  # (B, N, W)


def cell_keys_backward(
    dK: np.ndarray,
    M: np.ndarray,
    p: dict[str, np.ndarray],
    key_function: str,
    which: str,
    g: dict[str, np.ndarray],
) -> np.ndarray:
    """:func:`cell_keys` backwards: adds dL/dK^(which) to ``g``, returns dL/dM (B, N, W)."""
    if key_function == "identity":
        return dK
    g[f"{which}_key.weight"] += np.einsum("bnv,bnw->vw", dK, M)  # (W, W)
    return dK @ p[f"{which}_key.weight"]  # (B, N, W)
