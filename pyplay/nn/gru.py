r"""Gated recurrent unit (Cho et al. 2014) in PyTorch's formulation and layout (gates r, z, n).

Forward, for each step:

.. math::

    \begin{aligned}
    r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) \\
    z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
    u_t &= W_{hn} h_{t-1} + b_{hn} \\
    n_t &= \tanh(W_{in} x_t + b_{in} + r_t \odot u_t) \\
    h_t &= (1 - z_t) \odot n_t + z_t \odot h_{t-1}
    \end{aligned}

Backward (BPTT), with :math:`\delta h_t` the total gradient reaching :math:`h_t` (from the output
at ``t`` and from step ``t + 1``) and :math:`\delta a_\ast` the gradient of a pre-activation:

.. math::

    \begin{aligned}
    \delta a_n &= \delta h_t \odot (1 - z_t) (1 - n_t^2), \qquad
    \delta a_z = \delta h_t \odot (h_{t-1} - n_t)\, z_t (1 - z_t) \\
    \delta a_r &= \delta a_n \odot u_t\, r_t (1 - r_t), \qquad
    \delta u_t = \delta a_n \odot r_t \\
    \delta h_{t-1} &\mathrel{+}= \delta h_t \odot z_t
        + [\delta a_r, \delta a_z, \delta u_t]\, W_{hh}
    \end{aligned}

and :math:`\delta W_{hh} = \sum_t [\delta a_r, \delta a_z, \delta u_t]^\top h_{t-1}`,
:math:`\delta b_{hh} = \sum_t [\delta a_r, \delta a_z, \delta u_t]`,
:math:`\delta W_{ih} = \sum_t [\delta a_r, \delta a_z, \delta a_n]^\top x_t`.
The factors multiplying :math:`\delta h_t` and :math:`\delta a_n` are computed for all steps at
once before the BPTT loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, final, overload

import numpy as np

from pyplay.nn._ops import activate_gates, for_matmul, gate_mode, gate_scale, matmul
from pyplay.nn.recurrent import CellGrads, Projection, RecurrentCache, RecurrentStack
from pyplay.nn.sequences import Ends

__all__ = ["GRU", "GRUCell"]


@dataclass(frozen=True)
class _Weights:
    W: np.ndarray  # (3H, H) W_hh
    Ws_T: np.ndarray  # (H, 3H) r, z rows scaled, transposed for the forward matmul
    b_hn: np.ndarray  # (H,)
    mode: str  # gate activation mode of _ops


@dataclass(frozen=True)
class _Cache:
    Z: np.ndarray  # (T, B, 3, H) r, z, n
    U: np.ndarray  # (T, B, H) u_t = W_hn h_{t-1} + b_hn
    hs: np.ndarray  # (T+1, B, H) hs[0] = h0
    w: _Weights


@final
class GRUCell:
    """The GRU strategy for :class:`~pyplay.nn.recurrent.RecurrentStack` (one layer, one
    direction, time-major)."""

    n_gates = 3
    has_cell = False

    def extra_shapes(self, H: int) -> dict[str, tuple[int, ...]]:
        """No parameters beyond torch's four."""
        return {}

    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, _Weights]:
        """``b_hr, b_hz`` join the input projection; ``b_hn`` stays inside ``r * (...)``."""
        W_hh, b_hh = p["weight_hh"], p["bias_hh"]  # (3H, H), (3H,)
        H = W_hh.shape[1]
        mode = gate_mode(B * 2 * H)
        s = gate_scale(2 * H, 0, mode, W_hh.dtype, n_plain=H)  # (3H,) n is activated later
        b = p["bias_ih"] + np.concatenate([b_hh[: 2 * H], np.zeros(H, W_hh.dtype)])  # (3H,)
        W_x = p["weight_ih"].copy()  # (3H, F) the weights this forward used, for backward
        proj = Projection(W_fwd=W_x * s[:, None], b_fwd=b * s, W=W_x)
        Ws_T = np.ascontiguousarray((W_hh * s[:, None]).T)  # (H, 3H)
        return proj, _Weights(W_hh.copy(), Ws_T, b_hh[2 * H :].copy(), mode)

    def forward(
        self, XP: np.ndarray, w: _Weights, h0: np.ndarray, c0: np.ndarray | None
    ) -> tuple[np.ndarray, None, _Cache]:
        """The recurrence; ``XP`` (T, B, 3H) input projections (r, z scaled), overwritten by
        the gates r, z, n."""
        T, B, G = XP.shape
        H = G // 3
        Z = XP.reshape(T, B, 3, H)  # r, z, n of every step
        U = np.empty((T, B, H), dtype=XP.dtype)
        hs = np.empty((T + 1, B, H), dtype=XP.dtype)
        hs[0] = h0
        hW = np.empty((B, G), dtype=XP.dtype)
        ru = np.empty((B, H), dtype=XP.dtype)
        hW_rz, hW_n = hW[:, : 2 * H], hW[:, 2 * H :]  # (B, 2H), (B, H) views
        Ws_T, b_hn, mode = w.Ws_T, w.b_hn, w.mode
        for t in range(T):
            matmul(hs[t], Ws_T, out=hW)  # (B, 3H)
            rz = XP[t, :, : 2 * H]  # (B, 2H)
            rz += hW_rz
            activate_gates(rz, 2 * H, mode)  # r, z
            r, z, n, u = Z[t, :, 0], Z[t, :, 1], Z[t, :, 2], U[t]  # (B, H) each
            np.add(hW_n, b_hn, out=u)  # u_t
            np.multiply(r, u, out=ru)
            n += ru
            np.tanh(n, out=n)  # n_t
            h = hs[t + 1]
            np.subtract(hs[t], n, out=h)
            h *= z
            h += n  # h_t = n + z (h_{t-1} - n)
        return hs, None, _Cache(Z, U, hs, w)

    def backward(
        self, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, kc: _Cache
    ) -> CellGrads:
        """BPTT, step by step from ``t = T - 1`` down to 0 (see the module docstring)."""
        Z, U, hs, w = kc.Z, kc.U, kc.hs, kc.w
        T, B, _, H = Z.shape
        r, z, n = Z[:, :, 0], Z[:, :, 1], Z[:, :, 2]  # (T, B, H) each
        # factors for all steps at once: delta a_n = dh K_n, a_r = delta a_n K_r, a_z = dh K_z
        one_minus_z = 1.0 - z  # (T, B, H)
        K_n = n * n  # (T, B, H)
        np.subtract(1.0, K_n, out=K_n)
        K_n *= one_minus_z  # (1 - z)(1 - n^2)
        K = np.empty((T, B, 3, H), dtype=Z.dtype)  # r, z, u slots
        K_r, K_z = K[:, :, 0], K[:, :, 1]
        np.subtract(1.0, r, out=K_r)
        K_r *= r
        K_r *= U  # u r (1 - r)
        np.subtract(hs[:-1], n, out=K_z)
        K_z *= z
        K_z *= one_minus_z  # (h_{t-1} - n) z (1 - z)
        dHH = K  # (T, B, 3, H) delta a_r, a_z, u (grad of W_hh h + b_hh), in place of K
        dAn = K_n  # (T, B, H) delta a_n, in place of K_n
        dh_rec = np.empty((B, H), dtype=Z.dtype)  # dL/dh_{t-1} from step t
        tmp = np.empty((B, H), dtype=Z.dtype)
        mul, W = np.multiply, for_matmul(w.W)  # W (3H, H) laid out for the per-step product
        for t in reversed(range(T)):
            dh = dH[t]  # (B, H) becomes the total dL/dh_t
            if t < T - 1:
                dh += dh_rec
            da_n = dAn[t]
            da_n *= dh  # delta a_n
            da = dHH[t]  # (B, 3, H)
            da[:, 0] *= da_n  # delta a_r
            da[:, 1] *= dh  # delta a_z
            mul(da_n, r[t], out=da[:, 2])  # delta u
            matmul(da.reshape(B, 3 * H), W, out=dh_rec)  # (B, H)
            mul(dh, z[t], out=tmp)
            dh_rec += tmp  # delta h_{t-1} from step t
        flat = dHH.reshape(T * B, 3 * H)  # (T*B, 3H)
        dW_hh = matmul(flat.T, hs[:-1].reshape(T * B, H))  # (3H, H)
        db_hh = flat.sum(axis=0)  # (3H,)
        dHH[:, :, 2] = dAn  # now dXP: the input projection of n sits outside r * (...)
        dXP = dHH.reshape(T, B, 3 * H)  # (T, B, 3H)
        return CellGrads(dXP, dW_hh, db_hh, {}, dh_rec, None)

    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Already in torch's layout."""
        return {"weight_ih": dW_ih, "weight_hh": g.dW_hh, "bias_ih": db_ih, "bias_hh": g.db_hh}

    def record(self, kc: _Cache) -> dict[str, np.ndarray]:
        """Gates and states, (T, B, H) each."""
        Z = kc.Z
        return {"r": Z[:, :, 0], "z": Z[:, :, 1], "n": Z[:, :, 2], "h": kc.hs[1:]}


@final
class GRU:
    """Multi-layer (bidirectional) GRU; batch-first ``(B, T, F)``, PyTorch's parameter names.

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional
        As ``torch.nn.GRU`` (always ``batch_first``). ``dropout`` applies between layers, not
        after the last, and only in ``forward(training=True)``.
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation U(-1/sqrt(H), 1/sqrt(H)) like torch; the dropout masks come from a
        Generator spawned from it at construction (:attr:`generator`).

    Attributes
    ----------
    params : dict of str to ndarray
        ``weight_ih_l{k}`` (3H, F), ``weight_hh_l{k}`` (3H, H), ``bias_ih_l{k}``,
        ``bias_hh_l{k}`` (3H,), with ``_reverse`` for the backward direction; rows in gate
        order r, z, n. Updated in place by optimisers.
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
        self._stack = RecurrentStack(
            GRUCell(),
            input_size,
            hidden_size,
            num_layers,
            bias,
            dropout,
            bidirectional,
            dtype,
            rng,
        )
        s = self._stack
        self.input_size, self.hidden_size, self.num_layers = (
            s.input_size,
            s.hidden_size,
            s.num_layers,
        )
        self.bias, self.dropout, self.bidirectional = s.bias, s.dropout, s.bidirectional
        self.dtype, self.num_directions, self.generator = s.dtype, s.num_directions, s.generator
        self.params = s.params

    def forward(
        self,
        x: Any,
        state: np.ndarray | None = None,
        lengths: Any = None,
        record: bool = False,
        training: bool = True,
    ) -> tuple[np.ndarray, np.ndarray, RecurrentCache]:
        """Run the stack over ``x`` (B, T, F).

        Parameters
        ----------
        x : array (B, T, input_size)
        state : array h_0 (num_layers*D, B, H), optional (zeros)
        lengths : int array (B,), optional
            Valid steps of each sequence (1..T, any order); padded steps do not change the state,
            outputs there are zero.
        record : bool
            Keep gates and states in ``cache.record[<"l0", "l0_reverse", ...>]``, dicts of
            (B, T, H) arrays ``r, z, n, h``.
        training : bool
            Apply inter-layer dropout.

        Returns
        -------
        out : array (B, T, D*H)
        h_n : array (num_layers*D, B, H), each sequence's state at its last valid step
        cache : for :meth:`backward`
        """
        return self._stack.forward(x, state, lengths, record, training)

    @overload
    def backward(
        self,
        dout: Any,
        dstate: np.ndarray | None = None,
        cache: RecurrentCache | None = None,
        record: Literal[False] = False,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]: ...

    @overload
    def backward(
        self,
        dout: Any,
        dstate: np.ndarray | None = None,
        cache: RecurrentCache | None = None,
        *,
        record: Literal[True],
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]: ...

    def backward(
        self,
        dout: Any,
        dstate: np.ndarray | None = None,
        cache: RecurrentCache | None = None,
        record: bool = False,
    ) -> Any:
        """Backpropagation through time.

        Parameters
        ----------
        dout : array (B, T, D*H)
            dL/dout.
        dstate : array dh_n (num_layers*D, B, H), optional (zeros)
        cache : the cache of this layer's :meth:`forward`
        record : bool
            Also return ``grad_record``: per layer-direction key, the (B, T) Euclidean norms of
            the total dL/dh_t (from the output at t and from step t+1).

        Returns
        -------
        dx : array (B, T, input_size)
        dh_0 : array (num_layers*D, B, H)
        grads : dict with the keys of :attr:`params`
        grad_record : dict of (B, T) arrays, only with ``record=True``
        """
        return self._stack.backward(dout, dstate, cache, record)
