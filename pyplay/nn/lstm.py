"""Long short-term memory (Hochreiter & Schmidhuber 1997), PyTorch's layout and gate order.

.. math::

    \\begin{aligned}
    i_t &= \\sigma(W_{ii} x_t + b_{ii} + W_{hi} h_{t-1} + b_{hi} [+ w_{ci} \\odot c_{t-1}]) \\\\
    f_t &= \\sigma(W_{if} x_t + b_{if} + W_{hf} h_{t-1} + b_{hf} [+ w_{cf} \\odot c_{t-1}]) \\\\
    g_t &= \\tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}) \\\\
    o_t &= \\sigma(W_{io} x_t + b_{io} + W_{ho} h_{t-1} + b_{ho} [+ w_{co} \\odot c_t]) \\\\
    c_t &= f_t \\odot c_{t-1} + i_t \\odot g_t, \\qquad h_t = o_t \\odot \\tanh(c_t)
    \\end{aligned}

The bracketed peephole terms (Gers & Schmidhuber 2000) are used only with ``peephole=True``.
Backward (BPTT), with :math:`\\delta h_t` the total gradient reaching :math:`h_t`:

.. math::

    \\delta o = \\delta h \\odot \\tanh c_t, \\quad
    \\delta c_t = \\delta c_{t+1}' + \\delta h \\odot o_t (1 - \\tanh^2 c_t), \\quad
    \\delta i = \\delta c_t \\odot g_t, \\; \\delta f = \\delta c_t \\odot c_{t-1}, \\;
    \\delta g = \\delta c_t \\odot i_t, \\quad \\delta c_{t-1}' = \\delta c_t \\odot f_t .
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_float
from pyplay.nn._ops import matmul
from pyplay.nn.recurrent import Recurrent

__all__ = ["LSTM", "LSTMKernel"]


@dataclass(frozen=True)
class _Cache:
    G: np.ndarray  # (T, B, 4H) gate activations i, f, g, o
    hs: np.ndarray  # (T+1, B, H) states, hs[0] = h0
    cs: np.ndarray  # (T+1, B, H) cells, cs[0] = c0
    tanh_c: np.ndarray  # (T, B, H)
    W_hh: np.ndarray  # (4H, H)
    peep: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # w_ci, w_cf, w_co


class LSTMKernel:
    """One LSTM layer in one direction over a time-major sequence (the maths of the module)."""

    n_gates = 4
    has_cell = True
    record_names = ("i", "f", "g", "o", "c", "h")

    def __init__(self, peephole: bool = False) -> None:
        self.peephole = peephole

    def extra_params(self, H: int) -> dict[str, tuple[int, ...]]:
        """Shapes of the per-layer parameters beyond torch's four (peepholes)."""
        if not self.peephole:
            return {}
        return {"weight_ci": (H,), "weight_cf": (H,), "weight_co": (H,)}

    def forward(
        self,
        xp: np.ndarray,
        W_hh: np.ndarray,
        b_hh: np.ndarray,
        extra: dict[str, np.ndarray],
        h0: np.ndarray,
        c0: np.ndarray | None,
        mask: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray, _Cache]:
        """Run the recurrence. ``xp`` (T, B, 4H) is ``x W_ih^T + b_ih``; ``mask`` (T, B, 1)."""
        T, B, H4 = xp.shape
        H = H4 // 4
        assert c0 is not None
        peep = (extra["weight_ci"], extra["weight_cf"], extra["weight_co"]) if extra else None
        # sigma(a) = 0.5 tanh(0.5 a) + 0.5: pre-scale the i, f, o columns by 0.5 once so that one
        # tanh over the whole (B, 4H) slab computes every gate of a step
        s = np.full(H4, 0.5, dtype=xp.dtype)  # (4H,)
        s[2 * H : 3 * H] = 1.0
        off = np.where(s == 0.5, 0.5, 0.0).astype(xp.dtype)  # (4H,)
        G = xp + b_hh  # (T, B, 4H)
        G *= s
        W_s = (W_hh * s[:, None]).T.copy()  # (H, 4H) scaled, transposed once
        hs = np.empty((T + 1, B, H), dtype=xp.dtype)
        cs = np.empty((T + 1, B, H), dtype=xp.dtype)
        tanh_c = np.empty((T, B, H), dtype=xp.dtype)
        hs[0], cs[0] = h0, c0
        rec = np.empty((B, H4), dtype=xp.dtype)
        for t in range(T):
            g_t = G[t]  # (B, 4H) view
            g_t += matmul(hs[t], W_s, out=rec)
            if peep is None:
                np.tanh(g_t, out=g_t)
                g_t *= s
                g_t += off
                i, f, g, o = g_t[:, :H], g_t[:, H : 2 * H], g_t[:, 2 * H : 3 * H], g_t[:, 3 * H :]
                c = cs[t + 1]
                np.multiply(f, cs[t], out=c)
                c += i * g
            else:
                w_ci, w_cf, w_co = peep
                g_t[:, :H] += 0.5 * w_ci * cs[t]
                g_t[:, H : 2 * H] += 0.5 * w_cf * cs[t]
                np.tanh(g_t[:, : 3 * H], out=g_t[:, : 3 * H])
                g_t[:, : 3 * H] *= s[: 3 * H]
                g_t[:, : 3 * H] += off[: 3 * H]
                i, f, g = g_t[:, :H], g_t[:, H : 2 * H], g_t[:, 2 * H : 3 * H]
                c = cs[t + 1]
                np.multiply(f, cs[t], out=c)
                c += i * g
                o = g_t[:, 3 * H :]
                o += 0.5 * w_co * c
                np.tanh(o, out=o)
                o *= 0.5
                o += 0.5
            np.tanh(c, out=tanh_c[t])
            np.multiply(o, tanh_c[t], out=hs[t + 1])
            if mask is not None:  # padded steps carry the previous state unchanged
                m = mask[t]  # (B, 1)
                hs[t + 1] = hs[t] + m * (hs[t + 1] - hs[t])
                cs[t + 1] = cs[t] + m * (cs[t + 1] - cs[t])
        return hs, cs, _Cache(G, hs, cs, tanh_c, W_hh, peep)

    def backward(
        self,
        dhs: np.ndarray,
        dh_T: np.ndarray,
        dc_T: np.ndarray | None,
        cache: _Cache,
        mask: np.ndarray | None,
    ) -> tuple[
        np.ndarray,
        np.ndarray,
        np.ndarray,
        dict[str, np.ndarray],
        np.ndarray,
        np.ndarray,
        np.ndarray,
    ]:
        """BPTT. ``dhs`` (T, B, H) is dL/dh_t from the outputs (zero at padded steps).

        Returns dxp (T, B, 4H), dW_hh (4H, H), db_hh (4H,), extra grads, dh0, dc0 and the
        per-step norms of the total dL/dh_t (T, B).
        """
        G, hs, cs, tanh_c, W_hh, peep = (
            cache.G,
            cache.hs,
            cache.cs,
            cache.tanh_c,
            cache.W_hh,
            cache.peep,
        )
        T, B, H4 = G.shape
        H = H4 // 4
        dA = np.empty_like(G)  # (T, B, 4H) gradients of the gate pre-activations
        norms = np.empty((T, B), dtype=G.dtype)
        dh_next = dh_T.copy()  # (B, H)
        dc_next = np.zeros((B, H), dtype=G.dtype) if dc_T is None else dc_T.copy()
        dpeep = [np.zeros(H, dtype=G.dtype) for _ in range(3)] if peep is not None else None
        for t in reversed(range(T)):
            dh = dhs[t] + dh_next  # (B, H)
            norms[t] = np.sqrt(np.einsum("bh,bh->b", dh, dh))
            i, f, g, o = G[t, :, :H], G[t, :, H : 2 * H], G[t, :, 2 * H : 3 * H], G[t, :, 3 * H :]
            if mask is not None:
                m = mask[t]  # (B, 1)
                dh_cell, dc_in = m * dh, m * dc_next
            else:
                dh_cell, dc_in = dh, dc_next
            da = dA[t]  # (B, 4H) view
            do = np.multiply(dh_cell, tanh_c[t], out=da[:, 3 * H :])
            do *= o * (1 - o)  # do_a
            dc = dc_in + dh_cell * o * (1 - tanh_c[t] ** 2)  # (B, H)
            if peep is not None:
                dc += do * peep[2]
            np.multiply(dc, g * i * (1 - i), out=da[:, :H])
            np.multiply(dc, cs[t] * f * (1 - f), out=da[:, H : 2 * H])
            np.multiply(dc, i * (1 - g * g), out=da[:, 2 * H : 3 * H])
            dc_prev = dc * f
            dh_prev = matmul(da, W_hh)  # (B, H)
            if peep is not None and dpeep is not None:
                dc_prev += da[:, :H] * peep[0] + da[:, H : 2 * H] * peep[1]
                dpeep[0] += np.einsum("bh,bh->h", da[:, :H], cs[t])
                dpeep[1] += np.einsum("bh,bh->h", da[:, H : 2 * H], cs[t])
                dpeep[2] += np.einsum("bh,bh->h", da[:, 3 * H :], cs[t + 1])
            if mask is not None:  # padded steps pass the gradient straight through
                dh_prev += (1 - m) * dh
                dc_prev += (1 - m) * dc_next
            dh_next, dc_next = dh_prev, dc_prev
        flat = dA.reshape(T * B, H4)  # (T*B, 4H)
        dW_hh = matmul(flat.T, hs[:-1].reshape(T * B, H))  # (4H, H)
        db_hh = flat.sum(axis=0)  # (4H,)
        extra: dict[str, np.ndarray] = {}
        if dpeep is not None:
            extra = {"weight_ci": dpeep[0], "weight_cf": dpeep[1], "weight_co": dpeep[2]}
        return dA, dW_hh, db_hh, extra, dh_next, dc_next, norms

    def record(self, cache: _Cache) -> dict[str, np.ndarray]:
        """Per-step internals, time-major (T, B, H) views."""
        H = cache.hs.shape[2]
        G = cache.G
        return {
            "i": G[:, :, :H],
            "f": G[:, :, H : 2 * H],
            "g": G[:, :, 2 * H : 3 * H],
            "o": G[:, :, 3 * H :],
            "c": cache.cs[1:],
            "h": cache.hs[1:],
        }


class LSTM(Recurrent):
    """Multi-layer (bidirectional) LSTM; batch-first ``(B, T, F)``, PyTorch's parameter names.

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional
        As ``torch.nn.LSTM`` (always ``batch_first``).
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation U(-1/sqrt(H), 1/sqrt(H)) and the inter-layer dropout masks.
    peephole : bool
        Add diagonal peephole weights ``weight_ci_l{k}``, ``weight_cf_l{k}``, ``weight_co_l{k}``.
    forget_bias : float
        Added to the initial forget-gate slice of ``bias_ih`` (a plain parameter afterwards).

    ``forward(x, state=None, lengths=None, record=False, training=True)`` returns
    ``(out (B, T, D*H), (h_n, c_n), cache)`` with ``h_n, c_n`` of shape (num_layers*D, B, H);
    ``backward(dout, dstate=None, cache=cache)`` returns ``(dx, (dh0, dc0), grads)``.
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
        peephole: bool = False,
        forget_bias: float = 0.0,
    ) -> None:
        if not isinstance(peephole, bool):
            raise TypeError(f"peephole must be True or False, got {peephole!r}")
        forget_bias = check_float("forget_bias", forget_bias)
        super().__init__(
            LSTMKernel(peephole),
            input_size,
            hidden_size,
            num_layers,
            bias,
            dropout,
            bidirectional,
            dtype,
            rng,
        )
        self.peephole = peephole
        self.forget_bias = forget_bias
        if bias and forget_bias:
            H = self.hidden_size
            for name, value in self.params.items():
                if name.startswith("bias_ih"):
                    value[H : 2 * H] += forget_bias
