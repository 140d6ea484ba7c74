r"""Long short-term memory (Hochreiter & Schmidhuber 1997) in PyTorch's layout and gate order.

The fast kernel. The update equations of one step, forward and backward, with the optional
diagonal peepholes (Gers & Schmidhuber 2000; ``peephole=True``: ``i`` and ``f`` see
:math:`c_{t-1}`, ``o`` sees :math:`c_t`), are written out in :func:`pyplay.nn.reference.lstm_step`
and :func:`~pyplay.nn.reference.lstm_step_backward`, in torch's gate order ``i, f, g, o``, one
line per equation: read them first; ``tests/test_recurrent_reference.py`` holds this kernel to
them in float64. Over a sequence (BPTT), :math:`\delta h_t` is the total gradient reaching
:math:`h_t` (from the output at ``t`` and from step ``t + 1``), :math:`\delta c_t` enters from
step ``t + 1``, and with :math:`\delta a_t` the gradients of the four pre-activations

.. math::

    \delta W_{hh} = \sum_t \delta a_t^\top h_{t-1}, \qquad
    \delta W_{ih} = \sum_t \delta a_t^\top x_t, \qquad
    \delta b_{ih} = \delta b_{hh} = \sum_t \delta a_t.

Since every :math:`\delta a` is :math:`\bar\delta c_t` or :math:`\delta h_t` times a factor known
after the forward pass, the kernel computes those factors for all steps at once before the BPTT
loop. Inside the kernel the gate rows are ordered ``o, i, f, g`` (PyTorch: ``i, f, g, o``) so
that the three sigmoid gates form one slab and the three gates driven by :math:`\bar\delta c_t`
another; the activation scale of :mod:`pyplay.nn._ops` is folded into the weights.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, final

import numpy as np

from pyplay._checks import check_float
from pyplay.nn._ops import activate_gates, for_matmul, gate_mode, gate_scale, matmul
from pyplay.nn.cell import CellGrads, Projection, check_flag
from pyplay.nn.recurrent import Recurrent
from pyplay.nn.sequences import Ends

__all__ = ["LSTM", "LSTMCell"]


@functools.lru_cache(maxsize=16)
def _kernel_order(H: int) -> tuple[np.ndarray, np.ndarray]:
    """Row permutations: ``W[perm]`` puts torch's gate blocks (i, f, g, o) in the kernel's order
    (o, i, f, g); ``W_k[back]`` undoes it. Read-only, shared between calls."""
    perm = np.concatenate([np.arange(3 * H, 4 * H), np.arange(0, 3 * H)])  # (4H,)
    back = np.argsort(perm)  # (4H,)
    perm.flags.writeable = back.flags.writeable = False
    return perm, back


@dataclass(frozen=True)
class _Weights:
    W: np.ndarray  # (4H, H) W_hh in kernel order
    Ws_T: np.ndarray  # (H, 4H) scaled and transposed for the forward matmul
    mode: str  # gate activation mode of _ops
    w_cif: np.ndarray | None  # (2, H) peepholes of i and f, scaled
    w_co: np.ndarray | None  # (H,) peephole of o, scaled
    peep: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # w_ci, w_cf, w_co unscaled


@dataclass(frozen=True)
class _Cache:
    Z: np.ndarray  # (T, B, 4, H) gate activations o, i, f, g
    hs: np.ndarray  # (T+1, B, H) hs[0] = h0
    cs: np.ndarray  # (T+1, B, H) cs[0] = c0
    tanh_c: np.ndarray  # (T, B, H)
    w: _Weights


@final
class LSTMCell:
    """The LSTM kernel of :class:`~pyplay.nn.recurrent.Recurrent` (one layer, one direction,
    time-major; interface :class:`~pyplay.nn.cell.Cell`)."""

    n_gates = 4
    has_cell = True
    recorded: tuple[str, ...] = ("i", "f", "g", "o", "c", "h")

    def __init__(self, peephole: bool = False) -> None:
        self.peephole = peephole

    def extra_shapes(self, H: int) -> dict[str, tuple[int, ...]]:
        """The peephole vectors when ``peephole=True``."""
        if not self.peephole:
            return {}
        return {"weight_ci": (H,), "weight_cf": (H,), "weight_co": (H,)}

    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, _Weights]:
        """Permute the rows to o, i, f, g and fold in the activation scale of ``_ops``."""
        W_hh = p["weight_hh"]  # (4H, H)
        H = W_hh.shape[1]
        perm, _ = _kernel_order(H)
        mode = gate_mode(B * 4 * H)
        s = gate_scale(3 * H, H, mode, W_hh.dtype)  # (4H,)
        W_x = p["weight_ih"][perm]  # (4H, F)
        b = (p["bias_ih"] + p["bias_hh"])[perm]  # (4H,)
        W = W_hh[perm]  # (4H, H)
        w_cif = w_co = peep = None
        if self.peephole:
            peep = (p["weight_ci"].copy(), p["weight_cf"].copy(), p["weight_co"].copy())
            w_cif = np.stack(peep[:2]) * s[0]  # (2, H)
            w_co = peep[2] * s[0]  # (H,)
        Ws_T = np.ascontiguousarray((W * s[:, None]).T)  # (H, 4H)
        proj = Projection(W_fwd=W_x * s[:, None], b_fwd=b * s, W=W_x)
        return proj, _Weights(W, Ws_T, mode, w_cif, w_co, peep)

    def forward(
        self, XP: np.ndarray, w: _Weights, h0: np.ndarray, c0: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, _Cache]:
        """The recurrence; ``XP`` (T, B, 4H) scaled input projections, overwritten by the gates."""
        T, B, G = XP.shape
        H = G // 4
        Z = XP.reshape(T, B, 4, H)  # gates o, i, f, g of every step
        hs = np.empty((T + 1, B, H), dtype=XP.dtype)
        cs = np.empty((T + 1, B, H), dtype=XP.dtype)
        tanh_c = np.empty((T, B, H), dtype=XP.dtype)
        hs[0] = h0
        cs[0] = 0.0 if c0 is None else c0
        hW = np.empty((B, G), dtype=XP.dtype)
        ig = np.empty((B, H), dtype=XP.dtype)
        mul, tanh, Ws_T, mode = np.multiply, np.tanh, w.Ws_T, w.mode
        for t in range(T):
            z = XP[t]  # (B, 4H) view of Z[t]
            matmul(hs[t], Ws_T, out=hW)  # (B, 4H)
            z += hW  # scaled pre-activations
            if w.w_cif is None:
                activate_gates(z, 3 * H, mode)  # o, i, f = sigma(.), g = tanh(.)
            else:
                Z[t, :, 1:3] += w.w_cif * cs[t][:, None, :]  # i, f see c_{t-1}
                activate_gates(z[:, H:], 2 * H, mode)  # i, f, g
            o, i, f, g = Z[t, :, 0], Z[t, :, 1], Z[t, :, 2], Z[t, :, 3]  # (B, H) each
            c = cs[t + 1]
            mul(f, cs[t], out=c)
            mul(i, g, out=ig)
            c += ig  # c_t = f c_{t-1} + i g
            if w.w_co is not None:
                o += w.w_co * c  # o sees c_t
                activate_gates(o, H, mode)
            tc = tanh_c[t]
            tanh(c, out=tc)
            mul(o, tc, out=hs[t + 1])  # h_t = o tanh(c_t)
        return hs, cs, _Cache(Z, hs, cs, tanh_c, w)

    def backward(
        self, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, kc: _Cache
    ) -> CellGrads:
        """BPTT, step by step from ``t = T - 1`` down to 0 (see the module docstring)."""
        Z, cs, tanh_c, w = kc.Z, kc.cs, kc.tanh_c, kc.w
        T, B, _, H = Z.shape
        o, i, f, g = Z[:, :, 0], Z[:, :, 1], Z[:, :, 2], Z[:, :, 3]  # (T, B, H) each
        # factors of delta a (for all steps at once): delta a_o = dh K_o, delta a_{i,f,g} = dc K
        K = np.empty_like(Z)  # (T, B, 4, H)
        np.subtract(1.0, Z[:, :, :3], out=K[:, :, :3])
        K[:, :, :3] *= Z[:, :, :3]  # sigma' = s (1 - s) for o, i, f
        K[:, :, 0] *= tanh_c  # o: tanh(c_t) o (1 - o)
        K[:, :, 1] *= g  # i: g i (1 - i)
        K[:, :, 2] *= cs[:-1]  # f: c_{t-1} f (1 - f)
        Kg = K[:, :, 3]
        np.multiply(g, g, out=Kg)
        np.subtract(1.0, Kg, out=Kg)
        Kg *= i  # g: i (1 - g^2)
        P = tanh_c * tanh_c  # (T, B, H)
        np.subtract(1.0, P, out=P)
        P *= o  # dc_t += dh_t o (1 - tanh^2 c_t)
        if w.peep is None:
            F_c = np.ascontiguousarray(f)  # (T, B, H) dc_{t-1}' = dc_t F_c, read step by step
        else:
            w_ci, w_cf, w_co = w.peep
            P += K[:, :, 0] * w_co  # through o's peephole
            F_c = f + K[:, :, 1] * w_ci + K[:, :, 2] * w_cf  # through i's and f's peepholes
        dA = K  # (T, B, 4, H) gradients of the pre-activations, in place of their factors
        dh_rec = np.empty((B, H), dtype=Z.dtype)  # delta a_{t+1} W_hh
        dc = np.zeros((B, H), dtype=Z.dtype)
        tmp = np.empty((B, H), dtype=Z.dtype)
        mul, W = np.multiply, for_matmul(w.W)  # W (4H, H) laid out for the per-step product
        dc_b = dc[:, None, :]  # (B, 1, H) broadcast over i, f, g
        for t in reversed(range(T)):
            dh = dH[t]  # (B, H) becomes the total dL/dh_t
            if t < T - 1:
                dh += dh_rec
            rows = ends.get(t)
            if rows is not None and dc_T is not None:
                dc[rows] += dc_T[rows]  # dL/dc_n enters at the sequence's last step
            da = dA[t]  # (B, 4, H) holds K[t]
            da[:, 0] *= dh  # delta a_o
            mul(dh, P[t], out=tmp)
            dc += tmp  # delta c_t
            da[:, 1:] *= dc_b  # delta a_i, a_f, a_g
            dc *= F_c[t]  # delta c_{t-1}'
            matmul(da.reshape(B, 4 * H), W, out=dh_rec)  # (B, H) delta h_{t-1} from step t
        flat = dA.reshape(T * B, 4 * H)  # (T*B, 4H)
        dW_hh = matmul(flat.T, kc.hs[:-1].reshape(T * B, H))  # (4H, H)
        extra: dict[str, np.ndarray] = {}
        if w.peep is not None:
            extra = {
                "weight_ci": np.einsum("tbh,tbh->h", dA[:, :, 1], cs[:-1]),  # (H,)
                "weight_cf": np.einsum("tbh,tbh->h", dA[:, :, 2], cs[:-1]),  # (H,)
                "weight_co": np.einsum("tbh,tbh->h", dA[:, :, 0], cs[1:]),  # (H,)
            }
        dXP = dA.reshape(T, B, 4 * H)  # (T, B, 4H)
        return CellGrads(dXP, dW_hh, None, extra, dh_rec, dc)  # db_hh = db_ih

    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Kernel rows o, i, f, g back to torch's i, f, g, o."""
        _, back = _kernel_order(g.dW_hh.shape[1])
        return {
            "weight_ih": dW_ih[back],
            "weight_hh": g.dW_hh[back],
            "bias_ih": db_ih[back],
            "bias_hh": db_ih[back],  # both biases enter the same pre-activation
            **g.extra,
        }

    def record(self, kc: _Cache) -> dict[str, np.ndarray]:
        """Gates, cells and states, (T, B, H) each."""
        Z = kc.Z
        return {
            "i": Z[:, :, 1],
            "f": Z[:, :, 2],
            "g": Z[:, :, 3],
            "o": Z[:, :, 0],
            "c": kc.cs[1:],
            "h": kc.hs[1:],
        }


@final
class LSTM(Recurrent[tuple[np.ndarray, np.ndarray]]):
    """Multi-layer (bidirectional) LSTM; batch-first ``(B, T, F)``, PyTorch's parameter names.

    :class:`~pyplay.nn.recurrent.Recurrent` with the :class:`LSTMCell`; ``forward`` and
    ``backward`` are documented there (state: a tuple ``(h, c)``; record: ``i, f, g, o, c, h``).

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional, dtype, rng
        As :class:`~pyplay.nn.recurrent.Recurrent` (``torch.nn.LSTM``'s, always ``batch_first``),
        in that order.
    peephole : bool, keyword only
        Add diagonal peepholes ``weight_ci_l{k}``, ``weight_cf_l{k}``, ``weight_co_l{k}`` (H,):
        ``i`` and ``f`` see ``c_{t-1}``, ``o`` sees ``c_t``. No torch counterpart.
    forget_bias : float, keyword only
        Added to the initial forget-gate slice of ``bias_ih`` (a plain parameter afterwards).

    Attributes
    ----------
    params : dict of str to ndarray
        ``weight_ih_l{k}`` (4H, F), ``weight_hh_l{k}`` (4H, H), ``bias_ih_l{k}``,
        ``bias_hh_l{k}`` (4H,), with ``_reverse`` for the backward direction; rows in gate
        order i, f, g, o. Updated in place by optimisers.
    """

    def __init__(
        self, *args: Any, peephole: bool = False, forget_bias: float = 0.0, **kwargs: Any
    ) -> None:
        self.peephole = check_flag("peephole", peephole)  # read by _make_cell
        self.forget_bias = check_float("forget_bias", forget_bias)
        super().__init__(*args, **kwargs)
        if self.forget_bias and not self.bias:
            raise ValueError(
                f"forget_bias needs bias=True (it initialises bias_ih), got {forget_bias!r}"
            )
        H = self.hidden_size
        for name, value in self.params.items():
            if name.startswith("bias_ih"):
                value[H : 2 * H] += self.forget_bias  # the f rows

    def _make_cell(self) -> LSTMCell:
        return LSTMCell(self.peephole)
