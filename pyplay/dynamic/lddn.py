r"""The layered digital dynamic network (LDDN) of Hagan's *Neural Network Design*, ch. 14.

Every layer :math:`m` computes, at each time step :math:`t = 1, \dots, T`,

.. math::

    n^m(t) = \sum_{l} \sum_{d \in DI_{m,l}} IW^{m,l}(d)\, p^l(t - d)
           + \sum_{l} \sum_{d \in DL_{m,l}} LW^{m,l}(d)\, a^l(t - d) + b^m,
    \qquad a^m(t) = f^m\bigl(n^m(t)\bigr),

from the inputs :math:`p^l` and the layer outputs :math:`a^l`. Delay-0 layer weights are
feed-forward connections inside a time step, so the layers are simulated in an order where each
delay-0 source comes first (:func:`~pyplay.dynamic.spec.simulation_order`); delayed ones are
feedback from earlier steps. Values before :math:`t = 1` are **initial conditions**.

Backpropagation through time, with :math:`\delta a^m(t) = \partial L / \partial a^m(t)` the total
derivative (from the output at :math:`t` and from every layer that reads :math:`a^m(t)`, at
:math:`t` or later), visiting the steps backwards and the layers in reverse simulation order:

.. math::

    \delta n^m(t) = \dot F^m\bigl(n^m(t)\bigr)^\top \delta a^m(t), \qquad
    \delta a^l(t - d) \mathrel{+}= LW^{m,l}(d)^\top \delta n^m(t), \qquad
    \delta p^l(t - d) \mathrel{+}= IW^{m,l}(d)^\top \delta n^m(t),

    \frac{\partial L}{\partial LW^{m,l}(d)} = \sum_t \delta n^m(t)\, a^l(t - d)^\top, \quad
    \frac{\partial L}{\partial IW^{m,l}(d)} = \sum_t \delta n^m(t)\, p^l(t - d)^\top, \quad
    \frac{\partial L}{\partial b^m} = \sum_t \delta n^m(t).

Parameters (``net.params``, updated in place by optimisers)
    ``"IW{m},{l}"`` of shape :math:`(K, S^m, R^l)` and ``"LW{m},{l}"`` of shape
    :math:`(K, S^m, S^l)`: the **delay is the first axis**, ``W[k]`` is the matrix at the
    ``k``-th delay of the connection's (increasing) delay list, e.g. ``params["LW1,1"][0]``
    is :math:`LW^{1,1}(1)` when the delays are ``[1, 2]``. ``"b{m}"`` of shape :math:`(S^m,)`.

Shapes (batch-first, features last)
    ``p`` (B, T, R): the inputs side by side, :math:`R = \sum_l R^l`, in declared order.
    ``p0`` (B, DI, R): input initial conditions :math:`p(1 - DI), \dots, p(0)`, oldest first,
    ``DI = net.num_input_delays`` (largest input delay; MATLAB's ``Xi``).
    ``a0`` (B, DL, S): layer initial conditions :math:`a(1 - DL), \dots, a(0)`, all layers side
    by side (:math:`S = \sum_m S^m`), ``DL = net.num_layer_delays`` (MATLAB's ``Ai``). Rows
    older than what a layer's connections read are ignored (their gradient is zero);
    :mod:`pyplay.dynamic.initial` builds it, and splits its gradient, layer by layer.
    ``out`` (B, T, O): the output layers side by side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_dtype, check_shape
from pyplay.dynamic.spec import LDDNSpec, parse_spec, simulation_order, to_dict
from pyplay.dynamic.transfer import Transfer, get_transfer
from pyplay.limits import check_parameters
from pyplay.models.contract import Backward, ModelBase
from pyplay.nn import init

__all__ = ["LDDN", "LDDNCache", "LDDNGrads"]


@dataclass(frozen=True)
class LDDNCache:
    """What :meth:`LDDN.backward` needs; time-major inside."""

    P: np.ndarray  # (DI+T, B, R) initial conditions then inputs
    A: dict[int, np.ndarray]  # layer m -> (DL+T, B, S^m) initial conditions then a^m(t)
    N: dict[int, np.ndarray]  # layer m -> (T, B, S^m) net inputs n^m(t)
    W: dict[str, np.ndarray]  # the parameters this forward used (copies)
    T: int
    B: int


@dataclass(frozen=True)
class LDDNGrads:
    """Everything :meth:`LDDN.backward_full` returns (batch-first).

    ``params`` has the keys of ``net.params``; ``dp`` (B, T, R), ``dp0`` (B, DI, R) and ``da0``
    (B, DL, S) are the gradients of the inputs and initial conditions; ``da[m]`` and ``dn[m]``
    (B, T, S^m) hold :math:`\\delta a^m(t)` (total) and :math:`\\delta n^m(t)` per layer.
    """

    params: dict[str, np.ndarray]
    dp: np.ndarray
    dp0: np.ndarray
    da0: np.ndarray
    da: dict[int, np.ndarray]
    dn: dict[int, np.ndarray]


class LDDN(ModelBase):
    """A layered digital dynamic network from a declarative description.

    Parameters
    ----------
    description : dict or LDDNSpec
        See :mod:`pyplay.dynamic.spec` (validated; errors name the field).
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation: every weight and bias of layer ``m`` uniform in
        :math:`\\pm 1/\\sqrt{\\text{fan-in}}`, fan-in = all the (delayed) inputs of the layer.
    params : dict of str to ndarray, optional
        Use these arrays as the parameters, without copying (how :func:`closeloop` shares
        weights); keys and shapes must be exactly those the description implies.

    Attributes
    ----------
    spec : LDDNSpec
    order : tuple of int
        Simulation order (layer numbers from 1).
    params : dict of str to ndarray
        See the module docstring for the names and shapes.
    input_size, layer_size, output_size : int
        :math:`R = \\sum_l R^l`, :math:`S = \\sum_m S^m`, and the summed output-layer sizes.
    num_input_delays, num_layer_delays : int
        DI and DL, the rows of ``p0`` and ``a0``.
    input_columns, layer_columns : dict of int to slice
        Where input ``l`` sits in ``p`` / ``p0``, and layer ``m`` in ``a0``.
    """

    objective = "lddn"

    def __init__(
        self,
        description: Any,
        dtype: Any = np.float64,
        rng: np.random.Generator | int | None = 0,
        params: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.spec: LDDNSpec = parse_spec(description)
        self.dtype = check_dtype("dtype", dtype)
        s = self.spec
        self.order = simulation_order(len(s.layers), s.layer_weights)
        self.transfers: dict[int, Transfer] = {
            m: get_transfer(L.transfer) for m, L in enumerate(s.layers, start=1)
        }
        self.sizes = {m: L.size for m, L in enumerate(s.layers, start=1)}
        offs = np.cumsum((0, *s.inputs))
        self.input_columns = {l: slice(int(offs[l - 1]), int(offs[l])) for l in range(1, len(offs))}
        offs = np.cumsum((0, *self.sizes.values()))
        self.layer_columns = {m: slice(int(offs[m - 1]), int(offs[m])) for m in self.sizes}
        self.input_size = int(sum(s.inputs))
        self.layer_size = int(sum(self.sizes.values()))
        self.output_size = int(sum(self.sizes[m] for m in s.outputs))
        self.num_input_delays = max((w.delays[-1] for w in s.input_weights), default=0)
        self.num_layer_delays = max((w.delays[-1] for w in s.layer_weights), default=0)
        rank = {m: k for k, m in enumerate(self.order)}  # feedback: read from itself or later
        self.recurrent = any(
            w.delays[-1] > 0 and rank[w.source] >= rank[w.to] for w in s.layer_weights
        )
        self.shapes = self._shapes()
        self.params = self._init(rng) if params is None else self._adopt(params)

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments as plain JSON-serialisable values: the description (see
        :mod:`pyplay.dynamic.spec`) and the dtype."""
        return {"description": to_dict(self.spec), "dtype": self.dtype.name}

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """The parameter count ``config`` describes, computed from its description."""
        spec = parse_spec(config.get("description"))  # plain data, checked field by field
        sizes = [layer.size for layer in spec.layers]
        n = sum(sizes)
        n += sum(
            len(w.delays) * sizes[w.to - 1] * spec.inputs[w.source - 1] for w in spec.input_weights
        )
        n += sum(len(w.delays) * sizes[w.to - 1] * sizes[w.source - 1] for w in spec.layer_weights)
        return n

    # ------------------------------------------------------------------ parameters
    def _shapes(self) -> dict[str, tuple[int, ...]]:
        s = self.spec
        shapes: dict[str, tuple[int, ...]] = {}
        for w in s.input_weights:
            shapes[f"IW{w.to},{w.source}"] = (
                len(w.delays),
                self.sizes[w.to],
                s.inputs[w.source - 1],
            )
        for w in s.layer_weights:
            shapes[f"LW{w.to},{w.source}"] = (len(w.delays), self.sizes[w.to], self.sizes[w.source])
        for m, L in enumerate(s.layers, start=1):
            if L.bias:
                shapes[f"b{m}"] = (L.size,)
        return shapes

    def _init(self, rng: np.random.Generator | int | None) -> dict[str, np.ndarray]:
        gen = as_generator(rng)
        fan_in = dict.fromkeys(self.sizes, 0)
        for name, shape in self.shapes.items():
            if name[0] != "b":
                fan_in[int(name[2:].split(",")[0])] += shape[0] * shape[2]
        out = {}
        check_parameters("this network", sum(map(math.prod, self.shapes.values())))
        for name, shape in self.shapes.items():
            m = int(name[1:]) if name[0] == "b" else int(name[2:].split(",")[0])
            bound = 1.0 / np.sqrt(max(fan_in[m], 1))
            out[name] = init.uniform(gen, -bound, bound, shape, self.dtype, f"{name} {shape}")
        return out

    def _adopt(self, params: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict of name -> ndarray, got {params!r}")
        if set(params) != set(self.shapes):
            raise ValueError(
                f"params must have the keys {sorted(self.shapes)}, got {sorted(params)}"
            )
        for name, shape in self.shapes.items():
            p = params[name]
            if not isinstance(p, np.ndarray) or p.dtype != self.dtype or p.shape != shape:
                got = (
                    f"shape {p.shape} and dtype {p.dtype}"
                    if isinstance(p, np.ndarray)
                    else type(p).__name__
                )
                raise ValueError(
                    f"params[{name!r}] must be an ndarray of shape {shape} and dtype "
                    f"{self.dtype}, got {got}"
                )
        return {name: params[name] for name in self.shapes}  # the same arrays, shared

    # ------------------------------------------------------------------ forward
    def _check(
        self, name: str, x: Any, expected: tuple[int | None, ...], layout: str
    ) -> np.ndarray:
        x = check_array(name, x, ndim=3, dtype=self.dtype, layout=layout)
        check_shape(name, x, expected, layout)
        return x

    def forward(self, p: Any, a0: Any = None, p0: Any = None) -> tuple[np.ndarray, LDDNCache]:
        """Simulate the network over a batch of sequences.

        Parameters
        ----------
        p : array (B, T, R)
            The inputs, side by side in declared order.
        a0 : array (B, DL, S), optional
            Layer initial conditions (zeros).
        p0 : array (B, DI, R), optional
            Input initial conditions (zeros).

        Returns
        -------
        out : array (B, T, O)
            The output layers' :math:`a^m(t)`, side by side.
        cache : LDDNCache
        """
        p = self._check("p", p, (None, None, self.input_size), "(B, T, R)")
        B, T, _ = p.shape
        if T < 1:
            raise ValueError(f"p must have at least one time step, got T={T}")
        DI, DL = self.num_input_delays, self.num_layer_delays
        P = np.zeros((DI + T, B, self.input_size), dtype=self.dtype)  # (DI+T, B, R)
        P[DI:] = p.transpose(1, 0, 2)  # (T, B, R) time-major
        if p0 is not None:
            p0 = self._check("p0", p0, (B, DI, self.input_size), "(B, DI, R)")
            P[:DI] = p0.transpose(1, 0, 2)  # (DI, B, R)
        A = {m: np.zeros((DL + T, B, S), dtype=self.dtype) for m, S in self.sizes.items()}
        if a0 is not None:
            a0 = self._check("a0", a0, (B, DL, self.layer_size), "(B, DL, S)")
            for m, cols in self.layer_columns.items():
                A[m][:DL] = a0[:, :, cols].transpose(1, 0, 2)  # (DL, B, S^m)
        W = {k: v.copy() for k, v in self.params.items()}
        N = {m: self._input_part(m, W, P, T, B) for m in self.sizes}  # (T, B, S^m) each
        # without feedback (a delayed weight from the layer itself or one simulated later) all
        # T steps go through each layer at once, delayed weights from earlier layers included
        chunks = [(t, t + 1) for t in range(T)] if self.recurrent else [(0, T)]
        for t0, t1 in chunks:
            for m in self.order:
                n = N[m][t0:t1]  # (t1-t0, B, S^m) input part + bias, completed here
                for w in self.spec.layer_weights:
                    if w.to == m:
                        LW = W[f"LW{m},{w.source}"]  # (K, S^m, S^l)
                        for k, d in enumerate(w.delays):
                            n += A[w.source][DL + t0 - d : DL + t1 - d] @ LW[k].T
                A[m][DL + t0 : DL + t1] = self.transfers[m](n)  # a^m(t) = f^m(n^m(t))
        out = np.concatenate([A[m][DL:] for m in self.spec.outputs], axis=-1)  # (T, B, O)
        return out.transpose(1, 0, 2).copy(), LDDNCache(P, A, N, W, T, B)  # (B, T, O)

    def _input_part(
        self, m: int, W: dict[str, np.ndarray], P: np.ndarray, T: int, B: int
    ) -> np.ndarray:
        """:math:`b^m + \\sum_l \\sum_d IW^{m,l}(d) p^l(t-d)` for all t at once: (T, B, S^m)."""
        DI = self.num_input_delays
        n = np.zeros((T, B, self.sizes[m]), dtype=self.dtype)  # (T, B, S^m)
        if f"b{m}" in W:
            n += W[f"b{m}"]
        for w in self.spec.input_weights:
            if w.to == m:
                IW, cols = W[f"IW{m},{w.source}"], self.input_columns[w.source]  # (K, S^m, R^l)
                for k, d in enumerate(w.delays):
                    n += P[DI - d : DI - d + T, :, cols] @ IW[k].T  # (T, B, S^m)
        return n

    # ------------------------------------------------------------------ backward
    def backward(self, dout: Any, cache: LDDNCache) -> Backward:
        """BPTT: the parameter gradients and dL/dp (B, T, R) as ``dinputs``, for ``dout`` =
        dL/dout (B, T, O); see :meth:`backward_full` for every other gradient."""
        g = self.backward_full(dout, cache)
        return Backward(g.params, dinputs=g.dp)

    def backward_full(self, dout: Any, cache: LDDNCache) -> LDDNGrads:
        """BPTT with every gradient: parameters, inputs, initial conditions, per-layer deltas.

        The equations are in the module docstring. ``cache`` is not modified, so backward may
        be called again; it uses the weights of its forward even if ``params`` changed since.
        """
        if not isinstance(cache, LDDNCache):
            raise TypeError(f"cache must be the LDDNCache of forward, got {type(cache).__name__}")
        T, B = cache.T, cache.B
        dout = self._check("dout", dout, (B, T, self.output_size), "(B, T, O)")
        DI, DL, W, A, N = self.num_input_delays, self.num_layer_delays, cache.W, cache.A, cache.N
        dA = {m: np.zeros_like(a) for m, a in A.items()}  # (DL+T, B, S^m) each
        start = 0
        for m in self.spec.outputs:
            S = self.sizes[m]
            dA[m][DL:] += dout[:, :, start : start + S].transpose(1, 0, 2)  # (T, B, S^m)
            start += S
        dN = {m: np.zeros_like(n) for m, n in N.items()}  # (T, B, S^m) each
        chunks = [(t, t + 1) for t in range(T)] if self.recurrent else [(0, T)]
        for t0, t1 in reversed(chunks):
            for m in reversed(self.order):
                rows = slice(DL + t0, DL + t1)
                dn = self.transfers[m].backward(dA[m][rows], N[m][t0:t1], A[m][rows])
                dN[m][t0:t1] = dn  # (t1-t0, B, S^m) delta n^m(t)
                for w in self.spec.layer_weights:
                    if w.to == m:
                        LW = W[f"LW{m},{w.source}"]  # (K, S^m, S^l)
                        for k, d in enumerate(w.delays):
                            dA[w.source][DL + t0 - d : DL + t1 - d] += dn @ LW[k]
        grads: dict[str, np.ndarray] = {}
        dP = np.zeros_like(cache.P)  # (DI+T, B, R)
        for w in self.spec.input_weights:
            name, cols = f"IW{w.to},{w.source}", self.input_columns[w.source]
            flat = dN[w.to].reshape(T * B, -1)  # (T*B, S^m)
            grads[name] = np.stack(
                [
                    flat.T @ cache.P[DI - d : DI - d + T, :, cols].reshape(T * B, -1)  # (S^m, R^l)
                    for d in w.delays
                ]
            )  # (K, S^m, R^l)
            for k, d in enumerate(w.delays):
                dP[DI - d : DI - d + T, :, cols] += dN[w.to] @ W[name][k]  # (T, B, R^l)
        for w in self.spec.layer_weights:
            flat = dN[w.to].reshape(T * B, -1)  # (T*B, S^m)
            grads[f"LW{w.to},{w.source}"] = np.stack(
                [
                    flat.T @ A[w.source][DL - d : DL - d + T].reshape(T * B, -1)  # (S^m, S^l)
                    for d in w.delays
                ]
            )  # (K, S^m, S^l)
        for m in self.sizes:
            if f"b{m}" in self.params:
                grads[f"b{m}"] = dN[m].sum(axis=(0, 1))  # (S^m,)
        grads = {name: grads[name] for name in self.shapes}  # the order of params
        da0 = np.concatenate([dA[m][:DL] for m in self.sizes], axis=-1)  # (DL, B, S)

        def batch_first(x: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(x.transpose(1, 0, 2))  # (T, B, .) -> (B, T, .)

        return LDDNGrads(
            params=grads,
            dp=batch_first(dP[DI:]),
            dp0=batch_first(dP[:DI]),
            da0=batch_first(da0),
            da={m: batch_first(dA[m][DL:]) for m in self.sizes},
            dn={m: batch_first(dN[m]) for m in self.sizes},
        )
