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

The weights and the projections into and out of the heads are in
:mod:`pyplay.nn.multihead_projections`; incremental decoding
(:meth:`MultiheadAttention.project_key_value`, :meth:`MultiheadAttention.step`, inference only)
is in :mod:`pyplay.nn.multihead_step`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array
from pyplay.nn import multihead_step
from pyplay.nn._ops import matmul
from pyplay.nn.masks import keep_mask
from pyplay.nn.multihead_projections import MultiheadProjections
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
    packed: bool = False  # self-attention: query, key and value the same array, one product

    @property
    def weights(self) -> np.ndarray:
        """Per-head attention weights (B, h, Tq, Tk), exactly 0 at masked positions."""
        return self.attend.weights


class MultiheadAttention(MultiheadProjections):
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
    value_function : {"linear", "identity"}
        ``"linear"`` (torch's): :math:`V = X_v W_v^\\top + b_v`. ``"identity"``: no value
        projection, :math:`V = X_v` (Solberg's TEK5040 lecture's attention without a value
        function, :math:`z^i = \\sum_j p_{i,j} x^j`); head ``n`` takes the n-th block of ``d``
        features of :math:`X_v`, and ``vdim`` must be ``embed_dim``. No torch counterpart.

    Attributes
    ----------
    params : dict of str to ndarray
        torch's names, shapes and order: ``in_proj_weight`` (3E, E) (rows q, k, v) when kdim and
        vdim equal E, else ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim),
        ``v_proj_weight`` (E, vdim); then ``in_proj_bias`` (3E,), ``out_proj.weight`` (E, E),
        ``out_proj.bias`` (E,) (biases only with ``bias=True``). Without a value function the
        value rows are absent: ``in_proj_weight`` (2E, E), ``in_proj_bias`` (2E,), no
        ``v_proj_weight``.
    """

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
        packed = query is key and key is value and self.same_embed_dim  # self-attention
        if packed:
            q, k, v = self._project_packed(X_q)  # (B, h, T, d) each, one product
        else:
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
        cache = MultiheadAttentionCache(X_q, X_k, X_v, heads, attend, packed)
        return out, weights, cache

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
        dqkv, grads = self._heads_backward(dout, cache)  # (B, h, T, d) each
        E, p = self.embed_dim, self.params
        dWs, dbs, dxs = [], [], []
        for x, d_heads, (W, _) in zip(
            (cache.query, cache.key, cache.value), dqkv, self._projections(), strict=True
        ):
            dy = self._merge(d_heads).reshape(-1, E)  # (B*T, E)
            if W is None:  # no value function: V = X_v, dX_v = dV
                dxs.append(dy.reshape(x.shape))  # (B, T, E)
                continue
            dWs.append(matmul(dy.T, x.reshape(-1, x.shape[2])))  # (E, F)
            dbs.append(dy.sum(axis=0))  # (E,)
            dxs.append(matmul(dy, W).reshape(x.shape))  # (B, T, F)
        if self.same_embed_dim:
            grads["in_proj_weight"] = np.concatenate(dWs)  # (3E, E), or (2E, E) without V
        else:
            names = ("q_proj_weight", "k_proj_weight", "v_proj_weight")[: len(dWs)]
            grads.update(zip(names, dWs, strict=True))
        if "in_proj_bias" in p:
            grads["in_proj_bias"] = np.concatenate(dbs)  # (3E,) or (2E,)
        return dxs[0], dxs[1], dxs[2], {name: grads[name] for name in p}

    def backward_self(
        self, dout: Any, cache: MultiheadAttentionCache
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Self-attention's ``(dx, grads)``: :meth:`backward` with its three input gradients
        summed, :math:`\\delta X = \\delta Q W_q + \\delta K W_k + \\delta V W_v`. After a
        packed forward (query, key and value one array) the three projections' gradients come
        from one product each: :math:`[\\delta Q; \\delta K; \\delta V]` (B*T, 3E) times
        ``in_proj_weight`` gives the sum, its transpose times :math:`X` the (3E, E) gradient
        (without a value function: :math:`[\\delta Q; \\delta K]` and (2E, E), plus
        :math:`\\delta V` itself)."""
        if not cache.packed:
            dq, dk, dv, grads = self.backward(dout, cache)
            return dq + dk + dv, grads
        dqkv, grads = self._heads_backward(dout, cache)  # (B, h, T, d) each
        x, p, n = cache.query, self.params, self._n_proj
        B, T, E = x.shape
        dy = np.stack(dqkv[:n], axis=2)  # (B, h, n, T, d)
        dy = dy.transpose(0, 3, 2, 1, 4).reshape(B * T, n * E)  # (B*T, nE) rows [dq dk (dv)]
        grads["in_proj_weight"] = matmul(dy.T, x.reshape(-1, E))  # (nE, E)
        if "in_proj_bias" in p:
            grads["in_proj_bias"] = dy.sum(axis=0)  # (nE,)
        dx = matmul(dy, p["in_proj_weight"]).reshape(x.shape)  # (B, T, E)
        if n == 2:  # no value function: V = X
            dx += self._merge(dqkv[2])
        return dx, {name: grads[name] for name in p}

    def _heads_backward(
        self, dout: Any, cache: MultiheadAttentionCache
    ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], dict[str, np.ndarray]]:
        """Through the output projection and the attend step: ``(dq, dk, dv)`` (B, h, T, d)
        and the output projection's gradients."""
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
        return scaled_dot_product_attention_backward(dO, cache.attend), grads
