"""Central-difference gradient checks (float64) of the memory nets: every parameter and the
input, both write rules, one and two read heads, one and two write heads, and the variant that
attends to its own previous states."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.models.memory import AttendRNN, MemoryNet


def _check(model, T: int = 4) -> float:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, T, model.input_size))
    R = rng.standard_normal((2, T, model.output_size))

    def loss() -> float:
        return float((model.forward(x)[0] * R).sum())

    _, _, cache = model.forward(x)
    grads, dx = model.gradients(R, cache)
    assert list(grads) == list(model.params)
    worst = 0.0
    for name, p in model.params.items():
        numeric = numeric_grad(loss, p)
        assert_grad_close(grads[name], numeric, name)
        worst = max(worst, max_rel_error(grads[name], numeric))
    assert_grad_close(dx, numeric_grad(loss, x), "inputs")
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("update", ["overwrite", "residual"])
@pytest.mark.parametrize(("read_heads", "write_heads"), [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_memnet_gradients(update: str, read_heads: int, write_heads: int) -> None:
    model = MemoryNet(
        3, 4, hidden_size=5, memory_size=4, memory_width=3, read_heads=read_heads,
        write_heads=write_heads, update=update, input_kind="real", dtype=np.float64, rng=1,
    )  # fmt: skip
    assert _check(model) < 1e-6


@pytest.mark.slow
def test_attending_rnn_gradients() -> None:
    model = AttendRNN(3, 4, hidden_size=5, input_kind="real", dtype=np.float64, rng=1)
    assert _check(model, T=5) < 1e-5


def test_token_inputs_and_backward_protocol() -> None:
    model = MemoryNet(5, 3, hidden_size=4, memory_size=3, memory_width=2, dtype=np.float64)
    ids = np.array([[0, 4, 2], [1, 1, 3]])
    R = np.random.default_rng(0).standard_normal((2, 3, 3))

    def loss() -> float:
        return float((model.forward(ids)[0] * R).sum())

    _, _, cache = model.forward(ids)
    result = model.backward(R, cache)
    grads, record = result.grads, result.record
    assert record is None
    for name in ("controller.weight_ih", "memory.init"):
        assert_grad_close(grads[name], numeric_grad(loss, model.params[name]), name)


def test_state_continues_the_sequence_and_caches_have_the_lesson_shapes() -> None:
    model = MemoryNet(3, 2, hidden_size=4, memory_size=5, memory_width=3, read_heads=2,
                      write_heads=3, input_kind="real", dtype=np.float64)  # fmt: skip
    x = np.random.default_rng(1).standard_normal((2, 6, 3))
    y, _, cache = model.forward(x)
    y1, state, _ = model.forward(x[:, :2])
    y2, _, _ = model.forward(x[:, 2:], state)
    np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), y, atol=1e-12)
    assert cache.read_weights.shape == (2, 6, 2, 5)
    assert cache.write_weights.shape == (2, 6, 3, 5)
    assert cache.memory.shape == (2, 7, 5, 3)
    np.testing.assert_allclose(cache.read_weights.sum(axis=3), 1.0)
    attend = AttendRNN(3, 2, hidden_size=4, input_kind="real", dtype=np.float64)
    y, _, c = attend.forward(x)
    y1, s, _ = attend.forward(x[:, :2])
    y2, _, _ = attend.forward(x[:, 2:], s)
    np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), y, atol=1e-12)
    assert c.attention.shape == (2, 6, 6) and np.allclose(np.triu(c.attention[0]), 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_are_kept(dtype) -> None:
    model = MemoryNet(4, 2, hidden_size=3, memory_size=2, memory_width=2, dtype=dtype)
    y, state, cache = model.forward(np.array([[1, 2, 3]]))
    grads = model.backward(np.ones_like(y), cache).grads
    assert y.dtype == dtype and state.M.dtype == dtype
    assert all(g.dtype == dtype for g in grads.values())
