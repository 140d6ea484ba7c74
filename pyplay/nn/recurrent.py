"""The shared driver of ``RNN``, ``LSTM`` and ``GRU``: layers, directions, lengths, dropout, state.

A *cell* is a small strategy object (:class:`~pyplay.nn.rnn.RNNCell`,
:class:`~pyplay.nn.lstm.LSTMCell`, :class:`~pyplay.nn.gru.GRUCell`) that knows the maths of one
layer in one direction: how to lay out its weights (:meth:`Cell.pack`), the recurrence over all
time steps given the input projection of every step (:meth:`Cell.forward`), and BPTT
(:meth:`Cell.backward`). :class:`RecurrentStack` does everything around it, once for all cells:

1. the input projection of all ``T`` steps in one matmul, ``XP = X W_ih^T + b`` (T*B, F) @ (F, G);
2. layer ``l`` reads the concatenated outputs of both directions of layer ``l - 1``, times an
   inverted-dropout mask in training mode (not after the last layer);
3. the reverse direction reads each sequence from its own last valid element back to the first
   (a per-sequence index reversal, so it works with ``lengths``);
4. ``lengths``: in both reading orders the padded steps of a sequence come after its valid ones,
   so the kernels simply run over them and their results are discarded: outputs there are set to
   zero, ``h_n`` is gathered at each sequence's own last valid step, and in backward no gradient
   arrives at padded steps while ``dL/dh_n`` enters at the last valid step. Padded steps therefore
   neither change the state nor receive gradient, like PyTorch's packed sequences;
5. the state layout of ``torch.nn.RNN/LSTM/GRU``, ``(num_layers * D, B, H)``, and the records.

Sequences are time-major ``(T, B, F)`` inside (so that ``h_{t-1}`` of all sequences is one
contiguous block); the public API is batch-first ``(B, T, F)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, final

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_dtype,
    check_float,
    check_int,
    check_shape,
)
from pyplay.nn._ops import matmul
from pyplay.nn.sequences import Ends, PaddedBatch

__all__ = ["Cell", "CellGrads", "Projection", "RecurrentCache", "RecurrentStack", "check_flag"]


@dataclass(frozen=True)
class Projection:
    """Input-projection weights in a cell's own layout (rows possibly permuted and scaled).

    The driver computes ``XP = X W_fwd^T + b_fwd`` (T, B, G) for the cell's forward, and
    ``dX = dXP W`` from the cell's gradient ``dXP`` of the unscaled pre-activations.
    """

    W_fwd: np.ndarray  # (G, F)
    b_fwd: np.ndarray  # (G,)
    W: np.ndarray  # (G, F)


@dataclass(frozen=True)
class CellGrads:
    """What a cell's BPTT returns, in the cell's own layout (see :meth:`Cell.to_params`)."""

    dXP: np.ndarray  # (T, B, G) dL/d(input projection of each step)
    dW_hh: np.ndarray  # (G, H)
    db_hh: np.ndarray | None  # (G,); None when it equals db_ih (both biases in one sum)
    extra: dict[str, np.ndarray]  # cell-specific parameters (e.g. peepholes), final names
    dh0: np.ndarray  # (B, H)
    dc0: np.ndarray | None  # (B, H) for cells with a memory cell


class Cell(Protocol):
    """The strategy interface a cell implements for :class:`RecurrentStack`."""

    n_gates: int  # G = n_gates * H rows in weight_ih / weight_hh
    has_cell: bool  # True when the state is (h, c)

    def extra_shapes(self, H: int) -> dict[str, tuple[int, ...]]:
        """Shapes of parameters beyond torch's four (per layer and direction)."""
        ...

    def pack(self, p: dict[str, np.ndarray], B: int) -> tuple[Projection, Any]:
        """Weights of one layer-direction (torch names, biases always present) -> the cell's
        layout: the input projection and whatever the recurrence needs."""
        ...

    def forward(
        self, XP: np.ndarray, weights: Any, h0: np.ndarray, c0: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None, Any]:
        """The recurrence over ``XP`` (T, B, G), which it may overwrite. Returns ``hs``
        (T+1, B, H) with ``hs[0] = h0``, the cells ``cs`` (T+1, B, H) or None, and a cache."""
        ...

    def backward(
        self, dH: np.ndarray, dc_T: np.ndarray | None, ends: Ends, cache: Any
    ) -> CellGrads:
        """BPTT. ``dH`` (T, B, H) holds the gradient reaching each ``h_t`` from outside (zero
        at padded steps, ``dL/dh_n`` already added at each last valid step); the cell adds the
        recurrent part in place, so on return ``dH`` is the total ``dL/dh_t``. ``dc_T`` (B, H)
        enters at the steps given by ``ends``."""
        ...

    def to_params(self, dW_ih: np.ndarray, db_ih: np.ndarray, g: CellGrads) -> dict[str, Any]:
        """Gradients in the cell's layout -> torch layout and names (without suffix)."""
        ...

    def record(self, cache: Any) -> dict[str, np.ndarray]:
        """Recorded internals, each (T, B, H) in the kernel's reading order."""
        ...


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool, refusing anything but True / False."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class _Direction:
    X: np.ndarray  # (T, B, F_l) the input in this direction's reading order
    proj: Projection
    cache: Any


@dataclass(frozen=True)
class RecurrentCache:
    """What :meth:`RecurrentStack.backward` needs; ``record`` holds the recorded internals
    (``forward(record=True)``), else None."""

    owner: RecurrentStack
    batch: PaddedBatch
    layers: list[list[_Direction]]  # [layer][direction]
    drops: list[np.ndarray | None]  # [layer] dropout multiplier of its output (T, B, D*H)
    record: dict[str, dict[str, np.ndarray]] | None


@final
class RecurrentStack:
    """A stack of ``num_layers`` (bidirectional) recurrent layers of one ``cell``.

    Holds ``params`` (torch names: ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}``, ``..._reverse``, plus the cell's extras) initialised
    U(-1/sqrt(H), 1/sqrt(H)), and ``generator``, the stack's own Generator for dropout masks
    (spawned from ``rng`` at construction). The public layers delegate to it.
    """

    def __init__(
        self,
        cell: Cell,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        bias: bool,
        dropout: float,
        bidirectional: bool,
        dtype: Any,
        rng: np.random.Generator | int | None,
    ) -> None:
        self.cell = cell
        self.input_size = check_int("input_size", input_size, min_value=1)
        self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        self.num_layers = check_int("num_layers", num_layers, min_value=1)
        self.bias = check_flag("bias", bias)
        self.dropout = check_float(
            "dropout", dropout, min_value=0.0, max_value=1.0, max_inclusive=False
        )
        self.bidirectional = check_flag("bidirectional", bidirectional)
        self.dtype = check_dtype("dtype", dtype)
        gen = as_generator(rng)
        self.num_directions = 2 if self.bidirectional else 1
        H, G = self.hidden_size, cell.n_gates * self.hidden_size
        k = 1.0 / np.sqrt(H)
        self.params: dict[str, np.ndarray] = {}
        for layer in range(self.num_layers):
            F = self.input_size if layer == 0 else H * self.num_directions
            for suffix in self.suffixes(layer):
                shapes: dict[str, tuple[int, ...]] = {"weight_ih": (G, F), "weight_hh": (G, H)}
                if self.bias:
                    shapes |= {"bias_ih": (G,), "bias_hh": (G,)}
                shapes |= cell.extra_shapes(H)
                for name, shape in shapes.items():
                    self.params[name + suffix] = gen.uniform(-k, k, size=shape).astype(self.dtype)
        self._names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh", *cell.extra_shapes(H)]
        self.generator = gen.spawn(1)[0]

    def suffixes(self, layer: int) -> list[str]:
        """Parameter-name suffixes of ``layer``: ``["_l0"]`` or ``["_l0", "_l0_reverse"]``."""
        return [f"_l{layer}", f"_l{layer}_reverse"][: self.num_directions]

    def _layer_params(self, suffix: str) -> dict[str, np.ndarray]:
        """Parameters of one layer-direction under their base names (zero biases if none)."""
        p = {
            name: self.params[name + suffix] for name in self._names if name + suffix in self.params
        }
        if not self.bias:
            G = p["weight_hh"].shape[0]
            p["bias_ih"] = p["bias_hh"] = np.zeros(G, dtype=self.dtype)
        return p

    def _state(self, state: Any, name: str, B: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Validate a state (or state gradient) -> h (L*D, B, H) and c (or None)."""
        shape = (self.num_layers * self.num_directions, B, self.hidden_size)
        layout = "(num_layers*D, B, H)"

        def array(label: str, value: Any) -> np.ndarray:
            a = check_array(label, value, ndim=3, dtype=self.dtype, layout=layout)
            check_shape(label, a, shape, layout)
            return a

        if state is None:
            zeros = np.zeros(shape, dtype=self.dtype)
            return zeros, (np.zeros(shape, dtype=self.dtype) if self.cell.has_cell else None)
        if self.cell.has_cell:
            if not isinstance(state, tuple | list) or len(state) != 2:
                raise TypeError(
                    f"{name} must be a tuple (h, c) of two arrays {layout} = {shape}, "
                    f"got {type(state).__name__}"
                )
            return array(f"{name}[0]", state[0]), array(f"{name}[1]", state[1])
        if isinstance(state, tuple | list):
            raise TypeError(
                f"{name} must be one array h {layout} = {shape} (no cell state for this layer), "
                f"got a {type(state).__name__}"
            )
        return array(name, state), None

    # ------------------------------------------------------------------ forward
    def forward(
        self,
        x: Any,
        state: Any = None,
        lengths: Any = None,
        record: bool = False,
        training: bool = True,
    ) -> tuple[np.ndarray, Any, RecurrentCache]:
        """Run the stack over ``x`` (B, T, F): ``(out (B, T, D*H), state, cache)``."""
        x = check_array("x", x, ndim=3, dtype=self.dtype, layout="(B, T, F)")
        B, T, F = x.shape
        if F != self.input_size:
            raise ValueError(
                f"x must have input_size={self.input_size} features in its last axis "
                f"(B, T, F), got shape {x.shape}"
            )
        if B == 0 or T == 0:
            raise ValueError(
                f"x must hold at least one sequence of at least one step, got {x.shape}"
            )
        record = check_flag("record", record)
        training = check_flag("training", training)
        h0, c0 = self._state(state, "state", B)
        batch = PaddedBatch.of(lengths, B, T, self.dtype)
        D = self.num_directions
        h_n = np.empty_like(h0)  # (L*D, B, H)
        c_n = None if c0 is None else np.empty_like(c0)
        X = np.ascontiguousarray(x.transpose(1, 0, 2))  # (T, B, F)
        layers: list[list[_Direction]] = []
        drops: list[np.ndarray | None] = []
        records: dict[str, dict[str, np.ndarray]] = {}
        for layer in range(self.num_layers):
            directions, outs = [], []
            for d, suffix in enumerate(self.suffixes(layer)):
                k = layer * D + d
                X_d = X if d == 0 else np.ascontiguousarray(batch.reverse(X))  # (T, B, F_l)
                proj, weights = self.cell.pack(self._layer_params(suffix), B)
                XP = matmul(X_d.reshape(T * B, -1), proj.W_fwd.T)  # (T*B, G)
                XP += proj.b_fwd
                hs, cs, kc = self.cell.forward(
                    XP.reshape(T, B, -1), weights, h0[k], None if c0 is None else c0[k]
                )  # hs, cs: (T+1, B, H)
                h_n[k] = batch.final(hs)
                if c_n is not None and cs is not None:
                    c_n[k] = batch.final(cs)
                out_d = batch.zero_padding(hs[1:])  # (T, B, H)
                outs.append(out_d if d == 0 else batch.reverse(out_d))
                directions.append(_Direction(X_d, proj, kc))
                if record:
                    records[suffix[1:]] = self._record(self.cell.record(kc), batch, d)
            X = outs[0] if D == 1 else np.concatenate(outs, axis=2)  # (T, B, D*H)
            drop = None
            if training and self.dropout > 0 and layer < self.num_layers - 1:
                keep = self.generator.random(X.shape, dtype=self.dtype) >= self.dropout
                drop = np.multiply(keep, 1.0 / (1.0 - self.dropout), dtype=self.dtype)
                X = X * drop  # (T, B, D*H)
            layers.append(directions)
            drops.append(drop)
        y = np.ascontiguousarray(X.transpose(1, 0, 2))  # (B, T, D*H)
        state_n = (h_n, c_n) if c_n is not None else h_n
        cache = RecurrentCache(self, batch, layers, drops, records if record else None)
        return y, state_n, cache

    @staticmethod
    def _record(raw: dict[str, np.ndarray], batch: PaddedBatch, d: int) -> dict[str, np.ndarray]:
        result = {}
        for name, value in raw.items():  # (T, B, H) in the direction's reading order
            v = batch.zero_padding(value)
            if d == 1:
                v = batch.reverse(v)
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
        """BPTT through the stack: ``(dx, dstate, grads)`` or, with ``record=True``,
        ``(dx, dstate, grads, grad_record)``."""
        if not isinstance(cache, RecurrentCache) or cache.owner is not self:
            got = "another layer's" if isinstance(cache, RecurrentCache) else type(cache).__name__
            raise ValueError(f"cache must be the cache of this layer's own forward, got {got}")
        record = check_flag("record", record)
        batch = cache.batch
        B, T, H, D = batch.B, batch.T, self.hidden_size, self.num_directions
        layout = "(B, T, D*H)"
        dout = check_array("dout", dout, ndim=3, dtype=self.dtype, layout=layout)
        check_shape("dout", dout, (B, T, D * H), layout)
        dh_n, dc_n = self._state(dstate, "dstate", B)
        dh0, dc0 = np.empty_like(dh_n), (None if dc_n is None else np.empty_like(dc_n))
        grads: dict[str, np.ndarray] = {}
        norms: dict[str, np.ndarray] = {}
        dY = batch.zero_padding(dout.transpose(1, 0, 2))  # (T, B, D*H)
        for layer in reversed(range(self.num_layers)):
            drop = cache.drops[layer]
            if drop is not None:
                dY = dY * drop  # (T, B, D*H)
            dX_parts = []
            for d, suffix in enumerate(self.suffixes(layer)):
                k = layer * D + d
                direction = cache.layers[layer][d]
                dH = dY[:, :, d * H : (d + 1) * H]  # (T, B, H)
                dH = np.array(dH if d == 0 else batch.reverse(dH), order="C")  # fresh, C order
                batch.inject(dH, dh_n[k])
                g = self.cell.backward(
                    dH, None if dc_n is None else dc_n[k], batch.ends, direction.cache
                )
                dh0[k] = g.dh0
                if dc0 is not None and g.dc0 is not None:
                    dc0[k] = g.dc0
                dXP = g.dXP.reshape(T * B, -1)  # (T*B, G)
                dW_ih = matmul(dXP.T, direction.X.reshape(T * B, -1))  # (G, F_l)
                for name, value in self.cell.to_params(dW_ih, dXP.sum(axis=0), g).items():
                    if self.bias or not name.startswith("bias"):
                        grads[name + suffix] = value
                dX_parts.append(matmul(dXP, direction.proj.W).reshape(T, B, -1))  # (T, B, F_l)
                if record:
                    nrm = np.sqrt(np.einsum("tbh,tbh->tb", dH, dH))  # (T, B)
                    norms[suffix[1:]] = np.ascontiguousarray(
                        (nrm if d == 0 else batch.reverse(nrm)).T
                    )  # (B, T)
            dY = dX_parts[0] if D == 1 else dX_parts[0] + batch.reverse(dX_parts[1])
        dx = np.ascontiguousarray(dY.transpose(1, 0, 2))  # (B, T, F)
        dstate_0 = (dh0, dc0) if dc0 is not None else dh0
        grads = {name: grads[name] for name in self.params}  # the order of params
        if record:
            keys = [sfx[1:] for layer in range(self.num_layers) for sfx in self.suffixes(layer)]
            return dx, dstate_0, grads, {key: norms[key] for key in keys}  # forward's order
        return dx, dstate_0, grads
