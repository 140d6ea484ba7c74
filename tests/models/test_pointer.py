"""Pointer network: gradient checks, greedy decoding is a permutation, it learns to sort."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.models.pointer import PointerNetwork
from pyplay.optim import Adam
from pyplay.tasks.seq2seq import Sorting

# the gated cells' checks take a few times longer than the plain RNN's: slow tier
CELLS = [
    "rnn",
    pytest.param("lstm", marks=pytest.mark.slow),
    pytest.param("gru", marks=pytest.mark.slow),
]


def pointer_batch(task: Sorting, n: int) -> tuple[np.ndarray, ...]:
    """Source ids, lengths, decoder inputs (previous position, -1 first), targets, mask."""
    b = task.batch(n)
    lengths = b.src_lengths
    U = b.src.shape[1]
    targets = np.where(b.tgt_mask[:, :U], b.tgt_out[:, :U] - 3, -1)  # position ids -> positions
    targets = np.where(np.arange(U)[None, :] < lengths[:, None], targets, 0)
    mask = np.arange(U)[None, :] < lengths[:, None]
    ptr_in = np.concatenate([np.full((n, 1), -1), targets[:, :-1]], axis=1)
    return b.src, lengths, ptr_in, targets, mask


@pytest.mark.parametrize("cell", CELLS)
def test_gradients_match_central_differences(cell: str) -> None:
    task = Sorting(min_len=2, max_len=4, rng=0)
    src, lengths, ptr_in, targets, mask = pointer_batch(task, 3)
    model = PointerNetwork(13, embedding_dim=3, hidden_size=4, cell=cell, dtype=np.float64, rng=1)
    probs = assert_gradients(model, src, lengths, ptr_in, targets, mask)
    assert np.allclose(probs.sum(axis=2), 1.0)
    assert (probs[~(np.arange(src.shape[1])[None, :] < lengths[:, None])[:, None, :].repeat(
        probs.shape[1], axis=1)] == 0).all()  # fmt: skip


def assert_gradients(model: PointerNetwork, src: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    """Every parameter's gradient against central differences; returns the probabilities."""
    lengths, ptr_in, targets, mask = rest

    def loss() -> float:
        probs, _ = model.forward(src, lengths, ptr_in)
        return model.loss(probs, targets, mask)[0]

    probs, cache = model.forward(src, lengths, ptr_in)
    _, du = model.loss(probs, targets, mask)
    grads = model.backward(du, cache).grads
    assert set(grads) == set(model.params)
    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    return probs


def test_greedy_outputs_a_permutation_of_the_real_positions() -> None:
    task = Sorting(min_len=2, max_len=6, rng=3)
    src, lengths, *_ = pointer_batch(task, 10)
    out = PointerNetwork(13, rng=0).greedy(src, lengths)
    for b, seq in enumerate(out):
        assert sorted(seq) == list(range(int(lengths[b])))


@pytest.mark.slow
def test_learns_to_sort_digits() -> None:
    task = Sorting(min_len=3, max_len=6, rng=0)
    model = PointerNetwork(13, embedding_dim=16, hidden_size=48, cell="lstm", rng=0)
    opt = Adam(model.params, lr=0.01)
    for _ in range(400):
        src, lengths, ptr_in, targets, mask = pointer_batch(task, 32)
        probs, cache = model.forward(src, lengths, ptr_in)
        _, du = model.loss(probs, targets, mask)
        opt.step(model.backward(du, cache).grads)
    test = Sorting(min_len=3, max_len=6, rng=99)
    src, lengths, _, targets, _ = pointer_batch(test, 300)
    out = model.greedy(src, lengths)
    values = [[int(v) for v in row[:n]] for row, n in zip(src - 3, lengths, strict=True)]
    sorted_ok = np.mean([[v[i] for i in o] == sorted(v) for v, o in zip(values, out, strict=True)])
    print(f"\n[pointer] sorted exactly: {sorted_ok:.3f}")
    assert sorted_ok >= 0.9  # measured 0.993


def test_errors() -> None:
    model = PointerNetwork(13)
    with pytest.raises(ValueError, match="cell must be one of"):
        PointerNetwork(13, cell="cnn")
    with pytest.raises(ValueError, match=r"ptr_in must hold positions in -1\.\.2"):
        model.forward([[3, 4, 5]], [3], [[-1, 7]])
    with pytest.raises(TypeError, match="src must hold integer"):
        model.forward([[3.0, 4.0]], [2], [[-1]])


def test_the_trainer_trains_it_through_its_declared_objective() -> None:
    from pyplay.objectives import PointerObjective
    from pyplay.train import Trainer

    task = Sorting(min_len=2, max_len=5, rng=0)
    model = PointerNetwork(13, embedding_dim=8, hidden_size=16, rng=0)
    trainer = Trainer(model, task, lr=0.02, batch_size=16)
    assert isinstance(trainer.objective, PointerObjective)
    records = list(trainer.run(60))
    assert all(r.status == "ok" for r in records)
    losses = [r.loss for r in records]
    assert np.mean(losses[-10:]) < np.mean(losses[:10])
    assert set(trainer.evaluate(batch_size=32)) == {"loss", "exact_match"}
    with pytest.raises(TypeError, match="targets are source positions"):
        Trainer(model, Sorting(output="values"))


@pytest.mark.parametrize("cell", CELLS)
def test_gradients_match_central_differences_with_real_inputs(cell: str) -> None:
    from pyplay.objectives import PointerObjective
    from pyplay.tasks.hull import ConvexHull

    b = ConvexHull(min_points=3, max_points=5, rng=0).batch(3)
    ptr_in, targets, mask = PointerObjective.positions(b)
    model = PointerNetwork(
        None, input_size=3, embedding_dim=3, hidden_size=4, cell=cell, dtype=np.float64, rng=1
    )
    assert set(model.params) >= {"input.weight", "input.bias"}
    assert "embedding.weight" not in model.params

    probs = assert_gradients(model, b.src, b.src_lengths, ptr_in, targets, mask)
    assert probs.shape == (3, targets.shape[1], b.src.shape[1])


def test_greedy_stops_after_pointing_at_the_end() -> None:
    from pyplay.tasks.hull import ConvexHull

    b = ConvexHull(min_points=4, max_points=8, rng=2).batch(12)
    model = PointerNetwork(None, input_size=3, hidden_size=8, rng=0)
    out = model.greedy(b.src, b.src_lengths, b.end)
    for k, seq in enumerate(out):
        assert len(set(seq)) == len(seq) and all(0 <= p <= b.end[k] for p in seq)
        assert seq[-1] == b.end[k] or len(seq) == b.src_lengths[k]  # ends at END or runs out
        assert b.end[k] not in seq[:-1]
    full = model.greedy(b.src, b.src_lengths)  # no end: every position once
    assert [sorted(s) for s in full] == [list(range(n)) for n in b.src_lengths]
    with pytest.raises(ValueError, match="end must hold one real position per row"):
        model.greedy(b.src, b.src_lengths, b.src_lengths)


def test_real_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match=r"give vocab_size .* or input_size .*, exactly one"):
        PointerNetwork(None)
    with pytest.raises(ValueError, match="exactly one"):
        PointerNetwork(13, input_size=2)
    model = PointerNetwork(None, input_size=3)
    with pytest.raises(ValueError, match=r"src must have input_size=3 features"):
        model.forward(np.zeros((1, 4, 2)), [4], [[-1]])
    with pytest.raises(ValueError, match=r"src must be a 3-D array \(B, S, F\)"):
        model.forward(np.zeros((1, 4)), [4], [[-1]])
    assert PointerNetwork.from_config(model.config).config == model.config
    old = {k: v for k, v in PointerNetwork(13).config.items() if k != "input_size"}
    assert PointerNetwork.from_config(old).input_size is None  # files saved before it
