"""Bad input to the recurrent layers and ``pad_sequences``: the right exception, with a message
that names the argument and says what was given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pyplay.nn.gru import GRU
from pyplay.nn.lstm import LSTM
from pyplay.nn.rnn import RNN
from pyplay.nn.sequences import pad_sequences

B, T, F, H = 2, 3, 4, 5
LAYERS: dict[str, Callable[..., Any]] = {"rnn": RNN, "lstm": LSTM, "gru": GRU}


def _raises(exc: type[Exception], name: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, f"{name!r} not named in: {message}"
    assert "got" in message, f"the given value is not reported in: {message}"


# ------------------------------------------------------------------------------ constructor
BAD_ARGS = [
    ({"input_size": 0}, ValueError, "input_size"),
    ({"input_size": 2.5}, TypeError, "input_size"),
    ({"hidden_size": 0}, ValueError, "hidden_size"),
    ({"hidden_size": True}, TypeError, "hidden_size"),
    ({"num_layers": 0}, ValueError, "num_layers"),
    ({"dropout": -0.1}, ValueError, "dropout"),
    ({"dropout": 1.0}, ValueError, "dropout"),
    ({"dropout": "0.5"}, TypeError, "dropout"),
    ({"bias": "yes"}, TypeError, "bias"),
    ({"bidirectional": 1}, TypeError, "bidirectional"),
    ({"dtype": np.int32}, TypeError, "dtype"),
    ({"dtype": "float16"}, TypeError, "dtype"),
    ({"rng": "seed"}, TypeError, "rng"),
    ({"rng": -1}, ValueError, "rng"),
]


@pytest.mark.parametrize("cell", list(LAYERS))
@pytest.mark.parametrize(("change", "exc", "name"), BAD_ARGS, ids=[str(a[0]) for a in BAD_ARGS])
def test_bad_constructor_arguments(
    cell: str, change: dict[str, Any], exc: type[Exception], name: str
) -> None:
    kwargs: dict[str, Any] = {"input_size": F, "hidden_size": H} | change
    _raises(exc, name, lambda: LAYERS[cell](**kwargs))


@pytest.mark.parametrize(
    ("build", "exc", "name"),
    [
        (lambda: LAYERS["rnn"](F, H, nonlinearity="sigmoid"), ValueError, "nonlinearity"),
        (lambda: LAYERS["rnn"](F, H, nonlinearity=None), ValueError, "nonlinearity"),
        (lambda: LAYERS["lstm"](F, H, peephole=1), TypeError, "peephole"),
        (lambda: LSTM(F, H, forget_bias=float("nan")), ValueError, "forget_bias"),
        (lambda: LAYERS["lstm"](F, H, forget_bias="1"), TypeError, "forget_bias"),
        (lambda: LSTM(F, H, bias=False, forget_bias=1.0), ValueError, "forget_bias"),
    ],
    ids=["nonlinearity", "nonlinearity-none", "peephole", "forget-nan", "forget-str", "no-bias"],
)
def test_bad_cell_specific_arguments(
    build: Callable[[], Any], exc: type[Exception], name: str
) -> None:
    _raises(exc, name, build)


# ---------------------------------------------------------------------------------- forward
def _x() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((B, T, F))


@pytest.mark.parametrize("cell", list(LAYERS))
@pytest.mark.parametrize(
    ("x", "exc"),
    [
        (np.zeros((B, F)), ValueError),  # rank 2
        (np.zeros((B, T, F, 1)), ValueError),  # rank 4
        (np.zeros((B, T, F + 1)), ValueError),  # feature size
        (np.zeros((0, T, F)), ValueError),  # no sequence
        (np.zeros((B, 0, F)), ValueError),  # no step
        (np.full((B, T, F), np.nan), ValueError),
        (np.full((B, T, F), np.inf), ValueError),
        (np.full((B, T, F), "a"), TypeError),
        (None, TypeError),
        (np.zeros((B, T, F), dtype=bool), TypeError),
    ],
    ids=["rank2", "rank4", "features", "B0", "T0", "nan", "inf", "str", "none", "bool"],
)
def test_bad_x(cell: str, x: Any, exc: type[Exception]) -> None:
    layer = LAYERS[cell](F, H)
    _raises(exc, "x", lambda: layer.forward(x))


def test_feature_size_message_says_input_size() -> None:
    with pytest.raises(ValueError, match=r"input_size=4.*got shape \(2, 3, 7\)"):
        LSTM(F, H).forward(np.zeros((B, T, 7)))


@pytest.mark.parametrize("cell", list(LAYERS))
@pytest.mark.parametrize(
    ("lengths", "exc"),
    [
        (np.array([1.0, 2.0]), TypeError),  # floats, even whole ones
        (np.array([-1, 2]), ValueError),
        (np.array([0, 2]), ValueError),
        (np.array([T + 1, 2]), ValueError),  # longer than T
        (np.array([1, 2, 3]), ValueError),  # one per sequence
        (np.array([[1, 2]]), ValueError),  # rank
        (np.array([True, True]), TypeError),
        ("12", TypeError),
    ],
    ids=["float", "negative", "zero", "too-long", "count", "rank", "bool", "str"],
)
def test_bad_lengths(cell: str, lengths: Any, exc: type[Exception]) -> None:
    layer = LAYERS[cell](F, H)
    _raises(exc, "lengths", lambda: layer.forward(_x(), lengths=lengths))


GOOD_SHAPE = (1, B, H)


@pytest.mark.parametrize(
    ("cell", "state", "exc"),
    [
        ("rnn", np.zeros((2, B, H)), ValueError),  # num_layers*D
        ("rnn", np.zeros((1, B + 1, H)), ValueError),  # batch
        ("rnn", np.zeros((1, B, H + 1)), ValueError),  # hidden
        ("rnn", np.zeros((B, H)), ValueError),  # rank
        ("rnn", (np.zeros(GOOD_SHAPE), np.zeros(GOOD_SHAPE)), TypeError),  # no cell state
        ("gru", [np.zeros(GOOD_SHAPE)], TypeError),
        ("gru", np.full(GOOD_SHAPE, np.nan), ValueError),
        ("lstm", np.zeros(GOOD_SHAPE), TypeError),  # needs (h, c)
        ("lstm", (np.zeros(GOOD_SHAPE),) * 3, TypeError),
        ("lstm", (np.zeros(GOOD_SHAPE), np.zeros((1, B, H + 1))), ValueError),
        ("lstm", (np.zeros(GOOD_SHAPE), None), TypeError),
    ],
    ids=[
        "layers",
        "batch",
        "hidden",
        "rank",
        "tuple-rnn",
        "list-gru",
        "nan",
        "lstm-array",
        "lstm-3",
        "lstm-c-shape",
        "lstm-c-none",
    ],
)
def test_bad_state(cell: str, state: Any, exc: type[Exception]) -> None:
    layer = LAYERS[cell](F, H)
    _raises(exc, "state", lambda: layer.forward(_x(), state))


@pytest.mark.parametrize("flag", ["record", "training"])
def test_bad_flags(flag: str) -> None:
    layer: Any = GRU(F, H)
    _raises(TypeError, flag, lambda: layer.forward(_x(), **{flag: "yes"}))


# --------------------------------------------------------------------------------- backward
@pytest.mark.parametrize("cell", list(LAYERS))
def test_cache_of_another_layer(cell: str) -> None:
    layer, other = LAYERS[cell](F, H), LAYERS[cell](F, H)
    out, _, cache = other.forward(_x())
    _raises(ValueError, "cache", lambda: layer.backward(out, None, cache))
    _raises(ValueError, "cache", lambda: layer.backward(out, None, None))
    _raises(ValueError, "cache", lambda: layer.backward(out, None, {"not": "a cache"}))


def test_cache_of_another_kind_of_layer() -> None:
    out, _, cache = GRU(F, H).forward(_x())
    _raises(ValueError, "cache", lambda: LSTM(F, H).backward(out, None, cache))


@pytest.mark.parametrize("cell", list(LAYERS))
@pytest.mark.parametrize(
    ("dout", "exc"),
    [
        (np.zeros((B, T, H + 1)), ValueError),
        (np.zeros((B, T + 1, H)), ValueError),
        (np.zeros((B, T)), ValueError),
        (np.full((B, T, H), np.nan), ValueError),
        ("x", TypeError),
    ],
    ids=["hidden", "steps", "rank", "nan", "str"],
)
def test_bad_dout(cell: str, dout: Any, exc: type[Exception]) -> None:
    layer = LAYERS[cell](F, H)
    _, _, cache = layer.forward(_x())
    _raises(exc, "dout", lambda: layer.backward(dout, None, cache))


def test_bidirectional_dout_needs_both_directions() -> None:
    layer = LSTM(F, H, bidirectional=True)
    out, _, cache = layer.forward(_x())
    assert out.shape == (B, T, 2 * H)
    _raises(ValueError, "dout", lambda: layer.backward(out[:, :, :H], None, cache))


@pytest.mark.parametrize(
    ("cell", "dstate", "exc"),
    [
        ("lstm", np.zeros(GOOD_SHAPE), TypeError),
        ("lstm", (np.zeros(GOOD_SHAPE), np.zeros((2, B, H))), ValueError),
        ("gru", (np.zeros(GOOD_SHAPE), np.zeros(GOOD_SHAPE)), TypeError),
        ("rnn", np.zeros((1, B, H + 1)), ValueError),
        ("rnn", np.full(GOOD_SHAPE, np.inf), ValueError),
    ],
    ids=["lstm-array", "lstm-c-shape", "gru-tuple", "rnn-shape", "rnn-inf"],
)
def test_bad_dstate(cell: str, dstate: Any, exc: type[Exception]) -> None:
    layer = LAYERS[cell](F, H)
    out, _, cache = layer.forward(_x())
    _raises(exc, "dstate", lambda: layer.backward(np.ones_like(out), dstate, cache))


def test_bad_backward_record_flag() -> None:
    layer: Any = RNN(F, H)
    out, _, cache = layer.forward(_x())
    _raises(TypeError, "record", lambda: layer.backward(out, None, cache, record=1))


# ---------------------------------------------------------------------------- pad_sequences
@pytest.mark.parametrize(
    ("seqs", "kwargs", "exc", "name"),
    [
        (np.zeros((2, 3)), {}, TypeError, "seqs"),
        ("abc", {}, TypeError, "seqs"),
        ([], {}, ValueError, "seqs"),
        ([[1, 2], []], {}, ValueError, "seqs[1]"),
        ([[1, 2], [[1, 2]]], {}, ValueError, "seqs[1]"),
        ([np.zeros((2, 3)), np.zeros((2, 4))], {}, ValueError, "seqs[1]"),
        ([np.zeros((2, 3, 1))], {}, ValueError, "seqs[0]"),
        ([[1.0, np.nan]], {}, ValueError, "seqs[0]"),
        ([["a", "b"]], {}, TypeError, "seqs[0]"),
        ([[1, 2], None], {}, TypeError, "seqs[1]"),
        ([[1, [2, 3]]], {}, ValueError, "seqs[0]"),
        ([[1, 2]], {"padding_value": "0"}, TypeError, "padding_value"),
        ([[1, 2]], {"padding_value": 0.5}, ValueError, "padding_value"),
        ([[1, 2]], {"padding_value": -1, "dtype": np.uint8}, ValueError, "padding_value"),
        ([[1.5, 2.0]], {"dtype": np.int64}, TypeError, "dtype"),
        ([[1, 2]], {"dtype": "U3"}, TypeError, "dtype"),
    ],
    ids=[
        "ndarray",
        "str",
        "empty",
        "empty-seq",
        "mixed-rank",
        "features",
        "rank3",
        "nan",
        "strings",
        "none",
        "ragged",
        "pad-str",
        "pad-frac",
        "pad-range",
        "float-to-int",
        "dtype-str",
    ],
)
def test_bad_pad_sequences(seqs: Any, kwargs: dict, exc: type[Exception], name: str) -> None:
    _raises(exc, name, lambda: pad_sequences(seqs, **kwargs))


def test_gru_reset_after_must_be_a_flag() -> None:
    with pytest.raises(TypeError, match="reset_after must be True or False, got 1"):
        GRU(3, 4, reset_after=1)  # type: ignore[arg-type]
    assert GRU(3, 4).reset_after and not GRU(3, 4, reset_after=False).reset_after
