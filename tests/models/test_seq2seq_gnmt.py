"""GNMT, the Google NMT encoder-decoder of Solberg's lecture (slide "Google's Neural Machine
Translation system (2016)": bottom encoder layer bidirectional, the decoder attends, residual
connections in encoder and decoder), in the details of Wu et al. 2016 (section 3, Figure 1):
``EncoderDecoder(encoder="gnmt")``. Gradient checks, the equations recomputed layer by layer,
step-by-step decoding, files, errors and learning."""

from __future__ import annotations

import io

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.io import load_model, save_model
from pyplay.losses import cross_entropy
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.gnmt import RESIDUAL_FROM, structure
from pyplay.optim import Adam, clip_grad_norm
from pyplay.tasks.pairs import PairBatch, exact_match
from pyplay.tasks.seq2seq import Reversal


def small_batch() -> PairBatch:
    return PairBatch.of([([3, 4, 5, 6], [4, 3]), ([5, 3], [6, 6, 5, 4]), ([6], [3])])


def gnmt(cell: str = "lstm", wiring: str = "bahdanau", L: int = 3, **kw: object) -> EncoderDecoder:
    return EncoderDecoder(
        7, 7, embedding_dim=3, hidden_size=4, num_layers=L, cell=cell, wiring=wiring,
        encoder="gnmt", dtype=np.float64, rng=1, **kw,
    )  # fmt: skip


GRAD_CASES = [("lstm", "bahdanau", 3), ("lstm", "attention", 3), ("gru", "bahdanau", 3),
              ("rnn", "attention", 3), ("gru", "attention", 2), ("rnn", "bahdanau", 2)]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("cell", "wiring", "L"), GRAD_CASES)
def test_gnmt_gradients_match_central_differences(cell: str, wiring: str, L: int) -> None:
    """Every parameter's hand-written gradient against float64 central differences, with and
    without a residual layer (L = 3 has one: residual connections start at layer 3)."""
    model = gnmt(cell, wiring, L, score="additive" if cell != "gru" else "general")
    batch = small_batch()
    lengths = batch.tgt_mask.sum(axis=1)

    def loss() -> float:
        logits, _, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in, lengths)
        return float(cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)[0])

    logits, weights, cache = model.forward(batch.src, batch.src_lengths, batch.tgt_in, lengths)
    _, dlogits = cross_entropy(logits, batch.tgt_out, mask=batch.tgt_mask)
    grads = model.backward(dlogits, cache).grads
    assert set(grads) == set(model.params)
    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    for name in ("encoder.bottom.weight_hh_l0_reverse", "encoder.upper.weight_hh_l0",
                 "decoder.bottom.weight_hh_l0", f"decoder.layer{L}.weight_ih_l0"):  # fmt: skip
        assert np.abs(grads[name]).max() > 0, name  # every part is trained
    np.testing.assert_allclose(weights.sum(axis=2), 1.0, atol=1e-12)
    assert (weights[0, :, 4:] == 0).all() and (weights[1, :, 2:] == 0).all()


def test_gnmt_structure_bidirectional_bottom_layer_only() -> None:
    """Solberg's slide: the bottom encoder layer is bidirectional, the others are not; Wu et
    al.: every decoder layer above the bottom one reads the context beside its input."""
    model = gnmt("lstm", L=4)
    p, H = model.params, 4
    assert "encoder.bottom.weight_ih_l0_reverse" in p
    assert not any(k.startswith("encoder.upper.") and "reverse" in k for k in p)
    assert p["encoder.upper.weight_ih_l0"].shape == (4 * H, 2 * H)  # layer 2 reads both ways
    assert p["encoder.upper.weight_ih_l2"].shape == (4 * H, H)  # layer 4
    assert p["decoder.bottom.weight_ih_l0"].shape == (4 * H, 3)  # the embedding only
    for layer in (2, 3, 4):
        assert p[f"decoder.layer{layer}.weight_ih_l0"].shape == (4 * H, 2 * H)  # [x; a]
    assert model.enc.upper.residual and model.enc.upper.num_layers == 3
    assert RESIDUAL_FROM == 3
    text = structure(4)
    assert "bidirectional bottom layer, 3 unidirectional layers, residual from layer 3" in text
    assert "no residual yet" in structure(2)


@pytest.mark.parametrize("wiring", ["bahdanau", "attention"])
def test_gnmt_decoder_computes_wu_et_al_equations(wiring: str) -> None:
    """Wu et al. 2016, section 3, written out with the layers themselves: the bottom decoder
    layer's output (of the previous step for wiring "bahdanau", of this step for "attention")
    queries the attention; the context a_i enters layers 2..L beside their input; from layer
    3 each layer adds its input (x^l = m^l + x^{l-1}); the head reads the top."""
    model = gnmt("gru", wiring, L=4, score="general")
    batch = small_batch()
    logits, weights, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
    state0, enc_out, _, _, _ = model.encode(batch.src, batch.src_lengths)  # (L, B, H)
    dec = model.dec
    x, _ = model.dec_emb.forward(batch.tgt_in)  # (B, U, E)
    m1, _, _ = dec.bottom.forward(x, state=state0[:1])  # (B, U, H)
    q = m1 if wiring == "attention" else np.concatenate([state0[0][:, None], m1[:, :-1]], 1)
    mask = np.arange(enc_out.shape[1])[None] < batch.src_lengths[:, None]  # (B, S)
    a, alpha, _ = dec.scorer.forward(q, enc_out, enc_out, mask=mask)  # (B, U, H), (B, U, S)
    np.testing.assert_allclose(alpha, weights, atol=1e-12)
    z = m1
    for layer in (2, 3, 4):
        m, _, _ = dec.upper[layer - 2].forward(
            np.concatenate([z, a], 2), state=state0[layer - 1 : layer]
        )
        z = m + z if layer >= 3 else m
    np.testing.assert_allclose(model.head.forward(z)[0], logits, atol=1e-12)


def test_gnmt_encoder_hands_each_layer_to_the_decoder_layer_of_its_height() -> None:
    """The decoder's layer l starts from the encoder's layer l (the paper does not say; as the
    other wirings do), the bottom layer's two directions joined by the bridge; the record
    names every layer as one stack would (``l0``, ``l0_reverse``, ``l1``, ...)."""
    model = gnmt("rnn", L=3)
    batch = small_batch()
    state0, enc_out, _, cache, _ = model.encode(batch.src, batch.src_lengths, record=True)
    assert state0.shape == (3, 3, 4) and enc_out.shape == (3, 4, 4)
    _, h_bottom, _ = model.enc.bottom.forward(model.enc_emb.forward(batch.src)[0],
                                              lengths=batch.src_lengths)  # fmt: skip
    np.testing.assert_allclose(state0[:1], model.enc.bridge.forward(h_bottom, None)[0])
    assert set(cache.record) == {"l0", "l0_reverse", "l1", "l2"}
    np.testing.assert_allclose(cache.record["l2"]["h"][0, 3], state0[2, 0])  # last step


@pytest.mark.parametrize("wiring", ["bahdanau", "attention"])
def test_gnmt_step_by_step_decoding_equals_teacher_forcing(wiring: str) -> None:
    model = gnmt("lstm", wiring, L=3)
    batch = small_batch()
    logits, weights, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
    state = model.start(batch.src, batch.src_lengths)
    for t in range(batch.tgt_in.shape[1]):
        stepped: list[np.ndarray] = []
        logp, state = model.step(batch.tgt_in[:, t], state, stepped)
        np.testing.assert_allclose(stepped[0], weights[:, t], atol=1e-12)
        z = logits[:, t] - logits[:, t].max(axis=1, keepdims=True)
        np.testing.assert_allclose(
            logp, z - np.log(np.exp(z).sum(axis=1, keepdims=True)), atol=1e-12
        )
    picked = model.reorder(state, np.array([2, 0]))  # beam search's rows
    np.testing.assert_array_equal(picked.rnn[1][:, 1], state.rnn[1][:, 0])


def test_gnmt_model_file_round_trips() -> None:
    model = EncoderDecoder(9, 10, 8, 6, num_layers=3, cell="gru", wiring="bahdanau",
                           encoder="gnmt", rng=4)  # fmt: skip
    for p in model.params.values():
        p += 0.01  # not the initial values: they must come from the file
    buf = io.BytesIO()
    save_model(buf, model)
    again = load_model(buf.getvalue())
    assert again.config == model.config and again.config["encoder"] == "gnmt"
    for name, value in model.params.items():
        np.testing.assert_array_equal(again.params[name], value)
    batch = small_batch()
    out = model.forward(batch.src, batch.src_lengths, batch.tgt_in)[0]
    np.testing.assert_array_equal(again.forward(batch.src, batch.src_lengths, batch.tgt_in)[0], out)
    old = {k: v for k, v in EncoderDecoder(9, 10).config.items() if k != "encoder"}
    assert EncoderDecoder.from_config(old).encoder == "stack"  # files before GNMT


def test_gnmt_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="encoder must be one of"):
        EncoderDecoder(5, 5, encoder="google")
    with pytest.raises(ValueError, match=r"wiring must be 'bahdanau'.*got wiring='init'"):
        EncoderDecoder(5, 5, num_layers=2, encoder="gnmt")
    with pytest.raises(ValueError, match=r"needs num_layers >= 2.*got num_layers=1"):
        EncoderDecoder(5, 5, wiring="bahdanau", encoder="gnmt")
    with pytest.raises(ValueError, match="leave bidirectional_encoder False"):
        EncoderDecoder(5, 5, 4, 4, 2, wiring="attention", bidirectional_encoder=True,
                       encoder="gnmt")  # fmt: skip
    with pytest.raises(ValueError, match="leave share_rnn False"):
        EncoderDecoder(5, 5, 4, 4, 2, wiring="bahdanau", share_rnn=True, encoder="gnmt")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gnmt_learns_reversal(seed: int) -> None:
    """GNMT of three LSTM layers (so one residual layer each side, Wu et al.'s query from the
    previous bottom output, additive score) reverses 3-8 symbols after 300 steps of 32 pairs:
    measured greedy exact match 0.845, 0.93, 0.91 for seeds 0, 1, 2 on 200 fresh pairs."""
    task = Reversal(n_symbols=6, min_len=3, max_len=8, rng=seed)
    V = len(task.src_vocab)
    model = EncoderDecoder(
        V, V, embedding_dim=16, hidden_size=32, num_layers=3, cell="lstm", wiring="bahdanau",
        score="additive", encoder="gnmt", rng=seed,
    )  # fmt: skip
    opt = Adam(model.params, lr=0.01)
    for _ in range(300):
        b = task.batch(32)
        logits, _, cache = model.forward(b.src, b.src_lengths, b.tgt_in, b.tgt_mask.sum(axis=1))
        _, dlogits = cross_entropy(logits, b.tgt_out, mask=b.tgt_mask)
        grads = model.backward(dlogits, cache).grads
        clip_grad_norm(grads, 1.0)
        opt.step(grads)
    test = Reversal(n_symbols=6, min_len=3, max_len=8, rng=99).batch(200)
    acc = exact_match(model.greedy(test.src, test.src_lengths, max_length=10), test)
    print(f"\n[gnmt] reversal exact match, seed {seed}: {acc:.3f}")
    assert acc >= 0.8, acc
