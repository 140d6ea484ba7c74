r"""The attend step: softmax over the keys (masked), average the values; and its backward.

Given scores :math:`e_{ij}` of queries ``i`` against keys ``j`` and a mask :math:`m_{ij}`
(True where query ``i`` may look at key ``j``):

.. math::

    \mu_i = \max_{j:\, m_{ij}} e_{ij}, \quad
    \alpha_{ij} = \frac{m_{ij} \exp(e_{ij} - \mu_i)}{\sum_l m_{il} \exp(e_{il} - \mu_i)}, \quad
    c_i = \sum_j \alpha_{ij} v_j .

Masked scores become :math:`-\infty` before the row's maximum is subtracted, so their
exponentials are exactly 0 and nothing overflows or warns (a query with no key to look at, whose
row would be all :math:`-\infty`, is refused first with a ``ValueError``, see
:func:`masked_softmax`); no masked ufunc (``where=``), whose NumPy loops are several times
slower than plain ones. Backward (:func:`attend_backward`), with :math:`\delta\alpha`
optionally augmented by a loss on the weights themselves:

.. math::

    \delta v_j = \sum_i \alpha_{ij} \delta c_i, \quad
    \delta\alpha_{ij} = \delta c_i \cdot v_j, \quad
    \delta e_{ij} = \alpha_{ij} \Big(\delta\alpha_{ij}
        - \sum_l \alpha_{il}\, \delta\alpha_{il}\Big).

:func:`scaled_dot_product_attention` is the whole step with the scaled dot-product score as a
pure function on any leading axes (B, heads, T, d), with
``torch.nn.functional.scaled_dot_product_attention``'s mask rules. The scorers of
:mod:`pyplay.nn.attention` and the heads of :mod:`pyplay.nn.multihead` use these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_float
from pyplay.nn.masks import causal, check_bool_mask

__all__ = [
    "SDPACache",
    "attend_backward",
    "masked_softmax",
    "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward",
    "swap_last_axes",
]


def swap_last_axes(x: np.ndarray) -> np.ndarray:
    """The matrix transpose of the last two axes (a view)."""
    return np.swapaxes(x, -1, -2)  # (..., n, m) -> (..., m, n)


def masked_softmax(e: np.ndarray, keep: np.ndarray | None, name: str = "mask") -> np.ndarray:
    """Softmax of ``e`` over its last axis, exactly 0 where ``keep`` (broadcastable) is False."""
    if keep is None:
        z = e - e.max(axis=-1, keepdims=True)  # (..., Tq, Tk)
        np.exp(z, out=z)
    else:
        empty = ~keep.any(axis=-1)  # before broadcasting: the same rows, fewer of them
        if empty.any():
            keep = np.broadcast_to(keep, e.shape)  # (..., Tq, Tk)
            raise ValueError(
                f"{name} must leave every query at least one key to attend to, got "
                f"{int((~keep.any(axis=-1)).sum())} query row(s) with every key masked"
            )
        # 0 or -inf on the mask's own (unbroadcast) shape, then one addition: masked scores
        # become -inf (a masked choice by np.where over the whole scores costs 3x an addition)
        bias = np.where(keep, e.dtype.type(0.0), e.dtype.type(-np.inf))  # (mask's shape)
        z = e + bias  # (..., Tq, Tk) masked scores -inf
        z -= z.max(axis=-1, keepdims=True)  # every row has a finite max: -inf stays -inf
        np.exp(z, out=z)  # exp(-inf) = 0 exactly, no warning
    z /= z.sum(axis=-1, keepdims=True)
    return z


def attend_backward(
    name: str, dout: Any, w: np.ndarray, v: np.ndarray, dweights: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``(de, dv)`` through ``out = softmax(e) v`` given ``dout`` (named ``name``) and,
    optionally, a direct gradient ``dweights`` of the weights."""
    do = check_array(name, dout, dtype=v.dtype)
    if do.shape != (*w.shape[:-1], v.shape[-1]):
        raise ValueError(f"{name} must have shape {(*w.shape[:-1], v.shape[-1])}, got {do.shape}")
    dw = do @ swap_last_axes(v)  # (..., Tq, Tk)
    if dweights is not None:
        dW = check_array("dweights", dweights, dtype=v.dtype)
        if dW.shape != w.shape:
            raise ValueError(f"dweights must have shape {w.shape}, got {dW.shape}")
        dw += dW
    de = w * (dw - (dw * w).sum(axis=-1, keepdims=True))  # (..., Tq, Tk), 0 where w is 0
    return de, swap_last_axes(w) @ do  # (..., Tk, dv)


@dataclass(frozen=True)
class SDPACache:
    query: np.ndarray  # (..., Tq, d)
    key: np.ndarray  # (..., Tk, d)
    value: np.ndarray  # (..., Tk, dv)
    weights: np.ndarray  # (..., Tq, Tk)
    scale: float


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    mask_name: str = "attn_mask",
) -> tuple[np.ndarray, np.ndarray, SDPACache]:
    r"""``softmax(q k^T * scale + mask) v`` over any leading axes, as torch's function.

    Parameters
    ----------
    query : array (..., Tq, d)
    key : array (..., Tk, d), same leading axes
    value : array (..., Tk, dv)
    attn_mask : bool array broadcastable to (..., Tq, Tk), optional
        True = takes part (torch's bool convention). Float masks are not supported.
    is_causal : bool
        Query ``i`` sees keys ``j <= i`` (top-left aligned, ``tril`` as torch). Unlike torch,
        it may be combined with ``attn_mask`` (both must allow a position).
    scale : float, optional
        Default :math:`1/\sqrt{d}`.
    mask_name : str
        The argument named in the all-masked-row error (for callers such as multi-head attention).

    Returns
    -------
    out : array (..., Tq, dv)
    weights : array (..., Tq, Tk), rows sum to 1, exactly 0 at masked positions
    cache : for :func:`scaled_dot_product_attention_backward`

    Raises ``ValueError`` when a query row has every key masked (torch returns zeros there).
    """
    q = check_array("query", query)
    if q.ndim < 2:
        raise ValueError(f"query must have at least 2 axes (..., Tq, d), got shape {q.shape}")
    if q.dtype.kind != "f" or q.dtype.itemsize < 4:
        q = q.astype(np.float64)
    k = check_array("key", key, ndim=q.ndim, dtype=q.dtype, layout="(..., Tk, d)")
    v = check_array("value", value, ndim=q.ndim, dtype=q.dtype, layout="(..., Tk, dv)")
    if k.shape[:-2] != q.shape[:-2] or k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"key must have shape (*{q.shape[:-2]}, Tk, {q.shape[-1]}) to match query, "
            f"got {k.shape}"
        )
    if k.shape[-2] == 0:
        raise ValueError(f"key must have at least one key to attend to (Tk >= 1), got {k.shape}")
    if v.shape[:-1] != k.shape[:-1]:
        raise ValueError(f"value must have shape (*{k.shape[:-1]}, dv) like key, got {v.shape}")
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    s = q.shape[-1] ** -0.5 if scale is None else check_float("scale", scale)  # Python float
    Tq, Tk = q.shape[-2], k.shape[-2]
    keep = None
    if attn_mask is not None:
        keep = check_bool_mask("attn_mask", attn_mask, (*q.shape[:-1], Tk), "(..., Tq, Tk)")
    if is_causal:
        tri = causal(Tq, Tk)  # (Tq, Tk) True where j <= i
        keep = tri if keep is None else keep & tri
    e = (q @ swap_last_axes(k)) * s  # (..., Tq, Tk)
    w = masked_softmax(e, keep, mask_name if attn_mask is not None else "is_causal")
    return w @ v, w, SDPACache(q, k, v, w, s)  # (..., Tq, dv)


def scaled_dot_product_attention_backward(
    dout: Any, cache: SDPACache, dweights: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dquery, dkey, dvalue)`` from d(loss)/d(out) and, optionally, d(loss)/d(weights)."""
    q, k = cache.query, cache.key
    de, dv = attend_backward("dout", dout, cache.weights, cache.value, dweights)
    de *= cache.scale
    return de @ k, swap_last_axes(de) @ q, dv  # (..., Tq, d), (..., Tk, d), (..., Tk, dv)
