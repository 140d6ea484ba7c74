r"""Real-time recurrent learning (RTRL) beside backpropagation through time (BPTT).

The network is the chapter's basic recurrent network (eq. 6.3-6.4, Figure 6.3), an
:class:`~pyplay.dynamic.lddn.LDDN` as :func:`~pyplay.dynamic.networks.layrecnet` builds it with
one hidden layer and ``layer_delays=(1,)``:

.. math::

    a^1(t) = \mathrm{tansig}(IW^{1,1} p(t) + LW^{1,1} a^1(t-1) + b^1), \quad
    a^2(t) = LW^{2,1} a^1(t) + b^2,

with the cost :math:`F = \tfrac12 \sum_t \lVert a^2(t) - y(t) \rVert^2` (summed over the batch).
BPTT (``LDDN.backward_full``) runs the network forward, keeps every :math:`a^1(t)` and
propagates :math:`\partial F / \partial a^1(t)` backward in time. RTRL runs forward only,
carrying the sensitivity of the layer output to every weight :math:`w` of layer 1
(:math:`x = [\mathrm{vec}\, IW^{1,1}; \mathrm{vec}\, LW^{1,1}; b^1]`, :math:`P` entries):

.. math::

    \frac{\partial a^1(t)}{\partial x^T} = \dot F^1(n^1(t)) \left[
        \frac{\partial^e n^1(t)}{\partial x^T} + LW^{1,1} \frac{\partial a^1(t-1)}{\partial x^T}
    \right], \qquad
    \frac{\partial F}{\partial x} = \sum_t \left[\frac{\partial a^1(t)}{\partial x^T}\right]^T
        LW^{2,1\,T} (a^2(t) - y(t)),

where :math:`\partial^e n^1 / \partial x^T` is the explicit part (:math:`p(t)` for the
:math:`IW` entries, :math:`a^1(t-1)` for the :math:`LW` entries, 1 for the biases) and
:math:`\partial a^1(0) / \partial x^T = 0`. The output layer's gradient is static (no delay).

:func:`cost_figures` counts the multiply-adds and the stored numbers of both algorithms for a
sequence of length ``T`` and ``S`` hidden neurons: RTRL's sensitivity matrix is
:math:`S \times P` with :math:`P \approx S^2`, so it costs :math:`O(T S^4)` operations and
:math:`O(S^3)` memory whatever :math:`T`; BPTT costs :math:`O(T S^2)` operations and
:math:`O(T S)` memory (the lecture's point: RTRL learns online, at a price).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int
from pyplay.dynamic.lddn import LDDN

_F64 = np.dtype(np.float64)  # the algorithms run in float64

__all__ = ["CostFigures", "bptt_gradient", "cost_figures", "rtrl_gradient"]

_PARAMS = ("IW1,1", "LW1,1", "b1", "LW2,1", "b2")


def _check_net(net: Any) -> tuple[int, int, int]:
    """(R, S, O) of a basic recurrent network (eq. 6.3-6.4); TypeError/ValueError otherwise."""
    if not isinstance(net, LDDN):
        raise TypeError(f"net must be a pyplay.dynamic.LDDN, got {type(net).__name__}")
    shapes = {k: v.shape for k, v in net.params.items()}
    ok = set(shapes) == set(_PARAMS) and shapes["IW1,1"][0] == 1 and shapes["LW1,1"][0] == 1
    ok = ok and shapes["LW2,1"][0] == 1 and net.transfers[1].name == "tansig"
    ok = ok and net.transfers[2].name == "purelin"
    if not ok or net.num_layer_delays != 1 or net.num_input_delays != 0:
        raise ValueError(
            "net must be the basic recurrent network of eq. 6.3-6.4 (layrecnet((1,), (S,), "
            f"R, O): IW1,1 delay 0, LW1,1 delay 1, tansig then purelin), got parameters {shapes}"
        )
    _, S, R = shapes["IW1,1"]
    return R, S, shapes["LW2,1"][1]


def _check_data(net: LDDN, p: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    R, _, O = _check_net(net)
    p = check_array("p", p, ndim=3, dtype=_F64, layout="(B, T, R)")
    y = check_array("y", y, ndim=3, dtype=_F64, layout="(B, T, O)")
    if p.shape[2] != R or y.shape != (*p.shape[:2], O):
        raise ValueError(
            f"p must have shape (B, T, {R}) and y (B, T, {O}) with the same B, T, got "
            f"{p.shape} and {y.shape}"
        )
    return p, y


def bptt_gradient(net: LDDN, p: Any, y: Any) -> dict[str, np.ndarray]:
    """:math:`\\partial F / \\partial w` by BPTT (:meth:`LDDN.backward_full`) for inputs ``p``
    (B, T, R) and targets ``y`` (B, T, O)."""
    p, y = _check_data(net, p, y)
    out, cache = net.forward(p)  # (B, T, O)
    return dict(net.backward_full(out - y, cache).params)


def rtrl_gradient(net: LDDN, p: Any, y: Any) -> dict[str, np.ndarray]:
    """:math:`\\partial F / \\partial w` by RTRL (module docstring), forward in time only, for
    inputs ``p`` (B, T, R) and targets ``y`` (B, T, O); the same keys and shapes as
    ``net.params``."""
    p, y = _check_data(net, p, y)
    R, S, O = _check_net(net)
    w = net.params
    IW, LW, b1 = w["IW1,1"][0], w["LW1,1"][0], w["b1"]  # (S, R), (S, S), (S,)
    LW2, b2 = w["LW2,1"][0], w["b2"]  # (O, S), (O,)
    B, T, _ = p.shape
    P = S * R + S * S + S
    eye = np.eye(S)  # (S, S)
    sens = np.zeros((B, S, P))  # (B, S, P) d a^1(t) / d x^T, zero at t = 0
    a = np.zeros((B, S))  # (B, S) a^1(0)
    g1 = np.zeros(P)  # (P,) dF/dx of layer 1
    gLW2, gb2 = np.zeros((O, S)), np.zeros(O)
    for t in range(T):
        a_prev = a
        a = np.tanh(p[:, t] @ IW.T + a_prev @ LW.T + b1)  # (B, S) eq. 6.3
        e = a @ LW2.T + b2 - y[:, t]  # (B, O) a^2(t) - y(t), eq. 6.4
        explicit = np.concatenate(
            [
                np.einsum("ik,bj->bikj", eye, p[:, t]).reshape(B, S, S * R),  # dn_i/dIW_kj
                np.einsum("ik,bj->bikj", eye, a_prev).reshape(B, S, S * S),  # dn_i/dLW_kj
                np.broadcast_to(eye, (B, S, S)),  # dn_i/db_k
            ],
            axis=2,
        )  # (B, S, P)
        sens = (1.0 - a * a)[:, :, None] * (explicit + LW @ sens)  # (B, S, P) the recursion
        g1 += np.einsum("bs,bsp->p", e @ LW2, sens)  # (P,) dF/da^1(t) explicit, times sens
        gLW2 += e.T @ a  # (O, S) static output layer
        gb2 += e.sum(axis=0)
    return {
        "IW1,1": g1[: S * R].reshape(1, S, R),
        "LW1,1": g1[S * R : S * R + S * S].reshape(1, S, S),
        "b1": g1[S * R + S * S :].copy(),
        "LW2,1": gLW2[None],
        "b2": gb2,
    }


@dataclass(frozen=True)
class CostFigures:
    """Multiply-adds (``*_ops``) and stored numbers (``*_memory``) of one gradient over a
    sequence of ``T`` steps for a network with ``S`` hidden neurons, ``R`` inputs, ``O``
    outputs, and ``P`` = the number of layer-1 weights RTRL tracks."""

    T: int
    S: int
    P: int
    bptt_ops: int
    bptt_memory: int
    rtrl_ops: int
    rtrl_memory: int


def cost_figures(T: int, S: int, R: int = 1, O: int = 1) -> CostFigures:
    """The costs of :func:`bptt_gradient` and :func:`rtrl_gradient` for one sequence, counted
    from the products each computes per time step.

    - BPTT forward: :math:`S R + S^2 + O S`; backward: :math:`O S` (into :math:`a^1`),
      :math:`S^2` (back through :math:`LW^{1,1}`), :math:`S R + S^2 + O S` (weight gradients).
      Memory: :math:`a^1(t)` and :math:`n^1(t)` for every step, :math:`2 T S`.
    - RTRL per step: the forward :math:`S R + S^2 + O S`, the recursion
      :math:`LW^{1,1}\\, \\partial a^1(t-1)/\\partial x^T` (:math:`S^2 P`) and its scaling
      (:math:`S P`), the gradient :math:`O S + S P`. Memory: the :math:`S \\times P`
      sensitivity and its explicit part, :math:`2 S P`, plus :math:`a^1(t-1), a^1(t)`.
    """
    T = check_int("T", T, min_value=1)
    S = check_int("S", S, min_value=1)
    R = check_int("R", R, min_value=1)
    O = check_int("O", O, min_value=1)
    P = S * R + S * S + S
    forward = S * R + S * S + O * S
    bptt = T * (forward + O * S + S * S + S * R + S * S + O * S)
    rtrl = T * (forward + S * S * P + S * P + O * S + S * P)
    return CostFigures(T, S, P, bptt, 2 * T * S, rtrl, 2 * S * P + 2 * S)
