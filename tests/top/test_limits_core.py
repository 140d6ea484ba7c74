"""Issue 21 in the core: every size checked before it is allocated, weights made in their
target dtype, clear errors for empty sequences and seq2seq misuse, loaded weights finite after
the cast. Each test is named after the case it reproduces."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

from pyplay import io as pyplay_io
from pyplay import limits, nn
from pyplay.decode.beam import BeamSearch
from pyplay.decode.greedy import greedy_decode
from pyplay.decode.step import reorder_rows
from pyplay.dynamic import narxnet
from pyplay.models.contract import copy_params
from pyplay.models.memory import MemoryNet
from pyplay.models.registry import build_model
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.transformer import TransformerModel, TransformerSeq2Seq
from pyplay.nn import init

# ---------------------------------------------------------------- 1. sizes before allocation


def _refused(build, *words: str) -> None:
    with pytest.raises(ValueError) as err:
        build()
    for word in words:
        assert word in str(err.value)


def test_lstm_30000_by_30000_refused_before_allocation():
    _refused(lambda: nn.LSTM(30000, 30000), "weight_ih_l0", "MAX_ELEMENTS")


def test_recurrent_with_a_billion_layers_refused_at_once():
    _refused(lambda: nn.GRU(4, 4, num_layers=10**9), "num_layers", "MAX_PARAMETERS")


def test_embedding_too_large_refused():
    _refused(lambda: nn.Embedding(10**6, 10**5), "Embedding weight", "MAX_ELEMENTS")


def test_linear_too_large_refused():
    _refused(lambda: nn.Linear(10**5, 10**5), "Linear weight", "MAX_ELEMENTS")


def test_multihead_attention_too_large_refused():
    _refused(lambda: nn.MultiheadAttention(30000, 2), "in_proj_weight", "MAX_ELEMENTS")


def test_encoder_decoder_too_large_refused():
    _refused(lambda: EncoderDecoder(10**7, 10, embedding_dim=100), "src_vocab_size", "MAX_")


@pytest.mark.slow
def test_memory_net_too_large_refused():
    _refused(lambda: MemoryNet(10, 10, memory_size=10**6, memory_width=10**5), "MAX_ELEMENTS")


@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "none"])
def test_transformer_max_len_1e9_refused(positional):
    _refused(
        lambda: TransformerModel(10, 10, positional=positional, max_len=10**9),
        "max_len",
        "pyplay.limits.MAX_",
    )


def test_transformer_with_a_billion_layers_refused_at_once():
    _refused(lambda: TransformerModel(10, 10, num_layers=10**9), "MAX_PARAMETERS")


def test_narxnet_input_delay_1e9_refused():
    _refused(lambda: narxnet(input_delays=[10**9]), "input_delays[0]", str(limits.MAX_DELAY))


def test_narxnet_largest_delay_allowed():
    net = narxnet(input_delays=[limits.MAX_DELAY], hidden_sizes=[2])
    assert net.params  # built: the limit itself is allowed


def test_build_model_refuses_config_beyond_max_parameters():
    entry = {
        "class": "TransformerModel",
        "config": {"input_size": 10, "output_size": 10, "d_model": 4096, "num_layers": 64},
    }
    params = {"x": np.zeros(10**6, np.float32)}
    _refused(lambda: build_model(entry, params), "MAX_PARAMETERS")


def test_build_model_transformer_max_len_3e7_refused():
    entry = {
        "class": "TransformerModel",
        "config": {"input_size": 10, "output_size": 10, "max_len": 30_000_000},
    }
    _refused(lambda: build_model(entry, {}), "max_len", "MAX_ELEMENTS")


def test_encoder_decoder_whole_model_beyond_max_parameters_refused():
    # every array under MAX_ELEMENTS, the whole model over MAX_PARAMETERS
    _refused(lambda: EncoderDecoder(66_000, 66_000, 1000, 1000, cell="rnn"), "MAX_PARAMETERS")


# ---------------------------------------------------------------- 2. weights in target dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5,), (13, 7), (3, 4, 5)])
def test_init_uniform_chunked_equals_old_expression(monkeypatch, dtype, shape):
    monkeypatch.setattr(init, "CHUNK", 7)  # several chunks, the last one partial
    k = 1.0 / np.sqrt(7.0)
    old = np.random.default_rng(3).uniform(-k, k, size=shape).astype(dtype)
    gen = np.random.default_rng(3)
    new = init.uniform(gen, -k, k, shape, dtype, "w")
    assert new.dtype == np.dtype(dtype) and new.shape == shape
    np.testing.assert_array_equal(new, old)
    # the stream continues exactly where the old expression left it
    assert gen.random() == np.random.default_rng(3).uniform(size=int(np.prod(shape)) + 1)[-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("scale", "divisor"), [(1.0, 1.0), (0.02, 1.0), (1.0, np.sqrt(16))])
def test_init_normal_chunked_equals_old_expression(monkeypatch, dtype, scale, divisor):
    monkeypatch.setattr(init, "CHUNK", 5)
    shape = (11, 3)
    old = (scale * np.random.default_rng(9).standard_normal(shape) / divisor).astype(dtype)
    gen = np.random.default_rng(9)
    new = init.normal(gen, shape, dtype, "w", scale=scale, divisor=divisor)
    np.testing.assert_array_equal(new, old)
    ref = np.random.default_rng(9)
    ref.standard_normal(shape)
    assert gen.random() == ref.random()


def test_init_refuses_before_allocating():
    _refused(lambda: init.uniform(np.random.default_rng(0), 0, 1, (10**6, 10**6), "f4", "W"), "W")
    _refused(lambda: init.normal(np.random.default_rng(0), (10**12,), np.float64, "E"), "E")


def test_lstm_weights_as_before_the_init_helper():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, rng=4)
    gen, k = np.random.default_rng(4), 1.0 / np.sqrt(5)
    for name, value in m.params.items():
        np.testing.assert_array_equal(value, gen.uniform(-k, k, size=value.shape).astype("f4"))
        del name


# ---------------------------------------------------------------- 3. clear errors


def test_multihead_attention_zero_keys_clear_error():
    a = nn.MultiheadAttention(8, 2)
    q, kv = np.zeros((1, 2, 8), np.float32), np.zeros((1, 0, 8), np.float32)
    _refused(lambda: a.forward(q, kv, kv), "key", "at least one")


def test_transformer_encoder_layer_zero_steps_clear_error():
    layer = nn.TransformerEncoderLayer(8, 2)
    _refused(lambda: layer.forward(np.zeros((1, 0, 8), np.float32)), "src", "at least one")


def _seq2seq() -> tuple[EncoderDecoder, np.ndarray, np.ndarray]:
    src = np.array([[3, 4, 5], [3, 4, 2], [3, 2, 0]])
    return EncoderDecoder(6, 6, 8, 16), src, np.array([3, 3, 2])


def test_seq2seq_short_tgt_in_says_batch_sizes_differ():
    m, src, lengths = _seq2seq()
    with pytest.raises(ValueError) as err:
        m.forward(src, lengths, np.array([[1, 3]]))
    msg = str(err.value)
    assert "tgt_in" in msg and "3" in msg and "state" not in msg


def test_seq2seq_reorder_index_out_of_range_valueerror():
    m, src, lengths = _seq2seq()
    state = m.start(src, lengths)
    _refused(lambda: m.reorder(state, np.array([5])), "index", "5", "0..2")


def test_transformer_seq2seq_reorder_index_out_of_range_valueerror():
    m = TransformerSeq2Seq(6, 6, d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1)
    state = m.start(np.array([[3, 4, 2]]), np.array([3]))
    with pytest.raises(ValueError, match="index"):
        m.reorder(state, np.array([1]))


def test_decode_reorder_rows_index_out_of_range_valueerror():
    state = (np.zeros((3, 2)), [np.ones(3)])
    _refused(lambda: reorder_rows(state, np.array([0, 3])), "index", "3", "0..2")


def test_encoder_decoder_init_wiring_refuses_misspelt_score():
    _refused(lambda: EncoderDecoder(6, 6, wiring="init", score="dott"), "score", "dott")


def test_encoder_decoder_init_wiring_refuses_score():
    _refused(lambda: EncoderDecoder(6, 6, wiring="init", score="dot"), "score", "wiring")


def test_encoder_decoder_default_score_allowed_with_any_wiring():
    EncoderDecoder(6, 6, 8, 8, wiring="context", score=None)
    EncoderDecoder(6, 6, 8, 8, wiring="init", score="general")


# ---------------------------------------------------------------- 4. finite after the cast


def test_loaded_float64_weight_3e48_refused_in_float32_model():
    model = nn.Linear(2, 2)
    before = model.params["weight"].copy()
    params = {k: v.astype(np.float64) for k, v in model.params.items()}
    params["weight"][0, 0] = 3e48  # finite in float64, inf in float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _refused(lambda: copy_params(model, params), "weight", "float32")
    np.testing.assert_array_equal(model.params["weight"], before)  # nothing copied


def test_load_model_file_with_float64_weight_3e48_refused():
    model = TransformerModel(6, 6, d_model=8, nhead=2, num_layers=1, max_len=16)
    params = {k: v.astype(np.float64) for k, v in model.params.items()}
    params["head.weight"][0, 0] = 3e48
    buffer = io.BytesIO()
    pyplay_io.save(buffer, params, meta={"class": "TransformerModel", "config": model.config})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _refused(lambda: pyplay_io.load_model(buffer.getvalue()), "head.weight", "float32")


def test_load_model_transformer_file_max_len_3e7_refused():
    model = TransformerModel(6, 6, d_model=8, nhead=2, num_layers=1, max_len=16)
    config = {**model.config, "max_len": 30_000_000}
    buffer = io.BytesIO()
    pyplay_io.save(buffer, model.params, meta={"class": "TransformerModel", "config": config})
    _refused(lambda: pyplay_io.load_model(buffer.getvalue()), "max_len", "MAX_ELEMENTS")


# ---------------------------------------------------------------- decoding lengths and widths


def _uniform_step(tokens, state):
    return np.full((len(tokens), 4), -np.log(4.0)), state


def test_beam_search_beam_width_1e9_refused():
    _refused(
        lambda: BeamSearch(_uniform_step, None, 1, 2, beam_width=10**9),
        "beam_width",
        f"{limits.MAX_BEAM_WIDTH}",
    )


def test_beam_search_max_length_1e12_refused():
    _refused(lambda: BeamSearch(_uniform_step, None, 1, 2, max_length=10**12), "max_length")


def test_greedy_decode_max_length_1e12_refused():
    _refused(lambda: greedy_decode(_uniform_step, None, 1, 2, 10**12), "max_length")


def test_greedy_decode_batch_size_1e12_refused():
    _refused(lambda: greedy_decode(_uniform_step, None, 1, 2, 5, batch_size=10**12), "batch_size")


def test_an_older_file_with_an_unused_score_still_loads():
    # pages before the refusal saved the score chosen for any wiring; it never entered a model
    model = EncoderDecoder(6, 6, 8, 8, wiring="init")
    config = {**model.config, "score": "dot"}
    again = EncoderDecoder.from_config(config)
    assert again.wiring == "init" and again.score == "general"
