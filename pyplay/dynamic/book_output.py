r"""The lecture's LSTM and GRU (:class:`~pyplay.dynamic.book_lstm.BookLSTM`,
:class:`~pyplay.dynamic.book_gru.BookGRU`) with a read-out layer, set up and trained the way
the lecture says.

The lecture: "The output of the gating layer generally connects to another layer", so the
network's answer is a purelin layer 7 on the gated output,

.. math::

    a^7(t) = LW^{7,6} a^6(t) + b^7,

and the loss is the mean squared error :math:`F = \frac{1}{BT} \sum (a^7(t) - y(t))^2`.
:func:`book_network` draws the weights ("other weights and biases are set to small random
numbers") with the forget gate's bias :math:`b^3` set to the learner's value (the lecture:
"all ones or larger values", which turns the gate on). :func:`output_loss` runs the network's
own ``forward`` and ``backward`` (its BPTT: the core kernel's) and adds layer 7's
gradients.
:func:`named_params` gives every trained weight a name in the book's notation (``"IW2,1"``,
``"LW2,6"``, ``"LW2,5"`` for a peephole, ``"b3"``, ``"LW7,6"``), the arrays themselves, so an
optimiser updates the network in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_choice,
    check_float,
    check_int,
    check_shape,
)
from pyplay.dynamic.book_gru import BookGRU
from pyplay.dynamic.book_lstm import BookLSTM, BookTrace

__all__ = ["INIT_SCALE", "KINDS", "book_network", "named_params", "output_loss"]

KINDS = ("lstm", "gru")
INIT_SCALE = 0.5  # the "small random numbers": uniform in [-0.5, 0.5]


def book_network(
    kind: str,
    hidden_size: int,
    *,
    input_size: int = 1,
    forget_gate: bool = True,
    peephole: bool = False,
    forget_bias: float = 1.0,
    rng: np.random.Generator | int | None = 0,
) -> tuple[BookLSTM | BookGRU, np.ndarray, np.ndarray]:
    """A lecture network of ``hidden_size`` neurons a layer and its read-out layer 7.

    Parameters
    ----------
    kind : {"lstm", "gru"}
    hidden_size : int
        :math:`S`, the neurons of every layer 1-6.
    input_size : int
        :math:`R`, the elements of :math:`p(t)`.
    forget_gate, peephole : bool
        The LSTM's variants (ignored for the GRU).
    forget_bias : float
        The LSTM's :math:`b^3` (every element), with a forget gate.
    rng : Generator, int or None
        Draws every other weight and bias uniform in [-INIT_SCALE, INIT_SCALE].

    Returns
    -------
    net : BookLSTM or BookGRU
    LW7 : ndarray (1, S)
        :math:`LW^{7,6}`.
    b7 : ndarray (1,)
        :math:`b^7`.
    """
    kind = check_choice("kind", kind, KINDS)
    S = check_int("hidden_size", hidden_size, min_value=1, max_value=256)
    R = check_int("input_size", input_size, min_value=1, max_value=256)
    bias = check_float("forget_bias", forget_bias)
    gen = as_generator(rng)

    def draw(*shape: int) -> np.ndarray:
        return gen.uniform(-INIT_SCALE, INIT_SCALE, size=shape)

    layers = (1, 2, 4) if kind == "gru" or not forget_gate else (1, 2, 3, 4)
    IW = {m: draw(S, R) for m in layers}  # (S, R) each
    LW = {m: draw(S, S) for m in layers}  # (S, S) each
    b = {m: draw(S) for m in layers}  # (S,) each
    LW7, b7 = draw(1, S), draw(1)  # (1, S), (1,)
    if kind == "gru":
        return BookGRU(IW, LW, b), LW7, b7
    if forget_gate:
        b[3] = np.full(S, bias)
    peep = {m: draw(S) for m in layers[1:]} if peephole else None  # (S,) each
    return BookLSTM(IW, LW, b, peep, forget_gate=forget_gate), LW7, b7


def _source(net: BookLSTM | BookGRU, m: int) -> int:
    """The layer whose output ``LW[m]`` multiplies: 3 for the GRU's input layer, else 6."""
    return 3 if isinstance(net, BookGRU) and m == 1 else 6


def named_params(net: BookLSTM | BookGRU, LW7: np.ndarray, b7: np.ndarray) -> dict[str, np.ndarray]:
    """Every trained array under its name in the book's notation (the arrays themselves)."""
    out: dict[str, np.ndarray] = {}
    for m in net.IW:
        out[f"IW{m},1"] = net.IW[m]
        out[f"LW{m},{_source(net, m)}"] = net.LW[m]
        out[f"b{m}"] = net.b[m]
    for m, w in getattr(net, "peephole", {}).items():
        out[f"LW{m},5"] = w  # (S,) the diagonal
    out["LW7,6"], out["b7"] = LW7, b7
    return out


def output_loss(
    net: BookLSTM | BookGRU, LW7: Any, b7: Any, p: Any, y: Any
) -> tuple[float, dict[str, np.ndarray], BookTrace, np.ndarray]:
    """The mean squared error of layer 7 on ``p`` (B, T, R) against ``y`` (B, T, 1).

    Returns
    -------
    F : float
    grads : dict of str to ndarray
        Keyed like :func:`named_params`.
    trace : BookTrace
        The network's forward trace.
    a7 : ndarray (B, T, 1)
        The read-out.
    """
    LW7 = check_array("LW7", LW7, ndim=2, dtype=np.dtype(np.float64), layout="(1, S)")
    check_shape("LW7", LW7, (1, net.S), "(1, S)")
    b7 = check_array("b7", b7, ndim=1, dtype=np.dtype(np.float64), layout="(1,)")
    check_shape("b7", b7, (1,), "(1,)")
    trace = net.forward(p)
    a6 = trace.a[6]  # (B, T, S)
    y = check_array("y", y, ndim=3, dtype=np.dtype(np.float64), layout="(B, T, 1)")
    check_shape("y", y, (*a6.shape[:2], 1), "(B, T, 1)")
    a7 = a6 @ LW7.T + b7  # (B, T, 1)
    e = a7 - y  # (B, T, 1)
    F = float(np.mean(e * e))
    d7 = 2.0 * e / e.size  # dF/da^7, (B, T, 1)
    g = net.backward(d7 @ LW7, trace)  # dF/da^6 = [LW^{7,6}]^T d^7, (B, T, S)
    grads: dict[str, np.ndarray] = {}
    for m in net.IW:
        grads[f"IW{m},1"] = g.IW[m]
        grads[f"LW{m},{_source(net, m)}"] = g.LW[m]
        grads[f"b{m}"] = g.b[m]
    for m, w in g.peephole.items():
        grads[f"LW{m},5"] = w
    grads["LW7,6"] = np.einsum("bto,bts->os", d7, a6)  # (1, S)
    grads["b7"] = d7.sum(axis=(0, 1))  # (1,)
    return F, grads, trace, a7
