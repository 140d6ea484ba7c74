r"""The lecture's LSTM as a layered digital dynamic network (LDDN), in Hagan's notation.

Six layers of ``S`` neurons, one input ``p(t)`` of ``R`` elements, and the gated output
:math:`a^6(t)` fed back with one delay to the four layers that have weights:

.. math::

    \begin{aligned}
    n^m(t) &= IW^{m,1} p(t) + LW^{m,6} a^6(t-1) + b^m \;[+\, LW^{m,5} a^5(\cdot)],
        \qquad m = 1, 2, 3, 4 \\
    a^1(t) &= \mathrm{tansig}(n^1(t)) && \text{input layer} \\
    a^2(t) &= \mathrm{logsig}(n^2(t)) && \text{input gate} \\
    a^3(t) &= \mathrm{logsig}(n^3(t)) && \text{feedback (forget) gate, bias } b^3 \\
    a^5(t) &= a^3(t) \circ a^5(t-1) + a^2(t) \circ a^1(t) && \text{CEC: } LW^{5,5} = I
        \text{, purelin} \\
    a^4(t) &= \mathrm{logsig}(n^4(t)) && \text{output gate} \\
    a^6(t) &= a^4(t) \circ \mathrm{tansig}(a^5(t)) && \text{gated output}
    \end{aligned}

:math:`\circ` is the Hadamard product; the CEC's weight :math:`LW^{5,5} = I` and the
weights into the products (the gating, and the output layer's) are fixed to the identity, not
trained. The bracketed peephole terms (the lecture's "feed back the CEC output :math:`a^5(t)`
to the gate layers") are diagonal: :math:`LW^{2,5}` and :math:`LW^{3,5}` see
:math:`a^5(t-1)`, :math:`LW^{4,5}` sees :math:`a^5(t)` (Gers & Schmidhuber 2000, as
:class:`pyplay.nn.LSTM` with ``peephole=True``). Without the forget gate
(the original LSTM, ``forget_gate=False``) layer 3 is absent and :math:`a^3(t) = 1`:
:math:`a^5(t) = a^5(t-1) + a^2(t) \circ a^1(t)`; the trace then holds ones for :math:`a^3`.

Which numbers are the lecture's: it pins the CEC as layer 5 (:math:`LW^{5,5} = I`, its output
:math:`a^5(t)`, which the peepholes feed back) and the forget-gate bias as :math:`b^3` (so the
forget gate is layer 3). The slide's figure is not in the text, so the other numbers are this
module's choice: 1 the input layer (tansig), 2 the input gate, 4 the output gate, 6 the gated
output (fed back with one delay to layers 1-4). :class:`pyplay.nn.LSTM`'s gates map
``i -> 2, f -> 3, g -> 1, o -> 4``, its cell state :math:`c_t` is :math:`a^5(t)` and its
hidden state :math:`h_t` is :math:`a^6(t)` (:meth:`BookLSTM.from_torch`).

BPTT in the same notation, with :math:`\partial F / \partial a^m(t)` the total derivative
(from the error at ``t`` and from step ``t + 1``), :math:`\dot F^m` the transfer derivatives
(:math:`1 - (a^1)^2` for tansig, :math:`a (1 - a)` for logsig) and :math:`d^m(t) = \partial F /
\partial n^m(t)`:

.. math::

    \begin{aligned}
    d^4(t) &= \dot F^4 \circ \mathrm{tansig}(a^5(t)) \circ \partial F / \partial a^6(t) \\
    \partial F / \partial a^5(t) &\mathrel{+}= a^4(t) \circ (1 - \mathrm{tansig}^2(a^5(t)))
        \circ \partial F / \partial a^6(t) + LW^{4,5} d^4(t) \\
    d^1 &= \dot F^1 \circ a^2 \circ \partial F / \partial a^5, \quad
    d^2 = \dot F^2 \circ a^1 \circ \partial F / \partial a^5, \quad
    d^3 = \dot F^3 \circ a^5(t-1) \circ \partial F / \partial a^5 \\
    \partial F / \partial a^5(t-1) &= a^3(t) \circ \partial F / \partial a^5(t)
        + LW^{2,5} d^2(t) + LW^{3,5} d^3(t), \qquad
    \partial F / \partial a^6(t-1) = \textstyle\sum_m [LW^{m,6}]^T d^m(t)
    \end{aligned}

and :math:`\partial F / \partial IW^{m,1} = \sum_t d^m(t)\, p(t)^T`, :math:`\partial F /
\partial LW^{m,6} = \sum_t d^m(t)\, a^6(t-1)^T`, :math:`\partial F / \partial b^m = \sum_t
d^m(t)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_shape
from pyplay.dynamic.transfer import logsig, tansig
from pyplay.nn.cell import check_flag

__all__ = ["BookGrads", "BookLSTM", "BookTrace"]

_F64 = np.dtype(np.float64)  # the book's networks run in float64


@dataclass(frozen=True)
class BookTrace:
    """Every layer's output over time, from a book network's ``forward``.

    Attributes
    ----------
    p : ndarray (B, T, R)
        The input sequence.
    a : dict of int to ndarray (B, T, S)
        ``a[m][:, t]`` is :math:`a^m(t + 1)`, the output of layer ``m`` at step ``t + 1``.
    a0 : dict of int to ndarray (B, S)
        The initial conditions of the delayed layers: ``a0[6]`` is :math:`a^6(0)` (and for
        the LSTM ``a0[5]`` is :math:`a^5(0)`).
    owner : object
        The network whose ``forward`` made this trace.
    """

    p: np.ndarray
    a: dict[int, np.ndarray]
    a0: dict[int, np.ndarray]
    owner: object


@dataclass(frozen=True)
class BookGrads:
    """Gradients of a book network, keyed like its weights (``IW[m]``, ``LW[m]``, ``b[m]``,
    ``peephole[m]``), and of its input ``p`` (B, T, R) and initial conditions ``a0[l]``."""

    IW: dict[int, np.ndarray]
    LW: dict[int, np.ndarray]
    b: dict[int, np.ndarray]
    peephole: dict[int, np.ndarray]
    p: np.ndarray
    a0: dict[int, np.ndarray]

    def add_layer_step(
        self, m: int, t: int, d: np.ndarray, p_t: np.ndarray, source: np.ndarray, IW: np.ndarray
    ) -> None:
        r"""Add layer m's share at step t, from :math:`d^m(t) = \partial F / \partial n^m(t)`
        ``d`` (B, S), the input ``p_t`` (B, R), what :math:`LW^m` multiplies ``source`` (B, S)
        and :math:`IW^{m,1}` ``IW`` (S, R): :math:`\partial F / \partial p(t) \mathrel{+}=
        d^m IW^{m,1}`, :math:`g_{IW} \mathrel{+}= {d^m}^\top p(t)`, :math:`g_{LW} \mathrel{+}=
        {d^m}^\top \mathrm{source}`, :math:`g_b \mathrel{+}= \sum_{rows} d^m`."""
        self.p[:, t] += d @ IW  # (B, R)
        self.IW[m] += d.T @ p_t  # (S, R)
        self.LW[m] += d.T @ source  # (S, S)
        self.b[m] += d.sum(axis=0)  # (S,)


def zero_grads(
    net: Any, p: np.ndarray, peephole: Mapping[int, np.ndarray] | None = None
) -> BookGrads:
    """Zero gradients keyed like ``net``'s weights (``IW[m]`` (S, R), ``LW[m]`` (S, S),
    ``b[m]`` and ``peephole[m]`` (S,)), ``p`` like the input (B, T, R) and no ``a0`` yet: what a
    backward pass adds into, step by step."""

    def zeros(weights: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
        return {m: np.zeros_like(w) for m, w in weights.items()}

    return BookGrads(
        zeros(net.IW), zeros(net.LW), zeros(net.b), zeros(peephole or {}), np.zeros_like(p), {}
    )


def check_layers(
    name: str, value: Any, layers: tuple[int, ...], shape: tuple[int | None, ...], layout: str
) -> dict[int, np.ndarray]:
    """``value`` as a dict ``{m: float64 array}`` with exactly the keys ``layers``, every array
    of ``shape`` (``None`` matches any size); errors name ``name[m]``."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{name} must be a dict of layer number to array {layout}, got {type(value).__name__}"
        )
    if sorted(value) != sorted(layers):
        raise ValueError(f"{name} must have the layers {list(layers)}, got {sorted(value)}")
    out: dict[int, np.ndarray] = {}
    for m in layers:
        arr = check_array(f"{name}[{m}]", value[m], ndim=len(shape), dtype=_F64, layout=layout)
        check_shape(f"{name}[{m}]", arr, shape, layout)
        out[m] = arr.copy()
    return out


def check_one_layer(name: str, module: Any, kind: type[Any]) -> None:
    """``module`` (argument ``name``) must be a one-layer, one-direction ``kind``."""
    if not isinstance(module, kind):
        raise TypeError(f"{name} must be a pyplay.nn.{kind.__name__}, got {type(module).__name__}")
    if module.num_layers != 1 or module.bidirectional:
        raise ValueError(
            f"{name} must have num_layers=1 and bidirectional=False, got "
            f"num_layers={module.num_layers}, bidirectional={module.bidirectional}"
        )


def check_input_weights(IW: Any, layers: tuple[int, ...]) -> dict[int, np.ndarray]:
    """The input weights ``IW[m]`` (S, R), all of the shape of ``IW[1]``."""
    out = check_layers("IW", IW, layers, (None, None), "(S, R)")
    for m in layers:
        check_shape(f"IW[{m}]", out[m], out[1].shape, "(S, R)")
    return out


def check_input(p: Any, R: int) -> np.ndarray:
    """``p`` as a float64 (B, T, R) array with at least one sequence and one step."""
    p = check_array("p", p, ndim=3, dtype=_F64, layout="(B, T, R)")
    check_shape("p", p, (None, None, R), "(B, T, R)")
    if p.shape[0] == 0 or p.shape[1] == 0:
        raise ValueError(f"p must hold at least one sequence of one step, got shape {p.shape}")
    return p


def check_initial(name: str, value: Any, B: int, S: int) -> np.ndarray:
    """An initial condition (B, S), zeros when ``value`` is None."""
    if value is None:
        return np.zeros((B, S))
    arr = check_array(name, value, ndim=2, dtype=_F64, layout="(B, S)")
    check_shape(name, arr, (B, S), "(B, S)")
    return arr


def check_trace(trace: Any, owner: object, da: Any, S: int) -> np.ndarray:
    """``da`` (B, T, S) as float64 after checking that ``trace`` came from ``owner``."""
    if not isinstance(trace, BookTrace) or trace.owner is not owner:
        got = "another network's" if isinstance(trace, BookTrace) else type(trace).__name__
        raise ValueError(f"cache must be the trace of this network's own forward, got {got}")
    B, T, _ = trace.p.shape
    da = check_array("da6", da, ndim=3, dtype=_F64, layout="(B, T, S)")
    check_shape("da6", da, (B, T, S), "(B, T, S)")
    return da


class BookLSTM:
    """The lecture's LSTM: layers 1-6 in Hagan's notation (see the module docstring).

    Parameters
    ----------
    IW : dict of int to array (S, R)
        The input weights :math:`IW^{m,1}` of the layers ``m`` = 1, 2, 3, 4 (1, 2, 4 without a
        forget gate).
    LW : dict of int to array (S, S)
        :math:`LW^{m,6}`, the weights from the delayed output :math:`a^6(t-1)`, same layers.
    b : dict of int to array (S,)
        The biases :math:`b^m`; :math:`b^3` is the forget gate's (the lecture: start it at 1
        or more so that the gate is open).
    peephole : dict of int to array (S,), optional
        The diagonals of :math:`LW^{m,5}` for the gates ``m`` = 2, 3, 4 (2, 4 without a
        forget gate): 2 and 3 see :math:`a^5(t-1)`, 4 sees :math:`a^5(t)`.
    forget_gate : bool
        False: the original LSTM, :math:`a^3 = 1`.
    """

    def __init__(
        self,
        IW: Any,
        LW: Any,
        b: Any,
        peephole: Any = None,
        forget_gate: bool = True,
    ) -> None:
        self.forget_gate = check_flag("forget_gate", forget_gate)
        self.layers = (1, 2, 3, 4) if self.forget_gate else (1, 2, 4)  # layers with weights
        self.gates = self.layers[1:]  # the logsig gates, the peepholes' layers
        self.IW = check_input_weights(IW, self.layers)
        self.S, self.R = self.IW[1].shape
        self.LW = check_layers("LW", LW, self.layers, (self.S, self.S), "(S, S)")
        self.b = check_layers("b", b, self.layers, (self.S,), "(S,)")
        self.peephole: dict[int, np.ndarray] = {}
        if peephole is not None:
            self.peephole = check_layers("peephole", peephole, self.gates, (self.S,), "(S,)")

    @classmethod
    def from_torch(cls, lstm: Any) -> BookLSTM:
        """The book's layers of a one-layer, one-direction :class:`pyplay.nn.LSTM`.

        Gate rows ``i, f, g, o`` (``i, g, o`` without a forget gate) go to layers 2, 3, 1, 4;
        :math:`b^m` is ``bias_ih + bias_hh`` of the gate (so ``forget_bias`` lands in
        :math:`b^3`); ``weight_ci, weight_cf, weight_co`` are the peepholes of 2, 3, 4.
        """
        from pyplay.nn import LSTM

        check_one_layer("lstm", lstm, LSTM)
        P = {k: v.astype(_F64) for k, v in lstm.params.items()}
        order = (2, 3, 1, 4) if lstm.forget_gate else (2, 1, 4)  # torch's rows -> layers
        H, G = lstm.hidden_size, len(order) * lstm.hidden_size

        def rows(x: np.ndarray) -> dict[int, np.ndarray]:
            return {m: x[k * H : (k + 1) * H] for k, m in enumerate(order)}  # (S, ...) each

        bias = P["bias_ih_l0"] + P["bias_hh_l0"] if lstm.bias else np.zeros(G)  # (G,)
        peep = None
        if lstm.peephole:
            names = {2: "weight_ci_l0", 3: "weight_cf_l0", 4: "weight_co_l0"}
            peep = {m: P[names[m]] for m in order if m != 1}
        return cls(
            rows(P["weight_ih_l0"]), rows(P["weight_hh_l0"]), rows(bias), peep, lstm.forget_gate
        )

    def _n(self, m: int, p_t: np.ndarray, a6: np.ndarray) -> np.ndarray:
        """:math:`n^m(t) = IW^{m,1} p(t) + LW^{m,6} a^6(t-1) + b^m`, (B, S)."""
        return p_t @ self.IW[m].T + a6 @ self.LW[m].T + self.b[m]  # (B, S)

    def forward(self, p: Any, a6_0: Any = None, a5_0: Any = None) -> BookTrace:
        """Run the network over ``p`` (B, T, R).

        Parameters
        ----------
        p : array (B, T, R)
        a6_0, a5_0 : arrays (B, S), optional
            The initial conditions :math:`a^6(0)` and :math:`a^5(0)`; zeros if None.

        Returns
        -------
        BookTrace
            ``a[1]`` .. ``a[6]`` (B, T, S) each; the output is ``a[6]``, the CEC ``a[5]``.
        """
        p = check_input(p, self.R)
        B, T, _ = p.shape
        a0 = {6: check_initial("a6_0", a6_0, B, self.S), 5: check_initial("a5_0", a5_0, B, self.S)}
        a = {m: np.empty((B, T, self.S)) for m in range(1, 7)}  # (B, T, S) each
        a[3].fill(1.0)  # stays 1 without a forget gate
        a6, a5 = a0[6], a0[5]  # (B, S) the delayed outputs a^6(t-1), a^5(t-1)
        pk = self.peephole
        for t in range(T):
            p_t = p[:, t]  # (B, R)
            a[1][:, t] = tansig(self._n(1, p_t, a6))
            a[2][:, t] = logsig(self._n(2, p_t, a6) + (pk[2] * a5 if pk else 0.0))
            if self.forget_gate:
                a[3][:, t] = logsig(self._n(3, p_t, a6) + (pk[3] * a5 if pk else 0.0))
            a5 = a[5][:, t] = a[3][:, t] * a5 + a[2][:, t] * a[1][:, t]  # the CEC
            a[4][:, t] = logsig(self._n(4, p_t, a6) + (pk[4] * a5 if pk else 0.0))
            a6 = a[6][:, t] = a[4][:, t] * tansig(a5)
        return BookTrace(p, a, a0, self)

    def backward(self, da6: Any, cache: BookTrace) -> BookGrads:
        """Backpropagation through time (the module docstring's equations).

        Parameters
        ----------
        da6 : array (B, T, S)
            :math:`\\partial^e F / \\partial a^6(t)`, the explicit derivative of the loss with
            respect to the output at every step.
        cache : BookTrace
            The trace of this network's :meth:`forward`.

        Returns
        -------
        BookGrads
            ``IW``, ``LW``, ``b``, ``peephole`` like the weights; ``p`` (B, T, R); ``a0[6]``,
            ``a0[5]`` (B, S), the gradients of the initial conditions.
        """
        da6 = check_trace(cache, self, da6, self.S)
        p, a, a0 = cache.p, cache.a, cache.a0
        T = p.shape[1]
        g = zero_grads(self, p, self.peephole)
        g6_next = np.zeros_like(a0[6])  # dF/da^6(t) from step t + 1, (B, S)
        g5_next = np.zeros_like(a0[5])  # dF/da^5(t) from step t + 1, (B, S)
        pk = self.peephole
        for t in reversed(range(T)):
            a1, a2, a3, a4, a5 = (a[m][:, t] for m in range(1, 6))  # (B, S) each
            a5_prev = a[5][:, t - 1] if t > 0 else a0[5]  # (B, S)
            a6_prev = a[6][:, t - 1] if t > 0 else a0[6]  # (B, S)
            g6 = da6[:, t] + g6_next
            ta5 = tansig(a5)
            d = {4: g6 * ta5 * a4 * (1.0 - a4)}  # d^m(t) = dF/dn^m(t), (B, S)
            g5 = g5_next + g6 * a4 * (1.0 - ta5 * ta5) + (pk[4] * d[4] if pk else 0.0)
            d[1] = g5 * a2 * (1.0 - a1 * a1)
            d[2] = g5 * a1 * a2 * (1.0 - a2)
            g5_next = g5 * a3 + (pk[2] * d[2] if pk else 0.0)
            if self.forget_gate:
                d[3] = g5 * a5_prev * a3 * (1.0 - a3)
                g5_next = g5_next + (pk[3] * d[3] if pk else 0.0)
            g6_next = np.zeros_like(g6)
            for m in self.layers:
                g6_next += d[m] @ self.LW[m]  # (B, S)
                g.add_layer_step(m, t, d[m], p[:, t], a6_prev, self.IW[m])
            for m in g.peephole:  # 2, 3 see a^5(t-1); 4 sees a^5(t)
                g.peephole[m] += np.sum(d[m] * (a5 if m == 4 else a5_prev), axis=0)  # (S,)
        return replace(g, a0={6: g6_next, 5: g5_next})
