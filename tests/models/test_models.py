"""SequenceModel: gradient checks of the composition, PyTorch parity of the whole model, config."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, assert_twin_matches, numeric_grad
from pyplay.models import SequenceModel


def _model(cell: str, input_kind: str, **kw) -> SequenceModel:
    size = 5 if input_kind == "tokens" else 3
    return SequenceModel(
        cell,
        input_kind=input_kind,
        input_size=size,
        output_size=4,
        hidden_size=4,
        embedding_dim=3,
        dtype=np.float64,
        rng=1,
        **kw,
    )


def _inputs(model: SequenceModel, rng: np.random.Generator, B: int = 2, T: int = 4):
    if model.input_kind == "tokens":
        return rng.integers(0, model.input_size, size=(B, T))  # (B, T)
    return rng.normal(size=(B, T, model.input_size))  # (B, T, F)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("input_kind", ["tokens", "real"])
@pytest.mark.parametrize("bidirectional", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_model_gradients_match_central_differences(cell, input_kind, bidirectional):
    rng = np.random.default_rng(0)
    model = _model(cell, input_kind, bidirectional=bidirectional)
    x = _inputs(model, rng)
    lengths = np.array([4, 2])
    y, _, cache = model.forward(x, lengths=lengths)
    R = rng.normal(size=y.shape)  # dL/dy for L = sum(y * R)
    grads = model.backward(R, cache).grads
    assert set(grads) == set(model.params)

    def loss() -> float:
        out, _, _ = model.forward(x, lengths=lengths)
        return float(np.sum(out * R))

    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)


@pytest.mark.slow
@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_residual_stack_of_three_layers_matches_central_differences(cell, bidirectional):
    """GNMT's residual stack inside the model (two residual sums, the head reading D*H
    features); residual connections have no PyTorch counterpart, so float64 central
    differences are the proof."""
    rng = np.random.default_rng(3)
    kw = dict(num_layers=3, bidirectional=bidirectional, residual=True)
    model = _model(cell, "real", **kw)
    assert model.head.params["weight"].shape == (4, 4 * (2 if bidirectional else 1))
    x = _inputs(model, rng, B=2, T=3)
    lengths = np.array([3, 2])
    y, _, cache = model.forward(x, lengths=lengths)
    R = rng.normal(size=y.shape)  # dL/dy for L = sum(y * R)
    grads = model.backward(R, cache).grads

    def loss() -> float:
        out, _, _ = model.forward(x, lengths=lengths)
        return float(np.sum(out * R))

    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    plain = _model(cell, "real", **{**kw, "residual": False})  # same weights, no sums
    out_plain, _, _ = plain.forward(x, lengths=lengths)
    assert not np.allclose(y, out_plain)


def test_record_and_gradient_record_shapes():
    rng = np.random.default_rng(0)
    model = _model("lstm", "tokens", num_layers=2)
    x = _inputs(model, rng, B=3, T=5)
    y, _, cache = model.forward(x, record=True)
    assert cache.record is not None
    assert set(cache.record["l0"]) >= {"i", "f", "g", "o", "c", "h"}
    assert cache.record["l1"]["h"].shape == (3, 5, 4)
    grad_record = model.backward(np.ones_like(y), cache, record=True).record
    assert grad_record is not None and grad_record["l0"].shape == (3, 5)
    assert (grad_record["l0"] > 0).all()


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_whole_model_matches_pytorch(cell):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    model = _model(cell, "tokens", num_layers=2, bidirectional=True)
    rnn_cls = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[cell]

    class Twin(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = torch.nn.Embedding(5, 3)
            self.rnn = rnn_cls(3, 4, num_layers=2, bidirectional=True, batch_first=True)
            self.head = torch.nn.Linear(8, 4)

        def forward(self, x):
            h, _ = self.rnn(self.embedding(x))
            return self.head(h)

    x = _inputs(model, rng, B=3, T=6)
    R = rng.normal(size=(3, 6, 4))
    assert_twin_matches(model, Twin().double(), x, R)


def test_config_round_trip_and_load_params():
    model = _model("gru", "real", num_layers=2)
    clone = SequenceModel.from_config(model.config, rng=99)
    assert clone.config == model.config
    clone.load_params({k: v.copy() for k, v in model.params.items()})
    x = _inputs(model, np.random.default_rng(0))
    np.testing.assert_array_equal(model.forward(x)[0], clone.forward(x)[0])


def test_load_params_refuses_mismatches():
    model = _model("lstm", "tokens")
    params = {k: v.copy() for k, v in model.params.items()}
    params.pop("head.bias")
    with pytest.raises(ValueError, match="missing"):
        model.load_params(params)
    params = {k: v.copy() for k, v in model.params.items()}
    params["head.weight"] = np.zeros((2, 2))
    with pytest.raises(ValueError, match=r"head\.weight"):
        model.load_params(params)
    with pytest.raises(ValueError, match="unknown keys"):
        SequenceModel.from_config({**model.config, "colour": "red"})


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"cell": "transformer"}, "cell"),
        ({"hidden_size": 0}, "hidden_size"),
        ({"input_kind": "image"}, "input_kind"),
        ({"dropout": 1.0}, "dropout"),
        ({"dtype": np.int32}, "dtype"),
    ],
)
def test_bad_constructor_arguments(kwargs, name):
    base = dict(cell="lstm", input_kind="tokens", input_size=5, output_size=5)
    base.update(kwargs)
    cell = base.pop("cell")
    with pytest.raises((ValueError, TypeError), match=name):
        SequenceModel(cell, **base)
