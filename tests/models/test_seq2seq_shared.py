"""Encoder-decoder sharing one RNN (TEK5040's "encoder-decoder, shared RNN") and deep,
bidirectional encoders through the bridge: gradient checks, decoding, parameter counts, and
a seeded learning comparison with the usual separate encoder and decoder."""

from __future__ import annotations

import numpy as np
import pytest
from test_seq2seq import check_gradients, small_batch

from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.bridge import Bridge
from pyplay.tasks.pairs import exact_match
from pyplay.tasks.seq2seq import Reversal
from pyplay.train import Trainer


@pytest.mark.slow
@pytest.mark.parametrize("wiring", ["init", "context", "attention", "bahdanau"])
@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_shared_rnn_gradients_match_central_differences(cell: str, wiring: str) -> None:
    model = EncoderDecoder(
        7, 7, embedding_dim=3, hidden_size=4, num_layers=2 if cell != "rnn" else 1, cell=cell,
        wiring=wiring, share_rnn=True, dtype=np.float64, rng=1,
    )  # fmt: skip
    assert not any(k.startswith(("encoder.rnn", "decoder.rnn")) for k in model.params)
    grads = check_gradients(model)
    assert np.abs(grads["rnn.weight_hh_l0"]).max() > 0
    assert np.abs(grads["encoder.embedding.weight"]).max() > 0  # the source reaches the loss


@pytest.mark.slow
@pytest.mark.parametrize("wiring", ["init", "attention", "bahdanau"])
def test_deep_bidirectional_gru_encoder_gradients(wiring: str) -> None:
    """The lesson's cell (GRU) with two bidirectional layers: each layer's two final states
    through the bridge, and attention over the 2H-wide encoder states."""
    model = EncoderDecoder(
        7, 7, embedding_dim=3, hidden_size=3, num_layers=2, cell="gru",
        bidirectional_encoder=True, wiring=wiring, dtype=np.float64, rng=4,
    )  # fmt: skip
    grads = check_gradients(model)
    for name in ("encoder.rnn.weight_hh_l1_reverse", "bridge.h.weight"):
        assert np.abs(grads[name]).max() > 0


def test_bridge_joins_each_layers_directions_and_splits_back() -> None:
    """Layer-major (2L, B, H) states, as torch stores them, pair layer l's forward and
    backward states; the backward pass puts each gradient back where its state came from."""
    bridge = Bridge(2, cell_state=False, dtype=np.float64, rng=0)
    h = np.arange(2 * 2 * 1 * 2, dtype=np.float64).reshape(4, 1, 2)  # L=2, B=1, H=2
    np.testing.assert_array_equal(bridge._join(h)[1, 0], [4, 5, 6, 7])  # layer 1: fwd, bwd
    np.testing.assert_array_equal(bridge._split(bridge._join(h)), h)


def test_shared_rnn_decodes_step_by_step_as_it_trains() -> None:
    model = EncoderDecoder(7, 7, hidden_size=6, wiring="bahdanau", share_rnn=True, rng=2,
                           dtype=np.float64)  # fmt: skip
    batch = small_batch()
    logits, _, _ = model.forward(batch.src, batch.src_lengths, batch.tgt_in)
    state = model.start(batch.src, batch.src_lengths)
    for t in range(batch.tgt_in.shape[1]):
        logp, state = model.step(batch.tgt_in[:, t], state)
        z = logits[:, t] - logits[:, t].max(axis=1, keepdims=True)
        np.testing.assert_allclose(logp, z - np.log(np.exp(z).sum(axis=1, keepdims=True)),
                                   atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("wiring", ["init", "context", "attention", "bahdanau"])
def test_sharing_halves_the_recurrent_parameters(wiring: str) -> None:
    """One recurrent stack instead of two; everything else the same, so the total falls by
    exactly the encoder's stack. The estimate (which refuses oversized models) follows."""
    kw = dict(embedding_dim=8, hidden_size=16, num_layers=2, cell="gru", wiring=wiring)
    separate, shared = EncoderDecoder(9, 9, **kw), EncoderDecoder(9, 9, share_rnn=True, **kw)
    n_enc = sum(v.size for k, v in separate.params.items() if k.startswith("encoder.rnn"))
    n_dec = sum(v.size for k, v in separate.params.items() if k.startswith("decoder.rnn"))
    n_shared = sum(v.size for k, v in shared.params.items() if k.startswith("rnn."))
    assert n_shared == n_dec and shared.num_parameters() == separate.num_parameters() - n_enc
    if wiring in ("init", "attention"):  # the same input width: exactly half
        assert 2 * n_shared == n_enc + n_dec
    assert EncoderDecoder.estimate_parameters({**kw, "share_rnn": True}) < (
        EncoderDecoder.estimate_parameters(kw)
    )
    assert shared.config["share_rnn"] is True
    again = EncoderDecoder.from_config(shared.config)
    assert set(again.params) == set(shared.params)


def test_shared_rnn_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="share_rnn=True needs a one-directional encoder"):
        EncoderDecoder(5, 5, share_rnn=True, bidirectional_encoder=True)
    with pytest.raises(TypeError, match="share_rnn must be True or False"):
        EncoderDecoder(5, 5, share_rnn="yes")  # type: ignore[arg-type]


def _reversal(share_rnn: bool) -> tuple[float, int]:
    task = Reversal(n_symbols=5, min_len=2, max_len=5, rng=0)
    V = len(task.src_vocab)
    model = EncoderDecoder(V, V, embedding_dim=16, hidden_size=32, cell="gru",
                           share_rnn=share_rnn, rng=0)  # fmt: skip
    for record in Trainer(model, task, lr=0.01, batch_size=32, clip=None).run(250):
        assert record.status == "ok", record.message
    test = Reversal(n_symbols=5, min_len=2, max_len=5, rng=99).batch(200)
    return exact_match(model.greedy(test.src, test.src_lengths, 7), test), model.num_parameters()


@pytest.mark.slow
def test_shared_and_separate_rnns_both_learn_reversal() -> None:
    """Reversal of 2-5 symbols, GRU of 32 units, no attention, the same seed and batches, 250
    steps: measured 0.89 exact match for separate RNNs (10,120 parameters) and 0.86 for one
    shared RNN (5,320): half the recurrent weights, nearly the same result."""
    separate, n_separate = _reversal(False)
    shared, n_shared = _reversal(True)
    print(f"\n[seq2seq] reversal exact match: separate {separate:.3f} ({n_separate:,}), "
          f"shared {shared:.3f} ({n_shared:,})")  # fmt: skip
    assert separate >= 0.75 and shared >= 0.75
    assert n_shared < 0.6 * n_separate
