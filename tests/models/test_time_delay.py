"""The time-delay net (a one-way recurrent net whose output for step t is read at t + D, the
TEK5040 lecture's alternative to a bidirectional net): gradients, what it sees, errors."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.models import SequenceModel


def _model(cell: str, delay: int, kind: str = "real") -> SequenceModel:
    n_in = 5 if kind == "tokens" else 3
    return SequenceModel(
        cell, input_kind=kind, input_size=n_in, output_size=4, hidden_size=5, delay=delay,
        dtype=np.float64, rng=1,
    )  # fmt: skip


@pytest.mark.parametrize(("cell", "kind"), [("gru", "real"), ("lstm", "tokens"), ("rnn", "real")])
def test_gradients_match_central_differences(cell: str, kind: str) -> None:
    model = _model(cell, 2, kind)
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, (2, 6)) if kind == "tokens" else rng.standard_normal((2, 6, 3))
    lengths = np.array([6, 4])
    R = rng.standard_normal((2, 6, 4))

    def loss() -> float:
        return float((model.forward(x, lengths=lengths)[0] * R).sum())

    y, _, cache = model.forward(x, lengths=lengths)
    assert y.shape == (2, 6, 4)
    grads = model.backward(R, cache).grads
    assert list(grads) == list(model.params)
    for name, p in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, p), name)


def test_output_for_t_is_the_one_way_output_at_t_plus_delay() -> None:
    """y_t = W h_{t+D} + b on the input padded with D zero frames; y_t sees x_1..x_{t+D} and
    nothing later."""
    D = 3
    delayed, plain = _model("gru", D), _model("gru", 0)
    assert delayed.config["delay"] == D and set(delayed.params) == set(plain.params)
    x = np.random.default_rng(4).standard_normal((1, 7, 3))
    y, _, _ = delayed.forward(x)
    padded = np.concatenate([x, np.zeros((1, D, 3))], axis=1)
    ref, _, _ = plain.forward(padded)
    np.testing.assert_allclose(y, ref[:, D:], atol=1e-14)
    x2 = x.copy()
    x2[0, 5] += 1.0  # frame 5 changes: outputs 0, 1 (which see up to frames 3, 4) do not
    y2, _, _ = delayed.forward(x2)
    np.testing.assert_allclose(y2[0, :2], y[0, :2], atol=1e-14)
    assert not np.allclose(y2[0, 2], y[0, 2])  # output 2 sees frame 5
    again = SequenceModel.from_config(delayed.config)
    assert again.delay == D


def test_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="delay is the one-way alternative to a bidirectional"):
        SequenceModel("gru", input_kind="real", input_size=2, output_size=2, bidirectional=True,
                      delay=2)  # fmt: skip
    with pytest.raises(ValueError, match="delay must be >= 0"):
        _model("gru", -1)
    with pytest.raises(ValueError, match="reads whole sequences: no state"):
        model = _model("gru", 2)
        _, state, _ = model.forward(np.zeros((1, 3, 3)))
        model.forward(np.zeros((1, 1, 3)), state)
