r"""The lecture's GRU as a layered digital dynamic network (LDDN), in Hagan's notation.

Six layers of ``S`` neurons, one input ``p(t)`` of ``R`` elements, the output :math:`a^6(t)`
fed back with one delay:

.. math::

    \begin{aligned}
    a^2(t) &= \mathrm{logsig}(IW^{2,1} p(t) + LW^{2,6} a^6(t-1) + b^2) && \text{reset gate} \\
    a^3(t) &= a^2(t) \circ a^6(t-1) && \text{the reset delayed output} \\
    a^1(t) &= \mathrm{tansig}(IW^{1,1} p(t) + LW^{1,3} a^3(t) + b^1) && \text{input layer
        (the candidate)} \\
    a^4(t) &= \mathrm{logsig}(IW^{4,1} p(t) + LW^{4,6} a^6(t-1) + b^4) && \text{update gate} \\
    a^5(t) &= a^1(t) - a^6(t-1) && \text{differencing: } LW^{5,1} = I,\ LW^{5,6} = -I \\
    a^6(t) &= a^4(t) \circ a^5(t) + a^6(t-1)
        = a^4(t) \circ a^1(t) + [1 - a^4(t)] \circ a^6(t-1) && \text{output}
    \end{aligned}

The reset gate acts on the delayed output *before* it enters the input layer ("this resets the
memory"), and the output is a weighted average of the candidate :math:`a^1(t)` and the previous
output. :math:`LW^{5,1}`, :math:`LW^{5,6}` and the gating (Hadamard) connections are fixed, not
trained.

Which numbers are the lecture's: :math:`a^4` the update gate, layer 5 the differencing layer
(:math:`a^5 = a^1(t) - a^6(t-1)`, :math:`LW^{5,1} = I`, :math:`LW^{5,6} = -I`), layer 6 the
output, layer 1 the "processed input" (the candidate). This module's choice (the figure is not
in the text): 2 the reset gate, 3 the reset-gated delayed output feeding layer 1.

PyTorch's GRU (:class:`pyplay.nn.GRU`, gates ``r, z, n``) differs from the slide in two places,
so :meth:`BookGRU.from_torch` maps it exactly only in a special case:

1. its output is :math:`h_t = (1 - z_t) n_t + z_t h_{t-1}`: the slide's update gate is
   :math:`a^4 = 1 - z = \mathrm{logsig}(-(W_{iz} p + W_{hz} h + b_z))`, so layer 4 takes the
   negated ``z`` weights and bias. This is exact.
2. its reset gate multiplies *after* the weight, :math:`r \circ (W_{hn} h_{t-1} + b_{hn})`,
   where the slide has :math:`LW^{1,3} (r \circ h_{t-1})` and no bias there. The two agree
   when :math:`W_{hn}` is diagonal (a diagonal matrix commutes with the Hadamard product) and
   :math:`b_{hn} = 0`. Otherwise ``from_torch`` maps :math:`LW^{1,3} = W_{hn}` and
   :math:`b^1 = b_{in} + b_{hn}` (exact when the reset gate is fully open, :math:`r = 1`),
   and the outputs differ; ``from_torch(gru, strict=True)`` refuses such a GRU.

BPTT: with :math:`g^6(t) = \partial F / \partial a^6(t)` (from the error and from step
:math:`t + 1`) and :math:`d^m = \partial F / \partial n^m`,

.. math::

    \begin{aligned}
    d^4 &= \dot F^4 \circ a^5 \circ g^6, \quad
    d^1 = \dot F^1 \circ a^4 \circ g^6, \quad
    g^3 = [LW^{1,3}]^T d^1, \quad
    d^2 = \dot F^2 \circ a^6(t-1) \circ g^3 \\
    g^6(t-1) &\mathrel{+}= (1 - a^4) \circ g^6 + a^2 \circ g^3 + [LW^{2,6}]^T d^2
        + [LW^{4,6}]^T d^4.
    \end{aligned}
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from pyplay.dynamic.book_lstm import (
    BookGrads,
    BookTrace,
    check_initial,
    check_input,
    check_input_weights,
    check_layers,
    check_one_layer,
    check_trace,
    zero_grads,
)
from pyplay.dynamic.transfer import logsig, tansig
from pyplay.nn.cell import check_flag

__all__ = ["BookGRU"]

_F64 = np.dtype(np.float64)
_LAYERS = (1, 2, 4)  # the layers with trained weights


class BookGRU:
    """The lecture's GRU: layers 1-6 in Hagan's notation (see the module docstring).

    Parameters
    ----------
    IW : dict of int to array (S, R)
        :math:`IW^{m,1}` of the layers ``m`` = 1 (input), 2 (reset gate), 4 (update gate).
    LW : dict of int to array (S, S)
        ``LW[1]`` is :math:`LW^{1,3}` (from the reset-gated delayed output :math:`a^3(t)`),
        ``LW[2]`` and ``LW[4]`` are :math:`LW^{2,6}`, :math:`LW^{4,6}` (from :math:`a^6(t-1)`).
    b : dict of int to array (S,)
        :math:`b^1, b^2, b^4`.
    """

    def __init__(self, IW: Any, LW: Any, b: Any) -> None:
        self.IW = check_input_weights(IW, _LAYERS)
        self.S, self.R = self.IW[1].shape
        self.LW = check_layers("LW", LW, _LAYERS, (self.S, self.S), "(S, S)")
        self.b = check_layers("b", b, _LAYERS, (self.S,), "(S,)")

    @classmethod
    def from_torch(cls, gru: Any, *, strict: bool = False) -> BookGRU:
        """The book's layers of a one-layer, one-direction :class:`pyplay.nn.GRU`.

        ``r -> 2``; ``z -> 4`` negated (:math:`a^4 = 1 - z`); ``n -> 1`` with
        :math:`LW^{1,3} = W_{hn}` and :math:`b^1 = b_{in} + b_{hn}`. Exact only when
        :math:`W_{hn}` is diagonal and :math:`b_{hn} = 0` (module docstring); ``strict=True``
        raises a ValueError otherwise.
        """
        from pyplay.nn import GRU

        check_one_layer("gru", gru, GRU)
        strict = check_flag("strict", strict)
        H = gru.hidden_size
        P = {k: v.astype(_F64) for k, v in gru.params.items()}
        W_ih, W_hh = P["weight_ih_l0"], P["weight_hh_l0"]  # (3H, R), (3H, H)
        b_ih = P["bias_ih_l0"] if gru.bias else np.zeros(3 * H)  # (3H,)
        b_hh = P["bias_hh_l0"] if gru.bias else np.zeros(3 * H)  # (3H,)
        r, z, n = slice(0, H), slice(H, 2 * H), slice(2 * H, 3 * H)
        W_hn = W_hh[n]  # (H, H)
        off_diagonal = float(np.max(np.abs(W_hn - np.diag(np.diag(W_hn)))))
        b_hn = float(np.max(np.abs(b_hh[n])))
        if strict and (off_diagonal > 0 or b_hn > 0):
            raise ValueError(
                "gru must have a diagonal weight_hh n block (W_hn) and bias_hh n block (b_hn) "
                "= 0 to map exactly (strict=True), got max |off-diagonal W_hn| = "
                f"{off_diagonal:.3g}, max |b_hn| = {b_hn:.3g}"
            )
        return cls(
            {1: W_ih[n], 2: W_ih[r], 4: -W_ih[z]},
            {1: W_hn, 2: W_hh[r], 4: -W_hh[z]},
            {1: b_ih[n] + b_hh[n], 2: b_ih[r] + b_hh[r], 4: -(b_ih[z] + b_hh[z])},
        )

    def forward(self, p: Any, a6_0: Any = None) -> BookTrace:
        """Run the network over ``p`` (B, T, R).

        Parameters
        ----------
        p : array (B, T, R)
        a6_0 : array (B, S), optional
            The initial condition :math:`a^6(0)`; zeros if None.

        Returns
        -------
        BookTrace
            ``a[1]`` .. ``a[6]`` (B, T, S) each; the output is ``a[6]``.
        """
        p = check_input(p, self.R)
        B, T, _ = p.shape
        a0 = {6: check_initial("a6_0", a6_0, B, self.S)}
        a = {m: np.empty((B, T, self.S)) for m in range(1, 7)}  # (B, T, S) each
        IW, LW, b = self.IW, self.LW, self.b
        a6 = a0[6]  # (B, S) the delayed output a^6(t-1)
        for t in range(T):
            p_t = p[:, t]  # (B, R)
            a[2][:, t] = logsig(p_t @ IW[2].T + a6 @ LW[2].T + b[2])  # reset gate
            a[3][:, t] = a[2][:, t] * a6  # reset before the input layer
            a[1][:, t] = tansig(p_t @ IW[1].T + a[3][:, t] @ LW[1].T + b[1])  # candidate
            a[4][:, t] = logsig(p_t @ IW[4].T + a6 @ LW[4].T + b[4])  # update gate
            a[5][:, t] = a[1][:, t] - a6  # differencing: LW^{5,1} = I, LW^{5,6} = -I
            a6 = a[6][:, t] = a[4][:, t] * a[5][:, t] + a6
        return BookTrace(p, a, a0, self)

    def backward(self, da6: Any, cache: BookTrace) -> BookGrads:
        """Backpropagation through time (the module docstring's equations).

        Parameters
        ----------
        da6 : array (B, T, S)
            :math:`\\partial^e F / \\partial a^6(t)` at every step.
        cache : BookTrace
            The trace of this network's :meth:`forward`.

        Returns
        -------
        BookGrads
            ``IW``, ``LW``, ``b`` like the weights (``LW[1]`` is :math:`LW^{1,3}`), no
            peepholes; ``p`` (B, T, R); ``a0[6]`` (B, S).
        """
        da6 = check_trace(cache, self, da6, self.S)
        p, a, a0 = cache.p, cache.a, cache.a0
        T = p.shape[1]
        g = zero_grads(self, p)
        g6_next = np.zeros_like(a0[6])  # dF/da^6(t) from step t + 1, (B, S)
        for t in reversed(range(T)):
            a1, a2, a3, a4, a5 = (a[m][:, t] for m in range(1, 6))  # (B, S) each
            a6_prev = a[6][:, t - 1] if t > 0 else a0[6]  # (B, S)
            g6 = da6[:, t] + g6_next
            d = {4: g6 * a5 * a4 * (1.0 - a4), 1: g6 * a4 * (1.0 - a1 * a1)}  # (B, S) each
            g3 = d[1] @ self.LW[1]  # dF/da^3(t), (B, S)
            d[2] = g3 * a6_prev * a2 * (1.0 - a2)
            g6_next = (1.0 - a4) * g6 + a2 * g3 + d[2] @ self.LW[2] + d[4] @ self.LW[4]
            source = {1: a3, 2: a6_prev, 4: a6_prev}  # what LW[m] multiplies, (B, S)
            for m in _LAYERS:
                g.add_layer_step(m, t, d[m], p[:, t], source[m], self.IW[m])
        return replace(g, a0={6: g6_next})
