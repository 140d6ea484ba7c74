r"""Transformer decoder layer and stack (Vaswani et al. 2017), ``torch.nn``'s names, batch-first.

Three residual sublayers on the target stream :math:`x` (B, T, E), each pre-norm or post-norm
as in :mod:`pyplay.nn.transformer`: masked self-attention :math:`\mathrm{MHA}(u, u, u)`, then
cross-attention over the encoder's output (the *memory* :math:`m`, (B, S, E))
:math:`\mathrm{MHA}(u, m, m)`, then the feed-forward network. Post-norm (torch's default):

.. math::

    x_1 = \mathrm{LN}_1(x + \mathrm{SA}(x)), \quad
    x_2 = \mathrm{LN}_2(x_1 + \mathrm{CA}(x_1, m)), \quad
    x_3 = \mathrm{LN}_3(x_2 + \mathrm{FF}(x_2));

pre-norm: :math:`x_1 = x + \mathrm{SA}(\mathrm{LN}_1(x))`, and so on (dropout after each
sublayer in training). Backward: as the encoder's, and the memory's gradient is the sum of the
cross-attention's key and value gradients, :math:`\delta m = \delta K_{in} + \delta V_{in}`
(summed over the layers of a stack).

Incremental decoding: ``init_state(memory)`` projects the memory's keys and values once per
layer; each ``step`` then feeds the newest target position(s) and appends their self-attention
keys and values to the state (see :class:`~pyplay.nn.transformer.TransformerState`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.nn._transformer import (
    LayerState,
    TransformerLayerCache,
    TransformerStackCache,
    TransformerState,
    _LayerBase,
    _norms,
    _residual,
    _residual_backward,
    _Stack,
)
from pyplay.nn.cell import check_flag
from pyplay.nn.multihead import MultiheadAttention, MultiheadAttentionCache

__all__ = ["TransformerDecoder", "TransformerDecoderLayer"]


class TransformerDecoderLayer(_LayerBase):
    """``torch.nn.TransformerDecoderLayer(batch_first=True)``: self-attention, cross-attention
    over the memory, then FF.

    Parameters
    ----------
    d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, dtype,
    rng
        As :class:`~pyplay.nn.transformer.TransformerEncoderLayer`.

    Attributes
    ----------
    params : dict of str to ndarray
        torch's ``state_dict()`` keys and order: ``self_attn.*``, ``multihead_attn.*``
        (``in_proj_weight``, ``in_proj_bias``, ``out_proj.weight``, ``out_proj.bias``),
        ``linear1.*``, ``linear2.*``, ``norm1.*``, ``norm2.*``, ``norm3.*``.
    """

    _n_norms = 3

    def _attach(self, gen: np.random.Generator, bias: bool) -> dict[str, np.ndarray]:
        self.multihead_attn = MultiheadAttention(
            self.d_model, self.nhead, bias=bias, dtype=self.dtype, rng=gen
        )
        self.norm1, self.norm2, self.norm3 = self._norms
        self.dropout1, self.dropout2, self.dropout3 = self._drops
        return self._collect(
            {"self_attn": self.self_attn, "multihead_attn": self.multihead_attn,
             "linear1": self.linear1, "linear2": self.linear2,
             "norm1": self.norm1, "norm2": self.norm2, "norm3": self.norm3}
        )  # fmt: skip

    def _check_memory(self, memory: Any, B: int) -> np.ndarray:
        mem = self._check_seq("memory", memory, "(B, S, E)")  # (B, S, E)
        if mem.shape[0] != B:
            raise ValueError(f"memory must have batch size B={B} like tgt, got shape {mem.shape}")
        return mem

    def forward(
        self,
        tgt: Any,
        memory: Any,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool = False,
        *,
        training: bool = True,
    ) -> tuple[np.ndarray, TransformerLayerCache]:
        """``out`` (B, T, E) from ``tgt`` (B, T, E) and ``memory`` (B, S, E).

        Parameters
        ----------
        tgt_mask : bool array (T, T) or (B*nhead, T, T), optional
            Self-attention: True = may not attend (torch's bool convention).
        memory_mask : bool array (T, S) or (B*nhead, T, S), optional
            Cross-attention: True = may not attend.
        tgt_key_padding_mask, memory_key_padding_mask : bool array (B, T), (B, S), optional
            True = padding, ignored as a key.
        tgt_is_causal : bool
            Target position ``i`` may not attend to ``j > i`` (combined with the masks).
        training : bool
            Dropout on (True) or off.
        """
        x = self._check_seq("tgt", tgt)  # (B, T, E)
        mem = self._check_memory(memory, x.shape[0])  # (B, S, E)
        causal = check_flag("tgt_is_causal", tgt_is_causal)
        training = check_flag("training", training)
        sa_names = ("tgt_key_padding_mask", "tgt_mask")
        sa = self._self_attn(tgt_key_padding_mask, tgt_mask, causal, sa_names)
        ca_names = ("memory_key_padding_mask", "memory_mask")

        def ca(u: np.ndarray) -> tuple[np.ndarray, MultiheadAttentionCache]:
            y, _, c = self.multihead_attn.forward(
                u, mem, mem, memory_key_padding_mask, False, memory_mask, mask_names=ca_names
            )
            return y, c  # (B, T, E)

        nf = self.norm_first
        x1, c1 = _residual(x, self.norm1, sa, self.dropout1, nf, training)  # (B, T, E)
        x2, c2 = _residual(x1, self.norm2, ca, self.dropout2, nf, training)  # (B, T, E)
        x3, c3 = _residual(x2, self.norm3, self._ff(training), self.dropout3, nf, training)
        names = ("self_attn", "multihead_attn", "ff")
        return x3, TransformerLayerCache(names, (c1, c2, c3), _norms([x, x1, x2, x3]), x.shape)

    def _cross_attn_backward(
        self, da: np.ndarray, c: MultiheadAttentionCache
    ) -> tuple[np.ndarray, dict, np.ndarray]:
        dq, dk, dv, g = self.multihead_attn.backward(da, c)  # (B, T, E), (B, S, E) x 2
        return dq, {f"multihead_attn.{k}": v for k, v in g.items()}, dk + dv

    def backward(
        self, dout: Any, cache: TransformerLayerCache
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(dtgt, dmemory, grads)`` from d(loss)/d(out) (B, T, E); ``grads`` has the keys of
        :attr:`params`."""
        dy = self._check_dout(dout, cache)  # (B, T, E)
        c_sa, c_ca, c_ff = cache.sublayers
        nf = self.norm_first
        dx2, grads, _ = _residual_backward(
            dy, c_ff, self.norm3, "norm3", self._ff_backward, self.dropout3, nf
        )  # (B, T, E)
        dx1, g_ca, dmem = _residual_backward(
            dx2, c_ca, self.norm2, "norm2", self._cross_attn_backward, self.dropout2, nf
        )  # (B, T, E), (B, S, E)
        dx, g_sa, _ = _residual_backward(
            dx1, c_sa, self.norm1, "norm1", self._self_attn_backward, self.dropout1, nf
        )  # (B, T, E)
        grads.update(g_ca)
        grads.update(g_sa)
        return dx, dmem, {name: grads[name] for name in self.params}

    # ------------------------------------------------------------ incremental decoding
    def init_state(self, memory: Any, memory_key_padding_mask: Any = None) -> LayerState:
        """The state before the first :meth:`step`: the memory (B, S, E) projected once into
        this layer's cross-attention keys and values, with its padding mask (B, S)."""
        mem = self._check_seq("memory", memory, "(B, S, E)")  # (B, S, E)
        kpm = self._check_new_kpm(
            "memory_key_padding_mask", memory_key_padding_mask, *mem.shape[:2]
        )
        return LayerState(None, self.multihead_attn.project_key_value(mem, mem, kpm))

    def step(
        self, tgt: Any, state: LayerState, *, tgt_key_padding_mask: Any = None
    ) -> tuple[np.ndarray, LayerState, dict[str, np.ndarray]]:
        """Causal incremental decoding: the newest target positions ``tgt`` (B, n, E) -> their
        outputs (B, n, E), equal to those rows of ``forward(..., tgt_is_causal=True)``.

        ``state`` comes from :meth:`init_state` or the previous step; ``tgt_key_padding_mask``
        (B, n) marks new positions to ignore as keys. Returns ``(out, new_state, record)``
        with ``"self_attn.weights"`` (B, h, n, T), ``"multihead_attn.weights"`` (B, h, n, S)
        and ``"residual_norms"`` (4, B, n). No dropout.
        """
        x = self._check_seq("tgt", tgt, "(B, n, E)")  # (B, n, E)
        state = self._check_state(state)
        memory_kv = state.cross_attn
        if memory_kv is None:
            raise ValueError("state must come from init_state(memory), got no memory keys")
        B, n, _ = x.shape
        if memory_kv.batch_size != B:
            raise ValueError(
                f"tgt must have the state's batch size B={memory_kv.batch_size}, got {x.shape}"
            )
        kpm = self._check_new_kpm("tgt_key_padding_mask", tgt_key_padding_mask, B, n)
        sa = self._self_attn_step(state.self_attn, kpm)
        weights = {}

        def ca(u: np.ndarray) -> tuple[np.ndarray, None]:
            y, weights["multihead_attn.weights"], _ = self.multihead_attn.step(u, memory_kv)
            return y, None  # (B, n, E)

        nf = self.norm_first
        x1, c1 = _residual(x, self.norm1, sa, self.dropout1, nf, False)  # (B, n, E)
        kv, weights["self_attn.weights"] = c1.block
        x2, _ = _residual(x1, self.norm2, ca, self.dropout2, nf, False)  # (B, n, E)
        x3, _ = _residual(x2, self.norm3, self._ff(False), self.dropout3, nf, False)
        record = {**weights, "residual_norms": _norms([x, x1, x2, x3])}
        return x3, LayerState(kv, memory_kv), record


class TransformerDecoder(_Stack):
    """``torch.nn.TransformerDecoder``: ``num_layers`` decoder layers, then an optional norm.

    Parameters
    ----------
    d_model, nhead, num_layers, dim_feedforward, dropout, activation, layer_norm_eps,
    norm_first, bias, norm, dtype, rng
        As :class:`~pyplay.nn.transformer.TransformerEncoder`.

    Attributes
    ----------
    layers : list of TransformerDecoderLayer
    params : dict of str to ndarray
        torch's keys: ``layers.0.self_attn.in_proj_weight``, ..., ``layers.0.multihead_attn.*``,
        ..., ``norm.weight``, ``norm.bias``.
    """

    _layer_class = TransformerDecoderLayer

    def forward(
        self,
        tgt: Any,
        memory: Any,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool = False,
        *,
        training: bool = True,
    ) -> tuple[np.ndarray, TransformerStackCache]:
        """``out`` (B, T, E); every layer attends over the same ``memory`` (B, S, E) with the
        masks of :meth:`TransformerDecoderLayer.forward`."""
        x, caches = tgt, []
        masks = (tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)
        for layer in self.layers:
            x, c = layer.forward(x, memory, *masks, tgt_is_causal, training=training)
            caches.append(c)  # x: (B, T, E)
        return self._finish(x, caches)

    def backward(
        self, dout: Any, cache: TransformerStackCache
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(dtgt, dmemory, grads)``; ``dmemory`` (B, S, E) sums every layer's."""
        dy, grads = self._norm_backward(dout, cache)  # (B, T, E)
        dmem = None
        for i in reversed(range(self.num_layers)):
            dy, dm, g = self.layers[i].backward(dy, cache.layers[i])  # (B, T, E), (B, S, E)
            dmem = dm if dmem is None else dmem + dm
            grads.update({f"layers.{i}.{k}": v for k, v in g.items()})
        assert dmem is not None  # num_layers >= 1
        return dy, dmem, {name: grads[name] for name in self.params}

    def init_state(self, memory: Any, memory_key_padding_mask: Any = None) -> TransformerState:
        """Every layer's cross-attention keys and values of ``memory`` (B, S, E), projected
        once; nothing decoded yet."""
        return TransformerState(
            tuple(layer.init_state(memory, memory_key_padding_mask) for layer in self.layers)
        )

    def step(
        self, tgt: Any, state: TransformerState, *, tgt_key_padding_mask: Any = None
    ) -> tuple[np.ndarray, TransformerState, dict[str, np.ndarray]]:
        """The newest target positions ``tgt`` (B, n, E) through every layer -> (B, n, E),
        equal to those rows of ``forward(..., tgt_is_causal=True)``. Returns ``(out,
        new_state, record)``, the layers' records prefixed ``"layers.<i>."``."""
        return self._step_layers(
            tgt, self._check_state(state), tgt_key_padding_mask=tgt_key_padding_mask
        )
