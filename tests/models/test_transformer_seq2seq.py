"""The encoder-decoder transformer: gradient checks, KV-cached decoding against teacher
forcing, beam search over it, learning reversal and sorting, errors."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.decode import BeamSearch
from pyplay.losses import cross_entropy
from pyplay.models.transformer.seq2seq import TransformerSeq2Seq
from pyplay.optim.schedules import CosineAnnealingLR
from pyplay.tasks.pairs import BOS, EOS, PairBatch, exact_match
from pyplay.tasks.seq2seq import Reversal, Sorting
from pyplay.train import Trainer


def small_batch() -> PairBatch:
    return PairBatch.of([([3, 4, 5, 6], [4, 3]), ([5, 3], [6, 6, 5, 4]), ([6], [3])])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("positional", "norm_first"), [("sinusoidal", True), ("learned", False), ("concat", True)]
)
def test_gradients_match_central_differences(positional: str, norm_first: bool) -> None:
    model = TransformerSeq2Seq(
        7, 7, d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=6,
        positional=positional, max_len=8, norm_first=norm_first, dtype=np.float64, rng=1,
    )  # fmt: skip
    batch = small_batch()
    lengths = batch.tgt_mask.sum(axis=1)

    def loss() -> float:
        logits, _, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in, lengths)
        return float(cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)[0])

    logits, weights, cache = model.forward(batch.src, batch.src_lengths, batch.tgt_in, lengths)
    np.testing.assert_allclose(weights.sum(axis=2), 1.0, atol=1e-12)
    assert (weights[0, :, 4:] == 0).all() and (weights[1, :, 2:] == 0).all()  # padding
    _, dlogits = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)
    grads = model.backward(dlogits, cache).grads
    assert list(grads) == list(model.params)
    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)


def test_cached_decoding_equals_teacher_forcing_and_beam_search_runs_on_it() -> None:
    model = TransformerSeq2Seq(7, 7, d_model=8, nhead=2, dtype=np.float64, rng=2)
    batch = small_batch()
    logits, weights, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
    state = model.start(batch.src, batch.src_lengths)
    for t in range(batch.tgt_in.shape[1]):
        stepped: list[np.ndarray] = []
        logp, state = model.step(batch.tgt_in[:, t], state, stepped)
        np.testing.assert_allclose(stepped[0], weights[:, t], atol=1e-12)
        z = logits[:, t] - logits[:, t].max(axis=1, keepdims=True)
        ref = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        np.testing.assert_allclose(logp, ref, atol=1e-12)
    src, n = batch.src[:1], batch.src_lengths[:1]
    search = BeamSearch(model.step, model.start(src, n), bos=BOS, eos=EOS, beam_width=1,
                        max_length=6, reorder=model.reorder)  # fmt: skip
    best = search.run()[0]
    assert [t for t in best.tokens if t != EOS] == model.greedy(src, n, max_length=6)[0]


def _train(task_cls, steps: int, lr: float = 3e-3, cosine: bool = False, **task_kw) -> float:
    task = task_cls(rng=0, **task_kw)
    V_s, V_t = len(task.src_vocab), len(task.tgt_vocab)
    model = TransformerSeq2Seq(V_s, V_t, d_model=32, nhead=4, rng=0)
    trainer = Trainer(model, task, lr=lr, batch_size=32, clip=1.0)
    if cosine:
        trainer.schedule = CosineAnnealingLR(trainer.optimizer, T_max=steps)
    for record in trainer.run(steps):
        assert record.status == "ok", record.message
    test = task_cls(rng=99, **task_kw).batch(200)
    return exact_match(model.greedy(test.src, test.src_lengths, max_length=20), test)


@pytest.mark.slow
def test_learns_reversal() -> None:
    """Exact match on 200 held-out sources of 3-10 symbols after 400 steps with the rate
    annealed to 0 (cosine): measured 1.000 for seeds 0, 1 and 2, with one BLAS thread or two.
    At a constant rate the figure swings from step to step (seed 0: 0.885, 0.755 or 0.82 at
    300, 400 or 500 steps with one thread; 0.82 at 400 with two), too close to any threshold
    to be a stable check."""
    acc = _train(Reversal, 400, cosine=True, min_len=3, max_len=10)
    print(f"\n[transformer seq2seq] reversal exact match {acc:.3f}")
    assert acc >= 0.95


@pytest.mark.slow
def test_learns_sorting() -> None:
    """Sorting 3-8 digits (output: the positions in sorted order); measured 0.845 with one
    BLAS thread, 0.85 with two."""
    acc = _train(Sorting, 400, lr=2e-3)
    print(f"\n[transformer seq2seq] sorting exact match {acc:.3f}")
    assert acc >= 0.75


def test_errors_name_the_argument() -> None:
    model = TransformerSeq2Seq(7, 7, d_model=8, nhead=2, max_len=6)
    with pytest.raises(ValueError, match="divisible"):
        TransformerSeq2Seq(7, 7, d_model=10, nhead=4)
    with pytest.raises(ValueError, match="exceed max_len=6"):
        model.forward(np.ones((1, 8), dtype=int), [8], np.ones((1, 2), dtype=int))
    with pytest.raises(TypeError, match="src"):
        model.forward(np.ones((1, 3)), [3], np.ones((1, 2), dtype=int))
    with pytest.raises(TypeError, match="state must be a TransformerSeq2SeqState"):
        model.step(np.array([BOS]), state=None)  # type: ignore[arg-type]
