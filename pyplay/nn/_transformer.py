"""Pieces shared by the transformer layers (:mod:`pyplay.nn.transformer`,
:mod:`pyplay.nn.transformer_decoder`): the activations, the residual sublayer and its backward,
the feed-forward block, the self-attention block, the caches, and the stack of layers. The
incremental-decoding state (:class:`~pyplay.nn.kv_cache.LayerState`,
:class:`~pyplay.nn.kv_cache.TransformerState`) lives in :mod:`pyplay.nn.kv_cache`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_float, check_int
from pyplay.limits import check_parameters
from pyplay.nn.cell import check_flag
from pyplay.nn.dropout import Dropout
from pyplay.nn.gelu import ACTIVATIONS, activate
from pyplay.nn.kv_cache import KVCache, LayerState, TransformerState
from pyplay.nn.layernorm import LayerNorm, LayerNormCache
from pyplay.nn.linear import Linear
from pyplay.nn.masks import check_key_padding_mask
from pyplay.nn.multihead import MultiheadAttention, MultiheadAttentionCache

__all__ = ["ACTIVATIONS", "TransformerLayerCache", "TransformerStackCache"]

Seed = np.random.Generator | int | None


# ------------------------------------------------------------------- shared layer pieces
@dataclass(frozen=True)
class _ResidualCache:
    norm: LayerNormCache
    block: Any  # the sublayer's own cache
    drop: np.ndarray | None  # dropout multiplier of the sublayer's output


@dataclass(frozen=True)
class TransformerLayerCache:
    """What a layer's ``backward`` needs, and what it shows.

    ``names`` name the sublayers (``"self_attn"``, ``"multihead_attn"``, ``"ff"``);
    ``residual_norms`` (n_sublayers + 1, B, T) holds :math:`\\|x\\|_2` of the residual stream
    at the layer's input and after each sublayer.
    """

    names: tuple[str, ...]
    sublayers: tuple[_ResidualCache, ...]
    residual_norms: np.ndarray  # (n_sublayers + 1, B, T)
    shape: tuple[int, ...]  # (B, T, E) of the input and the output

    def record(self) -> dict[str, np.ndarray]:
        """Per-head attention weights ``"<name>.weights"`` (B, h, Tq, Tk) of each attention
        sublayer, and ``"residual_norms"`` (n_sublayers + 1, B, T)."""
        rec = {
            f"{name}.weights": c.block.weights
            for name, c in zip(self.names, self.sublayers, strict=True)
            if isinstance(c.block, MultiheadAttentionCache)
        }
        rec["residual_norms"] = self.residual_norms
        return rec


@dataclass(frozen=True)
class TransformerStackCache:
    layers: tuple[TransformerLayerCache, ...]
    norm: LayerNormCache | None  # the final norm's

    def record(self) -> dict[str, np.ndarray]:
        """Every layer's record, keys prefixed ``"layers.<i>."``."""
        return {
            f"layers.{i}.{k}": v for i, c in enumerate(self.layers) for k, v in c.record().items()
        }


def _norms(xs: list[np.ndarray]) -> np.ndarray:
    return np.stack([np.sqrt((x * x).sum(axis=-1)) for x in xs])  # (len(xs), B, T)


def _drop(drop: Dropout, a: np.ndarray, training: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``drop.forward(a, training)``, but the identity without a call when nothing can be
    dropped (``p = 0``, the default, or not training): ``a`` is the layer's own array, checked
    where it came in, and the check of a call costs a pass over it."""
    if not training or drop.p == 0.0:
        return a, None
    return drop.forward(a, training)


def _undrop(drop: Dropout, d: np.ndarray, m: np.ndarray | None) -> np.ndarray:
    """``drop.backward(d, m)``'s gradient; ``d`` itself when nothing was dropped."""
    return d if m is None else drop.backward(d, m)[0]


def _residual(
    x: np.ndarray,
    norm: LayerNorm,
    block: Callable[[np.ndarray], tuple[np.ndarray, Any]],
    drop: Dropout,
    norm_first: bool,
    training: bool,
) -> tuple[np.ndarray, _ResidualCache]:
    """One residual sublayer: pre-norm ``x + Drop(f(LN(x)))`` or post-norm
    ``LN(x + Drop(f(x)))``."""
    if norm_first:
        u, c_norm = norm.forward(x)  # (B, T, E)
        a, c_block = block(u)  # (B, T, E)
        a, m = _drop(drop, a, training)
        return x + a, _ResidualCache(c_norm, c_block, m)
    a, c_block = block(x)  # (B, T, E)
    a, m = _drop(drop, a, training)
    y, c_norm = norm.forward(x + a)  # (B, T, E)
    return y, _ResidualCache(c_norm, c_block, m)


BlockBackward = Callable[[np.ndarray, Any], tuple[np.ndarray, dict[str, np.ndarray], Any]]


def _residual_backward(
    dy: np.ndarray,
    c: _ResidualCache,
    norm: LayerNorm,
    norm_name: str,
    block_backward: BlockBackward,
    drop: Dropout,
    norm_first: bool,
) -> tuple[np.ndarray, dict[str, np.ndarray], Any]:
    """``(dx, grads, extra)`` through :func:`_residual`; ``extra`` is the block's (e.g. the
    gradient of the cross-attention's memory)."""
    if norm_first:
        da = _undrop(drop, dy, c.drop)  # (B, T, E)
        du, grads, extra = block_backward(da, c.block)  # (B, T, E)
        dxn, g_norm = norm.backward(du, c.norm)  # (B, T, E)
        dx = dy + dxn
    else:
        ds, g_norm = norm.backward(dy, c.norm)  # (B, T, E) d(x + a)
        da = _undrop(drop, ds, c.drop)
        dxb, grads, extra = block_backward(da, c.block)  # (B, T, E)
        dx = ds + dxb
    grads.update({f"{norm_name}.{k}": v for k, v in g_norm.items()})
    return dx, grads, extra


@dataclass(frozen=True)
class _FFCache:
    x1: np.ndarray  # linear1's cache: its input (B, T, E)
    dphi: np.ndarray  # (B, T, F) phi'(a)
    drop: np.ndarray | None  # (B, T, F)
    x2: np.ndarray  # linear2's cache: its input (B, T, F)


class _LayerBase:
    """The constructor, argument checks and the pieces both layer kinds share (not public)."""

    _n_norms: int  # residual sublayers, each with its norm and dropout

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.0,
        activation: str = "relu",
        layer_norm_eps: float = 1e-5,
        norm_first: bool = False,
        bias: bool = True,
        dtype: Any = np.float32,
        rng: Seed = 0,
        *,
        value_function: str = "linear",
    ) -> None:
        E = self.d_model = check_int("d_model", d_model, min_value=1)
        h = self.nhead = check_int("nhead", nhead, min_value=1)
        if E % h:
            raise ValueError(f"d_model must be divisible by nhead={h}, got d_model={E}")
        F = self.dim_feedforward = check_int("dim_feedforward", dim_feedforward, min_value=1)
        p = self.dropout_p = check_float(
            "dropout", dropout, min_value=0.0, max_value=1.0, max_inclusive=False
        )
        self.activation = check_choice("activation", activation, ACTIVATIONS)
        eps = check_float("layer_norm_eps", layer_norm_eps, min_value=0.0, min_inclusive=False)
        self.norm_first = check_flag("norm_first", norm_first)
        bias = check_flag("bias", bias)
        gen = as_generator(rng)
        self.self_attn = MultiheadAttention(
            E, h, bias=bias, dtype=dtype, rng=gen, value_function=value_function
        )  # "identity": no value function in self-attention (V = X)
        self.value_function = self.self_attn.value_function
        self.dtype = self.self_attn.dtype
        self._norms = [LayerNorm(E, eps, bias=bias, dtype=dtype) for _ in range(self._n_norms)]
        self.linear1 = Linear(E, F, bias=bias, dtype=dtype, rng=gen)
        self.linear2 = Linear(F, E, bias=bias, dtype=dtype, rng=gen)
        self.dropout = Dropout(p, rng=gen)
        self._drops = [Dropout(p, rng=gen) for _ in range(self._n_norms)]
        self.params = self._attach(gen, bias)

    def _attach(self, gen: np.random.Generator, bias: bool) -> dict[str, np.ndarray]:
        """The layer's own sub-modules (drawn from ``gen`` after the shared ones) and names for
        ``_norms`` and ``_drops``; returns :attr:`params`."""
        raise NotImplementedError

    def _collect(self, parts: dict[str, Any]) -> dict[str, np.ndarray]:
        """The sub-modules' parameters (the same arrays) under torch's prefixed names."""
        return {f"{name}.{k}": v for name, m in parts.items() for k, v in m.params.items()}

    def _check_seq(self, name: str, x: Any, layout: str = "(B, T, E)") -> np.ndarray:
        arr = check_array(name, x, ndim=3, dtype=self.dtype, layout=layout)
        if arr.shape[2] != self.d_model:
            raise ValueError(
                f"{name} must have d_model={self.d_model} features in its last axis, "
                f"got shape {arr.shape}"
            )
        if arr.shape[1] == 0:
            raise ValueError(
                f"{name} must have at least one step to attend over (T >= 1), got shape {arr.shape}"
            )
        return arr

    def _check_new_kpm(self, name: str, mask: Any, B: int, n: int) -> np.ndarray | None:
        return check_key_padding_mask(name, mask, B, n, "(B, n)")

    def _ff(self, training: bool) -> Callable[[np.ndarray], tuple[np.ndarray, _FFCache]]:
        def block(u: np.ndarray) -> tuple[np.ndarray, _FFCache]:
            a, x1 = self.linear1.forward(u)  # (B, T, F)
            g, dphi = activate(self.activation, a)  # (B, T, F)
            g, m = _drop(self.dropout, g, training)
            f, x2 = self.linear2.forward(g)  # (B, T, E)
            return f, _FFCache(x1, dphi, m, x2)

        return block

    def _ff_backward(self, df: np.ndarray, c: _FFCache) -> tuple[np.ndarray, dict, None]:
        dg, g2 = self.linear2.backward(df, c.x2)  # (B, T, F)
        dg = _undrop(self.dropout, dg, c.drop)
        du, g1 = self.linear1.backward(dg * c.dphi, c.x1)  # (B, T, E)
        grads = {f"linear1.{k}": v for k, v in g1.items()}
        grads.update({f"linear2.{k}": v for k, v in g2.items()})
        return du, grads, None

    def _self_attn(
        self, key_padding_mask: Any, mask: Any, causal: bool, names: tuple[str, str]
    ) -> Callable[[np.ndarray], tuple[np.ndarray, MultiheadAttentionCache]]:
        """The self-attention block ``u -> MHA(u, u, u)`` with these masks, for training."""

        def block(u: np.ndarray) -> tuple[np.ndarray, MultiheadAttentionCache]:
            y, _, c = self.self_attn.forward(
                u, u, u, key_padding_mask, False, mask, is_causal=causal, mask_names=names
            )  # (B, T, E)
            return y, c

        return block

    def _self_attn_step(
        self, kv: KVCache | None, key_padding_mask: np.ndarray | None
    ) -> Callable[[np.ndarray], tuple[np.ndarray, tuple[KVCache, np.ndarray]]]:
        """The causal self-attention block of incremental decoding: ``u`` (B, n, E) over the
        cached keys ``kv`` and its own; its "cache" is the extended KVCache and the weights
        (B, h, n, T)."""

        def block(u: np.ndarray) -> tuple[np.ndarray, tuple[KVCache, np.ndarray]]:
            y, w, new_kv = self.self_attn.step(
                u, kv, u, u, key_padding_mask=key_padding_mask, is_causal=True
            )  # (B, n, E)
            return y, (new_kv, w)

        return block

    def _self_attn_backward(
        self, da: np.ndarray, c: MultiheadAttentionCache
    ) -> tuple[np.ndarray, dict, None]:
        dx, g = self.self_attn.backward_self(da, c)  # (B, T, E): d query + d key + d value
        return dx, {f"self_attn.{k}": v for k, v in g.items()}, None

    def _check_dout(self, dout: Any, cache: TransformerLayerCache) -> np.ndarray:
        if not isinstance(cache, TransformerLayerCache):
            raise TypeError(f"cache must be a TransformerLayerCache, got {type(cache).__name__}")
        dy = check_array("dout", dout, dtype=self.dtype)
        if dy.shape != cache.shape:
            raise ValueError(f"dout must have shape {cache.shape}, got {dy.shape}")
        return dy

    def _check_state(self, state: Any) -> LayerState:
        if not isinstance(state, LayerState):
            raise TypeError(f"state must be a LayerState, got {type(state).__name__}")
        return state


# ------------------------------------------------------------------------ stacks
class _Stack:
    """What the encoder and decoder stacks share: ``num_layers`` layers of one kind, the
    optional final norm, torch's ``layers.<i>.`` / ``norm.`` keys, the final norm's forward and
    backward, and the incremental-decoding loop."""

    layers: list[Any]
    norm: LayerNorm | None

    _layer_class: Any  # the layer type of the stack

    def __init__(
        self,
        d_model: int,
        nhead: int,
        num_layers: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.0,
        activation: str = "relu",
        layer_norm_eps: float = 1e-5,
        norm_first: bool = False,
        bias: bool = True,
        norm: bool | LayerNorm | None = None,
        dtype: Any = np.float32,
        rng: Seed = 0,
        *,
        value_function: str = "linear",
    ) -> None:
        L = self.num_layers = check_int("num_layers", num_layers, min_value=1)
        gen = as_generator(rng)
        args = (dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, dtype)
        first = self._layer_class(d_model, nhead, *args, rng=gen, value_function=value_function)
        per = sum(v.size for v in first.params.values())  # parameters of one layer
        check_parameters(
            f"{type(self).__name__}(num_layers={L:,}) of {per:,}-parameter layers", L * per
        )
        rest = [
            self._layer_class(d_model, nhead, *args, rng=gen, value_function=value_function)
            for _ in range(L - 1)
        ]
        self.value_function = first.value_function
        self.layers = [first, *rest]
        self.d_model, self.dtype = self.layers[0].d_model, self.layers[0].dtype
        self.norm = self._final_norm(norm, layer_norm_eps, bias)
        self.params: dict[str, np.ndarray] = {
            f"layers.{i}.{k}": v
            for i, layer in enumerate(self.layers)
            for k, v in layer.params.items()
        }
        if self.norm is not None:
            self.params.update({f"norm.{k}": v for k, v in self.norm.params.items()})

    def _final_norm(self, norm: Any, eps: float, bias: bool) -> LayerNorm | None:
        """The optional final norm: None/False, True (a new one) or a LayerNorm."""
        if norm is None or norm is False:
            return None
        if norm is True:
            return LayerNorm(self.d_model, eps, bias=bias, dtype=self.dtype)
        if not isinstance(norm, LayerNorm):
            raise TypeError(f"norm must be None, True, False or a LayerNorm, got {norm!r}")
        if norm.normalized_shape != (self.d_model,):
            raise ValueError(
                f"norm must normalise d_model={self.d_model} features, got normalized_shape "
                f"{norm.normalized_shape}"
            )
        if norm.dtype != self.dtype:
            raise TypeError(f"norm must have the layers' dtype {self.dtype}, got {norm.dtype}")
        return norm

    def _finish(self, x: np.ndarray, caches: list[Any]) -> tuple[np.ndarray, TransformerStackCache]:
        """The final norm (if any) over the last layer's output (B, T, E), and the cache."""
        c_norm = None
        if self.norm is not None:
            x, c_norm = self.norm.forward(x)  # (B, T, E)
        return x, TransformerStackCache(tuple(caches), c_norm)

    def _norm_backward(self, dout: Any, cache: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Check ``cache``, then d(loss)/d(last layer's output) (B, T, E) and the norm's grads."""
        if not isinstance(cache, TransformerStackCache):
            raise TypeError(f"cache must be a TransformerStackCache, got {type(cache).__name__}")
        dy = self.layers[-1]._check_dout(dout, cache.layers[-1])  # (B, T, E)
        grads: dict[str, np.ndarray] = {}
        if self.norm is not None and cache.norm is not None:
            dy, g = self.norm.backward(dy, cache.norm)  # (B, T, E)
            grads.update({f"norm.{k}": v for k, v in g.items()})
        return dy, grads

    def _check_state(self, state: Any) -> TransformerState:
        if not isinstance(state, TransformerState):
            raise TypeError(f"state must be a TransformerState, got {type(state).__name__}")
        if len(state.layers) != self.num_layers:
            raise ValueError(
                f"state must hold num_layers={self.num_layers} layer states, got "
                f"{len(state.layers)}"
            )
        return state

    def _step_layers(
        self, x: Any, state: TransformerState, **mask: Any
    ) -> tuple[np.ndarray, TransformerState, dict[str, np.ndarray]]:
        """The newest positions through every layer's ``step`` and the final norm."""
        new, record = [], {}
        for i, (layer, s) in enumerate(zip(self.layers, state.layers, strict=True)):
            x, s, r = layer.step(x, s, **mask)  # (B, n, E)
            new.append(s)
            record.update({f"layers.{i}.{k}": v for k, v in r.items()})
        if self.norm is not None:
            x, _ = self.norm.forward(x)  # (B, n, E)
        return x, TransformerState(tuple(new)), record
