r"""The LSTM kernel of :class:`~pyplay.nn.lstm.LSTM`: one layer, one direction, time-major.

The update equations of one step, forward and backward, with the optional diagonal peepholes
(Gers & Schmidhuber 2000; ``peephole=True``: ``i`` and ``f`` see :math:`c_{t-1}`, ``o`` sees
:math:`c_t`) and without the forget gate (``forget_gate=False``, the LSTM of Hochreiter &
Schmidhuber 1997: :math:`c_t = c_{t-1} + i_t g_t`), are written out in
:func:`pyplay.nn.reference.lstm_step` and :func:`~pyplay.nn.reference.lstm_step_backward`, in
torch's gate order ``i, f, g, o`` (``i, g, o`` without a forget gate), one line per equation:
read them first; ``tests/nn/test_recurrent_reference.py`` holds this kernel to them in float64.
Over a sequence (BPTT), :math:`\delta h_t` is the total gradient reaching :math:`h_t` (from the
output at ``t`` and from step ``t + 1``), :math:`\delta c_t` enters from step ``t + 1``, and
with :math:`\delta a_t` the gradients of the gates' pre-activations

.. math::

    \delta W_{hh} = \sum_t \delta a_t^\top h_{t-1}, \qquad
    \delta W_{ih} = \sum_t \delta a_t^\top x_t, \qquad
    \delta b_{ih} = \delta b_{hh} = \sum_t \delta a_t.

Since every :math:`\delta a` is :math:`\bar\delta c_t` or :math:`\delta h_t` times a factor known
after the forward pass, the kernel computes those factors for all steps at once before the BPTT
loop. Inside the kernel the gate rows are ordered ``o, i, f, g`` (PyTorch: ``i, f, g, o``;
without a forget gate ``o, i, g``) so that the sigmoid gates form one slab and the gates driven
by :math:`\bar\delta c_t` another; the activation scale of :mod:`pyplay.nn._ops` is folded into
the weights.

``gradient="cec"`` computes Hochreiter & Schmidhuber's truncated gradient instead of the true
one: error flows back in time only through the cell state (the constant error carousel), the
path :math:`\delta h_{t-1} = \delta a_t W_{hh}` through the gates' and the cell input's
recurrent weights is cut. It is exactly the gradient of the same network with :math:`h_{t-1}`
detached where it enters the gates (``W_hh h_{t-1}.detach()`` in PyTorch): :math:`\delta W_{hh}`
is still :math:`\sum_t \delta a_t^\top h_{t-1}`, :math:`\delta h_0 = 0`, and the paths through
:math:`c` (including the peepholes) are kept.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, final

import numpy as np

from pyplay.nn._ops import activate_gates, for_matmul, gate_mode, gate_scale, matmul
from pyplay.nn.cell import BackwardPass, Cell, CellGrads, Projection
from pyplay.nn.sequences import Ends

__all__ = ["GRADIENTS", "LSTMCell"]

GRADIENTS = ("full", "cec")  # the true gradient; the truncated one through the CEC only


@functools.lru_cache(maxsize=16)
def _kernel_order(H: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row permutations for ``n`` gate blocks: ``W[perm]`` puts torch's order (i, f, g, o; or
    i, g, o) in the kernel's (o first, the rest in order); ``W_k[back]`` undoes it. Read-only,
    shared between calls."""
    perm = np.concatenate([np.arange((n - 1) * H, n * H), np.arange(0, (n - 1) * H)])  # (nH,)
    back = np.argsort(perm)  # (nH,)
    perm.flags.writeable = back.flags.writeable = False
    return perm, back


@dataclass(frozen=True)
class _Weights:
    W: np.ndarray  # (nH, H) W_hh in kernel order
    Ws_T: np.ndarray  # (H, nH) scaled and transposed for the forward matmul
    mode: str  # gate activation mode of _ops
    w_cif: np.ndarray | None  # (n - 2, H) peepholes of i (and f), scaled
    w_co: np.ndarray | None  # (H,) peephole of o, scaled
    peep: dict[str, np.ndarray] | None  # weight_ci, [weight_cf,] weight_co unscaled


@dataclass(frozen=True)
class _Cache:
    Z: np.ndarray  # (T, B, n, H) gate activations o, i, [f,] g
    hs: np.ndarray  # (T+1, B, H) hs[0] = h0
    cs: np.ndarray  # (T+1, B, H) cs[0] = c0
    tanh_c: np.ndarray  # (T, B, H)
    w: _Weights


@final
class LSTMCell(Cell):
    """The LSTM kernel of :class:`~pyplay.nn.recurrent.Recurrent` (one layer, one direction,
    time-major; interface :class:`~pyplay.nn.cell.Cell`).

    Parameters
    ----------
    peephole : bool
        Diagonal peepholes (``weight_ci``, ``weight_cf`` if there is a forget gate, ``weight_co``).
    forget_gate : bool
        False: no forget gate (4H rows become 3H, gates ``i, g, o``), :math:`c_t = c_{t-1} + i g`.
    """

    has_cell = True
    gradients: tuple[str, ...] = GRADIENTS

    def __init__(self, peephole: bool = False, forget_gate: bool = True) -> None:
        self.peephole = peephole
        self.forget_gate = forget_gate
        self.n_gates = 4 if forget_gate else 3
        self.recorded: tuple[str, ...] = ("i", "f", "g", "o", "c", "h")
        if not forget_gate:
            self.recorded = ("i", "g", "o", "c", "h")

    def extra_shapes(self, H: int) -> dict[str, tuple[int, ...]]:
        """The peephole vectors when ``peephole=True``."""
        if not self.peephole:
            return {}
        names = ("weight_ci", "weight_cf", "weight_co")
        return {name: (H,) for name in names if self.forget_gate or name != "weight_cf"}

    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, _Weights]:
        """Permute the rows to o, i, [f,] g and fold in the activation scale of ``_ops``."""
        W_hh = p["weight_hh"]  # (nH, H)
        H, n = W_hh.shape[1], self.n_gates
        perm, _ = _kernel_order(H, n)
        mode = gate_mode(B * n * H)
        s = gate_scale((n - 1) * H, H, mode, W_hh.dtype)  # (nH,)
        W_x = p["weight_ih"][perm]  # (nH, F)
        b = (p["bias_ih"] + p["bias_hh"])[perm]  # (nH,)
        W = W_hh[perm]  # (nH, H)
        w_cif = w_co = peep = None
        if self.peephole:
            peep = {name: p[name].copy() for name in self.extra_shapes(H)}
            w_cif = np.stack([v for k, v in peep.items() if k != "weight_co"]) * s[0]  # (n-2, H)
            w_co = peep["weight_co"] * s[0]  # (H,)
        Ws_T = np.ascontiguousarray((W * s[:, None]).T)  # (H, nH)
        proj = Projection(W_fwd=W_x * s[:, None], b_fwd=b * s, W=W_x)
        return proj, _Weights(W, Ws_T, mode, w_cif, w_co, peep)

    def forward(
        self, XP: np.ndarray, w: _Weights, h0: np.ndarray, c0: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, _Cache]:
        """The recurrence; ``XP`` (T, B, nH) scaled input projections, overwritten by the gates."""
        T, B, G = XP.shape
        n = self.n_gates
        H = G // n
        Z = XP.reshape(T, B, n, H)  # gates o, i, [f,] g of every step
        hs = np.empty((T + 1, B, H), dtype=XP.dtype)
        cs = np.empty((T + 1, B, H), dtype=XP.dtype)
        tanh_c = np.empty((T, B, H), dtype=XP.dtype)
        hs[0] = h0
        cs[0] = 0.0 if c0 is None else c0
        hW = np.empty((B, G), dtype=XP.dtype)
        ig = np.empty((B, H), dtype=XP.dtype)
        mul, tanh, Ws_T, mode = np.multiply, np.tanh, w.Ws_T, w.mode
        for t in range(T):
            z = XP[t]  # (B, nH) view of Z[t]
            matmul(hs[t], Ws_T, out=hW)  # (B, nH)
            z += hW  # scaled pre-activations
            if w.w_cif is None:
                activate_gates(z, (n - 1) * H, mode)  # o, i, [f] = sigma(.), g = tanh(.)
            else:
                Z[t, :, 1 : n - 1] += w.w_cif * cs[t][:, None, :]  # i, [f] see c_{t-1}
                activate_gates(z[:, H:], (n - 2) * H, mode)  # i, [f,] g
            o, i, g = Z[t, :, 0], Z[t, :, 1], Z[t, :, n - 1]  # (B, H) each
            c = cs[t + 1]
            if self.forget_gate:
                mul(Z[t, :, 2], cs[t], out=c)  # f c_{t-1}
            else:
                c[...] = cs[t]  # the 1997 cell: no forget gate
            mul(i, g, out=ig)
            c += ig  # c_t = [f] c_{t-1} + i g
            if w.w_co is not None:
                o += w.w_co * c  # o sees c_t
                activate_gates(o, H, mode)
            tc = tanh_c[t]
            tanh(c, out=tc)
            mul(o, tc, out=hs[t + 1])  # h_t = o tanh(c_t)
        return hs, cs, _Cache(Z, hs, cs, tanh_c, w)

    def _backward_pass(
        self, kc: _Cache, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, full: bool
    ) -> BackwardPass:
        """BPTT (see the module docstring); ``full=False`` ("cec") cuts the recurrent path
        through ``h_{t-1}``."""
        Z, cs, tanh_c, w = kc.Z, kc.cs, kc.tanh_c, kc.w
        T, B, n, H = Z.shape
        o, i, g = Z[:, :, 0], Z[:, :, 1], Z[:, :, n - 1]  # (T, B, H) each
        # factors of delta a (for all steps at once): delta a_o = dh K_o, delta a_{i,f,g} = dc K
        K = np.empty_like(Z)  # (T, B, n, H)
        np.subtract(1.0, Z[:, :, : n - 1], out=K[:, :, : n - 1])
        K[:, :, : n - 1] *= Z[:, :, : n - 1]  # sigma' = s (1 - s) for o, i, [f]
        K[:, :, 0] *= tanh_c  # o: tanh(c_t) o (1 - o)
        K[:, :, 1] *= g  # i: g i (1 - i)
        if self.forget_gate:
            K[:, :, 2] *= cs[:-1]  # f: c_{t-1} f (1 - f)
        Kg = K[:, :, n - 1]
        np.multiply(g, g, out=Kg)
        np.subtract(1.0, Kg, out=Kg)
        Kg *= i  # g: i (1 - g^2)
        P = tanh_c * tanh_c  # (T, B, H)
        np.subtract(1.0, P, out=P)
        P *= o  # dc_t += dh_t o (1 - tanh^2 c_t)
        F_c: np.ndarray | None = None  # dc_{t-1}' = dc_t F_c (None: F_c = 1, no forget gate)
        if self.forget_gate:
            F_c = np.ascontiguousarray(Z[:, :, 2])  # (T, B, H) f, read step by step
        if w.peep is not None:
            P += K[:, :, 0] * w.peep["weight_co"]  # through o's peephole
            F_c = (1.0 if F_c is None else F_c) + K[:, :, 1] * w.peep["weight_ci"]  # (T, B, H)
            if self.forget_gate:
                F_c += K[:, :, 2] * w.peep["weight_cf"]  # through f's peephole
        dA = K  # (T, B, n, H) gradients of the pre-activations, in place of their factors
        dc = np.zeros((B, H), dtype=Z.dtype)
        tmp = np.empty((B, H), dtype=Z.dtype)
        mul, W = np.multiply, for_matmul(w.W)  # W (nH, H) laid out for the per-step product
        dc_b = dc[:, None, :]  # (B, 1, H) broadcast over i, [f,] g

        def step(t: int, dh: np.ndarray, dh_rec: np.ndarray) -> None:
            rows = ends.get(t)
            if rows is not None and dc_T is not None:
                dc[rows] += dc_T[rows]  # dL/dc_n enters at the sequence's last step
            da = dA[t]  # (B, n, H) holds K[t]
            da[:, 0] *= dh  # delta a_o
            mul(dh, P[t], out=tmp)
            np.add(dc, tmp, out=dc)  # delta c_t
            da[:, 1:] *= dc_b  # delta a_i, [a_f,] a_g
            if F_c is not None:
                mul(dc, F_c[t], out=dc)  # delta c_{t-1}'
            if full:
                matmul(da.reshape(B, n * H), W, out=dh_rec)  # (B, H) delta h_{t-1} from step t

        def finish(dW_hh: np.ndarray, dh0: np.ndarray) -> CellGrads:
            extra: dict[str, np.ndarray] = {}
            if w.peep is not None:
                extra["weight_ci"] = np.einsum("tbh,tbh->h", dA[:, :, 1], cs[:-1])  # (H,)
                if self.forget_gate:
                    extra["weight_cf"] = np.einsum("tbh,tbh->h", dA[:, :, 2], cs[:-1])  # (H,)
                extra["weight_co"] = np.einsum("tbh,tbh->h", dA[:, :, 0], cs[1:])  # (H,)
            dXP = dA.reshape(T, B, n * H)  # (T, B, nH)
            return CellGrads(dXP, dW_hh, None, extra, dh0, dc)  # db_hh = db_ih

        return BackwardPass(dA, step, finish)

    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Kernel rows o, i, [f,] g back to torch's i, [f,] g, o."""
        _, back = _kernel_order(g.dW_hh.shape[1], self.n_gates)
        return {
            "weight_ih": dW_ih[back],
            "weight_hh": g.dW_hh[back],
            "bias_ih": db_ih[back],
            "bias_hh": db_ih[back],  # both biases enter the same pre-activation
            **g.extra,
        }

    def record(self, kc: _Cache) -> dict[str, np.ndarray]:
        """Gates, cells and states, (T, B, H) each."""
        Z, n = kc.Z, self.n_gates
        gates = {"i": Z[:, :, 1], "f": Z[:, :, 2], "g": Z[:, :, n - 1], "o": Z[:, :, 0]}
        rec = {**gates, "c": kc.cs[1:], "h": kc.hs[1:]}
        return {name: rec[name] for name in self.recorded}
