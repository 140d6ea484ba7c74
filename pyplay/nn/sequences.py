"""Padding variable-length sequences into one batch, with their lengths.

A recurrent layer consumes a rectangular batch ``(B, T, F)`` (or token ids ``(B, T)`` for an
``Embedding``). Sequences of different lengths ``T_i`` are padded at the end to
``T = max_i T_i``; the returned ``lengths`` tell the layer where each sequence really ends
(``forward(x, lengths=lengths)``), so the padding neither changes the state nor receives gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pyplay._checks import check_float

__all__ = ["pad_sequences"]


def _describe(value: Any) -> str:
    return type(value).__name__


def pad_sequences(
    seqs: Sequence[Any], padding_value: float = 0, dtype: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Stack sequences of lengths ``T_i`` into one batch padded at the end to ``T = max T_i``.

    Parameters
    ----------
    seqs : list of arrays
        Either 1-D token sequences ``(T_i,)`` or 2-D feature sequences ``(T_i, F)`` (all the
        same kind and the same ``F``), each with at least one step. Integers (tokens) or real
        numbers; real values must be finite.
    padding_value : float
        Value written at the padded positions (it must be representable in ``dtype``).
    dtype : numpy dtype, optional
        Dtype of the batch; default: the common dtype of the sequences.

    Returns
    -------
    padded : array (B, T) or (B, T, F)
    lengths : int64 array (B,)

    Examples
    --------
    >>> x, lengths = pad_sequences([[1, 2, 3], [4]])
    >>> x.tolist(), lengths.tolist()
    ([[1, 2, 3], [4, 0, 0]], [3, 1])
    """
    if isinstance(seqs, np.ndarray | str | bytes) or not isinstance(seqs, Sequence):
        raise TypeError(f"seqs must be a list of arrays, got {_describe(seqs)}")
    if len(seqs) == 0:
        raise ValueError("seqs must hold at least one sequence, got an empty list")
    padding_value = check_float("padding_value", padding_value)
    arrays: list[np.ndarray] = []
    for k, s in enumerate(seqs):
        if s is None or isinstance(s, str | bytes):
            raise TypeError(f"seqs[{k}] must be a numeric array, got {_describe(s)}")
        try:
            a = np.asarray(s)
        except ValueError as err:  # ragged nested lists
            raise ValueError(f"seqs[{k}] must be a rectangular array, got {err}") from err
        if a.dtype.kind not in "iuf":
            raise TypeError(f"seqs[{k}] must hold integers or real numbers, got dtype {a.dtype}")
        if a.ndim not in (1, 2):
            raise ValueError(
                f"seqs[{k}] must be 1-D (T_i,) tokens or 2-D (T_i, F) features, got shape {a.shape}"
            )
        if a.shape[0] == 0:
            raise ValueError(f"seqs[{k}] must have at least one step, got shape {a.shape}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"seqs[{k}] must be finite, got NaN or infinite values")
        if arrays and a.shape[1:] != arrays[0].shape[1:]:
            raise ValueError(
                f"seqs[{k}] must have the shape of seqs[0] apart from its length, "
                f"seqs[0] has {arrays[0].shape}, got {a.shape}"
            )
        arrays.append(a)
    if dtype is None:
        out_dtype = np.result_type(*arrays)
    else:
        try:
            out_dtype = np.dtype(dtype)
        except TypeError as err:
            raise TypeError(f"dtype must be a numeric NumPy dtype, got {dtype!r}") from err
        if out_dtype.kind not in "iuf":
            raise TypeError(f"dtype must be an integer or float dtype, got {out_dtype}")
        if out_dtype.kind in "iu" and any(a.dtype.kind == "f" for a in arrays):
            kinds = sorted({str(a.dtype) for a in arrays})
            raise TypeError(
                f"dtype must be a float dtype for real-valued sequences, got {out_dtype} "
                f"for sequences of dtype {', '.join(kinds)}"
            )
    if out_dtype.kind in "iu":
        info = np.iinfo(out_dtype)
        if not (padding_value.is_integer() and info.min <= padding_value <= info.max):
            raise ValueError(
                f"padding_value must be an integer in [{info.min}, {info.max}] for dtype "
                f"{out_dtype}, got {padding_value}"
            )
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)  # (B,)
    tail = arrays[0].shape[1:]  # () or (F,)
    out = np.full((len(arrays), int(lengths.max()), *tail), padding_value, dtype=out_dtype)
    for k, a in enumerate(arrays):
        out[k, : a.shape[0]] = a  # (T_i, ...) into (T, ...)
    return out, lengths
