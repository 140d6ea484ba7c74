"""Elman recurrent network, PyTorch's layout, with "tanh", "relu" or "linear" (purelin) units.

.. math::

    a_t = W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}, \\qquad h_t = \\phi(a_t)

Backward, with :math:`\\delta h_t` the total gradient reaching :math:`h_t`:

.. math::

    \\delta a_t = \\delta h_t \\odot \\phi'(a_t), \\qquad
    \\delta h_{t-1} = \\delta a_t W_{hh}, \\qquad
    \\delta W_{hh} = \\sum_t \\delta a_t^\\top h_{t-1}.

With tanh, :math:`\\phi' = 1 - h_t^2 \\le 1`: the product of these factors and of
:math:`W_{hh}` over many steps is what makes the gradient vanish (or explode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_choice
from pyplay.nn._ops import matmul
from pyplay.nn.recurrent import Recurrent

__all__ = ["NONLINEARITIES", "RNN", "RNNKernel"]

NONLINEARITIES = ("tanh", "relu", "linear")


@dataclass(frozen=True)
class _Cache:
    A: np.ndarray  # (T, B, H) pre-activations
    hs: np.ndarray  # (T+1, B, H)
    W_hh: np.ndarray  # (H, H)


class RNNKernel:
    """One Elman layer in one direction over a time-major sequence."""

    n_gates = 1
    has_cell = False
    record_names = ("a", "h")

    def __init__(self, nonlinearity: str = "tanh") -> None:
        self.nonlinearity = check_choice("nonlinearity", nonlinearity, NONLINEARITIES)

    def extra_params(self, H: int) -> dict[str, tuple[int, ...]]:
        """No parameters beyond torch's four."""
        return {}

    def _phi(self, a: np.ndarray, out: np.ndarray) -> None:
        if self.nonlinearity == "tanh":
            np.tanh(a, out=out)
        elif self.nonlinearity == "relu":
            np.maximum(a, 0, out=out)
        else:
            out[...] = a

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
        """Run the recurrence; ``xp`` (T, B, H) is ``x W_ih^T + b_ih``, ``mask`` (T, B, 1)."""
        T, B, H = xp.shape
        W_T = W_hh.T.copy()  # (H, H)
        A = xp + b_hh  # (T, B, H)
        hs = np.empty((T + 1, B, H), dtype=xp.dtype)
        hs[0] = h0
        rec = np.empty((B, H), dtype=xp.dtype)
        for t in range(T):
            A[t] += matmul(hs[t], W_T, out=rec)
            self._phi(A[t], hs[t + 1])
            if mask is not None:
                m = mask[t]  # (B, 1)
                hs[t + 1] = hs[t] + m * (hs[t + 1] - hs[t])
        return hs, None, _Cache(A, hs, W_hh)

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
        """BPTT; returns dxp (T, B, H), dW_hh, db_hh, {}, dh0, None and norms (T, B)."""
        A, hs, W_hh = cache.A, cache.hs, cache.W_hh
        T, B, H = A.shape
        if self.nonlinearity == "tanh":
            dphi = 1 - hs[1:] ** 2  # (T, B, H); padded steps are zeroed by the mask below
        elif self.nonlinearity == "relu":
            dphi = (A > 0).astype(A.dtype)
        else:
            dphi = np.ones_like(A)
        dA = np.empty_like(A)  # (T, B, H)
        norms = np.empty((T, B), dtype=A.dtype)
        dh_next = dh_T.copy()  # (B, H)
        for t in reversed(range(T)):
            dh = dhs[t] + dh_next  # (B, H)
            norms[t] = np.sqrt(np.einsum("bh,bh->b", dh, dh))
            np.multiply(dh, dphi[t], out=dA[t])
            if mask is not None:
                dA[t] *= mask[t]
            dh_prev = matmul(dA[t], W_hh)  # (B, H)
            if mask is not None:  # padded steps pass the gradient straight through
                dh_prev += (1 - mask[t]) * dh
            dh_next = dh_prev
        flat = dA.reshape(T * B, H)  # (T*B, H)
        dW_hh = matmul(flat.T, hs[:-1].reshape(T * B, H))  # (H, H)
        return dA, dW_hh, flat.sum(axis=0), {}, dh_next, None, norms

    def record(self, cache: _Cache) -> dict[str, np.ndarray]:
        """Per-step pre-activations and states, time-major (T, B, H)."""
        return {"a": cache.A, "h": cache.hs[1:]}


class RNN(Recurrent):
    """Multi-layer (bidirectional) Elman RNN; batch-first ``(B, T, F)``, PyTorch's names.

    ``nonlinearity`` is "tanh" or "relu" as in ``torch.nn.RNN``, or "linear" (the textbook's
    purelin, no torch counterpart). Other parameters as ``torch.nn.RNN`` plus ``dtype`` and
    ``rng``. ``forward`` returns ``(out (B, T, D*H), h_n (num_layers*D, B, H), cache)``;
    ``backward(dout, dstate=None, cache=cache)`` returns ``(dx, dh0, grads)``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        dropout: float = 0.0,
        bidirectional: bool = False,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        super().__init__(
            RNNKernel(nonlinearity),
            input_size,
            hidden_size,
            num_layers,
            bias,
            dropout,
            bidirectional,
            dtype,
            rng,
        )
        self.nonlinearity = nonlinearity
