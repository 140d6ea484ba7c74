r"""Elman recurrent network in PyTorch's layout, with "tanh", "relu" or "linear" (purelin) units.

Forward, for each step:

.. math::

    a_t = W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}, \qquad h_t = \phi(a_t)

Backward (BPTT), with :math:`\delta h_t` the total gradient reaching :math:`h_t` (from the output
at ``t`` and from step ``t + 1``):

.. math::

    \delta a_t = \delta h_t \odot \phi'(a_t), \qquad
    \delta h_{t-1} \mathrel{+}= \delta a_t W_{hh}, \qquad
    \delta W_{hh} = \sum_t \delta a_t^\top h_{t-1}, \qquad
    \delta W_{ih} = \sum_t \delta a_t^\top x_t,

with :math:`\phi' = 1 - h_t^2` (tanh), :math:`[a_t > 0]` (relu) or 1 (linear). Over many steps
:math:`\delta h` is multiplied by :math:`\phi' W_{hh}` again and again: this product is what
makes the gradient vanish (or explode), the data behind ``backward(record=True)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, final

import numpy as np

from pyplay._checks import check_choice
from pyplay.nn._ops import matmul
from pyplay.nn.cell import BackwardPass, Cell, CellGrads, Projection
from pyplay.nn.recurrent import Recurrent
from pyplay.nn.sequences import Ends

__all__ = ["NONLINEARITIES", "RNN", "RNNCell"]

NONLINEARITIES = ("tanh", "relu", "linear")


@dataclass(frozen=True)
class _Weights:
    W: np.ndarray  # (H, H) W_hh
    W_T: np.ndarray  # (H, H) W_hh^T, contiguous for the forward matmul


@dataclass(frozen=True)
class _Cache:
    A: np.ndarray  # (T, B, H) pre-activations
    hs: np.ndarray  # (T+1, B, H) hs[0] = h0
    w: _Weights


@final
class RNNCell(Cell):
    """The Elman kernel of :class:`~pyplay.nn.recurrent.Recurrent` (one layer, one
    direction, time-major; interface :class:`~pyplay.nn.cell.Cell`)."""

    n_gates = 1
    recorded: tuple[str, ...] = ("a", "h")

    def __init__(self, nonlinearity: str = "tanh") -> None:
        self.nonlinearity = check_choice("nonlinearity", nonlinearity, NONLINEARITIES)

    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, _Weights]:
        """Both biases go into the input projection."""
        W_hh = p["weight_hh"]  # (H, H)
        W_x = p["weight_ih"].copy()  # (H, F) the weights this forward used, for backward
        proj = Projection(W_fwd=W_x, b_fwd=p["bias_ih"] + p["bias_hh"], W=W_x)
        return proj, _Weights(W_hh.copy(), np.ascontiguousarray(W_hh.T))

    def _phi(self, a: np.ndarray, out: np.ndarray) -> None:
        if self.nonlinearity == "tanh":
            np.tanh(a, out=out)
        elif self.nonlinearity == "relu":
            np.maximum(a, 0.0, out=out)
        else:
            np.copyto(out, a)

    def forward(
        self, XP: np.ndarray, w: _Weights, h0: np.ndarray, c0: np.ndarray | None
    ) -> tuple[np.ndarray, None, _Cache]:
        """The recurrence; ``XP`` (T, B, H) input projections, overwritten by the a_t."""
        T, B, H = XP.shape
        A = XP  # (T, B, H) pre-activations, filled in place
        hs = np.empty((T + 1, B, H), dtype=XP.dtype)
        hs[0] = h0
        hW = np.empty((B, H), dtype=XP.dtype)
        for t in range(T):
            matmul(hs[t], w.W_T, out=hW)  # (B, H)
            A[t] += hW  # a_t
            self._phi(A[t], out=hs[t + 1])  # h_t = phi(a_t)
        return hs, None, _Cache(A, hs, w)

    def _backward_pass(
        self, kc: _Cache, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, full: bool
    ) -> BackwardPass:
        """BPTT (see the module docstring); the true gradient only (``full`` is always True)."""
        A, hs, W = kc.A, kc.hs, kc.w.W
        if self.nonlinearity == "tanh":
            dphi: np.ndarray | None = 1.0 - hs[1:] * hs[1:]  # (T, B, H)
        elif self.nonlinearity == "relu":
            dphi = (A > 0).astype(A.dtype)  # (T, B, H)
        else:
            dphi = None  # phi' = 1: delta a_t is delta h_t
        dA = dH if dphi is None else dphi  # (T, B, H) delta a_t, in place of phi'(a_t)

        def step(t: int, dh: np.ndarray, dh_rec: np.ndarray) -> None:
            if dphi is not None:
                dA[t] *= dh  # delta a_t = delta h_t phi'(a_t)
            matmul(dA[t], W, out=dh_rec)  # (B, H) delta h_{t-1} from step t

        def finish(dW_hh: np.ndarray, dh0: np.ndarray) -> CellGrads:
            return CellGrads(dA, dW_hh, None, {}, dh0, None)  # db_hh = db_ih

        return BackwardPass(dA, step, finish)

    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Already in torch's layout; both biases get the same gradient."""
        return {"weight_ih": dW_ih, "weight_hh": g.dW_hh, "bias_ih": db_ih, "bias_hh": db_ih.copy()}

    def record(self, kc: _Cache) -> dict[str, np.ndarray]:
        """Pre-activations and states, (T, B, H) each."""
        return {"a": kc.A, "h": kc.hs[1:]}


@final
class RNN(Recurrent[np.ndarray]):
    """Multi-layer (bidirectional) Elman RNN; batch-first ``(B, T, F)``, PyTorch's names.

    :class:`~pyplay.nn.recurrent.Recurrent` with the :class:`RNNCell`; ``forward`` and
    ``backward`` are documented there (state: one array ``h``; record: ``a, h``).

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional, dtype, rng
        As :class:`~pyplay.nn.recurrent.Recurrent` (``torch.nn.RNN``'s, always ``batch_first``),
        in torch's order, with ``nonlinearity`` fourth.
    nonlinearity : {"tanh", "relu", "linear"}
        "tanh" and "relu" as torch; "linear" is the textbook's purelin (no torch counterpart).

    Attributes
    ----------
    params : dict of str to ndarray
        ``weight_ih_l{k}`` (H, F), ``weight_hh_l{k}`` (H, H), ``bias_ih_l{k}``, ``bias_hh_l{k}``
        (H,), with ``_reverse`` for the backward direction. Updated in place by optimisers.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self.nonlinearity = check_choice("nonlinearity", nonlinearity, NONLINEARITIES)
        super().__init__(input_size, hidden_size, num_layers, *args, **kwargs)

    def _make_cell(self) -> RNNCell:
        return RNNCell(self.nonlinearity)
