"""Positional encodings: the sinusoidal table's values and shift property, the learned table's
gradient, offsets for incremental decoding, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.nn.positional import (
    LearnedPositionalEmbedding,
    make_positional,
    sinusoidal_table,
)


def test_sinusoidal_table_values() -> None:
    P = sinusoidal_table(50, 8)
    assert P.shape == (50, 8)
    np.testing.assert_array_equal(P[0], [0, 1, 0, 1, 0, 1, 0, 1])
    t, k, D = 7, 2, 8
    np.testing.assert_allclose(P[t, 2 * k], np.sin(t / 10000 ** (2 * k / D)), rtol=1e-15)
    np.testing.assert_allclose(P[t, 2 * k + 1], np.cos(t / 10000 ** (2 * k / D)), rtol=1e-15)
    assert sinusoidal_table(4, 5).shape == (4, 5)  # odd width: the last cosine is dropped


def test_sinusoidal_dot_products_depend_only_on_the_distance() -> None:
    P = sinusoidal_table(40, 16)
    G = P @ P.T  # (40, 40)
    for shift in (0, 1, 5, 17):
        diagonal = np.diagonal(G, offset=shift)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-12)
    assert G[0, 1] > G[0, 10]  # nearby positions look more alike than distant ones
    # a shift is a linear map: P[t + 3] = P[t] @ M for one M and every t
    M, *_ = np.linalg.lstsq(P[:30], P[3:33], rcond=None)
    np.testing.assert_allclose(P[:30] @ M, P[3:33], atol=1e-9)


@pytest.mark.parametrize("kind", ["sinusoidal", "learned", "none"])
def test_forward_adds_the_table_at_the_offset(kind: str) -> None:
    pe = make_positional(kind, 12, 6, dtype=np.float64, rng=1)
    x = np.random.default_rng(0).standard_normal((2, 4, 6))
    y, cache = pe.forward(x, offset=3)
    np.testing.assert_allclose(y - x, np.broadcast_to(pe.table()[3:7], x.shape), atol=1e-15)
    full, _ = pe.forward(np.concatenate([np.zeros((2, 3, 6)), x], axis=1))
    np.testing.assert_array_equal(full[:, 3:], y)  # the same vectors stepwise
    dx, grads = pe.backward(np.ones_like(y), cache)
    np.testing.assert_array_equal(dx, np.ones_like(y))
    assert set(grads) == set(pe.params)
    if kind == "none":
        np.testing.assert_array_equal(y, x)


def test_learned_table_gradient_matches_central_differences() -> None:
    pe = LearnedPositionalEmbedding(10, 3, dtype=np.float64, rng=2)
    rng = np.random.default_rng(3)
    x, R = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 3))

    def loss() -> float:
        return float((pe.forward(x, offset=2)[0] * R).sum())

    _, cache = pe.forward(x, offset=2)
    dx, grads = pe.backward(R, cache)
    assert_grad_close(grads["weight"], numeric_grad(loss, pe.params["weight"]), "weight")
    assert_grad_close(dx, numeric_grad(loss, x), "x")


def test_errors_name_the_argument() -> None:
    pe = make_positional("sinusoidal", 8, 4)
    with pytest.raises(ValueError, match="positional must be one of"):
        make_positional("rotary", 8, 4)
    with pytest.raises(ValueError, match="exceed max_len=8"):
        pe.forward(np.zeros((1, 6, 4), np.float32), offset=3)
    with pytest.raises(ValueError, match="x must have d_model=4"):
        pe.forward(np.zeros((1, 2, 5), np.float32))
    with pytest.raises(ValueError, match="offset"):
        pe.forward(np.zeros((1, 2, 4), np.float32), offset=-1)
    with pytest.raises(ValueError, match="dout must have shape"):
        pe.backward(np.zeros((1, 3, 4), np.float32), (0, 2))
