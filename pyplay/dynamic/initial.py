r"""Initial conditions of an LDDN, layer by layer: Hagan's :math:`a(0)`.

A delay needs the value before the sequence starts: "the initial condition for the delay,
:math:`a(0)`, is indicated by the vertical arrow going into the delay block" (*Neural Network
Design*, after eq. 6.1). In an LDDN every layer weight :math:`LW^{m,l}(d)` with
:math:`d \ge 1` reads :math:`a^l(t - d)`, which for :math:`t \le d` is one of layer
:math:`l`'s initial conditions :math:`a^l(1 - D_l), \dots, a^l(0)`, :math:`D_l` the largest
delay at which any weight reads layer :math:`l`:

.. math::

    n^m(1) = \dots + LW^{m,l}(1)\, a^l(0) + \dots, \qquad
    \frac{\partial L}{\partial a^l(0)} = \sum_m \sum_{d \in DL_{m,l}}
        LW^{m,l}(d)^\top \delta n^m(d).

:meth:`LDDN.forward <pyplay.dynamic.lddn.LDDN.forward>` takes them all side by side as
``a0`` (B, DL, S), oldest first (MATLAB's ``Ai``), and BPTT returns their gradient ``da0`` of
the same shape (:meth:`~pyplay.dynamic.lddn.LDDN.backward_full`). Here the same arrays by
layer: :func:`initial_outputs` builds ``a0`` from each delayed layer's values, and
:func:`initial_gradients` splits ``da0`` back into the layers' gradients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pyplay._checks import check_int
from pyplay.dynamic.lddn import LDDN

__all__ = ["delayed_layers", "initial_gradients", "initial_outputs"]


def delayed_layers(net: LDDN) -> dict[int, int]:
    """Layer ``l`` -> :math:`D_l`, the largest delay (>= 1) at which a layer weight reads it:
    the layers that have initial conditions, in layer order."""
    found: dict[int, int] = {}
    for w in net.spec.layer_weights:
        if w.delays[-1] >= 1:
            found[w.source] = max(found.get(w.source, 0), w.delays[-1])
    return dict(sorted(found.items()))


def initial_outputs(net: LDDN, values: Mapping[int, Any], batch: int = 1) -> np.ndarray:
    """``a0`` (B, DL, S) for :meth:`LDDN.forward <pyplay.dynamic.lddn.LDDN.forward>` from the
    initial outputs of delayed layers.

    Parameters
    ----------
    net : LDDN
    values : dict of layer number to number or array
        ``values[l]`` for a layer of :func:`delayed_layers`: a number (every element of
        :math:`a^l(0)`), :math:`a^l(0)` as an array (S^l,) or (B, S^l), or every initial
        condition of the layer (B, D_l, S^l), :math:`a^l(1 - D_l), \\dots, a^l(0)` oldest
        first. What is not given is zero (older rows too).
    batch : int
        B, the number of sequences.

    Returns
    -------
    a0 : array (B, DL, S), in ``net.dtype``
    """
    B = check_int("batch", batch, min_value=1)
    if not isinstance(values, Mapping):
        raise TypeError(f"values must be a dict of layer number -> a(0), got {values!r}")
    delayed, DL = delayed_layers(net), net.num_layer_delays
    a0 = np.zeros((B, DL, net.layer_size), dtype=net.dtype)  # (B, DL, S)
    for m, value in values.items():
        if m not in delayed:
            names = ", ".join(map(str, delayed)) or "none: the network has no layer delays"
            raise ValueError(
                f"values names layer {m!r}, which no weight reads through a delay; the "
                f"delayed layers: {names}"
            )
        S, D, cols = net.sizes[m], delayed[m], net.layer_columns[m]
        v = np.asarray(value)
        if v.dtype.kind not in "iuf" or not np.isfinite(v).all():
            raise ValueError(f"values[{m}] must hold finite numbers, got {value!r}")
        shapes = {0: (), 1: (S,), 2: (B, S), 3: (B, D, S)}
        if v.ndim not in shapes or v.shape != shapes[v.ndim]:
            raise ValueError(
                f"values[{m}] must be a number, a^{m}(0) of shape ({S},) or (B, S^{m}) = "
                f"{(B, S)}, or the layer's {D} initial rows (B, D, S^{m}) = {(B, D, S)}; "
                f"got shape {v.shape}"
            )
        if v.ndim == 3:
            a0[:, DL - D :, cols] = v  # (B, D, S^m) a(1-D) .. a(0)
        else:
            a0[:, DL - 1, cols] = v  # (B, S^m) a(0), by broadcasting
    return a0


def initial_gradients(net: LDDN, da0: Any) -> dict[int, np.ndarray]:
    """``da0`` (B, DL, S) of :meth:`~pyplay.dynamic.lddn.LDDN.backward_full` by delayed layer:
    ``l`` -> :math:`\\partial L / \\partial a^l(1 - D_l), \\dots, \\partial L / \\partial
    a^l(0)` (B, D_l, S^l), oldest first (the rows no weight reads have zero gradient)."""
    da0 = np.asarray(da0)
    DL = net.num_layer_delays
    if da0.ndim != 3 or da0.shape[1:] != (DL, net.layer_size):
        raise ValueError(
            f"da0 must have shape (B, DL, S) = (B, {DL}, {net.layer_size}), got {da0.shape}"
        )
    return {m: da0[:, DL - D :, net.layer_columns[m]] for m, D in delayed_layers(net).items()}
