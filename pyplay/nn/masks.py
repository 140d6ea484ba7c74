r"""torch's attention masks turned into the attend step's *keep* mask.

``torch.nn.MultiheadAttention`` and the transformer layers take masks that say what to *leave
out*: ``key_padding_mask`` (B, Tk), True = that key is padding, and a boolean ``attn_mask``
(Tq, Tk) or (B*h, Tq, Tk), True = that query may not look at that key, plus ``is_causal``. The
attend step (:func:`~pyplay.nn.sdpa.scaled_dot_product_attention`) takes the opposite: a mask
:math:`m_{ij}` that is True where query ``i`` may look at key ``j``. A key takes part only if
every given mask allows it:

.. math::

    m_{b,n,i,j} = \lnot\,\mathrm{kpm}_{b,j} \,\land\, \lnot\,\mathrm{am}_{(b,n),i,j}
        \,\land\, [\,j \le i + P\,],

the causal term only with ``is_causal``; ``P`` is the number of earlier (cached) keys in
incremental decoding, 0 otherwise. :func:`check_bool_mask` is the one check of a boolean mask's
dtype and shape for every attention layer.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

__all__ = ["causal", "check_bool_mask", "check_key_padding_mask", "keep_mask"]


def check_bool_mask(name: str, mask: Any, target: tuple[int, ...], layout: str) -> np.ndarray:
    """``mask`` as a bool array that broadcasts to ``target`` (used by the attention layers)."""
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(f"{name} must be a bool array {layout}, got dtype {arr.dtype}")
    try:
        ok = arr.ndim <= len(target) and np.broadcast_shapes(arr.shape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must broadcast to {layout} = {target}, got shape {arr.shape}")
    return arr


def check_key_padding_mask(
    name: str, mask: Any, B: int, Tk: int, layout: str = "(B, Tk)"
) -> np.ndarray | None:
    """``mask`` as a bool array of exactly (B, Tk); None stays None."""
    if mask is None:
        return None
    kpm = check_bool_mask(name, mask, (B, Tk), layout)
    if kpm.shape != (B, Tk):
        raise ValueError(f"{name} must have shape {(B, Tk)}, got {kpm.shape}")
    return kpm


@functools.lru_cache(maxsize=256)
def causal(Tq: int, Tk: int, P: int = 0) -> np.ndarray:
    """(Tq, Tk) True where key ``j <= P + i``: top-left aligned ``tril`` (torch's
    ``is_causal``) with ``P = 0``; after ``P`` cached keys, ``P = Tk - Tq``. Made once per
    shape and shared: read-only."""
    tri = np.tri(Tq, Tk, k=P, dtype=bool)  # (Tq, Tk)
    tri.flags.writeable = False
    return tri


def keep_mask(
    key_padding_mask: Any,
    attn_mask: Any,
    B: int,
    h: int,
    Tq: int,
    Tk: int,
    is_causal: bool = False,
    names: tuple[str, str] = ("key_padding_mask", "attn_mask"),
) -> np.ndarray | None:
    """Positions that take part, (B or 1, h or 1, Tq or 1, Tk); None when all do.

    ``h`` is the number of heads; ``names`` are the masks' names in error messages (the
    transformer layers call them ``src_key_padding_mask``, ``tgt_mask``, ...).
    """
    kpm_name, am_name = names
    keep = None
    kpm = check_key_padding_mask(kpm_name, key_padding_mask, B, Tk)
    if kpm is not None:
        keep = ~kpm[:, None, None, :]  # (B, 1, 1, Tk) True = ignore in torch
    if attn_mask is not None:
        am = check_bool_mask(am_name, attn_mask, (B * h, Tq, Tk), "(Tq, Tk) or (B*h, Tq, Tk)")
        if am.shape == (Tq, Tk):
            allowed = ~am[None, None]  # (1, 1, Tq, Tk) True = not allowed in torch
        elif am.shape == (B * h, Tq, Tk):
            allowed = ~am.reshape(B, h, Tq, Tk)  # torch's row order: batch-major
        else:
            raise ValueError(
                f"{am_name} must have shape {(Tq, Tk)} or {(B * h, Tq, Tk)}, got {am.shape}"
            )
        keep = allowed if keep is None else keep & allowed
    if is_causal:
        tri = causal(Tq, Tk)  # (Tq, Tk)
        keep = tri if keep is None else keep & tri
    return keep
