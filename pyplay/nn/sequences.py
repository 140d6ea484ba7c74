"""Padding a list of variable-length sequences into one batch with its lengths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pyplay._checks import check_array

__all__ = ["pad_sequences"]


def pad_sequences(
    seqs: Sequence[Any], padding_value: float = 0, dtype: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Stack sequences of lengths ``T_i`` into a batch padded at the end to ``T = max T_i``.

    Accepts 1-D token sequences (-> (B, T)) or 2-D feature sequences (T_i, F) (-> (B, T, F)).
    Returns the padded batch and the lengths (B,) int64, ready for ``forward(x, lengths=...)``.
    """
    if isinstance(seqs, np.ndarray) or not isinstance(seqs, Sequence) or len(seqs) == 0:
        raise TypeError(f"seqs must be a non-empty list of arrays, got {type(seqs).__name__}")
    arrays = []
    for k, s in enumerate(seqs):
        a = np.asarray(s)
        if a.ndim == 0 or a.dtype.kind not in "biuf":
            raise TypeError(f"seqs[{k}] must be a numeric 1-D or 2-D array, got {type(s).__name__}")
        arrays.append(
            check_array(f"seqs[{k}]", a, ndim=a.ndim, kind="i" if a.dtype.kind in "iu" else "f")
        )
    ndim = arrays[0].ndim
    tail = arrays[0].shape[1:]
    for k, a in enumerate(arrays):
        if a.ndim != ndim or a.shape[1:] != tail or ndim > 2:
            raise ValueError(
                f"seqs[{k}] must have shape (T_i,{' F' if ndim == 2 else ''}) like "
                f"seqs[0] {arrays[0].shape}, got {a.shape}"
            )
        if a.shape[0] == 0:
            raise ValueError(f"seqs[{k}] is empty; every sequence needs at least one step")
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    out_dtype = np.result_type(*arrays) if dtype is None else np.dtype(dtype)
    out = np.full((len(arrays), int(lengths.max()), *tail), padding_value, dtype=out_dtype)
    for k, a in enumerate(arrays):
        out[k, : a.shape[0]] = a
    return out, lengths
