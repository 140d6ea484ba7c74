"""Property tests of issue 21: random sizes, absurd ones included (up to 10**12), fed to the
constructors and random configs to the model loader. Each call either builds or raises
ValueError/TypeError (never MemoryError or anything else), and never allocates past the limits.

The limits are lowered while the examples run (pyplay.limits is read at call time), so that a
model that is legal but large builds in milliseconds and the allocation bound below is tight;
tracemalloc sees NumPy's allocations."""

from __future__ import annotations

import contextlib
import io
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyplay import io as pyplay_io
from pyplay import limits, nn
from pyplay.dynamic import narxnet
from pyplay.models.memory import MemoryNet
from pyplay.models.registry import MODEL_CLASSES, build_model
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.transformer import TransformerModel

ELEMENTS, PARAMETERS = 2**14, 2**16  # the lowered limits
# a model, its float64 temporaries (a sinusoidal table and its angles) and one draw chunk
BOUND = 8 * (4 * PARAMETERS + 3 * ELEMENTS) + 8 * (1 << 16) + 2_000_000

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
size = st.one_of(st.integers(1, 12), st.integers(1, 300), st.integers(1, 10**12))
small = st.integers(1, 4)


@contextlib.contextmanager
def _small_limits() -> Iterator[None]:
    with (
        mock.patch.object(limits, "MAX_ELEMENTS", ELEMENTS),
        mock.patch.object(limits, "MAX_PARAMETERS", PARAMETERS),
    ):
        yield


def _builds_or_refuses(build: Callable[[], Any]) -> Any:
    """``build()`` under the lowered limits: the object, or None after ValueError/TypeError;
    any other exception fails the test, and so does a peak allocation past :data:`BOUND`."""
    with _small_limits():
        tracemalloc.start()
        try:
            built = build()
        except (ValueError, TypeError):
            built = None
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    assert peak <= BOUND, f"allocated {peak:,} bytes, more than the limits allow ({BOUND:,})"
    params = getattr(built, "params", {})
    assert all(v.size <= ELEMENTS for v in params.values())
    assert sum(v.size for v in params.values()) <= PARAMETERS
    return built


@pytest.mark.slow
@SETTINGS
@given(
    kind=st.sampled_from(["LSTM", "GRU", "RNN"]),
    input_size=size,
    hidden_size=size,
    num_layers=st.one_of(small, st.integers(1, 10**12)),
    bidirectional=st.booleans(),
)
def test_recurrent_random_sizes_build_or_refuse(
    kind, input_size, hidden_size, num_layers, bidirectional
):
    cls = getattr(nn, kind)
    _builds_or_refuses(
        lambda: cls(input_size, hidden_size, num_layers, bidirectional=bidirectional)
    )


@SETTINGS
@given(a=size, b=size, kind=st.sampled_from(["Linear", "Embedding"]))
def test_linear_embedding_random_sizes_build_or_refuse(a, b, kind):
    _builds_or_refuses(lambda: getattr(nn, kind)(a, b))


@SETTINGS
@given(heads=small, per_head=size, kdim=st.none() | size, vdim=st.none() | size)
def test_multihead_attention_random_sizes_build_or_refuse(heads, per_head, kdim, vdim):
    _builds_or_refuses(lambda: nn.MultiheadAttention(heads * per_head, heads, kdim=kdim, vdim=vdim))


@SETTINGS
@given(
    vocab=size,
    d=st.one_of(st.integers(1, 8), st.integers(1, 10**12)),
    layers=st.one_of(small, st.integers(1, 10**12)),
    max_len=size,
    ff=st.none() | size,
    positional=st.sampled_from(["sinusoidal", "learned", "none"]),
)
def test_transformer_random_sizes_build_or_refuse(vocab, d, layers, max_len, ff, positional):
    _builds_or_refuses(
        lambda: TransformerModel(
            vocab, vocab, d_model=2 * d, nhead=2, num_layers=layers, dim_feedforward=ff,
            positional=positional, max_len=max_len,
        )
    )  # fmt: skip


@SETTINGS
@given(
    vs=size,
    vt=size,
    e=size,
    h=size,
    layers=st.one_of(small, st.integers(1, 10**12)),
    wiring=st.sampled_from(["init", "context", "attention", "bahdanau"]),
    cell=st.sampled_from(["rnn", "lstm", "gru"]),
)
def test_encoder_decoder_random_sizes_build_or_refuse(vs, vt, e, h, layers, wiring, cell):
    _builds_or_refuses(
        lambda: EncoderDecoder(vs + 3, vt + 3, e, h, layers, cell=cell, wiring=wiring)
    )


@SETTINGS
@given(i=size, o=size, h=size, n=size, w=size, r=small, wr=small)
def test_memory_net_random_sizes_build_or_refuse(i, o, h, n, w, r, wr):
    _builds_or_refuses(lambda: MemoryNet(i, o, h, n, w, read_heads=r, write_heads=wr))


@SETTINGS
@given(
    du=st.lists(st.integers(0, 10**12), min_size=1, max_size=4, unique=True).map(sorted),
    dy=st.lists(st.integers(1, 10**12), min_size=1, max_size=4, unique=True).map(sorted),
    hidden=st.lists(size, min_size=1, max_size=3),
    input_size=size,
)
def test_narxnet_random_sizes_and_delays_build_or_refuse(du, dy, hidden, input_size):
    net = _builds_or_refuses(
        lambda: narxnet(du, dy, hidden, input_size=input_size, dtype=np.float32)
    )
    if net is not None:
        assert max(du + dy) <= limits.MAX_DELAY


_value = st.one_of(
    st.integers(-3, 40),
    st.integers(0, 10**12),
    st.sampled_from(["lstm", "gru", "tokens", "real", "learned", "bogus", "attention"]),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
)
_keys = st.sampled_from(
    [
        "input_size", "output_size", "hidden_size", "num_layers", "embedding_dim", "d_model",
        "nhead", "max_len", "dim_feedforward", "src_vocab_size", "tgt_vocab_size", "cell",
        "input_kind", "positional", "memory_size", "memory_width", "wiring", "vocab_size",
        "num_encoder_layers", "num_decoder_layers", "attn_size", "dtype", "S1", "S2",
    ]
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from(sorted(MODEL_CLASSES)),
    config=st.dictionaries(_keys, _value, max_size=8),
    held=st.sampled_from([0, 10, 10**5]),
)
def test_build_model_random_configs_build_or_refuse(key, config, held):
    params = {"w": np.zeros(held, np.float32)} if held else {}
    model = _builds_or_refuses(lambda: build_model({"class": key, "config": config}, params))
    assert model is None  # the arrays never fit a random config


def _small_file_entry() -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    model = TransformerModel(6, 6, d_model=8, nhead=2, num_layers=1, max_len=16)
    return {"class": "TransformerModel", "config": model.config}, dict(model.params)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    changes=st.dictionaries(
        _keys, _value.filter(lambda v: not isinstance(v, float)), min_size=1, max_size=3
    )
)
def test_load_model_file_with_random_config_changes_loads_or_refuses(changes):
    entry, params = _small_file_entry()
    buffer = io.BytesIO()
    pyplay_io.save(buffer, params, meta={**entry, "config": {**entry["config"], **changes}})
    data = buffer.getvalue()
    model = _builds_or_refuses(lambda: pyplay_io.load_model(data))
    if model is not None:
        assert set(model.params) == set(params)
