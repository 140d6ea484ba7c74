r"""Transformer encoder layer and stack (Vaswani et al. 2017), ``torch.nn``'s names, batch-first.

A layer is a chain of residual sublayers on the residual stream :math:`x` (B, T, E). With
``norm_first=False`` (post-norm, torch's default) and ``True`` (pre-norm):

.. math::

    x' = \mathrm{LN}\big(x + \mathrm{Drop}(f(x))\big) \qquad\text{or}\qquad
    x' = x + \mathrm{Drop}\big(f(\mathrm{LN}(x))\big),

with :math:`f` the self-attention :math:`\mathrm{SA}(u) = \mathrm{MHA}(u, u, u)`, then the
position-wise feed-forward network

.. math::

    \mathrm{FF}(u) = \mathrm{Drop}\big(\phi(u W_1^\top + b_1)\big) W_2^\top + b_2, \qquad
    \phi = \mathrm{relu} \ \text{or}\ \mathrm{gelu}(a) = a\,\Phi(a),\
    \Phi(a) = \tfrac12\big(1 + \mathrm{erf}(a/\sqrt2)\big).

Backward runs the chain in reverse. Post-norm: :math:`\delta s = \mathrm{LN}^\top(\delta x')`,
:math:`\delta x = \delta s + f^\top(\mathrm{Drop}^\top(\delta s))`; pre-norm: :math:`\delta x =
\delta x' + \mathrm{LN}^\top(f^\top(\mathrm{Drop}^\top(\delta x')))`, where :math:`g^\top` is the
backward of :math:`g`; self-attention sums the gradients of its query, key and value inputs;
:math:`\mathrm{gelu}'(a) = \Phi(a) + a\,\varphi(a)`, :math:`\varphi` the normal density.

Incremental decoding (:meth:`TransformerEncoderLayer.step`, the decoder-only "GPT" use of a
causal encoder): every sublayer but self-attention acts on each position alone, and causal
self-attention at a new position needs only the keys and values of the positions so far, kept
per layer in a :class:`LayerState` (:class:`TransformerState` for a stack). Both reorder along
the batch axis (:func:`reorder`, for beam search).

Introspection: a layer's cache and a step's record give the per-head attention weights and the
norms :math:`\|x\|_2` of the residual stream at the layer's input and after each sublayer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.nn._transformer import (
    ACTIVATIONS,
    TransformerLayerCache,
    TransformerStackCache,
    _LayerBase,
    _norms,
    _residual,
    _residual_backward,
    _Stack,
)
from pyplay.nn.cell import check_flag
from pyplay.nn.kv_cache import LayerState, TransformerState, reorder

__all__ = [
    "ACTIVATIONS",
    "LayerState",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "TransformerLayerCache",
    "TransformerStackCache",
    "TransformerState",
    "reorder",
]


class TransformerEncoderLayer(_LayerBase):
    """``torch.nn.TransformerEncoderLayer(batch_first=True)``: self-attention, then FF.

    Parameters
    ----------
    d_model, nhead : int
        Model width E, divisible by the number of heads.
    dim_feedforward : int
        Hidden width F of the feed-forward network.
    dropout : float
        Dropout probability (after each sublayer and inside the FF network) in training.
    activation : {"relu", "gelu"}
        ``"gelu"`` is the exact erf form (torch's default ``"gelu"``).
    layer_norm_eps : float
    norm_first : bool
        Pre-norm (True) or post-norm (False, torch's default).
    bias : bool
        Biases of the projections, linear layers and layer norms (as torch).
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation as torch's (attention as :class:`MultiheadAttention`, linear layers as
        :class:`Linear`, norms ones and zeros); also drives dropout.
    value_function : {"linear", "identity"}
        The self-attention's value function (keyword only): torch's linear projection, or
        none, :math:`V = X` (Solberg's TEK5040 lecture; see
        :class:`~pyplay.nn.multihead.MultiheadAttention`). Without one the layer has no value
        rows in ``self_attn.in_proj_weight`` and no torch counterpart.

    Attributes
    ----------
    params : dict of str to ndarray
        Exactly the keys and order of torch's ``state_dict()``: ``self_attn.in_proj_weight``,
        ``self_attn.in_proj_bias``, ``self_attn.out_proj.weight``, ``self_attn.out_proj.bias``,
        ``linear1.weight``, ``linear1.bias``, ``linear2.weight``, ``linear2.bias``,
        ``norm1.weight``, ``norm1.bias``, ``norm2.weight``, ``norm2.bias`` (the sub-modules'
        own arrays: update them in place).
    """

    _n_norms = 2

    def _attach(self, gen: np.random.Generator, bias: bool) -> dict[str, np.ndarray]:
        self.norm1, self.norm2 = self._norms
        self.dropout1, self.dropout2 = self._drops
        return self._collect(
            {"self_attn": self.self_attn, "linear1": self.linear1, "linear2": self.linear2,
             "norm1": self.norm1, "norm2": self.norm2}
        )  # fmt: skip

    def forward(
        self,
        src: Any,
        src_mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
        *,
        training: bool = True,
    ) -> tuple[np.ndarray, TransformerLayerCache]:
        """``out`` (B, T, E) from ``src`` (B, T, E), and the cache for :meth:`backward`.

        Parameters
        ----------
        src_mask : bool array (T, T) or (B*nhead, T, T), optional
            True = that position may not attend to that one (torch's bool convention).
        src_key_padding_mask : bool array (B, T), optional
            True = padding, ignored as a key.
        is_causal : bool
            Position ``i`` may not attend to ``j > i`` (combined with the masks).
        training : bool
            Dropout on (True) or off.
        """
        return self._forward(src, src_mask, src_key_padding_mask, is_causal, training, "src_mask")

    def _forward(
        self, src: Any, src_mask: Any, src_key_padding_mask: Any, is_causal: bool,
        training: bool, mask_name: str,
    ) -> tuple[np.ndarray, TransformerLayerCache]:  # fmt: skip
        x = self._check_seq("src", src)  # (B, T, E)
        causal, training = check_flag("is_causal", is_causal), check_flag("training", training)
        sa = self._self_attn(
            src_key_padding_mask, src_mask, causal, ("src_key_padding_mask", mask_name)
        )
        nf = self.norm_first
        x1, c1 = _residual(x, self.norm1, sa, self.dropout1, nf, training)  # (B, T, E)
        x2, c2 = _residual(x1, self.norm2, self._ff(training), self.dropout2, nf, training)
        return x2, TransformerLayerCache(
            ("self_attn", "ff"), (c1, c2), _norms([x, x1, x2]), x.shape
        )

    def backward(
        self, dout: Any, cache: TransformerLayerCache
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(dsrc, grads)`` from d(loss)/d(out) (B, T, E); ``grads`` has the keys of
        :attr:`params`."""
        dy = self._check_dout(dout, cache)
        c_sa, c_ff = cache.sublayers
        nf = self.norm_first
        dx1, grads, _ = _residual_backward(
            dy, c_ff, self.norm2, "norm2", self._ff_backward, self.dropout2, nf
        )  # (B, T, E)
        dx, g_sa, _ = _residual_backward(
            dx1, c_sa, self.norm1, "norm1", self._self_attn_backward, self.dropout1, nf
        )  # (B, T, E)
        grads.update(g_sa)
        return dx, {name: grads[name] for name in self.params}

    def step(
        self, src: Any, state: LayerState | None = None, *, src_key_padding_mask: Any = None
    ) -> tuple[np.ndarray, LayerState, dict[str, np.ndarray]]:
        """Causal incremental decoding: the newest positions ``src`` (B, n, E) -> their outputs
        (B, n, E), equal to those rows of ``forward(..., is_causal=True)`` on the whole prefix.

        ``state`` holds the earlier positions' keys and values (None at the start);
        ``src_key_padding_mask`` (B, n), True = padding, marks new positions to ignore as
        keys. Returns ``(out, new_state, record)``; the record holds ``"self_attn.weights"``
        (B, h, n, T) and ``"residual_norms"`` (3, B, n). No dropout.
        """
        x = self._check_seq("src", src, "(B, n, E)")  # (B, n, E)
        state = LayerState() if state is None else self._check_state(state)
        if state.self_attn is not None and state.self_attn.batch_size != x.shape[0]:
            raise ValueError(
                f"src must have the state's batch size B={state.self_attn.batch_size}, "
                f"got {x.shape}"
            )
        kpm = self._check_new_kpm("src_key_padding_mask", src_key_padding_mask, *x.shape[:2])
        sa = self._self_attn_step(state.self_attn, kpm)
        nf = self.norm_first
        x1, c1 = _residual(x, self.norm1, sa, self.dropout1, nf, False)  # (B, n, E)
        x2, _ = _residual(x1, self.norm2, self._ff(False), self.dropout2, nf, False)
        kv, w = c1.block
        return x2, LayerState(kv), {"self_attn.weights": w, "residual_norms": _norms([x, x1, x2])}


class TransformerEncoder(_Stack):
    """``torch.nn.TransformerEncoder``: ``num_layers`` encoder layers, then an optional norm.

    Parameters
    ----------
    d_model, nhead, num_layers : int
    dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, dtype
        As :class:`TransformerEncoderLayer`, for every layer.
    norm : bool or LayerNorm, optional
        A final layer norm (True: ``LayerNorm(d_model, layer_norm_eps, bias=bias)``), as
        torch's ``norm=`` argument; usual with ``norm_first=True``.
    rng : numpy.random.Generator or int seed
        Each layer draws its own initial weights (torch deep-copies one layer, so its layers
        start equal).
    value_function : {"linear", "identity"}
        Every layer's self-attention value function (keyword only), as
        :class:`TransformerEncoderLayer`.

    Attributes
    ----------
    layers : list of TransformerEncoderLayer
    params : dict of str to ndarray
        torch's ``state_dict()`` keys: ``layers.0.self_attn.in_proj_weight``, ...,
        ``norm.weight``, ``norm.bias``.
    """

    _layer_class = TransformerEncoderLayer

    def forward(
        self,
        src: Any,
        mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
        *,
        training: bool = True,
    ) -> tuple[np.ndarray, TransformerStackCache]:
        """``out`` (B, T, E) from ``src`` (B, T, E); the masks as
        :meth:`TransformerEncoderLayer.forward` (``mask`` is its ``src_mask``), for every layer.
        ``cache.record()`` gives each layer's weights and residual norms."""
        x, caches = src, []
        for layer in self.layers:
            x, c = layer._forward(x, mask, src_key_padding_mask, is_causal, training, "mask")
            caches.append(c)  # x: (B, T, E)
        return self._finish(x, caches)

    def backward(
        self, dout: Any, cache: TransformerStackCache
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(dsrc, grads)`` from d(loss)/d(out) (B, T, E), ``grads`` keyed as :attr:`params`."""
        dy, grads = self._norm_backward(dout, cache)  # (B, T, E)
        for i in reversed(range(self.num_layers)):
            dy, g = self.layers[i].backward(dy, cache.layers[i])  # (B, T, E)
            grads.update({f"layers.{i}.{k}": v for k, v in g.items()})
        return dy, {name: grads[name] for name in self.params}

    def init_state(self) -> TransformerState:
        """The state before the first :meth:`step`: nothing cached."""
        return TransformerState(tuple(LayerState() for _ in self.layers))

    def step(
        self,
        src: Any,
        state: TransformerState | None = None,
        *,
        src_key_padding_mask: Any = None,
    ) -> tuple[np.ndarray, TransformerState, dict[str, np.ndarray]]:
        """Causal incremental decoding through every layer: the newest positions ``src``
        (B, n, E) -> (B, n, E), equal to those rows of ``forward(..., is_causal=True)``.

        Returns ``(out, new_state, record)``; the record's keys are the layers' (see
        :meth:`TransformerEncoderLayer.step`) prefixed ``"layers.<i>."``.
        """
        state = self.init_state() if state is None else self._check_state(state)
        return self._step_layers(src, state, src_key_padding_mask=src_key_padding_mask)
