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


def test_slide_sinusoidal_positional_encoding() -> None:
    """The IDSIA lecture's sinusoidal encoding: e_{i,2k} = sin(i / 10000^{2k/D}) and
    e_{i,2k+1} = cos(i / 10000^{2k/D})."""
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


@pytest.mark.parametrize("kind", ["sinusoidal", "learned", "count", "normalised", "binary", "none"])
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


def test_slide_positional_encoding_count_and_normalised() -> None:
    """The IDSIA lecture's first two ideas: count positions 1, 2, ... as one component, then
    divide by the maximum (1, 2, 3, 4 -> 0.25, 0.5, 0.75, 1.0)."""
    from pyplay.nn.positional import fixed_table

    count = fixed_table("count", 4, 3)
    np.testing.assert_array_equal(count[:, 0], [1, 2, 3, 4])
    assert not count[:, 1:].any()  # one component only
    norm = fixed_table("normalised", 4, 3)
    np.testing.assert_array_equal(norm[:, 0], [0.25, 0.5, 0.75, 1.0])
    assert not norm[:, 1:].any()


def test_slide_positional_encoding_binary() -> None:
    """Counting in binary: maximum sequence length 1024 -> 10 components, each -1 or +1."""
    from pyplay.nn.positional import fixed_table

    P = fixed_table("binary", 1024, 16)
    assert set(np.unique(P[:, :10])) == {-1.0, 1.0} and not P[:, 10:].any()
    np.testing.assert_array_equal(P[5, :4], [1, -1, 1, -1])  # 5 = 0b0101, lowest bit first
    np.testing.assert_array_equal(P[0, :10], -np.ones(10))
    assert len({tuple(row) for row in P}) == 1024  # every position its own code
    with pytest.raises(ValueError, match="d_model must be at least 10 for binary positions"):
        fixed_table("binary", 1000, 8)


@pytest.mark.parametrize("kind", ["count", "normalised", "binary", "concat"])
def test_a_transformer_reads_the_lecture_encodings(kind: str) -> None:
    from pyplay.models import TransformerModel

    def build(positional: str) -> TransformerModel:
        return TransformerModel(5, 5, d_model=8, nhead=2, num_layers=1, max_len=8,
                                positional=positional, dtype=np.float64, rng=0)  # fmt: skip

    model, bare = build(kind), build("none")
    assert model.positional == kind and set(model.params) == set(bare.params)
    x = np.array([[1, 2, 3, 1, 2, 3]])
    y = model.forward(x)[0]
    assert np.isfinite(y).all() and not np.allclose(y, bare.forward(x)[0])  # positions count


def test_concatenated_code_takes_components_of_its_own() -> None:
    """The code is joined after the token vector, not added: y_t = [x_t; P_t], x_t of width
    D - D_p, P the sinusoidal table of width D_p; the gradient reaches x_t only."""
    from pyplay.nn.positional import (
        ConcatPositionalEncoding,
        concat_width,
        input_width,
        sinusoidal_table,
    )

    assert [concat_width(D) for D in (2, 8, 32, 64)] == [1, 2, 8, 16]
    assert input_width("concat", 32) == 24 and input_width("learned", 32) == 32
    pe = make_positional("concat", 12, 8, dtype=np.float64)
    assert isinstance(pe, ConcatPositionalEncoding)
    assert (pe.d_pos, pe.in_features, pe.params) == (2, 6, {})
    np.testing.assert_array_equal(pe.table(), sinusoidal_table(12, 2))
    x = np.random.default_rng(0).standard_normal((2, 4, 6))
    y, cache = pe.forward(x, offset=3)
    assert y.shape == (2, 4, 8)
    np.testing.assert_array_equal(y[..., :6], x)  # the tokens untouched
    np.testing.assert_array_equal(y[..., 6:], np.broadcast_to(pe.table()[3:7], (2, 4, 2)))
    full, _ = pe.forward(np.concatenate([np.zeros((2, 3, 6)), x], axis=1))
    np.testing.assert_array_equal(full[:, 3:], y)  # the same vectors stepwise
    R = np.random.default_rng(1).standard_normal(y.shape)

    def loss() -> float:
        return float((pe.forward(x, offset=3)[0] * R).sum())

    dx, grads = pe.backward(R, cache)
    assert grads == {} and dx.shape == x.shape
    assert_grad_close(dx, numeric_grad(loss, x), "x")
    wide = ConcatPositionalEncoding(10, 8, d_pos=5, dtype=np.float64)
    assert wide.in_features == 3 and wide.table().shape == (10, 5)


def test_concatenated_code_errors_name_the_argument() -> None:
    from pyplay.models import TransformerModel
    from pyplay.nn.positional import ConcatPositionalEncoding

    pe = make_positional("concat", 8, 8)
    with pytest.raises(ValueError, match="x must have d_model - d_pos=6 features"):
        pe.forward(np.zeros((1, 2, 8), np.float32))
    with pytest.raises(ValueError, match="dout must have shape"):
        pe.backward(np.zeros((1, 2, 6), np.float32), (0, 2))
    with pytest.raises(ValueError, match="d_pos must be below d_model=8"):
        ConcatPositionalEncoding(8, 8, d_pos=8)
    with pytest.raises(ValueError, match="d_model must be >= 2"):
        make_positional("concat", 8, 1)
    with pytest.raises(ValueError, match="tie_weights needs the embedding as wide as the model"):
        TransformerModel(5, 5, d_model=8, nhead=2, positional="concat", tie_weights=True)


def test_slide_normalised_divides_by_the_sequence_pyplay_by_max_len() -> None:
    """The IDSIA lecture's "divide count by maximum value" divides each sequence's count by its
    own length (1, 2, 3, 4 -> 0.25, 0.5, 0.75, 1.0 for a sequence of 4); pyplay divides by
    max_len, the same for every sequence, so a sequence of 4 in a model of max_len 8 gets
    0.125 ... 0.5, and the docstrings say so."""
    from pyplay.nn import positional
    from pyplay.nn.positional import FixedPositionalEncoding, fixed_table

    pe = FixedPositionalEncoding("normalised", max_len=8, d_model=3, dtype=np.float64)
    out, _ = pe.forward(np.zeros((1, 4, 3)))
    np.testing.assert_array_equal(out[0, :, 0], [0.125, 0.25, 0.375, 0.5])  # ours: i / max_len
    lecture = np.arange(1, 5) / 4  # the slide's: i / (this sequence's length)
    np.testing.assert_array_equal(lecture, [0.25, 0.5, 0.75, 1.0])
    assert not np.array_equal(out[0, :, 0], lecture)
    assert "The slide divides by the maximum of the sequence" in (positional.__doc__ or "")
    assert "IDSIA lecture divides by the length of the sequence" in " ".join(
        (fixed_table.__doc__ or "").split()
    )
