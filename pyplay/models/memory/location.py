r"""Addressing by location: a head that moves from cell to cell (Graves et al. 2014, NTM).

The lecture (TEK5040, "RNN extensions, memory addressing and attention") contrasts *direct*
addressing, "give me the content at memory cell 4", with *indirect* addressing by content. A
head can only learn to pick cell 4 if the pick is differentiable; the Neural Turing Machine does
it in four stages. At step t a head with weights :math:`p^{t-1}` over the J cells emits, from
the controller state :math:`s^t`, a query (key) :math:`q^t` and strength :math:`\hat\beta`,
an interpolation gate :math:`\hat g`, shift logits :math:`\hat\sigma_k` over the shifts
:math:`k \in \{-1, 0, +1\}` and a sharpening exponent :math:`\hat\gamma`; then

.. math::

    p^c_j &= \mathrm{softmax}_j\big(\beta \cos(q^t, M_j)\big)
        &&\text{content, as without location} \\
    p^g_j &= g\, p^c_j + (1 - g)\, p^{t-1}_j, \quad g = \sigma(\hat g)
        &&\text{interpolation: keep the last place, or jump to the content's} \\
    \tilde p_j &= \textstyle\sum_k \sigma_k\, p^g_{(j - k) \bmod J},
        \quad \sigma = \mathrm{softmax}(\hat\sigma)
        &&\text{shift: a circular convolution} \\
    p^t_j &= \frac{\tilde p_j^{\,\gamma}}{\sum_i \tilde p_i^{\,\gamma}},
        \quad \gamma = 1 + \mathrm{softplus}(\hat\gamma) \ge 1
        &&\text{sharpening: undo the blur of the shift}

with :math:`\beta = 1 + \mathrm{softplus}(\hat\beta)`. A gate g = 0 and a shift of +1 move the
head one cell on from where it was, whatever the cells hold: the addressing a copy needs. The
sharpening is computed as :math:`\mathrm{softmax}_j(\gamma \log \tilde p_j)` with
:math:`\tilde p_j` floored at ``FLOOR`` inside the log (no effect unless a weight underflows).

A head's address parameters are one vector :math:`z = [q; \hat\beta]` (content, W + 1) or
:math:`[q; \hat\beta; \hat g; \hat\sigma_{-1}; \hat\sigma_0; \hat\sigma_{+1}; \hat\gamma]`
(location, W + 6). Batched: memories (B, J, W), weights (B, J).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyplay.models.memory.heads import Address, address, address_backward, oneplus, sigmoid

__all__ = [
    "ADDRESSINGS",
    "FLOOR",
    "SHIFTS",
    "HeadAddress",
    "Located",
    "address_size",
    "head_address",
    "head_address_backward",
    "locate",
    "locate_backward",
]

ADDRESSINGS = ("content", "location")
SHIFTS = (-1, 0, 1)  # the shifts k a head may move by in one step
FLOOR = 1e-30  # the smallest shifted weight the sharpening takes the log of


def address_size(width: int, addressing: str) -> int:
    """Length of a head's address vector z: W + 1 (content) or W + 2 + len(SHIFTS) + 1."""
    return width + 1 + (2 + len(SHIFTS) if addressing == "location" else 0)


@dataclass(frozen=True)
class Located:
    """Saved values of one location addressing: the content stage and each later stage."""

    content: Address  # p^c and what its backward needs
    w_prev: np.ndarray  # (B, J) p^{t-1}
    g: np.ndarray  # (B, 1) interpolation gate
    wg: np.ndarray  # (B, J) p^g
    sigma: np.ndarray  # (B, S) shift weights
    wt: np.ndarray  # (B, J) the shifted weights p~
    gamma_raw: np.ndarray  # (B,)
    gamma: np.ndarray  # (B,)
    log_wt: np.ndarray  # (B, J) log of p~ (floored)
    w: np.ndarray  # (B, J) p^t


HeadAddress = Address | Located  # what a head's addressing saves; ``.w`` is its weights


def _shifted(p: np.ndarray, sign: int) -> np.ndarray:
    """Every shift of ``p`` (B, J) at once, (B, S, J): row k holds p_{(j - sign k) mod J}."""
    J = p.shape[1]
    index = (np.arange(J)[None, :] - sign * np.array(SHIFTS)[:, None]) % J  # (S, J)
    return p[:, index]  # (B, S, J)


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _softmax_backward(y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    return y * (dy - (y * dy).sum(axis=1, keepdims=True))


def locate(M: np.ndarray, z: np.ndarray, w_prev: np.ndarray) -> Located:
    """Location addressing (module docstring) of the memory ``M`` (B, J, W) from the address
    vector ``z`` (B, W + 6) and the head's previous weights ``w_prev`` (B, J)."""
    W = M.shape[2]
    content = address(M, z[:, :W], z[:, W])  # p^c (B, J)
    g = sigmoid(z[:, W + 1 : W + 2])  # (B, 1)
    wg = g * content.w + (1.0 - g) * w_prev  # (B, J)
    S = len(SHIFTS)
    sigma = _softmax(z[:, W + 2 : W + 2 + S])  # (B, S)
    wt = np.einsum("bs,bsj->bj", sigma, _shifted(wg, 1))  # (B, J) sum_k sigma_k p^g_{j-k}
    gamma_raw = z[:, W + 2 + S]  # (B,)
    gamma = oneplus(gamma_raw)  # (B,)
    log_wt = np.log(np.maximum(wt, FLOOR))  # (B, J)
    w = _softmax(gamma[:, None] * log_wt)  # (B, J) p~^gamma / sum_i p~_i^gamma
    return Located(content, w_prev, g, wg, sigma, wt, gamma_raw, gamma, log_wt, w)


def locate_backward(
    dw: np.ndarray, M: np.ndarray, a: Located
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From dL/dp^t (B, J): dL/dM (B, J, W) through the content stage, dL/dz (B, W + 6) and
    dL/dp^{t-1} (B, J). Each stage backwards, last first:

    sharpening, p = softmax(gamma log p~): da = softmax-backward, dgamma = sum_j da_j log p~_j,
    dp~_j = gamma da_j / p~_j; shift: dp^g_j = sum_k sigma_k dp~_{j+k},
    dsigma_k = sum_j dp~_j p^g_{j-k}; interpolation: dg = dp^g . (p^c - p^{t-1}),
    dp^c = g dp^g, dp^{t-1} = (1 - g) dp^g; content: :func:`address_backward`."""
    B, _, W = M.shape
    S = len(SHIFTS)
    da = _softmax_backward(a.w, dw)  # (B, J) d(gamma log p~)
    dz = np.empty((B, W + 3 + S), dtype=dw.dtype)
    dz[:, W + 2 + S] = (da * a.log_wt).sum(axis=1) * sigmoid(a.gamma_raw)  # through oneplus
    dwt = np.where(a.wt > FLOOR, a.gamma[:, None] * da / np.maximum(a.wt, FLOOR), 0.0)  # (B, J)
    dsigma = np.einsum("bj,bsj->bs", dwt, _shifted(a.wg, 1))  # (B, S)
    dz[:, W + 2 : W + 2 + S] = _softmax_backward(a.sigma, dsigma)  # (B, S)
    dwg = np.einsum("bs,bsj->bj", a.sigma, _shifted(dwt, -1))  # (B, J) sum_k sigma_k dp~_{j+k}
    dg = (dwg * (a.content.w - a.w_prev)).sum(axis=1, keepdims=True)  # (B, 1)
    dz[:, W + 1 : W + 2] = dg * a.g * (1.0 - a.g)
    dM, dz[:, :W], dz[:, W] = address_backward(a.g * dwg, M, a.content)
    return dM, dz, (1.0 - a.g) * dwg


def head_address(M: np.ndarray, z: np.ndarray, w_prev: np.ndarray, addressing: str) -> HeadAddress:
    """One head's weights over the cells of ``M`` (B, J, W) from its address vector ``z``:
    by content (:func:`~pyplay.models.memory.heads.address`; ``w_prev`` unused) or by
    location (:func:`locate`)."""
    if addressing == "location":
        return locate(M, z, w_prev)
    W = M.shape[2]
    return address(M, z[:, :W], z[:, W])


def head_address_backward(
    dw: np.ndarray, M: np.ndarray, a: HeadAddress
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`head_address` backwards: dL/dM, dL/dz and dL/dp^{t-1} (None for content)."""
    if isinstance(a, Located):
        return locate_backward(dw, M, a)
    dM, dk, dbeta = address_backward(dw, M, a)
    return dM, np.concatenate([dk, dbeta[:, None]], axis=1), None
