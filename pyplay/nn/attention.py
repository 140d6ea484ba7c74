r"""Attention: score each query against every key, softmax over the keys, average the values.

Queries :math:`q_i` (B, Tq, Dq) attend over keys :math:`k_j` (B, Tk, Dk) and values :math:`v_j`
(B, Tk, Dv); :math:`m_{ij}` is True where query ``i`` may look at key ``j`` (padding masks):

.. math::

    e_{ij} = \mathrm{score}(q_i, k_j), \quad
    \mu_i = \max_{j:\, m_{ij}} e_{ij}, \quad
    \alpha_{ij} = \frac{m_{ij} \exp(e_{ij} - \mu_i)}{\sum_l m_{il} \exp(e_{il} - \mu_i)}, \quad
    c_i = \sum_j \alpha_{ij} v_j .

The masked softmax, the average and their backward are :mod:`pyplay.nn.sdpa`'s (exactly 0 at
masked keys; a query with no key to look at is a ``ValueError``).

The scores (one class each; Tq = 1 per decoder step in classic seq2seq, any Tq for
self-attention):

================  ================================================================
``"dot"``         :math:`q^\top k` (Luong)
``"scaled_dot"``  :math:`q^\top k / \sqrt{D}` (Vaswani et al.; Wand's IDSIA lecture), or with
                  ``scale_by="source_length"`` :math:`q_i^\top k / \sqrt{n_i}`, :math:`n_i`
                  the number of keys query ``i`` may look at (Schmidt's Table 1,
                  :math:`\sqrt{n_{source}}`)
``"general"``     :math:`q^\top W_a k`, ``weight`` (Dq, Dk) (Luong)
``"additive"``    :math:`v^\top \tanh(W_q q + W_k k + b)` (Bahdanau; "concat" in Luong)
``"cosine"``      :math:`\beta\, \hat q^\top \hat k`, :math:`\hat x = x / \max(\|x\|, \epsilon)`
                  (content-based addressing of the Neural Turing Machine, Graves 2014)
``"location"``    :math:`(W_a q)_j`, ``weight`` (max_len, Dq) (Luong): ignores the keys
================  ================================================================

:func:`pyplay.nn.sdpa.scaled_dot_product_attention` is the same attend step as a pure function
on any leading axes (B, heads, T, d), with torch's mask rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import (
    as_generator,
    check_array,
    check_choice,
    check_dtype,
    check_float,
    check_int,
    check_lengths,
)
from pyplay.nn import init
from pyplay.nn.masks import check_bool_mask
from pyplay.nn.sdpa import attend_backward, masked_softmax
from pyplay.nn.sdpa import swap_last_axes as _T

__all__ = [
    "SCORERS",
    "AdditiveAttention",
    "AttentionCache",
    "CosineAttention",
    "DotAttention",
    "GeneralAttention",
    "LocationAttention",
    "ScaledDotAttention",
]


Seed = np.random.Generator | int | None


# ----------------------------------------------------------------------------- the scorers
@dataclass(frozen=True)
class AttentionCache:
    query: np.ndarray  # (B, Tq, Dq)
    key: np.ndarray  # (B, Tk, Dk)
    value: np.ndarray  # (B, Tk, Dv)
    weights: np.ndarray  # (B, Tq, Tk)
    extra: tuple[np.ndarray, ...]  # score internals


class _Attention:
    """Shared forward/backward; a subclass supplies ``_score`` and ``_score_backward``."""

    query_size: int | None = None  # None: any
    key_size: int | None = None
    same_size = False  # key and query must have the same feature size

    def __init__(
        self, dtype: Any = np.float32, query_size: int | None = None, key_size: int | None = None
    ) -> None:
        """The dtype, no parameters yet, and the feature sizes a subclass fixes (each checked
        to be a positive int; None: any)."""
        self.dtype = check_dtype("dtype", dtype)
        self.params: dict[str, np.ndarray] = {}
        if query_size is not None:
            self.query_size = check_int("query_size", query_size, min_value=1)
        if key_size is not None:
            self.key_size = check_int("key_size", key_size, min_value=1)

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        raise NotImplementedError

    def _score_backward(
        self, de: np.ndarray, c: AttentionCache
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        raise NotImplementedError

    def _score_masked(
        self, Q: np.ndarray, K: np.ndarray, keep: np.ndarray | None
    ) -> tuple[np.ndarray, tuple]:
        """The scores given the keys each query may see (``keep`` (B, 1 or Tq, Tk) or None);
        only a score that counts them (:class:`ScaledDotAttention` by source length) reads
        ``keep``, the others are :meth:`_score`."""
        return self._score(Q, K)

    def _uniform(self, gen: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> Any:
        k = 1.0 / np.sqrt(fan_in)
        what = f"{type(self).__name__} weight {shape}"
        return init.uniform(gen, -k, k, shape, self.dtype, what)  # torch.nn.Linear's default

    def forward(
        self, query: Any, key: Any, value: Any, mask: Any = None, lengths: Any = None
    ) -> tuple[np.ndarray, np.ndarray, AttentionCache]:
        """Attend with ``query`` (B, Tq, Dq) over ``key`` (B, Tk, Dk) and ``value`` (B, Tk, Dv).

        ``mask`` (B, Tk) or (B, Tq, Tk) bool, True = attend; or ``lengths`` (B,) of valid source
        positions (1..Tk). Returns ``context`` (B, Tq, Dv), ``weights`` (B, Tq, Tk) (rows sum to
        1, exactly 0 at masked keys) and the cache for :meth:`backward`.
        """
        Q = check_array("query", query, ndim=3, dtype=self.dtype, layout="(B, Tq, Dq)")
        K = check_array("key", key, ndim=3, dtype=self.dtype, layout="(B, Tk, Dk)")
        V = check_array("value", value, ndim=3, dtype=self.dtype, layout="(B, Tk, Dv)")
        (B, Tq, Dq), (_, Tk, Dk) = Q.shape, K.shape
        if K.shape[0] != B:
            raise ValueError(f"key must have batch size B={B} like query, got shape {K.shape}")
        if Tk == 0:
            raise ValueError(
                f"key must have at least one key to attend to (Tk >= 1), got {K.shape}"
            )
        if V.shape[:2] != (B, Tk):
            raise ValueError(f"value must have shape ({B}, {Tk}, Dv) like key, got {V.shape}")
        if self.query_size is not None and Dq != self.query_size:
            raise ValueError(f"query must have Dq={self.query_size} features, got {Q.shape}")
        if self.key_size is not None and Dk != self.key_size:
            raise ValueError(f"key must have Dk={self.key_size} features, got {K.shape}")
        if self.same_size and Dk != Dq:
            raise ValueError(f"key must have as many features as query (Dq={Dq}), got {K.shape}")
        keep = None
        if mask is not None and lengths is not None:
            raise ValueError("give mask or lengths, not both; got both")
        if mask is not None:
            keep = check_bool_mask("mask", mask, np.shape(mask), "(B, Tk) or (B, Tq, Tk)")
            if keep.shape not in ((B, Tk), (B, Tq, Tk)):
                raise ValueError(f"mask must be (B, Tk) or (B, Tq, Tk), got shape {keep.shape}")
        elif lengths is not None:
            keep = np.arange(Tk) < check_lengths(lengths, B, Tk)[:, None]  # (B, Tk)
        if keep is not None and keep.ndim == 2:
            keep = keep[:, None, :]  # (B, 1, Tk)
        e, extra = self._score_masked(Q, K, keep)  # (B, Tq, Tk)
        w = masked_softmax(e, keep, "mask" if lengths is None else "lengths")
        return w @ V, w, AttentionCache(Q, K, V, w, extra)  # (B, Tq, Dv)

    def backward(
        self, dcontext: Any, cache: AttentionCache, dweights: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(dquery, dkey, dvalue, grads)`` from d(loss)/d(context) and, optionally,
        d(loss)/d(weights) (B, Tq, Tk), e.g. for a penalty on the weights."""
        de, dV = attend_backward("dcontext", dcontext, cache.weights, cache.value, dweights)
        dQ, dK, grads = self._score_backward(de, cache)
        return dQ, dK, dV, {name: grads[name] for name in self.params}


class DotAttention(_Attention):
    r""":math:`e_{ij} = q_i^\top k_j` (Dq = Dk); no parameters."""

    same_size = True

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        return Q @ _T(K), ()  # (B, Tq, Tk)

    def _score_backward(self, de: np.ndarray, c: AttentionCache) -> Any:
        return de @ c.key, _T(de) @ c.query, {}


class ScaledDotAttention(DotAttention):
    r""":math:`e_{ij} = q_i^\top k_j / \sqrt{n}` (Dq = Dk = D); no parameters.

    ``scale_by`` chooses :math:`n`, where the lectures disagree:

    ``"key_size"`` (default)
        :math:`n = D`, the feature size, as in Vaswani et al. (2017) and Wand's IDSIA lecture:
        for unit-variance :math:`q, k` the dot product has variance :math:`D`, and dividing by
        :math:`\sqrt{D}` keeps the softmax out of its flat, small-gradient ends.
    ``"source_length"``
        :math:`n = n_i = \sum_j m_{ij}`, the number of keys query ``i`` may look at (each
        sequence's own source length with ``lengths`` or a (B, Tk) padding mask; Tk without a
        mask), as Schmidt's Table 1 writes it, :math:`S_t^\top H_{t'} / \sqrt{n_{source}}`.

    Either way the scale :math:`s_i = n_i^{-1/2}` is a constant of the forward pass, so
    :math:`\partial e_{ij} / \partial q_i = s_i k_j` and
    :math:`\partial e_{ij} / \partial k_j = s_i q_i`: the dot product's backward with
    :math:`\partial L / \partial e_{ij}` scaled by :math:`s_i`.
    """

    SCALES = ("key_size", "source_length")

    def __init__(self, dtype: Any = np.float32, scale_by: str = "key_size") -> None:
        super().__init__(dtype)
        self.scale_by = check_choice("scale_by", scale_by, self.SCALES)

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        return self._score_masked(Q, K, None)

    def _score_masked(
        self, Q: np.ndarray, K: np.ndarray, keep: np.ndarray | None
    ) -> tuple[np.ndarray, tuple]:
        if self.scale_by == "key_size":
            s: Any = Q.shape[2] ** -0.5  # a Python float keeps float32
        elif keep is None:
            s = K.shape[1] ** -0.5
        else:
            n = keep.sum(axis=2, keepdims=True)  # (B, 1 or Tq, 1) keys each query sees
            s = (n**-0.5).astype(Q.dtype)
        return (Q @ _T(K)) * s, (s,)  # (B, Tq, Tk)

    def _score_backward(self, de: np.ndarray, c: AttentionCache) -> Any:
        (s,) = c.extra
        return super()._score_backward(de * s, c)


class GeneralAttention(_Attention):
    r""":math:`e_{ij} = q_i^\top W_a k_j`, ``weight`` :math:`W_a` (query_size, key_size).

    Computed as :math:`(q_i^\top W_a) k_j`: the query side is projected (Tq = 1 per decoder step).
    """

    query_size: int
    key_size: int

    def __init__(
        self, query_size: int, key_size: int, dtype: Any = np.float32, rng: Seed = 0
    ) -> None:
        super().__init__(dtype, query_size, key_size)
        shape = (self.query_size, self.key_size)
        self.params["weight"] = self._uniform(as_generator(rng), shape, self.key_size)

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        P = Q @ self.params["weight"]  # (B, Tq, Dk)
        return P @ _T(K), (P,)  # (B, Tq, Tk)

    def _score_backward(self, de: np.ndarray, c: AttentionCache) -> Any:
        (P,) = c.extra
        dP = de @ c.key  # (B, Tq, Dk)
        grads = {"weight": np.einsum("bqd,bqk->dk", c.query, dP)}  # (Dq, Dk)
        return dP @ self.params["weight"].T, _T(de) @ P, grads


class AdditiveAttention(_Attention):
    r""":math:`e_{ij} = v^\top \tanh(W_q q_i + W_k k_j + b)` (Bahdanau; Luong's "concat").

    Parameters ``weight_query`` (A, Dq), ``weight_key`` (A, Dk), ``bias`` (A,) when
    ``bias=True``, ``v`` (A,); vectorised over (B, Tq, Tk, A).
    """

    query_size: int
    key_size: int

    def __init__(
        self,
        query_size: int,
        key_size: int,
        attn_size: int,
        bias: bool = True,
        dtype: Any = np.float32,
        rng: Seed = 0,
    ) -> None:
        super().__init__(dtype, query_size, key_size)
        A = self.attn_size = check_int("attn_size", attn_size, min_value=1)
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be True or False, got {bias!r}")
        gen = as_generator(rng)
        self.params["weight_query"] = self._uniform(gen, (A, self.query_size), self.query_size)
        self.params["weight_key"] = self._uniform(gen, (A, self.key_size), self.key_size)
        if bias:
            self.params["bias"] = self._uniform(gen, (A,), self.query_size)
        self.params["v"] = self._uniform(gen, (A,), A)

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        p = self.params
        Pq = Q @ p["weight_query"].T  # (B, Tq, A)
        if "bias" in p:
            Pq += p["bias"]
        Pk = K @ p["weight_key"].T  # (B, Tk, A)
        H = np.tanh(Pq[:, :, None, :] + Pk[:, None, :, :])  # (B, Tq, Tk, A)
        return H @ p["v"], (H,)  # (B, Tq, Tk)

    def _score_backward(self, de: np.ndarray, c: AttentionCache) -> Any:
        p, (H,) = self.params, c.extra
        grads = {"v": np.einsum("bqk,bqka->a", de, H)}  # (A,)
        G = de[..., None] * (1.0 - H * H) * p["v"]  # (B, Tq, Tk, A) d(pre-activation)
        dPq, dPk = G.sum(axis=2), G.sum(axis=1)  # (B, Tq, A), (B, Tk, A)
        grads["weight_query"] = np.einsum("bqa,bqd->ad", dPq, c.query)  # (A, Dq)
        grads["weight_key"] = np.einsum("bka,bkd->ad", dPk, c.key)  # (A, Dk)
        if "bias" in p:
            grads["bias"] = dPq.sum(axis=(0, 1))  # (A,)
        return dPq @ p["weight_query"], dPk @ p["weight_key"], grads


def _unit(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    n = np.maximum(np.sqrt((x * x).sum(axis=-1, keepdims=True)), eps)  # (B, T, 1)
    return x / n, n


def _unit_backward(xh: np.ndarray, n: np.ndarray, dxh: np.ndarray, eps: float) -> np.ndarray:
    """Through ``x / max(|x|, eps)``: ``(dxh - xh (xh . dxh)) / |x|``, or ``dxh / eps`` when
    ``|x| <= eps``."""
    radial = np.where(n > eps, (xh * dxh).sum(axis=-1, keepdims=True), 0.0)  # (B, T, 1)
    return (dxh - xh * radial) / n


class CosineAttention(_Attention):
    r""":math:`e_{ij} = \beta\, \hat q_i^\top \hat k_j`, :math:`\hat x = x / \max(\|x\|, \epsilon)`.

    Content-based addressing of the Neural Turing Machine; the fixed sharpening ``beta`` >= 0
    (the NTM's controller emits one per step) turns cosines in [-1, 1] into peaked weights. A
    zero query or key gets cosine 0 (no NaN). No parameters.
    """

    same_size = True

    def __init__(self, beta: float = 1.0, eps: float = 1e-8, dtype: Any = np.float32) -> None:
        super().__init__(dtype)
        self.beta = check_float("beta", beta, min_value=0.0)
        self.eps = check_float("eps", eps, min_value=0.0, min_inclusive=False)

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        (Qh, nq), (Kh, nk) = _unit(Q, self.eps), _unit(K, self.eps)
        return self.beta * (Qh @ _T(Kh)), (Qh, nq, Kh, nk)  # (B, Tq, Tk)

    def _score_backward(self, de: np.ndarray, c: AttentionCache) -> Any:
        Qh, nq, Kh, nk = c.extra
        de = self.beta * de
        dQ = _unit_backward(Qh, nq, de @ Kh, self.eps)  # (B, Tq, D)
        return dQ, _unit_backward(Kh, nk, _T(de) @ Qh, self.eps), {}


class LocationAttention(_Attention):
    r""":math:`e_{ij} = (W_a q_i)_j`, ``weight`` :math:`W_a` (max_len, query_size) (Luong).

    The weights depend on the query alone: the keys' content is ignored (``dkey`` is zero) and
    only their number Tk <= ``max_len`` matters; source position ``j`` uses row ``j`` of
    :math:`W_a`, so the longest source must be fixed at construction.
    """

    query_size: int

    def __init__(
        self, query_size: int, max_len: int, dtype: Any = np.float32, rng: Seed = 0
    ) -> None:
        super().__init__(dtype, query_size)
        self.max_len = check_int("max_len", max_len, min_value=1)
        shape = (self.max_len, self.query_size)
        self.params["weight"] = self._uniform(as_generator(rng), shape, self.query_size)

    def _score(self, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, tuple]:
        if K.shape[1] > self.max_len:
            raise ValueError(f"key must have at most max_len={self.max_len} steps, got {K.shape}")
        return Q @ self.params["weight"][: K.shape[1]].T, ()  # (B, Tq, Tk)

    def _score_backward(self, de: np.ndarray, c: AttentionCache) -> Any:
        Tk = c.key.shape[1]
        dW = np.zeros_like(self.params["weight"])  # (max_len, Dq)
        dW[:Tk] = np.einsum("bqk,bqd->kd", de, c.query)
        return de @ self.params["weight"][:Tk], np.zeros_like(c.key), {"weight": dW}


SCORERS: dict[str, type[_Attention]] = {
    "dot": DotAttention,
    "scaled_dot": ScaledDotAttention,
    "general": GeneralAttention,
    "additive": AdditiveAttention,
    "concat": AdditiveAttention,
    "cosine": CosineAttention,
    "location": LocationAttention,
}
