r"""Incremental decoding with multi-head attention: project keys once, attend step by step.

With causal self-attention the keys and values of past positions never change, so
:func:`project_key_value` (``MultiheadAttention.project_key_value``) projects them once and
keeps them per head in a :class:`~pyplay.nn.kv_cache.KVCache`, and :func:`attention_step`
(``MultiheadAttention.step``) attends with the newest query rows only. A new query row ``i``
(absolute position :math:`P + i` after ``P`` cached steps) attends over the cached and new keys
:math:`j \le P + i`:

.. math::

    \mathrm{head}_n(i) = \mathrm{softmax}_{j \le P + i}\!\Big(
        \frac{q_{n,i}^\top K_{n,j}}{\sqrt d}\Big) V_{n,j}, \qquad
    y_i = [\mathrm{head}_1(i); \dots; \mathrm{head}_h(i)]\, W_o^\top + b_o,

which gives exactly the rows ``P..P+n-1`` of the full causal computation at a cost linear (not
quadratic) in the length so far. For cross-attention the memory's keys and values are projected
once before the first step and never extended. Inference only: no cache for a backward pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay.nn.kv_cache import KVCache
from pyplay.nn.masks import causal, check_key_padding_mask
from pyplay.nn.multihead_projections import MultiheadProjections
from pyplay.nn.sdpa import scaled_dot_product_attention

__all__ = ["attention_step", "project_key_value"]


def project_key_value(
    mha: MultiheadProjections, key: Any, value: Any, key_padding_mask: Any = None
) -> KVCache:
    """Project ``key`` (B, Tk, kdim) and ``value`` (B, Tk, vdim) once, split into heads.

    ``MultiheadAttention.project_key_value`` is this function (``mha`` its ``self``). For
    cross-attention the memory's keys and values are the same at every decoding step:
    project them here and pass the cache to every step. ``key_padding_mask`` (B, Tk),
    True = ignore, is kept with them.
    """
    X_k, X_v = mha._check_key_value(key, value)
    B, Tk, _ = X_k.shape
    kpm = check_key_padding_mask("key_padding_mask", key_padding_mask, B, Tk)
    _, (W_k, b_k), (W_v, b_v) = mha._projections()
    K = mha._project(X_k, W_k, b_k)  # (B, h, Tk, d)
    V = mha._project(X_v, W_v, b_v)  # (B, h, Tk, d)
    return KVCache(K, V, kpm)


def _extended(
    mha: MultiheadProjections, cache: Any, key: Any, value: Any, key_padding_mask: Any
) -> KVCache:
    """``cache`` followed by the projected new ``key``/``value`` positions, if any."""
    if cache is not None and not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache or None, got {type(cache).__name__}")
    if (key is None) != (value is None):
        raise ValueError(
            f"key and value must be given together, got key={'None' if key is None else '...'}"
            f" and value={'None' if value is None else '...'}"
        )
    if key is None:
        if cache is None:
            raise ValueError("cache must be given when key and value are not, got None")
        if key_padding_mask is not None:
            raise ValueError(
                "key_padding_mask must be None without new keys (the cache holds the "
                "mask of its keys), got a mask"
            )
        return cache
    new = project_key_value(mha, key, value, key_padding_mask)
    if cache is not None and new.batch_size != cache.batch_size:
        raise ValueError(
            f"key must have the cache's batch size B={cache.batch_size}, got {np.shape(key)}"
        )
    return new if cache is None else cache.extend(new)


def attention_step(
    mha: MultiheadProjections,
    query: Any,
    cache: KVCache | None = None,
    key: Any = None,
    value: Any = None,
    *,
    key_padding_mask: Any = None,
    is_causal: bool = False,
) -> tuple[np.ndarray, np.ndarray, KVCache]:
    r"""Attend with the newest query rows over cached (and new) keys: inference only.

    ``MultiheadAttention.step`` is this function (``mha`` its ``self``).

    Parameters
    ----------
    mha : MultiheadAttention
        The layer whose weights project and attend (any
        :class:`~pyplay.nn.multihead_projections.MultiheadProjections`).
    query : array (B, n, E)
        The newest ``n`` positions (usually n = 1).
    cache : KVCache, optional
        Keys and values of the earlier positions (None before the first step).
    key, value : array (B, n_new, kdim), (B, n_new, vdim), optional
        New positions to project and append to the cache before attending (for
        self-attention, the same array as ``query``). Omit both for cross-attention over
        a cache from :func:`project_key_value`.
    key_padding_mask : bool array (B, n_new), optional
        True = ignore that new key; appended to the cache's mask.
    is_causal : bool
        Query row ``i`` sees the keys :math:`j \le P + i`, ``P = Tk - n`` the earlier
        positions (bottom-right aligned): exactly rows ``P..P+n-1`` of a full causal
        forward.

    Returns
    -------
    out : array (B, n, E)
    weights : array (B, num_heads, n, Tk)
    cache : KVCache
        The extended cache (the given one is not modified).
    """
    X_q = mha._check_query(query, "(B, n, E)")  # (B, n, E)
    B, n, _ = X_q.shape
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    cache = _extended(mha, cache, key, value, key_padding_mask)
    if cache.batch_size != B:
        raise ValueError(
            f"query must have the cache's batch size B={cache.batch_size}, got {X_q.shape}"
        )
    Tk = cache.length
    if is_causal and n > Tk:
        raise ValueError(f"query must have at most Tk={Tk} rows with is_causal, got {n}")
    keep = None if cache.key_padding_mask is None else ~cache.key_padding_mask[:, None, None]
    if is_causal:
        tri = causal(n, Tk, P=Tk - n)  # (n, Tk) True where j <= P + i
        keep = tri if keep is None else keep & tri  # (B or 1, 1, n, Tk)
    W_q, b_q = mha._projections()[0]
    q = mha._project(X_q, W_q, b_q)  # (B, h, n, d)
    names = ["key_padding_mask"] * (cache.key_padding_mask is not None)
    O, w, _ = scaled_dot_product_attention(
        q,
        cache.key,
        cache.value,
        attn_mask=keep,
        mask_name=" and ".join([*names, *["is_causal"] * is_causal]),
    )  # (B, h, n, d), (B, h, n, Tk)
    return mha._out_proj(mha._merge(O)), w, cache  # (B, n, E)
