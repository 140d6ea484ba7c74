"""The one recurrent layer: ``RNN``, ``GRU`` and ``LSTM`` are :class:`Recurrent` with a cell.

:class:`Recurrent` is the public wrapper of all three: a stack of ``num_layers`` (bidirectional)
layers of one cell kernel (:mod:`pyplay.nn.cell`), which knows the maths of one layer in one
direction. Everything around the kernel is done here, once for all cells:

1. the input projection of all ``T`` steps in one matmul, ``XP = X W_ih^T + b`` (T*B, F) @ (F, G),
   or for token ids with their embedding table (:class:`~pyplay.nn.token_input.TokenInput`)
   rows of the projected table;
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

``backward`` returns named tuples that unpack as plain tuples did: :class:`Gradients`
``(dx, dstate, grads)``, or with ``record=True`` :class:`RecordedGradients` with ``grad_record``
as a fourth field (two types, since a tuple's length is fixed).
"""

from __future__ import annotations

import math
from typing import Any, Generic, Literal, overload

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_choice,
    check_dtype,
    check_float,
    check_int,
    check_shape,
)
from pyplay.limits import check_elements, check_parameters, check_seq_len
from pyplay.nn import init
from pyplay.nn.cell import (
    Cell,
    DirectionCache,
    Gradients,
    RecordedGradients,
    RecurrentCache,
    S,
    batch_first_record,
    check_flag,
    check_state,
)
from pyplay.nn.sequences import PaddedBatch
from pyplay.nn.token_input import TokenInput, input_gradients, project, reversed_input

__all__ = ["Gradients", "RecordedGradients", "Recurrent", "RecurrentCache"]


class Recurrent(Generic[S]):
    r"""Multi-layer (bidirectional) recurrent layer of one cell; batch-first ``(B, T, F)``.

    The public classes :class:`~pyplay.nn.RNN`, :class:`~pyplay.nn.GRU` and
    :class:`~pyplay.nn.LSTM` are this class with their cell (:meth:`_make_cell`) and
    cell-specific constructor arguments.

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional
        As ``torch.nn.RNN/GRU/LSTM`` (always ``batch_first``). ``dropout`` applies between
        layers, not after the last, and only in ``forward(training=True)``.
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation U(-1/sqrt(H), 1/sqrt(H)) like torch; the dropout masks come from a
        Generator spawned from it at construction (:attr:`generator`).
    residual : bool, keyword only
        Residual connections between stacked layers (Wu et al. 2016, GNMT): every layer after
        the first adds its input to its output, :math:`x^{(l+1)}_t = \mathrm{cell}_l(x^{(l)})_t
        + x^{(l)}_t`, so the gradient reaches lower layers unchanged along the sum (before
        inter-layer dropout). No torch counterpart.

    Attributes
    ----------
    params : dict of str to ndarray
        torch's ``state_dict`` names: ``weight_ih_l{k}`` (G, F), ``weight_hh_l{k}`` (G, H),
        ``bias_ih_l{k}``, ``bias_hh_l{k}`` (G,), with ``_reverse`` for the backward direction,
        ``G = cell.n_gates * H``; plus the cell's extras. Updated in place by optimisers.
    cell : the cell kernel
    num_directions : int
        ``D``, 2 when bidirectional.
    generator : numpy.random.Generator
        The layer's own Generator for dropout masks.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        dropout: float = 0.0,
        bidirectional: bool = False,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        *,
        residual: bool = False,
    ) -> None:
        self.residual = check_flag("residual", residual)
        self.input_size = check_int("input_size", input_size, min_value=1)
        self.hidden_size = check_int("hidden_size", hidden_size, min_value=1)
        self.num_layers = check_int("num_layers", num_layers, min_value=1)
        self.bias = check_flag("bias", bias)
        self.dropout = check_float(
            "dropout", dropout, min_value=0.0, max_value=1.0, max_inclusive=False
        )
        self.bidirectional = check_flag("bidirectional", bidirectional)
        self.dtype = check_dtype("dtype", dtype)
        self.cell = cell = self._make_cell()
        gen = as_generator(rng)
        self.num_directions = 2 if self.bidirectional else 1
        H, G = self.hidden_size, cell.n_gates * self.hidden_size
        k = 1.0 / np.sqrt(H)
        D, L, name = self.num_directions, self.num_layers, type(self).__name__
        extra = sum(math.prod(shape) for shape in cell.extra_shapes(H).values())
        per = G * (H + 2 * self.bias) + extra  # weight_hh (G, H), biases, peepholes
        wide = G * H * D  # weight_ih of layers >= 1: (G, D*H)
        check_elements(
            f"{name} weight_ih_l0 ({cell.n_gates} * hidden_size, input_size)",
            (G, self.input_size),
            self.dtype,
        )
        check_elements(
            f"{name} weight_hh_l0 ({cell.n_gates} * hidden_size, hidden_size)", (G, H), self.dtype
        )
        check_parameters(
            f"{name}(input_size={self.input_size:,}, hidden_size={H:,}, num_layers={L:,})",
            D * (L * per + G * self.input_size + (L - 1) * wide),
        )
        self.params: dict[str, np.ndarray] = {}
        for layer in range(self.num_layers):
            F = self.input_size if layer == 0 else H * self.num_directions
            for suffix in self.suffixes(layer):
                shapes: dict[str, tuple[int, ...]] = {"weight_ih": (G, F), "weight_hh": (G, H)}
                if self.bias:
                    shapes |= {"bias_ih": (G,), "bias_hh": (G,)}
                shapes |= cell.extra_shapes(H)
                for base, shape in shapes.items():
                    what = f"{name} {base + suffix} {shape}"
                    self.params[base + suffix] = init.uniform(gen, -k, k, shape, self.dtype, what)
        self._names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh", *cell.extra_shapes(H)]
        self.generator = gen.spawn(1)[0]

    def _make_cell(self) -> Cell:
        """The cell kernel of this layer (each public class gives its own)."""
        raise NotImplementedError

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

    def _state_shape(self, B: int) -> tuple[int, int, int]:
        return (self.num_layers * self.num_directions, B, self.hidden_size)

    # ------------------------------------------------------------------ forward
    def forward(
        self,
        x: Any,
        state: S | None = None,
        lengths: Any = None,
        record: bool = False,
        training: bool = True,
    ) -> tuple[np.ndarray, S, RecurrentCache]:
        """Run the stack over ``x`` (B, T, F).

        Parameters
        ----------
        x : array (B, T, input_size), or :class:`~pyplay.nn.token_input.TokenInput`
            Token ids (B, T) with an embedding table (V, input_size): the first layer projects
            the table, and ``backward`` returns the table's gradient (V, input_size) as ``dx``.
        state : array or tuple of two arrays, optional
            h_0 (num_layers*D, B, H), or for LSTM a tuple (h_0, c_0) of them; zeros if None.
        lengths : int array (B,), optional
            Valid steps of each sequence (1..T, any order); padded steps do not change the state,
            outputs there are zero.
        record : bool
            Keep the cell's internals in ``cache.record[<"l0", "l0_reverse", ...>]``, dicts of
            (B, T, H) arrays named by ``cell.recorded`` (RNN: ``a, h``; GRU: ``r, z, n, h``;
            LSTM: ``i, f, g, o, c, h``).
        training : bool
            Apply inter-layer dropout.

        Returns
        -------
        out : array (B, T, D*H)
        state_n : array or tuple of two arrays
            h_n, or for LSTM (h_n, c_n), (num_layers*D, B, H) each: each sequence's state at its
            last valid step.
        cache : for :meth:`backward`
        """
        tokens = x if isinstance(x, TokenInput) else None
        if tokens is None:
            x = check_array("x", x, ndim=3, dtype=self.dtype, layout="(B, T, F)")
        elif tokens.weight.dtype != self.dtype:
            raise TypeError(f"x.weight must be {self.dtype}, got {tokens.weight.dtype}")
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
        check_seq_len(f"x of {type(self).__name__} (B, T, F) = {x.shape}", T)
        record = check_flag("record", record)
        training = check_flag("training", training)
        h0, c0 = check_state(state, "state", self._state_shape(B), self.dtype, self.cell.has_cell)
        batch = PaddedBatch.of(lengths, B, T, self.dtype)
        D = self.num_directions
        h_n = np.empty_like(h0)  # (L*D, B, H)
        c_n = None if c0 is None else np.empty_like(c0)
        X: Any = (
            tokens.time_major() if tokens else np.ascontiguousarray(x.transpose(1, 0, 2))
        )  # (T, B, F), or tokens with ids (T, B)
        layers: list[list[DirectionCache]] = []
        drops: list[np.ndarray | None] = []
        records: dict[str, dict[str, np.ndarray]] = {}
        for layer in range(self.num_layers):
            X_in = X  # (T, B, F_l)
            directions, outs = [], []
            for d, suffix in enumerate(self.suffixes(layer)):
                k = layer * D + d
                X_d = X if d == 0 else reversed_input(X, batch)  # (T, B, F_l)
                proj, weights = self.cell.pack(self._layer_params(suffix), B)
                XP = project(X_d, proj.W_fwd, proj.b_fwd)  # (T*B, G)
                hs, cs, kc = self.cell.forward(
                    XP.reshape(T, B, -1), weights, h0[k], None if c0 is None else c0[k]
                )  # hs, cs: (T+1, B, H)
                h_n[k] = batch.final(hs)
                if c_n is not None and cs is not None:
                    c_n[k] = batch.final(cs)
                out_d = batch.zero_padding(hs[1:])  # (T, B, H)
                outs.append(out_d if d == 0 else batch.reverse(out_d))
                directions.append(DirectionCache(X_d, proj, kc))
                if record:
                    records[suffix[1:]] = batch_first_record(self.cell.record(kc), batch, d)
            X = outs[0] if D == 1 else np.concatenate(outs, axis=2)  # (T, B, D*H)
            if self.residual and layer > 0:
                X = X + X_in  # (T, B, D*H): zero at padding, like both terms
            drop = None
            if training and self.dropout > 0 and layer < self.num_layers - 1:
                keep = self.generator.random(X.shape, dtype=self.dtype) >= self.dropout
                drop = np.multiply(keep, 1.0 / (1.0 - self.dropout), dtype=self.dtype)
                X = X * drop  # (T, B, D*H)
            layers.append(directions)
            drops.append(drop)
        y = np.ascontiguousarray(X.transpose(1, 0, 2))  # (B, T, D*H)
        state_n: Any = (h_n, c_n) if c_n is not None else h_n
        cache = RecurrentCache(self, batch, layers, drops, records if record else None)
        return y, state_n, cache

    # ------------------------------------------------------------------ backward
    @overload
    def backward(
        self,
        dout: Any,
        dstate: S | None = None,
        cache: RecurrentCache | None = None,
        record: Literal[False] = False,
        *,
        gradient: str = "full",
    ) -> Gradients[S]: ...

    @overload
    def backward(
        self,
        dout: Any,
        dstate: S | None = None,
        cache: RecurrentCache | None = None,
        *,
        record: Literal[True],
        gradient: str = "full",
    ) -> RecordedGradients[S]: ...

    def backward(
        self,
        dout: Any,
        dstate: S | None = None,
        cache: RecurrentCache | None = None,
        record: bool = False,
        *,
        gradient: str = "full",
    ) -> Gradients[S] | RecordedGradients[S]:
        """Backpropagation through time.

        Parameters
        ----------
        dout : array (B, T, D*H)
            dL/dout.
        dstate : array or tuple of two arrays, optional
            dL/dh_n, or for LSTM dL/d(h_n, c_n), (num_layers*D, B, H) each; zeros if None.
        cache : the cache of this layer's :meth:`forward`
        record : bool
            Also return ``grad_record``: per layer-direction key, the (B, T) Euclidean norms of
            the total dL/dh_t (from the output at t and from step t+1).
        gradient : str, keyword only
            One of ``cell.gradients``: ``"full"``, the true gradient; for the LSTM also
            ``"cec"``, the truncated one through the cell state (:mod:`pyplay.nn.lstm_cell`).

        Returns
        -------
        Gradients ``(dx, dstate, grads)``, or RecordedGradients ``(dx, dstate, grads,
        grad_record)`` with ``record=True``:

        dx : array (B, T, input_size), or (V, input_size) for a ``TokenInput``
        dstate : array (num_layers*D, B, H), or for LSTM a tuple (dh_0, dc_0) of them
        grads : dict with the keys of :attr:`params`, in their order
        grad_record : dict of (B, T) arrays, in forward's order of layer-directions
        """
        if not isinstance(cache, RecurrentCache) or cache.owner is not self:
            got = "another layer's" if isinstance(cache, RecurrentCache) else type(cache).__name__
            raise ValueError(f"cache must be the cache of this layer's own forward, got {got}")
        record = check_flag("record", record)
        gradient = check_choice("gradient", gradient, self.cell.gradients)
        batch = cache.batch
        B, T, H, D = batch.B, batch.T, self.hidden_size, self.num_directions
        layout = "(B, T, D*H)"
        dout = check_array("dout", dout, ndim=3, dtype=self.dtype, layout=layout)
        check_shape("dout", dout, (B, T, D * H), layout)
        dh_n, dc_n = check_state(
            dstate, "dstate", self._state_shape(B), self.dtype, self.cell.has_cell
        )
        dh0, dc0 = np.empty_like(dh_n), (None if dc_n is None else np.empty_like(dc_n))
        grads: dict[str, np.ndarray] = {}
        norms: dict[str, np.ndarray] = {}
        dY = batch.zero_padding(dout.transpose(1, 0, 2))  # (T, B, D*H)
        for layer in reversed(range(self.num_layers)):
            drop = cache.drops[layer]
            if drop is not None:
                dY = dY * drop  # (T, B, D*H)
            skip = dY if self.residual and layer > 0 else None  # the residual path's share
            dX_parts = []
            for d, suffix in enumerate(self.suffixes(layer)):
                k = layer * D + d
                direction = cache.layers[layer][d]
                dH = dY[:, :, d * H : (d + 1) * H]  # (T, B, H)
                dH = np.array(dH if d == 0 else batch.reverse(dH), order="C")  # fresh, C order
                batch.inject(dH, dh_n[k])
                dc_k = None if dc_n is None else dc_n[k]
                g = self.cell.backward(dH, dc_k, batch.ends, direction.cache, gradient)
                dh0[k] = g.dh0
                if dc0 is not None and g.dc0 is not None:
                    dc0[k] = g.dc0
                dXP = g.dXP.reshape(T * B, -1)  # (T*B, G)
                dW_ih, dX_d = input_gradients(direction.X, dXP, direction.proj.W)  # (G, F_l)
                for name, value in self.cell.to_params(dW_ih, dXP.sum(axis=0), g).items():
                    if self.bias or not name.startswith("bias"):
                        grads[name + suffix] = value
                dX_parts.append(dX_d)  # (T, B, F_l), or (V, E) for tokens
                if record:
                    nrm = np.sqrt(np.einsum("tbh,tbh->tb", dH, dH))  # (T, B)
                    norms[suffix[1:]] = np.ascontiguousarray(
                        (nrm if d == 0 else batch.reverse(nrm)).T
                    )  # (B, T)
            tokens = layer == 0 and isinstance(direction.X, TokenInput)
            if D == 1:
                dY = dX_parts[0]
            else:  # the table's gradient is per token, in no reading order
                dY = dX_parts[0] + (dX_parts[1] if tokens else batch.reverse(dX_parts[1]))
            if skip is not None:
                dY = dY + skip  # (T, B, D*H)
        dx = dY if tokens else np.ascontiguousarray(dY.transpose(1, 0, 2))  # (B, T, F) or (V, E)
        dstate_0: Any = (dh0, dc0) if dc0 is not None else dh0
        grads = {name: grads[name] for name in self.params}  # the order of params
        if record:
            keys = [sfx[1:] for layer in range(self.num_layers) for sfx in self.suffixes(layer)]
            return RecordedGradients(dx, dstate_0, grads, {key: norms[key] for key in keys})
        return Gradients(dx, dstate_0, grads)
