"""Packing a ragged batch (``pyplay.nn.packing``): the packed layout equals PyTorch's
``pack_padded_sequence`` exactly, unpacking undoes it, and a recurrent stack run over the packed
form (only the running sequences at each step) gives the masked padded run's outputs and final
states, which plain padding without the mask does not."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.nn import GRU, LSTM, RNN
from pyplay.nn.packing import (
    compare_padding,
    pack_padded_sequence,
    pad_packed_sequence,
    run_packed,
)

torch = pytest.importorskip("torch")

CASES = [  # lengths, with ties, already sorted, all full, one sequence
    np.array([3, 6, 1, 3]),
    np.array([5, 4, 2, 2, 1]),
    np.array([4, 4, 4]),
    np.array([2]),
    np.random.default_rng(3).permutation(np.arange(1, 21)),
]


def _batch(lengths: np.ndarray, F: int = 3, seed: int = 0) -> np.ndarray:
    T = int(lengths.max())
    return np.random.default_rng(seed).normal(size=(len(lengths), T, F))  # (B, T, F)


@pytest.mark.parametrize("lengths", CASES, ids=lambda L: "-".join(map(str, L[:6])))
def test_packed_layout_equals_torch(lengths):
    x = _batch(lengths)
    ours = pack_padded_sequence(x, lengths)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(
        torch.tensor(x), torch.tensor(lengths), batch_first=True, enforce_sorted=False
    )
    np.testing.assert_array_equal(ours.data, theirs.data.numpy())
    np.testing.assert_array_equal(ours.batch_sizes, theirs.batch_sizes.numpy())
    np.testing.assert_array_equal(ours.sorted_indices, theirs.sorted_indices.numpy())
    np.testing.assert_array_equal(ours.unsorted_indices, theirs.unsorted_indices.numpy())
    assert ours.data.shape[0] == lengths.sum() == ours.batch_sizes.sum()


def test_many_ties_pack_like_torch_up_to_the_order_of_equal_lengths():
    lengths = np.random.default_rng(3).integers(1, 8, size=32)
    x = _batch(lengths)
    ours = pack_padded_sequence(x, lengths)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(
        torch.tensor(x), torch.tensor(lengths), batch_first=True, enforce_sorted=False
    )
    np.testing.assert_array_equal(ours.batch_sizes, theirs.batch_sizes.numpy())
    np.testing.assert_array_equal(
        lengths[ours.sorted_indices], lengths[theirs.sorted_indices.numpy()]
    )  # both longest first; equal lengths may come in another order (torch's sort is unstable)
    assert (np.diff(ours.sorted_indices[lengths[ours.sorted_indices] == 3]) > 0).all()


@pytest.mark.parametrize("lengths", CASES, ids=lambda L: "-".join(map(str, L[:6])))
def test_unpacking_gives_back_the_padded_batch(lengths):
    x = _batch(lengths)
    packed = pack_padded_sequence(x, lengths)
    padded, got = pad_packed_sequence(packed, padding_value=-1.0, total_length=x.shape[1] + 2)
    valid = np.arange(x.shape[1])[None, :] < lengths[:, None]  # (B, T)
    np.testing.assert_array_equal(got, lengths)
    np.testing.assert_array_equal(padded[:, : x.shape[1]][valid], x[valid])
    assert (padded[:, : x.shape[1]][~valid] == -1.0).all() and (padded[:, -2:] == -1.0).all()


@pytest.mark.parametrize("cls", [RNN, GRU, LSTM])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_the_packed_run_equals_the_masked_padded_run(cls, num_layers):
    lengths = np.array([5, 2, 7, 2, 1, 6])
    x = _batch(lengths, F=4, seed=1)
    rnn = cls(4, 5, num_layers=num_layers, rng=2, dtype=np.float64)
    out, state_n, _ = rnn.forward(x, None, lengths=lengths, training=False)
    packed_out, packed_state, evaluations = run_packed(rnn, pack_padded_sequence(x, lengths))
    assert evaluations == lengths.sum() < x.shape[0] * x.shape[1]
    unpacked, _ = pad_packed_sequence(packed_out)
    np.testing.assert_allclose(unpacked, out, rtol=0, atol=1e-12)
    pairs = zip(packed_state, state_n, strict=True) if cls is LSTM else [(packed_state, state_n)]
    for ours, masked in pairs:
        np.testing.assert_allclose(ours, masked, rtol=0, atol=1e-12)
    # padding without the mask runs the cell on the zeros: the final states move
    _, plain, _ = rnn.forward(x * (np.arange(7)[None, :, None] < lengths[:, None, None]), None)
    h_plain = plain[0] if cls is LSTM else plain
    h_masked = state_n[0] if cls is LSTM else state_n
    assert np.abs(h_plain - h_masked).max() > 1e-3


def test_the_packed_run_equals_torch_on_a_packed_batch():
    lengths = np.array([4, 1, 3])
    x = _batch(lengths, F=2, seed=4)
    ours = LSTM(2, 3, rng=5, dtype=np.float64)
    theirs = torch.nn.LSTM(2, 3, batch_first=True).double()
    with torch.no_grad():
        for name, value in ours.params.items():
            getattr(theirs, name).copy_(torch.tensor(value))
    packed = torch.nn.utils.rnn.pack_padded_sequence(
        torch.tensor(x), torch.tensor(lengths), batch_first=True, enforce_sorted=False
    )
    t_out, (t_h, t_c) = theirs(packed)
    out, (h, c), _ = run_packed(ours, pack_padded_sequence(x, lengths))
    np.testing.assert_allclose(out.data, t_out.data.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, t_h.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c, t_c.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", [RNN, GRU, LSTM])
def test_compare_padding_counts_the_work_and_measures_both_gaps(cls):
    found = compare_padding(cls(3, 4, num_layers=2, rng=0, dtype=np.float64), [6, 4, 4, 2, 1], 0)
    assert (found.padded_steps, found.packed_steps) == (30, 17)
    assert found.packed.batch_sizes.tolist() == [5, 4, 3, 3, 1, 1]
    assert found.packed_gap < 1e-12 < 1e-2 < found.unmasked_gap
    again = compare_padding(cls(3, 4, num_layers=2, rng=0, dtype=np.float64), [6, 4, 4, 2, 1], 0)
    assert again.unmasked_gap == found.unmasked_gap  # the seed fixes the batch


def test_bad_input_names_the_argument():
    x = _batch(np.array([2, 3]))
    with pytest.raises(ValueError, match="lengths must lie between 1 and T=3"):
        pack_padded_sequence(x, [0, 3])
    with pytest.raises(ValueError, match="one entry per sequence"):
        pack_padded_sequence(x, [1, 2, 3])
    with pytest.raises(ValueError, match=r"x must .*\(B, T, F\)"):
        pack_padded_sequence(x[0], [2, 3])
    with pytest.raises(ValueError, match="one direction"):
        run_packed(GRU(3, 2, bidirectional=True, rng=0), pack_padded_sequence(x, [2, 3]))
    with pytest.raises(TypeError, match="packed must be a PackedSequence"):
        pad_packed_sequence(x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="total_length must be at least"):
        pad_packed_sequence(pack_padded_sequence(x, [2, 3]), total_length=2)
    with pytest.raises(ValueError, match=r"lengths must be at least 1 each, got \[2, 0\]"):
        compare_padding(RNN(3, 2, rng=0), [2, 0])
