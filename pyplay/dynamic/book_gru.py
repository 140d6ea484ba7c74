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

**A view of the core's GRU.** :class:`BookGRU` computes nothing itself: it runs a one-layer
:class:`pyplay.nn.GRU` with ``reset_after=False`` (the reset gate before :math:`W_{hn}`, this
slide's form; its equations are :func:`pyplay.nn.reference.gru_step`'s), float64, whose
parameters it writes from the book's before every ``forward``:

========================================  ===================================================
the book                                  :class:`pyplay.nn.GRU` (``reset_after=False``)
========================================  ===================================================
:math:`IW^{2,1}, LW^{2,6}, b^2`           the ``r`` rows of ``weight_ih``, ``weight_hh``,
                                          ``bias_ih``
:math:`IW^{4,1}, LW^{4,6}, b^4`           the ``z`` rows, negated (:math:`a^4 = 1 - z`)
:math:`IW^{1,1}, LW^{1,3}, b^1`           the ``n`` rows (``bias_hh`` held at 0)
:math:`a^2, a^4, a^1, a^6`                the recorded ``r``, :math:`1 - z`, ``n``, ``h``
:math:`a^3 = a^2 \circ a^6(t-1)`,         named from those (the fixed layers)
:math:`a^5 = a^1 - a^6(t-1)`
========================================  ===================================================

:meth:`BookGRU.backward` is the core's BPTT, its gradients named the same way. In the book's
notation, with :math:`g^6(t) = \partial F / \partial a^6(t)` (from the error and from step
:math:`t + 1`) and :math:`d^m = \partial F / \partial n^m`, it computes

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
)
from pyplay.nn.cell import check_flag

__all__ = ["BookGRU"]

_F64 = np.dtype(np.float64)
_LAYERS = (1, 2, 4)  # the layers with trained weights
_CORE = ((2, 1.0), (4, -1.0), (1, 1.0))  # the core's r, z, n rows: (layer, sign)


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

    Attributes
    ----------
    gru : pyplay.nn.GRU
        The network that computes (``reset_after=False``, float64); ``forward`` writes ``IW``,
        ``LW``, ``b`` into its parameters (module docstring), so they may be changed in place.
    """

    def __init__(self, IW: Any, LW: Any, b: Any) -> None:
        from pyplay.nn import GRU

        self.IW = check_input_weights(IW, _LAYERS)
        self.S, self.R = self.IW[1].shape
        self.LW = check_layers("LW", LW, _LAYERS, (self.S, self.S), "(S, S)")
        self.b = check_layers("b", b, _LAYERS, (self.S,), "(S,)")
        self.gru = GRU(self.R, self.S, dtype=_F64, rng=0, reset_after=False)
        self._to_core()

    def _to_core(self) -> None:
        """Write the book's weights into the core GRU (r, z, n rows; ``bias_hh`` zero)."""
        P = self.gru.params
        for name, book in (("weight_ih_l0", self.IW), ("weight_hh_l0", self.LW)):
            P[name][...] = np.concatenate([sign * book[m] for m, sign in _CORE])  # (3S, ...)
        P["bias_ih_l0"][...] = np.concatenate([sign * self.b[m] for m, sign in _CORE])  # (3S,)
        P["bias_hh_l0"][...] = 0.0

    def _from_core(self, x: np.ndarray) -> dict[int, np.ndarray]:
        """The core's r, z, n rows of ``x`` (3S, ...) as the book's layers 2, 4, 1."""
        S = self.S
        return {m: sign * x[k * S : (k + 1) * S] for k, (m, sign) in enumerate(_CORE)}

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
        """Run the network over ``p`` (B, T, R): the core GRU's forward, its record named.

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
        a0 = {6: check_initial("a6_0", a6_0, p.shape[0], self.S)}
        self._to_core()
        _, _, cache = self.gru.forward(p, a0[6][None], record=True)  # h_0 (1, B, S)
        assert cache.record is not None  # asked for with record=True
        rec = cache.record["l0"]  # (B, T, S) each: r, z, n, h
        a6 = np.array(rec["h"])  # (B, T, S)
        a6_prev = np.concatenate([a0[6][:, None], a6[:, :-1]], axis=1)  # a^6(t-1), (B, T, S)
        a = {1: np.array(rec["n"]), 2: np.array(rec["r"]), 4: 1.0 - rec["z"], 6: a6}
        a[3] = a[2] * a6_prev  # the reset delayed output, LW^{1,3}'s input
        a[5] = a[1] - a6_prev  # differencing: LW^{5,1} = I, LW^{5,6} = -I
        return BookTrace(p, dict(sorted(a.items())), a0, self, cache)

    def backward(self, da6: Any, cache: BookTrace) -> BookGrads:
        """Backpropagation through time: the core GRU's backward (the module docstring's
        equations), its gradients named the book's way.

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
        dp, dh0, g = self.gru.backward(da6, None, cache.core)
        return BookGrads(
            self._from_core(g["weight_ih_l0"]),
            self._from_core(g["weight_hh_l0"]),
            self._from_core(g["bias_ih_l0"]),
            {},
            dp,
            {6: dh0[0]},
        )
