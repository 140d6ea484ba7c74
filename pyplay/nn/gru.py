r"""Gated recurrent unit (Cho et al. 2014), PyTorch's formulation and layout (gates r, z, n).

The fast kernel. The update equations of one step, forward and backward, are written out in
:func:`pyplay.nn.reference.gru_step` and :func:`~pyplay.nn.reference.gru_step_backward`
(PyTorch's variant: the reset gate multiplies :math:`u_t = W_{hn} h_{t-1} + b_{hn}`, after
:math:`W_{hn}`), one line per equation: read them first; ``tests/nn/test_recurrent_reference.py``
holds this kernel to them in float64. Over a sequence (BPTT), :math:`\delta h_t` is the total
gradient reaching :math:`h_t`, from the output at ``t`` and from step ``t + 1``, and the weight
gradients are the sums of the steps':

.. math::

    \delta W_{hh} = \sum_t [\delta a_r, \delta a_z, \delta u_t]^\top h_{t-1}, \qquad
    \delta b_{hh} = \sum_t [\delta a_r, \delta a_z, \delta u_t], \qquad
    \delta W_{ih} = \sum_t [\delta a_r, \delta a_z, \delta a_n]^\top x_t.

With ``reset_after=False`` (:class:`GRU`'s option, the reference's too) the reset gate acts
before :math:`W_{hn}`: :math:`u_t = r_t \odot h_{t-1}`, :math:`n_t = \tanh(W_{in} x_t + b_{in} +
W_{hn} u_t + b_{hn})`; the n rows of :math:`\delta W_{hh}` are then :math:`\sum_t \delta
a_n^\top u_t` (:meth:`GRUCell._before_pass`).

Unlike the reference, the kernel adds :math:`b_{hr}, b_{hz}` to the input projection of all
steps at once, folds the activation scale of :mod:`pyplay.nn._ops` into the ``r, z`` rows,
computes the factors multiplying :math:`\delta h_t` and :math:`\delta a_n` for all steps before
the BPTT loop, and works in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, final

import numpy as np

from pyplay.nn._ops import activate_gates, for_matmul, gate_mode, gate_scale, matmul
from pyplay.nn.cell import BackwardPass, Cell, CellGrads, Projection, check_flag
from pyplay.nn.recurrent import Recurrent
from pyplay.nn.sequences import Ends

__all__ = ["GRU", "GRUCell"]


@dataclass(frozen=True)
class _Weights:
    W: np.ndarray  # (3H, H) W_hh
    Ws_T: np.ndarray  # (H, 3H) r, z rows scaled, transposed for the forward matmul
    b_hn: np.ndarray  # (H,)
    mode: str  # gate activation mode of _ops
    reset_after: bool = True


@dataclass(frozen=True)
class _Cache:
    Z: np.ndarray  # (T, B, 3, H) r, z, n
    U: np.ndarray  # (T, B, H) u_t = W_hn h_{t-1} + b_hn (reset_after=False: r_t h_{t-1})
    hs: np.ndarray  # (T+1, B, H) hs[0] = h0
    w: _Weights


@final
class GRUCell(Cell):
    """The GRU kernel of :class:`~pyplay.nn.recurrent.Recurrent` (one layer, one direction,
    time-major; interface :class:`~pyplay.nn.cell.Cell`)."""

    n_gates = 3
    recorded: tuple[str, ...] = ("r", "z", "n", "h")

    def __init__(self, reset_after: bool = True) -> None:
        self.reset_after = reset_after

    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, _Weights]:
        """``b_hr, b_hz`` join the input projection; ``b_hn`` stays inside ``r * (...)`` (joins
        it too with ``reset_after=False``)."""
        W_hh, b_hh = p["weight_hh"], p["bias_hh"]  # (3H, H), (3H,)
        H = W_hh.shape[1]
        mode = gate_mode(B * 2 * H)
        s = gate_scale(2 * H, 0, mode, W_hh.dtype, n_plain=H)  # (3H,) n is activated later
        keep = 0.0 if self.reset_after else 1.0  # b_hn into the projection?
        b = p["bias_ih"] + b_hh * np.repeat([1.0, 1.0, keep], H).astype(W_hh.dtype)  # (3H,)
        W_x = p["weight_ih"].copy()  # (3H, F) the weights this forward used, for backward
        proj = Projection(W_fwd=W_x * s[:, None], b_fwd=b * s, W=W_x)
        Ws_T = np.ascontiguousarray((W_hh * s[:, None]).T)  # (H, 3H)
        b_hn = b_hh[2 * H :].copy()
        return proj, _Weights(W_hh.copy(), Ws_T, b_hn, mode, self.reset_after)

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
        Ws_rz, W_n = Ws_T[:, : 2 * H], Ws_T[:, 2 * H :]  # (H, 2H), (H, H) views
        for t in range(T):
            rz = XP[t, :, : 2 * H]  # (B, 2H)
            r, z, n, u = Z[t, :, 0], Z[t, :, 1], Z[t, :, 2], U[t]  # (B, H) each
            if not w.reset_after:  # u_t = r_t h_{t-1}, then W_hn u_t
                rz += hs[t] @ Ws_rz
                activate_gates(rz, 2 * H, mode)  # r, z
                np.multiply(r, hs[t], out=u)
                n += u @ W_n  # (B, H)
            else:
                matmul(hs[t], Ws_T, out=hW)  # (B, 3H)
                rz += hW_rz
                activate_gates(rz, 2 * H, mode)  # r, z
                np.add(hW_n, b_hn, out=u)  # u_t
                np.multiply(r, u, out=ru)
                n += ru
            np.tanh(n, out=n)  # n_t
            h = hs[t + 1]
            np.subtract(hs[t], n, out=h)
            h *= z
            h += n  # h_t = n + z (h_{t-1} - n)
        return hs, None, _Cache(Z, U, hs, w)

    def _backward_pass(
        self, kc: _Cache, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, full: bool
    ) -> BackwardPass:
        """BPTT (see the module docstring); the true gradient only (``full`` is always True)."""
        if not kc.w.reset_after:
            return self._before_pass(kc)
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
        tmp = np.empty((B, H), dtype=Z.dtype)
        mul, W = np.multiply, for_matmul(w.W)  # W (3H, H) laid out for the per-step product

        def step(t: int, dh: np.ndarray, dh_rec: np.ndarray) -> None:
            da_n = dAn[t]
            da_n *= dh  # delta a_n
            da = dHH[t]  # (B, 3, H)
            da[:, 0] *= da_n  # delta a_r
            da[:, 1] *= dh  # delta a_z
            mul(da_n, r[t], out=da[:, 2])  # delta u
            matmul(da.reshape(B, 3 * H), W, out=dh_rec)  # (B, H)
            mul(dh, z[t], out=tmp)
            dh_rec += tmp  # delta h_{t-1} from step t

        def finish(dW_hh: np.ndarray, dh0: np.ndarray) -> CellGrads:
            db_hh = dHH.reshape(T * B, 3 * H).sum(axis=0)  # (3H,)
            dHH[:, :, 2] = dAn  # now dXP: the input projection of n sits outside r * (...)
            dXP = dHH.reshape(T, B, 3 * H)  # (T, B, 3H)
            return CellGrads(dXP, dW_hh, db_hh, {}, dh0, None)

        return BackwardPass(dHH, step, finish)

    def _before_pass(self, kc: _Cache) -> BackwardPass:
        r"""BPTT with ``reset_after=False``: :math:`\delta u_t = \delta a_n W_{hn}`,
        :math:`\delta a_r = \delta u_t\, h_{t-1} r_t (1 - r_t)`, :math:`\delta h_{t-1} = \delta
        h_t z_t + \delta u_t r_t + [\delta a_r, \delta a_z] [W_{hr}; W_{hz}]` (as
        :func:`pyplay.nn.reference.gru_step_backward`)."""
        Z, U, hs, w = kc.Z, kc.U, kc.hs, kc.w
        T, B, _, H = Z.shape
        r, z, n = Z[:, :, 0], Z[:, :, 1], Z[:, :, 2]  # (T, B, H) each
        K_n = (1.0 - z) * (1.0 - n * n)  # (T, B, H) delta a_n = dh K_n
        K = np.empty((T, B, 3, H), dtype=Z.dtype)  # r, z slots; the n slot stays 0 here
        K[:, :, 0] = r * (1.0 - r) * hs[:-1]  # delta a_r = delta u K_r
        K[:, :, 1] = (hs[:-1] - n) * z * (1.0 - z)  # delta a_z = dh K_z
        K[:, :, 2] = 0.0  # W_hn reads u_t, not h_{t-1}: its gradient is added in finish
        W_rz, W_n = for_matmul(w.W[: 2 * H]), for_matmul(w.W[2 * H :])  # (2H, H), (H, H)
        du = np.empty((B, H), dtype=Z.dtype)

        def step(t: int, dh: np.ndarray, dh_rec: np.ndarray) -> None:
            K_n[t] *= dh  # delta a_n
            da = K[t]  # (B, 3, H)
            matmul(K_n[t], W_n, out=du)  # delta u
            da[:, 0] *= du  # delta a_r
            da[:, 1] *= dh  # delta a_z
            matmul(da[:, :2].reshape(B, 2 * H), W_rz, out=dh_rec)  # (B, H)
            dh_rec += du * r[t] + dh * z[t]

        def finish(dW_hh: np.ndarray, dh0: np.ndarray) -> CellGrads:
            K[:, :, 2] = K_n  # now dXP: every bias sits in the input projection
            dXP = K.reshape(T, B, 3 * H)  # (T, B, 3H)
            dW_hh[2 * H :] = matmul(K_n.reshape(T * B, H).T, U.reshape(T * B, H))  # (H, H)
            return CellGrads(dXP, dW_hh, dXP.reshape(T * B, 3 * H).sum(axis=0), {}, dh0, None)

        return BackwardPass(K, step, finish)

    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Already in torch's layout."""
        return {"weight_ih": dW_ih, "weight_hh": g.dW_hh, "bias_ih": db_ih, "bias_hh": g.db_hh}

    def record(self, kc: _Cache) -> dict[str, np.ndarray]:
        """Gates and states, (T, B, H) each."""
        Z = kc.Z
        return {"r": Z[:, :, 0], "z": Z[:, :, 1], "n": Z[:, :, 2], "h": kc.hs[1:]}


@final
class GRU(Recurrent[np.ndarray]):
    """Multi-layer (bidirectional) GRU; batch-first ``(B, T, F)``, PyTorch's parameter names.

    :class:`~pyplay.nn.recurrent.Recurrent` with the :class:`GRUCell`; ``forward`` and
    ``backward`` are documented there (state: one array ``h``; record: ``r, z, n, h``).

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional, dtype, rng
        As :class:`~pyplay.nn.recurrent.Recurrent` (``torch.nn.GRU``'s, always ``batch_first``).
    reset_after : bool, keyword only
        True (torch's): the reset gate multiplies :math:`W_{hn} h_{t-1} + b_{hn}`. False: it
        multiplies :math:`h_{t-1}` before :math:`W_{hn}` (Cho et al. 2014, Keras's
        ``reset_after=False``, lecture 8's GRU, :class:`pyplay.dynamic.BookGRU`). No torch
        counterpart.

    Attributes
    ----------
    params : dict of str to ndarray
        ``weight_ih_l{k}`` (3H, F), ``weight_hh_l{k}`` (3H, H), ``bias_ih_l{k}``,
        ``bias_hh_l{k}`` (3H,), with ``_reverse`` for the backward direction; rows in gate
        order r, z, n. Updated in place by optimisers.
    """

    def __init__(self, *args: Any, reset_after: bool = True, **kwargs: Any) -> None:
        self.reset_after = check_flag("reset_after", reset_after)  # read by _make_cell
        super().__init__(*args, **kwargs)

    def _make_cell(self) -> GRUCell:
        return GRUCell(self.reset_after)
