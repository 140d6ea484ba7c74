"""The shared driver of the recurrent layers: stacking, both directions, lengths, dropout, state.

A cell kernel (:class:`~pyplay.nn.rnn.RNNKernel`, :class:`~pyplay.nn.lstm.LSTMKernel`,
:class:`~pyplay.nn.gru.GRUKernel`) knows the maths of one layer in one direction over a
time-major sequence whose input projection ``x W_ih^T + b_ih`` was already computed (one matmul
for all time steps). This module does everything around it, once for all three cells:

- layer ``l`` reads the concatenated outputs of both directions of layer ``l - 1``;
- the reverse direction reads each sequence from its own last valid element back to the first
  (a per-sequence index reversal, so variable ``lengths`` work like PyTorch's packed sequences);
- padded steps neither change the state nor receive gradient, outputs there are zero;
- inter-layer dropout (not after the last layer) in training mode, with the layer's Generator;
- the state layout of ``torch.nn.RNN/LSTM/GRU``: ``(num_layers * D, B, H)``.

Internally sequences are time-major ``(T, B, F)``; the public API is batch-first.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_dtype,
    check_float,
    check_int,
    check_lengths,
    check_shape,
)
from pyplay.nn._ops import matmul

__all__ = ["Recurrent", "RecurrentCache"]


@dataclass
class RecurrentCache:
    """Everything :meth:`Recurrent.backward` needs; ``record`` holds the recorded internals."""

    owner: int
    shape: tuple[int, int]  # (B, T)
    inputs: list[list[np.ndarray]]  # [layer][direction] (T, B, F_l) as read by that direction
    kernels: list[list[Any]]  # [layer][direction] kernel caches
    drop: list[np.ndarray | None]  # [layer] dropout multiplier on its output (T, B, D*H)
    mask: np.ndarray | None  # (T, B, 1) 1.0 at valid steps
    rev: np.ndarray | None  # (T, B) per-sequence time reversal index
    record: dict[str, dict[str, np.ndarray]] | None = field(default=None)


class Recurrent(abc.ABC):
    """Base of :class:`RNN`, :class:`LSTM` and :class:`GRU`: the concrete methods are shared,
    subclasses only choose the kernel in their constructor."""

    @abc.abstractmethod
    def __init__(
        self,
        kernel: Any,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        bias: bool,
        dropout: float,
        bidirectional: bool,
        dtype: Any,
        rng: np.random.Generator | int | None,
    ) -> None:
        self.kernel = kernel
        self.input_size = check_int("input_size", input_size, min_value=1)
        self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        self.num_layers = check_int("num_layers", num_layers, min_value=1)
        for flag, value in (("bias", bias), ("bidirectional", bidirectional)):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{flag} must be True or False, got {value!r}")
        self.bias = bool(bias)
        self.bidirectional = bool(bidirectional)
        self.dropout = check_float(
            "dropout", dropout, min_value=0.0, max_value=1.0, max_inclusive=False
        )
        self.dtype = check_dtype("dtype", dtype)
        self._rng = as_generator(rng)
        self.num_directions = 2 if self.bidirectional else 1
        H, G = self.hidden_size, kernel.n_gates * self.hidden_size
        k = 1.0 / np.sqrt(H)
        self.params: dict[str, np.ndarray] = {}
        for layer in range(self.num_layers):
            F = self.input_size if layer == 0 else H * self.num_directions
            for suffix in self._suffixes(layer):
                shapes: dict[str, tuple[int, ...]] = {"weight_ih": (G, F), "weight_hh": (G, H)}
                if self.bias:
                    shapes.update({"bias_ih": (G,), "bias_hh": (G,)})
                shapes.update(kernel.extra_params(H))
                for name, shape in shapes.items():
                    init = self._rng.uniform(-k, k, size=shape)
                    self.params[f"{name}{suffix}"] = init.astype(self.dtype)

    # ------------------------------------------------------------------ helpers
    def _suffixes(self, layer: int) -> list[str]:
        return [f"_l{layer}", f"_l{layer}_reverse"][: self.num_directions]

    def _param(self, name: str, suffix: str, shape: tuple[int, ...]) -> np.ndarray:
        value = self.params.get(name + suffix)
        return np.zeros(shape, dtype=self.dtype) if value is None else value

    @staticmethod
    def _reverse(a: np.ndarray, rev: np.ndarray | None) -> np.ndarray:
        """Reverse time (axis 0) within each sequence's own length (an involution)."""
        if rev is None:
            return a[::-1]
        return np.take_along_axis(a, rev[:, :, None], axis=0)

    def _split_state(self, state: Any, name: str, B: int) -> tuple[np.ndarray, np.ndarray | None]:
        shape = (self.num_layers * self.num_directions, B, self.hidden_size)
        layout = "(num_layers*D, B, H)"
        if state is None:
            h = np.zeros(shape, dtype=self.dtype)
            return h, (np.zeros(shape, dtype=self.dtype) if self.kernel.has_cell else None)
        if self.kernel.has_cell:
            if not isinstance(state, tuple | list) or len(state) != 2:
                raise TypeError(
                    f"{name} must be a tuple (h, c) for an LSTM, got {type(state).__name__}"
                )
            h = check_array(f"{name}[0]", state[0], ndim=3, dtype=self.dtype, layout=layout)
            c = check_array(f"{name}[1]", state[1], ndim=3, dtype=self.dtype, layout=layout)
            check_shape(f"{name}[0]", h, shape, layout)
            check_shape(f"{name}[1]", c, shape, layout)
            return h, c
        if isinstance(state, tuple | list):
            raise TypeError(
                f"{name} must be a single array h for this layer, got a {type(state).__name__}"
            )
        h = check_array(name, state, ndim=3, dtype=self.dtype, layout=layout)
        check_shape(name, h, shape, layout)
        return h, None

    def _pack_state(self, h: np.ndarray, c: np.ndarray | None) -> Any:
        return (h, c) if self.kernel.has_cell else h

    # ------------------------------------------------------------------ forward
    def forward(
        self,
        x: Any,
        state: Any = None,
        lengths: Any = None,
        record: bool = False,
        training: bool = True,
    ) -> tuple[np.ndarray, Any, RecurrentCache]:
        """Run the stack over ``x`` (B, T, F); see the class docstring for what is returned."""
        x = check_array("x", x, ndim=3, dtype=self.dtype, layout="(B, T, F)")
        B, T, F = x.shape
        if F != self.input_size:
            raise ValueError(
                f"x must have input_size={self.input_size} features in its last "
                f"axis (B, T, F), got {F}"
            )
        if B == 0 or T == 0:
            raise ValueError(f"x must hold at least one sequence and one step, got {x.shape}")
        h0, c0 = self._split_state(state, "state", B)
        mask = rev = None
        if lengths is not None:
            L = check_lengths(lengths, B, T)
            valid = np.arange(T)[:, None] < L[None, :]  # (T, B)
            mask = valid[:, :, None].astype(self.dtype)  # (T, B, 1)
            t_idx = np.arange(T)[:, None]  # (T, 1)
            rev = np.where(valid, L[None, :] - 1 - t_idx, t_idx)  # (T, B)
        H, D = self.hidden_size, self.num_directions
        h_n = np.empty_like(h0)
        c_n = np.empty_like(h0) if c0 is not None else None
        inp = np.ascontiguousarray(x.transpose(1, 0, 2))  # (T, B, F)
        cache = RecurrentCache(id(self), (B, T), [], [], [], mask, rev)
        records: dict[str, dict[str, np.ndarray]] = {}
        for layer in range(self.num_layers):
            out = np.empty((T, B, D * H), dtype=self.dtype)  # (T, B, D*H)
            inputs_l, kernels_l = [], []
            for d, suffix in enumerate(self._suffixes(layer)):
                idx = layer * D + d
                W_ih = self.params["weight_ih" + suffix]  # (G, F_l)
                G = W_ih.shape[0]
                inp_d = inp if d == 0 else np.ascontiguousarray(self._reverse(inp, rev))
                xp = matmul(inp_d.reshape(T * B, -1), W_ih.T).reshape(T, B, G)  # (T, B, G)
                xp += self._param("bias_ih", suffix, (G,))
                extra = {k: self.params[k + suffix] for k in self.kernel.extra_params(H)}
                hs, cs, kc = self.kernel.forward(
                    xp,
                    self.params["weight_hh" + suffix],
                    self._param("bias_hh", suffix, (G,)),
                    extra,
                    h0[idx],
                    None if c0 is None else c0[idx],
                    mask,
                )
                h_n[idx] = hs[T]
                if c_n is not None and cs is not None:
                    c_n[idx] = cs[T]
                o_d = hs[1:] if mask is None else hs[1:] * mask  # (T, B, H)
                out[:, :, d * H : (d + 1) * H] = o_d if d == 0 else self._reverse(o_d, rev)
                inputs_l.append(inp_d)
                kernels_l.append(kc)
                if record:
                    records[suffix[1:]] = self._record(self.kernel.record(kc), mask, rev, d)
            drop = None
            if training and self.dropout > 0 and layer < self.num_layers - 1:
                keep = np.greater_equal(self._rng.random(out.shape), self.dropout)  # (T, B, D*H)
                drop = keep.astype(self.dtype) / (1.0 - self.dropout)
                out = out * drop
            cache.inputs.append(inputs_l)
            cache.kernels.append(kernels_l)
            cache.drop.append(drop)
            inp = out
        cache.record = records if record else None
        y = np.ascontiguousarray(inp.transpose(1, 0, 2))  # (B, T, D*H)
        return y, self._pack_state(h_n, c_n), cache

    def _record(
        self, raw: dict[str, np.ndarray], mask: np.ndarray | None, rev: np.ndarray | None, d: int
    ) -> dict[str, np.ndarray]:
        result = {}
        for name, value in raw.items():  # (T, B, H), in the direction's own reading order
            v = value if mask is None else value * mask  # zero at padded steps
            if d == 1:
                v = self._reverse(v, rev)
            result[name] = np.ascontiguousarray(v.transpose(1, 0, 2))  # (B, T, H)
        return result

    # ------------------------------------------------------------------ backward
    def backward(
        self,
        dout: Any,
        dstate: Any = None,
        cache: RecurrentCache | None = None,
        record: bool = False,
    ) -> Any:
        """Gradients by backpropagation through time.

        Returns ``(dx, dstate, grads)``, or ``(dx, dstate, grads, grad_record)`` with
        ``record=True`` where ``grad_record[name]`` is the (B, T) norm of dL/dh_t.
        """
        if not isinstance(cache, RecurrentCache) or cache.owner != id(self):
            raise ValueError(
                "cache must be the cache returned by this layer's own forward, got "
                f"{type(cache).__name__}"
            )
        B, T = cache.shape
        H, D = self.hidden_size, self.num_directions
        dout = check_array("dout", dout, ndim=3, dtype=self.dtype, layout="(B, T, D*H)")
        check_shape("dout", dout, (B, T, D * H), "(B, T, D*H)")
        dh_T, dc_T = self._split_state(dstate, "dstate", B)
        mask, rev = cache.mask, cache.rev
        grads: dict[str, np.ndarray] = {}
        dh0, dc0 = np.empty_like(dh_T), (None if dc_T is None else np.empty_like(dc_T))
        norms: dict[str, np.ndarray] = {}
        d_out = np.ascontiguousarray(dout.transpose(1, 0, 2))  # (T, B, D*H)
        for layer in reversed(range(self.num_layers)):
            drop = cache.drop[layer]
            if drop is not None:
                d_out = d_out * drop
            d_inp: np.ndarray | None = None
            for d, suffix in enumerate(self._suffixes(layer)):
                idx = layer * D + d
                inp_d = cache.inputs[layer][d]  # (T, B, F_l)
                dhs = d_out[:, :, d * H : (d + 1) * H]  # (T, B, H)
                if d == 1:
                    dhs = self._reverse(dhs, rev)
                if mask is not None:
                    dhs = dhs * mask
                dxp, dW_hh, db_hh, dextra, dh, dc, nrm = self.kernel.backward(
                    dhs,
                    dh_T[idx],
                    None if dc_T is None else dc_T[idx],
                    cache.kernels[layer][d],
                    mask,
                )
                dh0[idx] = dh
                if dc0 is not None:
                    dc0[idx] = dc
                G = dxp.shape[2]
                flat = dxp.reshape(T * B, G)  # (T*B, G)
                W_ih = self.params["weight_ih" + suffix]  # (G, F_l)
                grads["weight_ih" + suffix] = matmul(flat.T, inp_d.reshape(T * B, -1))  # (G, F)
                grads["weight_hh" + suffix] = dW_hh
                if self.bias:
                    grads["bias_ih" + suffix] = flat.sum(axis=0)  # (G,)
                    grads["bias_hh" + suffix] = db_hh
                for k, v in dextra.items():
                    grads[k + suffix] = v
                dinp_d = matmul(flat, W_ih).reshape(T, B, -1)  # (T, B, F_l)
                if d == 1:
                    dinp_d = self._reverse(dinp_d, rev)
                    nrm = self._reverse(nrm[:, :, None], rev)[:, :, 0]
                d_inp = dinp_d if d_inp is None else d_inp + dinp_d
                if record:
                    norms[suffix[1:]] = np.ascontiguousarray(nrm.T)  # (B, T)
            assert d_inp is not None
            d_out = d_inp
        dx = np.ascontiguousarray(d_out.transpose(1, 0, 2))  # (B, T, F)
        grads = {name: grads[name].astype(self.dtype, copy=False) for name in self.params}
        dstate_out = self._pack_state(dh0, dc0)
        if record:
            return dx, dstate_out, grads, norms
        return dx, dstate_out, grads
