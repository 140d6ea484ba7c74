"""Gated recurrent unit (Cho et al. 2014) in PyTorch's formulation and layout (gates r, z, n).

.. math::

    \\begin{aligned}
    r_t &= \\sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) \\\\
    z_t &= \\sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\\\
    n_t &= \\tanh(W_{in} x_t + b_{in} + r_t \\odot (W_{hn} h_{t-1} + b_{hn})) \\\\
    h_t &= (1 - z_t) \\odot n_t + z_t \\odot h_{t-1}
    \\end{aligned}

Backward, with :math:`\\delta h` the total gradient reaching :math:`h_t` and
:math:`u_t = W_{hn} h_{t-1} + b_{hn}`:

.. math::

    \\delta n = \\delta h (1 - z), \\quad \\delta z = \\delta h (h_{t-1} - n), \\quad
    \\delta a_n = \\delta n (1 - n^2), \\quad \\delta r = \\delta a_n \\odot u_t, \\quad
    \\delta h_{t-1} = \\delta h \\odot z + [\\delta a_r, \\delta a_z, \\delta a_n \\odot r] W_{hh}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.nn._ops import matmul, sigmoid
from pyplay.nn.recurrent import Recurrent

__all__ = ["GRU", "GRUKernel"]


@dataclass(frozen=True)
class _Cache:
    RZN: np.ndarray  # (T, B, 3H) activations r, z, n
    U: np.ndarray  # (T, B, H) u_t = W_hn h_{t-1} + b_hn
    hs: np.ndarray  # (T+1, B, H)
    W_hh: np.ndarray  # (3H, H)


class GRUKernel:
    """One GRU layer in one direction over a time-major sequence."""

    n_gates = 3
    has_cell = False
    record_names = ("r", "z", "n", "h")

    def extra_params(self, H: int) -> dict[str, tuple[int, ...]]:
        """No parameters beyond torch's four."""
        return {}

    def forward(
        self,
        xp: np.ndarray,
        W_hh: np.ndarray,
        b_hh: np.ndarray,
        extra: dict[str, np.ndarray],
        h0: np.ndarray,
        c0: np.ndarray | None,
        mask: np.ndarray | None,
    ) -> tuple[np.ndarray, None, _Cache]:
        """Run the recurrence; ``xp`` (T, B, 3H) is ``x W_ih^T + b_ih``, ``mask`` (T, B, 1)."""
        T, B, H3 = xp.shape
        H = H3 // 3
        W_T = W_hh.T.copy()  # (H, 3H)
        RZN = np.empty_like(xp)  # (T, B, 3H)
        U = np.empty((T, B, H), dtype=xp.dtype)
        hs = np.empty((T + 1, B, H), dtype=xp.dtype)
        hs[0] = h0
        hh = np.empty((B, H3), dtype=xp.dtype)
        for t in range(T):
            matmul(hs[t], W_T, out=hh)  # (B, 3H)
            hh += b_hh
            rzn = RZN[t]
            np.add(xp[t, :, : 2 * H], hh[:, : 2 * H], out=rzn[:, : 2 * H])
            sigmoid(rzn[:, : 2 * H], out=rzn[:, : 2 * H])
            r, z, n = rzn[:, :H], rzn[:, H : 2 * H], rzn[:, 2 * H :]
            U[t] = hh[:, 2 * H :]
            np.multiply(r, U[t], out=n)
            n += xp[t, :, 2 * H :]
            np.tanh(n, out=n)
            h = hs[t + 1]
            np.subtract(hs[t], n, out=h)  # h_t = n + z (h_{t-1} - n)
            h *= z
            h += n
            if mask is not None:
                m = mask[t]  # (B, 1)
                hs[t + 1] = hs[t] + m * (h - hs[t])
        return hs, None, _Cache(RZN, U, hs, W_hh)

    def backward(
        self,
        dhs: np.ndarray,
        dh_T: np.ndarray,
        dc_T: np.ndarray | None,
        cache: _Cache,
        mask: np.ndarray | None,
    ) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray, None, np.ndarray
    ]:
        """BPTT; returns dxp (T, B, 3H), dW_hh, db_hh, {}, dh0, None and norms (T, B)."""
        RZN, U, hs, W_hh = cache.RZN, cache.U, cache.hs, cache.W_hh
        T, B, H3 = RZN.shape
        H = H3 // 3
        dXP = np.empty_like(RZN)  # (T, B, 3H) gradients of the input projections
        dHH = np.empty_like(RZN)  # (T, B, 3H) gradients of W_hh h + b_hh
        norms = np.empty((T, B), dtype=RZN.dtype)
        dh_next = dh_T.copy()  # (B, H)
        for t in reversed(range(T)):
            dh = dhs[t] + dh_next  # (B, H)
            norms[t] = np.sqrt(np.einsum("bh,bh->b", dh, dh))
            dh_cell = dh if mask is None else mask[t] * dh
            r, z, n = RZN[t, :, :H], RZN[t, :, H : 2 * H], RZN[t, :, 2 * H :]
            dx, du = dXP[t], dHH[t]
            da_n = np.multiply(dh_cell, (1 - z) * (1 - n * n), out=dx[:, 2 * H :])
            np.multiply(da_n, r, out=du[:, 2 * H :])
            np.multiply(da_n * U[t], r * (1 - r), out=dx[:, :H])
            np.multiply(dh_cell * (hs[t] - n), z * (1 - z), out=dx[:, H : 2 * H])
            du[:, : 2 * H] = dx[:, : 2 * H]
            dh_prev = matmul(du, W_hh)  # (B, H)
            dh_prev += dh_cell * z
            if mask is not None:  # padded steps pass the gradient straight through
                dh_prev += (1 - mask[t]) * dh
            dh_next = dh_prev
        flat = dHH.reshape(T * B, H3)  # (T*B, 3H)
        dW_hh = matmul(flat.T, hs[:-1].reshape(T * B, H))  # (3H, H)
        db_hh = flat.sum(axis=0)  # (3H,)
        return dXP, dW_hh, db_hh, {}, dh_next, None, norms

    def record(self, cache: _Cache) -> dict[str, np.ndarray]:
        """Per-step internals, time-major (T, B, H) views."""
        H = cache.hs.shape[2]
        R = cache.RZN
        return {"r": R[:, :, :H], "z": R[:, :, H : 2 * H], "n": R[:, :, 2 * H :], "h": cache.hs[1:]}


class GRU(Recurrent):
    """Multi-layer (bidirectional) GRU; batch-first ``(B, T, F)``, PyTorch's parameter names.

    Parameters are those of ``torch.nn.GRU`` (always ``batch_first``) plus ``dtype`` and
    ``rng`` (a Generator or seed for the initialisation and the inter-layer dropout masks).
    ``forward(x, state=None, lengths=None, record=False, training=True)`` returns
    ``(out (B, T, D*H), h_n (num_layers*D, B, H), cache)``;
    ``backward(dout, dstate=None, cache=cache)`` returns ``(dx, dh0, grads)``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        dropout: float = 0.0,
        bidirectional: bool = False,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        super().__init__(
            GRUKernel(),
            input_size,
            hidden_size,
            num_layers,
            bias,
            dropout,
            bidirectional,
            dtype,
            rng,
        )
