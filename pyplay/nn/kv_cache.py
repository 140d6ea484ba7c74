r"""The key/value cache of incremental decoding with multi-head attention.

With causal self-attention the keys and values of past positions never change, so
:meth:`pyplay.nn.multihead.MultiheadAttention.step` projects them once and keeps them per head
in a :class:`KVCache`: :math:`K_n = X_k W_k^\top + b_k` split into ``h`` heads of size ``d``
(likewise :math:`V`), (B, h, Tk, d), with an optional key padding mask (B, Tk). ``extend``
appends the positions of a new step along the time axis; ``reorder`` keeps chosen batch rows,
as beam search does when it reorders its hypotheses.

A transformer layer's incremental-decoding state is a :class:`LayerState` (its self-attention's
cache and, in a decoder layer, the memory's), a stack's a :class:`TransformerState` (one per
layer); :func:`reorder` is the hook beam search calls on any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_rows

__all__ = ["KVCache", "LayerState", "TransformerState", "reorder"]


@dataclass(frozen=True)
class KVCache:
    """Projected keys and values of every position seen so far, per head.

    Attributes
    ----------
    key, value : array (B, h, Tk, d)
        :math:`K_n = X_k W_k^\top + b_k` split into heads (likewise :math:`V`).
    key_padding_mask : bool array (B, Tk), optional
        True = ignore that key (torch's convention); None when every key takes part.
    """

    key: np.ndarray  # (B, h, Tk, d)
    value: np.ndarray  # (B, h, Tk, d)
    key_padding_mask: np.ndarray | None = None  # (B, Tk)

    @property
    def batch_size(self) -> int:
        return int(self.key.shape[0])

    @property
    def length(self) -> int:
        """Number of cached positions Tk."""
        return int(self.key.shape[2])

    def extend(self, new: KVCache) -> KVCache:
        """This cache followed by ``new`` (same batch) along the time axis."""
        if not isinstance(new, KVCache):
            raise TypeError(f"new must be a KVCache, got {type(new).__name__}")
        B, h, _, d = self.key.shape
        if new.key.shape[:2] != (B, h) or new.key.shape[3] != d:
            raise ValueError(
                f"new must have shape (B, h, T, d) = ({B}, {h}, *, {d}) like this cache, "
                f"got {new.key.shape}"
            )
        kpm = None
        if self.key_padding_mask is not None or new.key_padding_mask is not None:
            kpm = np.concatenate([_kpm_or_zeros(c) for c in (self, new)], axis=1)  # (B, Tk + Tn)
        return KVCache(
            np.concatenate([self.key, new.key], axis=2),  # (B, h, Tk + Tn, d)
            np.concatenate([self.value, new.value], axis=2),  # (B, h, Tk + Tn, d)
            kpm,
        )

    def reorder(self, index: Any) -> KVCache:
        """Keep the batch rows ``index`` (N',) in that order (rows may repeat), as beam search
        does when it reorders its hypotheses."""
        idx = check_rows("index", index, self.batch_size)
        kpm = None if self.key_padding_mask is None else self.key_padding_mask[idx]  # (N', Tk)
        return KVCache(self.key[idx], self.value[idx], kpm)  # (N', h, Tk, d)


def _kpm_or_zeros(c: KVCache) -> np.ndarray:
    if c.key_padding_mask is not None:
        return c.key_padding_mask
    return np.zeros((c.batch_size, c.length), dtype=bool)  # (B, Tk)


# ------------------------------------------------------------------ a layer's, a stack's
@dataclass(frozen=True)
class LayerState:
    """One layer's incremental-decoding state.

    Attributes
    ----------
    self_attn : KVCache or None
        Projected keys and values of every position so far, (B, h, T, d); None before the
        first step.
    cross_attn : KVCache or None
        Decoder layers: the memory's projected keys and values (B, h, S, d) and its padding
        mask, computed once by ``init_state``.
    """

    self_attn: KVCache | None = None
    cross_attn: KVCache | None = None

    @property
    def length(self) -> int:
        """Positions decoded so far."""
        return 0 if self.self_attn is None else self.self_attn.length

    def reorder(self, index: Any) -> LayerState:
        """Keep the batch rows ``index`` (N',) in that order (rows may repeat)."""
        return LayerState(
            *(None if c is None else c.reorder(index) for c in (self.self_attn, self.cross_attn))
        )


@dataclass(frozen=True)
class TransformerState:
    """A stack's incremental-decoding state: one :class:`LayerState` per layer."""

    layers: tuple[LayerState, ...]

    @property
    def length(self) -> int:
        """Positions decoded so far."""
        return self.layers[0].length if self.layers else 0

    def reorder(self, index: Any) -> TransformerState:
        """Keep the batch rows ``index`` (N',) in that order, in every layer (beam search)."""
        return TransformerState(tuple(s.reorder(index) for s in self.layers))


def reorder(state: Any, index: Any) -> Any:
    """``state.reorder(index)`` for a :class:`TransformerState`, :class:`LayerState` or
    :class:`KVCache`: the ``reorder`` hook of
    :class:`pyplay.decode.BeamSearch`."""
    if not isinstance(state, TransformerState | LayerState | KVCache):
        raise TypeError(
            f"state must be a TransformerState, LayerState or KVCache, got {type(state).__name__}"
        )
    return state.reorder(index)
