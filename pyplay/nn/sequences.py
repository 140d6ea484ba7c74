"""Variable-length sequences: padding them into one batch, and the bookkeeping of that padding.

A recurrent layer consumes a rectangular batch ``(B, T, F)`` (or token ids ``(B, T)`` for an
``Embedding``). Sequences of different lengths ``T_i`` are padded at the end to
``T = max_i T_i`` by :func:`pad_sequences`; the returned ``lengths`` tell the layer where each
sequence really ends (``forward(x, lengths=lengths)``), so the padding neither changes the state
nor receives gradient. :class:`PaddedBatch` is that knowledge inside the recurrent driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_float, check_lengths

__all__ = ["Ends", "PaddedBatch", "pad_sequences"]

Ends = dict[int, "np.ndarray | slice"]  # last valid step t -> rows of the sequences ending at t


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


@dataclass(frozen=True)
class PaddedBatch:
    """Where the valid steps of each sequence of a padded batch are (``forward(lengths=...)``).

    Built once per forward pass by the recurrent driver; its methods do the per-sequence time
    reversal, the gathering of final states, the zeroing of padded outputs and the injection of
    the final-state gradient at each sequence's last valid step.
    """

    B: int
    T: int
    lengths: np.ndarray | None  # (B,), None when every sequence has all T steps
    mask: np.ndarray | None  # (T, B, 1) 1 at valid steps, 0 at padding
    rev: np.ndarray | None  # (T, B) time index read by the reverse direction
    ends: Ends

    @classmethod
    def of(cls, lengths: Any, B: int, T: int, dtype: np.dtype) -> PaddedBatch:
        """Validate ``lengths`` (None: all ``T`` steps) for a batch of ``B`` sequences."""
        if lengths is None:
            return cls(B, T, None, None, None, {T - 1: slice(None)})
        L = check_lengths(lengths, B, T)  # (B,)
        if L.min() == T:
            return cls(B, T, None, None, None, {T - 1: slice(None)})
        t = np.arange(T)[:, None]  # (T, 1)
        valid = t < L[None, :]  # (T, B)
        rev = np.where(valid, L[None, :] - 1 - t, t)  # (T, B) padding maps to itself
        ends: Ends = {int(s): np.flatnonzero(L - 1 == s) for s in np.unique(L - 1)}
        return cls(B, T, L, valid[:, :, None].astype(dtype), rev, ends)

    def reverse(self, a: np.ndarray) -> np.ndarray:
        """(T, B, ...) -> (T, B, ...): each sequence reversed within its length (an involution)."""
        if self.rev is None:
            return a[::-1]
        return a[self.rev, np.arange(self.B)]  # (T, B, ...)

    def final(self, hs: np.ndarray) -> np.ndarray:
        """(T+1, B, H) -> (B, H): the state after each sequence's own last valid step."""
        if self.lengths is None:
            return hs[-1]
        return hs[self.lengths, np.arange(self.B)]  # (B, H)

    def zero_padding(self, a: np.ndarray) -> np.ndarray:
        """(T, B, H): zeros at padded steps (a new array), or ``a`` itself without padding."""
        return a if self.mask is None else a * self.mask

    def inject(self, dH: np.ndarray, dh_n: np.ndarray) -> None:
        """In place: ``dL/dh_n`` (B, H) enters ``dH`` (T, B, H) at each last valid step."""
        if self.lengths is None:
            dH[-1] += dh_n
        else:
            dH[self.lengths - 1, np.arange(self.B)] += dh_n
