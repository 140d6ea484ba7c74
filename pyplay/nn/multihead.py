r"""Multi-head attention (Vaswani et al. 2017) in ``torch.nn.MultiheadAttention``'s layout.

With ``h`` heads of size :math:`d = E / h`, for queries :math:`X_q` (B, Tq, E), keys :math:`X_k`
(B, Tk, kdim) and values :math:`X_v` (B, Tk, vdim):

.. math::

    Q = X_q W_q^\top + b_q, \quad K = X_k W_k^\top + b_k, \quad V = X_v W_v^\top + b_v, \\
    \mathrm{head}_n = \mathrm{softmax}\!\Big(\frac{Q_n K_n^\top}{\sqrt d} + M\Big) V_n, \qquad
    Y = [\mathrm{head}_1; \dots; \mathrm{head}_h]\, W_o^\top + b_o,

where :math:`Q_n` is the n-th block of ``d`` columns of :math:`Q` and the mask :math:`M` is 0
where a query may look at a key and :math:`-\infty` elsewhere (masked weights are exactly 0, see
:mod:`pyplay.nn.attention`). Backward runs the same steps in reverse: :math:`\delta W_o =
\delta Y^\top [\mathrm{heads}]`, the attend step's backward per head
(:func:`~pyplay.nn.sdpa.scaled_dot_product_attention_backward`), then
:math:`\delta X_q = \delta Q\, W_q`, :math:`\delta W_q = \delta Q^\top X_q`,
:math:`\delta b_q = \sum \delta Q` (likewise for ``k`` and ``v``).

Incremental decoding (:meth:`MultiheadAttention.project_key_value`,
:meth:`MultiheadAttention.step`, inference only) is in :mod:`pyplay.nn.multihead_step`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_dtype, check_int
from pyplay.nn import init, multihead_step
from pyplay.nn._ops import matmul
from pyplay.nn.masks import keep_mask
from pyplay.nn.sdpa import (
    SDPACache,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)

__all__ = ["MultiheadAttention", "MultiheadAttentionCache"]


@dataclass(frozen=True)
class MultiheadAttentionCache:
    query: np.ndarray  # (B, Tq, E)
    key: np.ndarray  # (B, Tk, kdim)
    value: np.ndarray  # (B, Tk, vdim)
    heads: np.ndarray  # (B, Tq, E) concatenated head outputs
    attend: SDPACache  # per head, (B, h, T, d)

    @property
    def weights(self) -> np.ndarray:
        """Per-head attention weights (B, h, Tq, Tk), exactly 0 at masked positions."""
        return self.attend.weights


class MultiheadAttention:
    """``torch.nn.MultiheadAttention(batch_first=True)`` without dropout, extra key/value biases
    or zero attention.

    Parameters
    ----------
    embed_dim, num_heads : int
        ``embed_dim`` must be divisible by ``num_heads`` (head size ``embed_dim // num_heads``).
    bias : bool
        Input and output projection biases.
    kdim, vdim : int, optional
        Feature sizes of ``key`` and ``value`` (default ``embed_dim``).
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation as torch: Xavier-uniform input projections, U(-1/sqrt(E), 1/sqrt(E)) for
        ``out_proj.weight``, zero biases.

    Attributes
    ----------
    params : dict of str to ndarray
        torch's names, shapes and order: ``in_proj_weight`` (3E, E) (rows q, k, v) when kdim and
        vdim equal E, else ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim),
        ``v_proj_weight`` (E, vdim); then ``in_proj_bias`` (3E,), ``out_proj.weight`` (E, E),
        ``out_proj.bias`` (E,) (biases only with ``bias=True``).
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        E = self.embed_dim = check_int("embed_dim", embed_dim, min_value=1)
        h = self.num_heads = check_int("num_heads", num_heads, min_value=1)
        if E % h:
            raise ValueError(f"embed_dim must be divisible by num_heads={h}, got embed_dim={E}")
        self.head_dim = E // h
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be True or False, got {bias!r}")
        self.kdim = E if kdim is None else check_int("kdim", kdim, min_value=1)
        self.vdim = E if vdim is None else check_int("vdim", vdim, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        gen = as_generator(rng)

        def xavier(name: str, shape: tuple[int, int]) -> np.ndarray:
            a = np.sqrt(6.0 / (shape[0] + shape[1]))
            return init.uniform(gen, -a, a, shape, self.dtype, f"MultiheadAttention {name}")

        self.same_embed_dim = self.kdim == E and self.vdim == E
        self.params: dict[str, np.ndarray] = {}
        if self.same_embed_dim:
            self.params["in_proj_weight"] = xavier(
                "in_proj_weight (3 * embed_dim, embed_dim)", (3 * E, E)
            )
        else:
            self.params["q_proj_weight"] = xavier("q_proj_weight (embed_dim, embed_dim)", (E, E))
            self.params["k_proj_weight"] = xavier("k_proj_weight (embed_dim, kdim)", (E, self.kdim))
            self.params["v_proj_weight"] = xavier("v_proj_weight (embed_dim, vdim)", (E, self.vdim))
        if bias:
            self.params["in_proj_bias"] = np.zeros(3 * E, dtype=self.dtype)
        k = 1.0 / np.sqrt(E)
        what = "MultiheadAttention out_proj.weight (embed_dim, embed_dim)"
        self.params["out_proj.weight"] = init.uniform(gen, -k, k, (E, E), self.dtype, what)
        if bias:
            self.params["out_proj.bias"] = np.zeros(E, dtype=self.dtype)

    def _projections(self) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """``(W, b)`` for q, k, v: views of the packed parameters."""
        p, E = self.params, self.embed_dim
        if self.same_embed_dim:
            Ws = [p["in_proj_weight"][n * E : (n + 1) * E] for n in range(3)]
        else:
            Ws = [p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]]
        b = p.get("in_proj_bias")
        return [(W, None if b is None else b[n * E : (n + 1) * E]) for n, W in enumerate(Ws)]

    def _check_query(self, query: Any, layout: str) -> np.ndarray:
        X_q = check_array("query", query, ndim=3, dtype=self.dtype, layout=layout)
        if X_q.shape[2] != self.embed_dim:
            raise ValueError(
                f"query must have embed_dim={self.embed_dim} features, got {X_q.shape}"
            )
        return X_q

    def _check_key_value(
        self, key: Any, value: Any, B: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``key`` (B, Tk, kdim) and ``value`` (B, Tk, vdim); ``B`` the queries', if given."""
        X_k = check_array("key", key, ndim=3, dtype=self.dtype, layout="(B, Tk, kdim)")
        X_v = check_array("value", value, ndim=3, dtype=self.dtype, layout="(B, Tk, vdim)")
        Tk = X_k.shape[1]
        if Tk == 0:
            raise ValueError(
                f"key must have at least one step to attend to (Tk >= 1), got shape {X_k.shape}"
            )
        if B is None:  # keys alone, any batch size
            B = X_k.shape[0]
            if X_k.shape[2] != self.kdim:
                raise ValueError(f"key must have shape (B, Tk, kdim={self.kdim}), got {X_k.shape}")
        elif X_k.shape != (B, Tk, self.kdim):
            raise ValueError(f"key must have shape (B={B}, Tk, kdim={self.kdim}), got {X_k.shape}")
        if X_v.shape != (B, Tk, self.vdim):
            raise ValueError(
                f"value must have shape (B={B}, Tk={Tk}, vdim={self.vdim}), got {X_v.shape}"
            )
        return X_k, X_v

    def _split(self, x: np.ndarray) -> np.ndarray:
        B, T, _ = x.shape
        return x.reshape(B, T, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)  # (B, h, T, d)

    def _merge(self, x: np.ndarray) -> np.ndarray:
        B, _, T, _ = x.shape
        return x.transpose(0, 2, 1, 3).reshape(B, T, self.embed_dim)  # (B, T, E)

    def forward(
        self,
        query: Any,
        key: Any,
        value: Any,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
        *,
        mask_names: tuple[str, str] = ("key_padding_mask", "attn_mask"),
    ) -> tuple[np.ndarray, np.ndarray | None, MultiheadAttentionCache]:
        """Attend with ``query`` (B, Tq, E) over ``key`` (B, Tk, kdim) and ``value`` (B, Tk, vdim).

        Parameters
        ----------
        key_padding_mask : bool array (B, Tk), optional
            True = ignore that key (torch's convention, the opposite of the attend step's).
        need_weights : bool
            Return the attention weights (they are computed anyway).
        attn_mask : bool array (Tq, Tk) or (B*num_heads, Tq, Tk), optional
            True = that query may not look at that key (torch's convention); float masks are
            not supported.
        average_attn_weights : bool
            Weights averaged over the heads (B, Tq, Tk), or per head (B, num_heads, Tq, Tk).
        is_causal : bool
            Query ``i`` may not look at key ``j > i`` (top-left aligned ``tril``, as torch's
            ``scaled_dot_product_attention``). Combined with the other masks: a key takes part
            only if every mask allows it. (torch's module takes ``is_causal`` as a hint that
            ``attn_mask`` is the causal mask and requires both.)
        mask_names : (str, str)
            The names of ``key_padding_mask`` and ``attn_mask`` in error messages, for callers
            that give them other names.

        Returns
        -------
        out : array (B, Tq, E)
        weights : array or None
        cache : for :meth:`backward`; ``cache.weights`` holds the per-head weights
            (B, num_heads, Tq, Tk) whatever ``need_weights`` says.

        A query with every key masked raises ``ValueError`` (torch returns NaN there).
        """
        X_q = self._check_query(query, "(B, Tq, E)")  # (B, Tq, E)
        B, Tq, _ = X_q.shape
        X_k, X_v = self._check_key_value(key, value, B)  # (B, Tk, kdim), (B, Tk, vdim)
        Tk = X_k.shape[1]
        for name, flag in (
            ("need_weights", need_weights),
            ("average_attn_weights", average_attn_weights),
            ("is_causal", is_causal),
        ):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        keep = keep_mask(
            key_padding_mask, attn_mask, B, self.num_heads, Tq, Tk, is_causal, mask_names
        )  # (B or 1, h or 1, Tq or 1, Tk)
        q, k, v = (
            self._project(x, W, b)
            for x, (W, b) in zip((X_q, X_k, X_v), self._projections(), strict=True)
        )  # (B, h, T, d) each
        masks = ((key_padding_mask, mask_names[0]), (attn_mask, mask_names[1]))
        given = [name for m, name in masks if m is not None] + ["is_causal"] * is_causal
        O, w, attend = scaled_dot_product_attention(
            q, k, v, attn_mask=keep, mask_name=" and ".join(given)
        )  # (B, h, Tq, d), (B, h, Tq, Tk)
        heads = self._merge(O)  # (B, Tq, E)
        out = self._out_proj(heads)  # (B, Tq, E)
        weights = None
        if need_weights:
            weights = w.mean(axis=1) if average_attn_weights else w  # (B, Tq, Tk) or (B, h, ...)
        cache = MultiheadAttentionCache(X_q, X_k, X_v, heads, attend)
        return out, weights, cache

    def _project(self, x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        """``x W^T + b`` (B, T, F) -> split into heads (B, h, T, d)."""
        B, T, F = x.shape
        y = matmul(x.reshape(-1, F), W.T)  # (B*T, E)
        if b is not None:
            y += b
        return self._split(y.reshape(B, T, self.embed_dim))  # (B, h, T, d)

    def _out_proj(self, heads: np.ndarray) -> np.ndarray:
        """``Y = [heads] W_o^T + b_o``, (B, T, E) -> (B, T, E)."""
        B, T, E = heads.shape
        out = matmul(heads.reshape(-1, E), self.params["out_proj.weight"].T)  # (B*T, E)
        if "out_proj.bias" in self.params:
            out += self.params["out_proj.bias"]
        return out.reshape(B, T, E)  # (B, T, E)

    # ------------------------------------------------------------ incremental decoding
    project_key_value = multihead_step.project_key_value  # keys and values once, a KVCache
    step = multihead_step.attention_step  # the newest query rows over the cache, inference

    def backward(
        self, dout: Any, cache: MultiheadAttentionCache
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(dquery, dkey, dvalue, grads)`` from d(loss)/d(out) (B, Tq, E).

        The three input gradients are returned separately; for self-attention (the same array
        passed as query, key and value) the caller sums them.
        """
        E, p = self.embed_dim, self.params
        dY = check_array("dout", dout, dtype=self.dtype)
        if dY.shape != cache.heads.shape:
            raise ValueError(f"dout must have shape {cache.heads.shape}, got {dY.shape}")
        B, Tq, _ = dY.shape
        dY2 = dY.reshape(-1, E)  # (B*Tq, E)
        grads = {"out_proj.weight": matmul(dY2.T, cache.heads.reshape(-1, E))}  # (E, E)
        if "out_proj.bias" in p:
            grads["out_proj.bias"] = dY2.sum(axis=0)  # (E,)
        dO = self._split(matmul(dY2, p["out_proj.weight"]).reshape(B, Tq, E))  # (B, h, Tq, d)
        dqkv = scaled_dot_product_attention_backward(dO, cache.attend)  # (B, h, T, d) each
        dWs, dbs, dxs = [], [], []
        for x, d_heads, (W, _) in zip(
            (cache.query, cache.key, cache.value), dqkv, self._projections(), strict=True
        ):
            dy = self._merge(d_heads).reshape(-1, E)  # (B*T, E)
            dWs.append(matmul(dy.T, x.reshape(-1, x.shape[2])))  # (E, F)
            dbs.append(dy.sum(axis=0))  # (E,)
            dxs.append(matmul(dy, W).reshape(x.shape))  # (B, T, F)
        if self.same_embed_dim:
            grads["in_proj_weight"] = np.concatenate(dWs)  # (3E, E)
        else:
            grads.update(zip(("q_proj_weight", "k_proj_weight", "v_proj_weight"), dWs, strict=True))
        if "in_proj_bias" in p:
            grads["in_proj_bias"] = np.concatenate(dbs)  # (3E,)
        return dxs[0], dxs[1], dxs[2], {name: grads[name] for name in p}
