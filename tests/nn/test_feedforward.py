"""Feed-forward layers before the recurrent stack (the IDSIA lecture's typical setup): the
stack alone against its plain reference and central differences, inside ``SequenceModel``
against central differences and PyTorch's ``nn.Sequential`` + recurrent layer + head."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, assert_twin_matches, numeric_grad
from pyplay.models import SequenceModel
from pyplay.nn.feedforward import FeedForwardStack, reference_forward


def _model(cell: str, input_kind: str, **kw) -> SequenceModel:
    size = 5 if input_kind == "tokens" else 3
    return SequenceModel(
        cell, input_kind=input_kind, input_size=size, output_size=4, hidden_size=4,
        embedding_dim=3, dtype=np.float64, rng=1, **kw,
    )  # fmt: skip


def test_the_stack_computes_the_equations_and_their_gradients():
    rng = np.random.default_rng(0)
    stack = FeedForwardStack(3, 5, num_layers=3, dtype=np.float64, rng=2)
    assert sorted(stack.params) == [f"{k}.{n}" for k in (0, 2, 4) for n in ("bias", "weight")]
    x = rng.normal(size=(2, 4, 3))  # (B, T, F)
    a, cache = stack.forward(x)
    assert a.shape == (2, 4, 5)
    np.testing.assert_allclose(a, reference_forward(x, stack.params, 3), rtol=1e-12)
    R = rng.normal(size=a.shape)
    dx, grads = stack.backward(R, cache)

    def loss() -> float:
        return float(np.sum(stack.forward(x)[0] * R))

    assert_grad_close(dx, numeric_grad(loss, x), "x")
    for name, p in stack.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    assert FeedForwardStack.count(3, 5, 3) == sum(p.size for p in stack.params.values())


@pytest.mark.parametrize(
    "cell",
    [
        "rnn",
        pytest.param("lstm", marks=pytest.mark.slow),
        pytest.param("gru", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("input_kind", ["tokens", "real"])
def test_model_with_feedforward_layers_matches_central_differences(cell, input_kind):
    rng = np.random.default_rng(4)
    model = _model(cell, input_kind, feedforward_layers=2, num_layers=2)
    assert {"feedforward.0.weight", "feedforward.2.bias"} <= set(model.params)
    size = 5 if input_kind == "tokens" else 3
    x = rng.integers(0, size, (2, 4)) if input_kind == "tokens" else rng.normal(size=(2, 4, 3))
    lengths = np.array([4, 3])
    y, _, cache = model.forward(x, lengths=lengths)
    R = rng.normal(size=y.shape)  # dL/dy for L = sum(y * R)
    grads = model.backward(R, cache).grads
    assert set(grads) == set(model.params)

    def loss() -> float:
        return float(np.sum(model.forward(x, lengths=lengths)[0] * R))

    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)
    assert model.num_parameters() == SequenceModel.estimate_parameters(model.config)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_model_with_feedforward_layers_matches_pytorch(cell):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    model = _model(cell, "real", feedforward_layers=2, bidirectional=True)
    rnn_cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[cell]

    class Twin(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.feedforward = torch.nn.Sequential(
                torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4), torch.nn.Tanh()
            )
            self.rnn = rnn_cls(4, 4, bidirectional=True, batch_first=True)
            self.head = torch.nn.Linear(8, 4)

        def forward(self, x):
            h, _ = self.rnn(self.feedforward(x))
            return self.head(h)

    x = rng.normal(size=(3, 6, 3))
    R = rng.normal(size=(3, 6, 4))
    assert_twin_matches(model, Twin().double(), x, R)


def test_config_round_trip_keeps_the_layers():
    model = _model("gru", "tokens", feedforward_layers=3)
    again = SequenceModel.from_config(model.config)
    assert again.feedforward_layers == 3 and set(again.params) == set(model.params)


@pytest.mark.parametrize("bad", [-1, 9, 1.5, "2"])
def test_bad_feedforward_layers_are_refused_by_name(bad):
    with pytest.raises((ValueError, TypeError), match="feedforward_layers"):
        _model("gru", "real", feedforward_layers=bad)
