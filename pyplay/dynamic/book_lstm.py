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
output (fed back with one delay to layers 1-4).

**A view of the core's LSTM.** :class:`BookLSTM` computes nothing itself: it *is* a one-layer
:class:`pyplay.nn.LSTM` (float64) seen through the book's names. The map, in both directions:

=================================  ==============================================================
the book                           :class:`pyplay.nn.LSTM` (gate rows ``i, f, g, o``)
=================================  ==============================================================
:math:`IW^{m,1}`, :math:`LW^{m,6}`  rows of ``weight_ih_l0``, ``weight_hh_l0``: ``i -> 2``,
                                   ``f -> 3``, ``g -> 1``, ``o -> 4`` (``i, g, o`` without ``f``)
:math:`b^m`                        the same rows of ``bias_ih_l0`` (``bias_hh_l0`` held at 0;
                                   :meth:`from_torch` adds a network's two biases)
:math:`LW^{2,5}, LW^{3,5}, LW^{4,5}` ``weight_ci_l0``, ``weight_cf_l0``, ``weight_co_l0``
:math:`a^1 .. a^4(t)`               the recorded gates ``g, i, f, o`` (``forward(record=True)``)
:math:`a^5(t)`, :math:`a^6(t)`      the cell state :math:`c_t` and the output :math:`h_t`
=================================  ==============================================================

``IW[m]``, ``LW[m]``, ``b[m]`` and ``peephole[m]`` are views of the LSTM's own arrays: writing
``net.b[3][:] = 40.0`` writes the forget gate's bias. :meth:`BookLSTM.forward` runs the kernel
(:mod:`pyplay.nn.lstm_cell`, whose equations :func:`pyplay.nn.reference.lstm_step` writes out)
and names its record; :meth:`BookLSTM.backward` is the kernel's BPTT, its gradients named the
same way. In the book's notation, with :math:`\partial F / \partial a^m(t)` the total
derivative, :math:`\dot F^m` the transfer derivatives and :math:`d^m(t) = \partial F / \partial
n^m(t)`, that BPTT is

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
d^m(t)`. ``tests/dynamic/test_book_lstm_gru.py`` holds the view to the slide's identities (the CEC
keeps :math:`a^5` with the forget gate open and the input gate closed) and to central
differences.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_shape
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
    core : object, optional
        The core network's own cache, when the book's network is a view of one (its
        ``backward`` reads it).
    """

    p: np.ndarray
    a: dict[int, np.ndarray]
    a0: dict[int, np.ndarray]
    owner: object
    core: Any = None


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


def _rows(x: np.ndarray, order: tuple[int, ...], S: int) -> dict[int, np.ndarray]:
    """The gate rows of ``x`` (len(order) * S, ...) as views, keyed by the book's layers."""
    return {m: x[k * S : (k + 1) * S] for k, m in enumerate(order)}


def _peephole_names(gates: tuple[int, ...]) -> dict[int, str]:
    """The core's peephole of each gate layer: 2 -> ``weight_ci``, 3 -> ``weight_cf``, 4 ->
    ``weight_co`` (``_l0``)."""
    names = {2: "weight_ci_l0", 3: "weight_cf_l0", 4: "weight_co_l0"}
    return {m: names[m] for m in gates}


class BookLSTM:
    """The lecture's LSTM: layers 1-6 in Hagan's notation, a view of a one-layer
    :class:`pyplay.nn.LSTM` (see the module docstring).

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

    Attributes
    ----------
    lstm : pyplay.nn.LSTM
        The network itself (float64); ``IW``, ``LW``, ``b``, ``peephole`` are views of its
        ``params``, copied in from the arguments.
    """

    def __init__(
        self,
        IW: Any,
        LW: Any,
        b: Any,
        peephole: Any = None,
        forget_gate: bool = True,
    ) -> None:
        from pyplay.nn import LSTM

        self.forget_gate = check_flag("forget_gate", forget_gate)
        self.layers = (1, 2, 3, 4) if self.forget_gate else (1, 2, 4)  # layers with weights
        self.gates = self.layers[1:]  # the logsig gates, the peepholes' layers
        IW = check_input_weights(IW, self.layers)
        self.S, self.R = S, R = IW[1].shape
        LW = check_layers("LW", LW, self.layers, (S, S), "(S, S)")
        b = check_layers("b", b, self.layers, (S,), "(S,)")
        if peephole is not None:
            peephole = check_layers("peephole", peephole, self.gates, (S,), "(S,)")
        self.lstm = LSTM(
            R, S, dtype=_F64, rng=0, peephole=peephole is not None, forget_gate=self.forget_gate
        )
        P, order = self.lstm.params, self._order
        P["bias_hh_l0"][:] = 0.0  # b^m is the whole bias: it lives in bias_ih
        self.IW = _rows(P["weight_ih_l0"], order, S)  # views (S, R)
        self.LW = _rows(P["weight_hh_l0"], order, S)  # views (S, S)
        self.b = _rows(P["bias_ih_l0"], order, S)  # views (S,)
        self.peephole: dict[int, np.ndarray] = {}
        if peephole is not None:
            self.peephole = {m: P[name] for m, name in _peephole_names(self.gates).items()}
        for mine, given in ((self.IW, IW), (self.LW, LW), (self.b, b), (self.peephole, peephole)):
            for m, view in mine.items():
                view[...] = given[m]

    @property
    def _order(self) -> tuple[int, ...]:
        """The book's layer of each of the core's gate blocks ``i, f, g, o`` (``i, g, o``)."""
        return (2, 3, 1, 4) if self.forget_gate else (2, 1, 4)

    @classmethod
    def from_torch(cls, lstm: Any) -> BookLSTM:
        """The book's layers of a one-layer, one-direction :class:`pyplay.nn.LSTM` (copied).

        Gate rows ``i, f, g, o`` (``i, g, o`` without a forget gate) go to layers 2, 3, 1, 4;
        :math:`b^m` is ``bias_ih + bias_hh`` of the gate (so ``forget_bias`` lands in
        :math:`b^3`); ``weight_ci, weight_cf, weight_co`` are the peepholes of 2, 3, 4.
        """
        from pyplay.nn import LSTM

        check_one_layer("lstm", lstm, LSTM)
        P = {k: v.astype(_F64) for k, v in lstm.params.items()}
        order = (2, 3, 1, 4) if lstm.forget_gate else (2, 1, 4)  # torch's rows -> layers
        H, G = lstm.hidden_size, len(order) * lstm.hidden_size
        bias = P["bias_ih_l0"] + P["bias_hh_l0"] if lstm.bias else np.zeros(G)  # (G,)
        peep = None
        if lstm.peephole:
            gates = tuple(m for m in (2, 3, 4) if m in order)
            peep = {m: P[name] for m, name in _peephole_names(gates).items()}
        return cls(
            _rows(P["weight_ih_l0"], order, H),
            _rows(P["weight_hh_l0"], order, H),
            _rows(bias, order, H),
            peep,
            lstm.forget_gate,
        )

    def forward(self, p: Any, a6_0: Any = None, a5_0: Any = None) -> BookTrace:
        """Run the network over ``p`` (B, T, R): the core LSTM's forward, its record named.

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
        state = (a0[6][None], a0[5][None])  # (1, B, S) each, h_0 and c_0
        _, _, cache = self.lstm.forward(p, state, record=True)
        assert cache.record is not None  # asked for with record=True
        rec = cache.record["l0"]  # (B, T, S) each: i, f, g, o, c, h
        ones = np.ones((B, T, self.S))  # a^3 = 1 without a forget gate
        names = {1: "g", 2: "i", 3: "f", 4: "o", 5: "c", 6: "h"}
        a = {m: np.array(rec[k]) if k in rec else ones for m, k in names.items()}
        return BookTrace(p, a, a0, self, cache)

    def backward(self, da6: Any, cache: BookTrace) -> BookGrads:
        """Backpropagation through time: the core LSTM's backward (the module docstring's
        equations), its gradients named the book's way.

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
        dp, (dh0, dc0), g = self.lstm.backward(da6, None, cache.core)
        order, S = self._order, self.S
        peep = {m: g[name] for m, name in _peephole_names(tuple(self.peephole)).items()}
        return BookGrads(
            _rows(g["weight_ih_l0"], order, S),
            _rows(g["weight_hh_l0"], order, S),
            _rows(g["bias_ih_l0"], order, S),
            peep,
            dp,
            {6: dh0[0], 5: dc0[0]},
        )
