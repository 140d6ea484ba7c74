"""Encoder-decoder in its four wirings: gradient checks, decoding consistency, learning, errors."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.losses import cross_entropy
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.optim import Adam, clip_grad_norm
from pyplay.tasks.pairs import BOS, PairBatch, exact_match
from pyplay.tasks.seq2seq import Reversal, VariableCopy


def small_batch() -> PairBatch:
    return PairBatch.of([([3, 4, 5, 6], [4, 3]), ([5, 3], [6, 6, 5, 4]), ([6], [3])])


WIRED = ["init", "context", "attention:dot", "attention:general", "attention:additive"]
WIRED += ["bahdanau:additive", "bahdanau:general"]
ONE_WAY = ["attention:scaled_dot", "attention:cosine", "attention:location", "bahdanau:dot"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("wiring", "bidirectional"),
    [(w, False) for w in WIRED + ONE_WAY] + [(w, True) for w in WIRED if w != "attention:dot"],
)
@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_gradients_match_central_differences(cell: str, wiring: str, bidirectional: bool) -> None:
    wiring, _, score = wiring.partition(":")  # dot scores need equal widths: unidirectional
    model = EncoderDecoder(
        7, 7, embedding_dim=3, hidden_size=4, num_layers=2 if cell == "lstm" else 1, cell=cell,
        bidirectional_encoder=bidirectional, wiring=wiring, score=score or "general",
        dtype=np.float64, rng=1,
    )  # fmt: skip
    grads = check_gradients(model)
    assert np.abs(grads["encoder.rnn.weight_hh_l0"]).max() > 0  # the encoder is trained
    if wiring in ("attention", "bahdanau"):  # rows sum to one, padded positions get nothing
        batch = small_batch()
        _, weights, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
        np.testing.assert_allclose(weights.sum(axis=2), 1.0, atol=1e-12)
        assert (weights[0, :, 4:] == 0).all() and (weights[1, :, 2:] == 0).all()


def check_gradients(model: EncoderDecoder) -> dict[str, np.ndarray]:
    """Every parameter's gradient on :func:`small_batch` against central differences;
    returns the gradients."""
    batch = small_batch()
    lengths = batch.tgt_mask.sum(axis=1)

    def loss() -> float:
        logits, _, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in, lengths)
        return float(cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)[0])

    logits, _, cache = model.forward(batch.src, batch.src_lengths, batch.tgt_in, lengths)
    _, dlogits = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)
    grads = model.backward(dlogits, cache).grads
    assert set(grads) == set(model.params)
    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    return grads


@pytest.mark.parametrize("wiring", ["init", "context", "attention", "bahdanau"])
def test_step_by_step_decoding_equals_teacher_forcing(wiring: str) -> None:
    model = EncoderDecoder(7, 7, hidden_size=6, wiring=wiring, dtype=np.float64, rng=2)
    batch = small_batch()
    logits, weights, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
    state = model.start(batch.src, batch.src_lengths)
    for t in range(batch.tgt_in.shape[1]):
        stepped: list[np.ndarray] = []
        logp, state = model.step(batch.tgt_in[:, t], state, stepped)
        if weights is not None:
            np.testing.assert_allclose(stepped[0], weights[:, t], atol=1e-12)
        z = logits[:, t] - logits[:, t].max(axis=1, keepdims=True)
        np.testing.assert_allclose(
            logp, z - np.log(np.exp(z).sum(axis=1, keepdims=True)), atol=1e-12
        )
    # reorder picks hypothesis rows
    state = model.start(batch.src, batch.src_lengths)
    picked = model.reorder(state, np.array([2, 0]))
    np.testing.assert_array_equal(picked.rnn[0][:, 0], state.rnn[0][:, 2])


def test_greedy_follows_argmax() -> None:
    model = EncoderDecoder(7, 7, hidden_size=5, dtype=np.float64, rng=3)
    batch = small_batch()
    out = model.greedy(batch.src, batch.src_lengths, max_length=6)
    for b, seq in enumerate(out):
        tokens = [BOS, *seq]
        logits, _, _ = model.forward(batch.src[b : b + 1], batch.src_lengths[b : b + 1], [tokens])
        predicted = logits[0].argmax(axis=1)
        assert list(predicted[: len(seq)]) == seq


@pytest.mark.slow
def test_learns_to_copy_short_strings() -> None:
    task = VariableCopy(n_symbols=5, min_len=2, max_len=5, rng=0)
    V = len(task.src_vocab)
    model = EncoderDecoder(V, V, embedding_dim=16, hidden_size=64, cell="lstm", rng=0)
    opt = Adam(model.params, lr=0.01)
    for _ in range(500):
        b = task.batch(32)
        logits, _, cache = model.forward(b.src, b.src_lengths, b.tgt_in, b.tgt_mask.sum(axis=1))
        _, dlogits = cross_entropy(logits, b.tgt_out, mask=b.tgt_mask)
        opt.step(model.backward(dlogits, cache).grads)
    test = VariableCopy(n_symbols=5, min_len=2, max_len=5, rng=99).batch(200)
    acc = exact_match(model.greedy(test.src, test.src_lengths, max_length=8), test)
    print(f"\n[seq2seq] copy exact match {acc:.3f}")
    assert acc >= 0.8, acc


def _reversal_exact_match(wiring: str, score: str = "general", clip: float | None = None) -> float:
    task = Reversal(n_symbols=6, min_len=8, max_len=14, rng=0)
    V = len(task.src_vocab)
    model = EncoderDecoder(
        V, V, embedding_dim=16, hidden_size=48, cell="gru", wiring=wiring, score=score, rng=0
    )
    opt = Adam(model.params, lr=0.01)
    for _ in range(400):
        b = task.batch(32)
        logits, _, cache = model.forward(b.src, b.src_lengths, b.tgt_in, b.tgt_mask.sum(axis=1))
        _, dlogits = cross_entropy(logits, b.tgt_out, mask=b.tgt_mask)
        grads = model.backward(dlogits, cache).grads
        if clip is not None:
            clip_grad_norm(grads, clip)
        opt.step(grads)
    test = Reversal(n_symbols=6, min_len=8, max_len=14, rng=99).batch(300)
    return exact_match(model.greedy(test.src, test.src_lengths, max_length=16), test)


@pytest.mark.slow
def test_attention_beats_the_plain_encoder_decoder_on_long_reversal() -> None:
    """Reversing 8-14 symbols, same GRU sizes, seed and 400 steps: measured 0.93 exact match
    with attention against 0.14 without."""
    with_attention, plain = _reversal_exact_match("attention"), _reversal_exact_match("init")
    print(f"\n[seq2seq] reversal exact match: attention {with_attention:.3f}, plain {plain:.3f}")
    assert with_attention >= 0.6
    assert with_attention - plain >= 0.4


@pytest.mark.slow
def test_bahdanau_attention_beats_the_plain_encoder_decoder_on_long_reversal() -> None:
    """The same task with the context fed into each step (additive score, gradients clipped at
    1; without clipping this wiring's loss jumps at lr 0.01): measured 0.72 exact match
    against 0.13 for the plain model under the same clipping."""
    bahdanau = _reversal_exact_match("bahdanau", "additive", clip=1.0)
    plain = _reversal_exact_match("init", clip=1.0)
    print(f"\n[seq2seq] reversal exact match: bahdanau {bahdanau:.3f}, plain {plain:.3f}")
    assert bahdanau >= 0.55
    assert bahdanau - plain >= 0.35


def test_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="wiring must be one of"):
        EncoderDecoder(5, 5, wiring="attention?")
    with pytest.raises(ValueError, match="cell must be one of"):
        EncoderDecoder(5, 5, cell="transformer")
    with pytest.raises(ValueError, match="score='dot' needs key_size equal"):
        EncoderDecoder(5, 5, wiring="attention", score="dot", bidirectional_encoder=True)
    with pytest.raises(ValueError, match="score must be one of"):
        EncoderDecoder(5, 5, wiring="attention", score="cosine?")
    with pytest.raises(TypeError, match="bidirectional_encoder must be True or False"):
        EncoderDecoder(5, 5, bidirectional_encoder=1)  # type: ignore[arg-type]
    model = EncoderDecoder(5, 5)
    with pytest.raises(ValueError, match="src must be a 2-D array"):
        model.forward(np.array([3, 4]), [2], [[BOS]])
    with pytest.raises(TypeError, match="tgt_in must hold integer"):
        model.forward([[3, 4]], [2], [[1.0]])
