"""Packing a ragged batch, as ``torch.nn.utils.rnn.pack_padded_sequence`` does, and running a
recurrent stack over the packed form: the same result as padding with a mask, without the work
on the padding.

A batch of B sequences of lengths :math:`T_1, \\dots, T_B` padded to :math:`T = \\max_i T_i`
holds :math:`B T` steps of which only :math:`\\sum_i T_i` are real. Padding alone is wrong for
a recurrent net: the padded steps run through the cell and change the final state. The mask
(``forward(x, lengths=...)``) keeps the state fixed on them, but the cell is still evaluated
there. Packing sorts the sequences by length (longest first) and stores time step by time step
only the rows still running:

.. math::

    \\text{batch\\_sizes}_t = \\#\\{i : T_i > t\\}, \\qquad
    \\text{data} = [x_{\\pi(1), 0}, \\dots, x_{\\pi(b_0), 0}, x_{\\pi(1), 1}, \\dots]

with :math:`\\pi` the sort (``sorted_indices``), so step :math:`t` of the packed run evaluates
the cell on :math:`b_t` rows only: :math:`\\sum_t b_t = \\sum_i T_i` cell evaluations.
:func:`run_packed` does exactly that with any of pyplay's recurrent stacks (one time step a
call, the state of the finished sequences dropped off the end), which is how it proves that the
masked padded run and the packed run agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_lengths

__all__ = [
    "PackedSequence",
    "PaddingComparison",
    "compare_padding",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "run_packed",
]


@dataclass(frozen=True)
class PackedSequence:
    """A ragged batch stored time step by time step (PyTorch's names and order).

    Attributes
    ----------
    data : array (sum T_i, F)
        The valid steps: step 0 of every sequence (longest first), then step 1 of those still
        running, and so on.
    batch_sizes : int64 array (T,)
        :math:`b_t`, how many sequences are still running at step ``t`` (non-increasing).
    sorted_indices : int64 array (B,)
        :math:`\\pi`: the batch rows by decreasing length. Ties keep their order here;
        PyTorch's sort may order equal lengths otherwise in larger batches.
    unsorted_indices : int64 array (B,)
        The inverse permutation: row ``i`` of the batch is row ``unsorted_indices[i]`` of the
        sorted one.
    """

    data: np.ndarray
    batch_sizes: np.ndarray
    sorted_indices: np.ndarray
    unsorted_indices: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """(B,) the length of each sequence, in the batch's own order."""
        b = self.batch_sizes  # (T,)
        sorted_lengths = (np.arange(int(b[0]))[:, None] < b[None, :]).sum(axis=1)  # (B,)
        return sorted_lengths[self.unsorted_indices]


def pack_padded_sequence(x: Any, lengths: Any) -> PackedSequence:
    """Pack a batch-first padded batch ``x`` (B, T, F) whose sequence ``i`` has ``lengths[i]``
    valid steps (``batch_first=True, enforce_sorted=False`` in PyTorch's terms).

    Examples
    --------
    >>> x = np.arange(6.0).reshape(2, 3, 1)
    >>> p = pack_padded_sequence(x, [1, 3])
    >>> p.data.ravel().tolist(), p.batch_sizes.tolist(), p.sorted_indices.tolist()
    ([3.0, 0.0, 4.0, 5.0], [2, 1, 1], [1, 0])
    """
    x = check_array("x", x, ndim=3, layout="(B, T, F)")
    B, T, _ = x.shape
    L = check_lengths(lengths, B, T)  # (B,)
    order = np.argsort(-L, kind="stable")  # (B,) longest first
    inverse = np.empty_like(order)
    inverse[order] = np.arange(B)
    T_max = int(L.max())
    batch_sizes = (L[None, :] > np.arange(T_max)[:, None]).sum(axis=1)  # (T_max,)
    steps = [x[order[: int(b)], t] for t, b in enumerate(batch_sizes)]  # T_max x (b_t, F)
    data = np.concatenate(steps, axis=0)  # (sum T_i, F)
    return PackedSequence(data, batch_sizes.astype(np.int64), order.astype(np.int64), inverse)


def pad_packed_sequence(
    packed: PackedSequence, padding_value: float = 0.0, total_length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Undo :func:`pack_padded_sequence`: the batch-first padded batch (B, T, F), in the
    original order, and the lengths (B,). ``total_length`` pads to more steps than the longest."""
    if not isinstance(packed, PackedSequence):
        raise TypeError(f"packed must be a PackedSequence, got {type(packed).__name__}")
    b = packed.batch_sizes  # (T_max,)
    T = len(b) if total_length is None else int(total_length)
    if T < len(b):
        raise ValueError(
            f"total_length must be at least the longest sequence ({len(b)}), got {total_length}"
        )
    B, F = int(b[0]), packed.data.shape[1]
    out = np.full((B, T, F), padding_value, dtype=packed.data.dtype)  # (B, T, F) sorted rows
    start = 0
    for t, size in enumerate(b):
        out[: int(size), t] = packed.data[start : start + int(size)]  # (b_t, F)
        start += int(size)
    return out[packed.unsorted_indices], packed.lengths


def _rows(state: Any, rows: slice) -> Any:
    """The state of the sequences ``rows``: (L*D, b, H), or a tuple of two for LSTM."""
    if isinstance(state, tuple):
        return tuple(s[:, rows] for s in state)
    return state[:, rows]


def run_packed(rnn: Any, packed: PackedSequence) -> tuple[PackedSequence, Any, int]:
    """Run recurrent stack ``rnn`` (an :class:`~pyplay.nn.RNN`, ``GRU`` or ``LSTM``, one
    direction) over ``packed``, evaluating at step ``t`` only the ``b_t`` running sequences.

    Returns
    -------
    out : PackedSequence
        The top layer's outputs, packed like the input (``data`` (sum T_i, H)).
    state_n : array or tuple of two arrays
        h_n (or (h_n, c_n) for LSTM), (num_layers, B, H), in the batch's original order: each
        sequence's state after its last valid step.
    evaluations : int
        How many rows the cell was evaluated on, per layer: :math:`\\sum_t b_t = \\sum_i T_i`.
    """
    if getattr(rnn, "bidirectional", False):
        raise ValueError(
            "rnn must read in one direction for run_packed (it steps forward in time), "
            "got a bidirectional layer"
        )
    if not isinstance(packed, PackedSequence):
        raise TypeError(f"packed must be a PackedSequence, got {type(packed).__name__}")
    b = packed.batch_sizes  # (T_max,)
    state = None
    finals: list[Any] = []  # the states of the sequences that stop, longest-last
    outs, start = [], 0
    for t, size in enumerate(int(s) for s in b):
        x_t = packed.data[start : start + size, None, :]  # (b_t, 1, F)
        start += size
        if state is not None:
            state = _rows(state, slice(0, size))
        y, state, _ = rnn.forward(x_t, state, training=False)  # (b_t, 1, H)
        outs.append(y[:, 0])  # (b_t, H)
        ending = size - (int(b[t + 1]) if t + 1 < len(b) else 0)  # sequences whose last step is t
        if ending:
            finals.append(_rows(state, slice(size - ending, size)))
    finals.reverse()  # longest first, like sorted_indices
    if isinstance(finals[0], tuple):
        state_n: Any = tuple(
            np.concatenate([f[k] for f in finals], axis=1)[:, packed.unsorted_indices]
            for k in range(2)
        )  # 2 x (L, B, H)
    else:
        state_n = np.concatenate(finals, axis=1)[:, packed.unsorted_indices]  # (L, B, H)
    data = np.concatenate(outs, axis=0)  # (sum T_i, H)
    out = PackedSequence(data, b, packed.sorted_indices, packed.unsorted_indices)
    return out, state_n, int(b.sum())


@dataclass(frozen=True)
class PaddingComparison:
    """What :func:`compare_padding` found: the work of each form and how far their results
    are from the masked padded run's.

    Attributes
    ----------
    packed : PackedSequence
        The random batch, packed.
    padded_steps : int
        :math:`B T`: cell evaluations per layer of the padded batch (masked or not).
    packed_steps : int
        :math:`\\sum_i T_i`: those of the packed run.
    packed_gap : float
        max |h_n(packed) - h_n(masked)| (and of c_n for an LSTM): zero up to rounding.
    unmasked_gap : float
        max |h_n(padded, no mask) - h_n(masked)|: what the padding does without the mask.
    """

    packed: PackedSequence
    padded_steps: int
    packed_steps: int
    packed_gap: float
    unmasked_gap: float


def _gap(state: Any, reference: Any) -> float:
    """max |state - reference| over h_n (and c_n of an LSTM's pair)."""
    pairs = zip(state, reference, strict=True) if isinstance(state, tuple) else [(state, reference)]
    return max(float(np.abs(a - b).max()) for a, b in pairs)


def compare_padding(rnn: Any, lengths: Any, rng: Any = None) -> PaddingComparison:
    """Run ``rnn`` (one direction) on a random normal batch of sequences with ``lengths``, padded
    with zeros: with the mask (``lengths=``), packed (:func:`run_packed`) and without the mask.
    ``rng`` is a ``numpy.random.Generator`` or a seed."""
    L = check_array("lengths", lengths, ndim=1, kind="i", layout="(B,)")
    if L.size == 0 or L.min() < 1:
        raise ValueError(f"lengths must be at least 1 each, got {L.tolist()}")
    B, T = len(L), int(L.max())
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    valid = np.arange(T)[None, :, None] < L[:, None, None]  # (B, T, 1)
    x = gen.normal(size=(B, T, rnn.input_size)).astype(rnn.dtype) * valid  # (B, T, F)
    _, masked, _ = rnn.forward(x, None, lengths=L, training=False)
    packed = pack_padded_sequence(x, L)
    _, from_packed, steps = run_packed(rnn, packed)
    _, unmasked, _ = rnn.forward(x, None, training=False)
    return PaddingComparison(
        packed, B * T, steps, _gap(from_packed, masked), _gap(unmasked, masked)
    )
