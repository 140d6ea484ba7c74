"""Hagan's remark on eq. 6.10-6.11, computed by the library (pyplay.models.textbook.pinned and
the ``attention_weights`` of TextbookSeq2Seq.forward): "If the first element of a^4(t) is equal 1
(and the other elements are consequently equal to 0), then the context will again be a^1(T), as
in the standard seq2seq model." Each test cites the equation it checks."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.models.textbook import (
    TextbookSeq2Seq,
    first_tap_weights,
    pinned_contexts,
    plain_seq2seq,
    textbook_seq2seq,
)
from pyplay.models.textbook.attention import attend

SOURCE, TARGET = [3, 5, 7, 4, 9], [9, 4, 7, 5, 3]
ATTENTION = ("dot", "general", "concat")


@pytest.mark.parametrize("D", [1, 3, 5, 8])
@pytest.mark.parametrize("form", ATTENTION)
def test_eq_6_10_one_hot_weights_give_the_plain_seq2seq_context(form: str, D: int) -> None:
    """Pinned: a^5(t) = A^1(T) e_1 = a^1(T) at every decoder step, so the whole network is
    Figure 6.4's with LW^{2,1} = LW^{2,5} (or LW^{2,6}): contexts and logits agree to float
    rounding (float64). Not pinned (D > 1): the softmax's weights give another context."""
    model = textbook_seq2seq(11, 11, form, hidden_size=6, D=D, rng=3)
    pinned = pinned_contexts(model, SOURCE, TARGET, pin=True)
    U = len(TARGET) + 1
    assert pinned.pinned and pinned.context.shape == (U, 6) and pinned.weights.shape == (U, D)
    np.testing.assert_array_equal(pinned.weights, first_tap_weights(1, U, D)[0])
    assert pinned.difference() < 1e-12 and pinned.logits_difference < 1e-12
    aT = pinned.plain[0]  # the plain network's context is a^1(T) at every step
    np.testing.assert_array_equal(pinned.plain, np.broadcast_to(aT, pinned.plain.shape))
    free = pinned_contexts(model, SOURCE, TARGET, pin=False)
    np.testing.assert_allclose(free.weights.sum(axis=1), 1.0, atol=1e-12)  # eq. 6.10's softmax
    if D == 1:  # one column: the softmax is 1 anyway, the book's standard seq2seq
        assert free.difference() < 1e-12
    else:
        assert free.difference() > 1e-2 and free.logits_difference > 1e-3
        assert all(free.difference(u) > 1e-3 for u in range(U))
    np.testing.assert_array_equal(free.plain, pinned.plain)  # the same plain network


def test_eq_6_10_the_plain_seq2seq_is_a_copy_with_the_context_weight_as_LW21() -> None:
    model = textbook_seq2seq(9, 8, "concat", hidden_size=4, D=3, rng=2)
    plain = plain_seq2seq(model)
    assert plain.form == "context" and set(plain.params) == {
        "IW1,1", "LW1,1", "b1", "LW2,3", "LW2,1", "LW2,2", "b2", "LW3,2", "b3",
    }  # fmt: skip
    np.testing.assert_array_equal(plain.params["LW2,1"], model.params["LW2,6"])
    plain.params["b2"][...] += 1.0  # copies: the attention model is not changed
    assert not np.allclose(plain.params["b2"], model.params["b2"])


@pytest.mark.parametrize("form", ATTENTION)
def test_eq_6_10_gradcheck_bptt_with_pinned_weights(form: str) -> None:
    """With the weights given, BPTT sends the context's gradient into A^1(T) only: central
    differences (float64) match every parameter's gradient, and the score's parameters get
    exactly zero (the scores no longer reach the loss)."""
    src, L = np.array([[3, 4, 5, 6], [7, 3, 0, 0]]), np.array([4, 2])
    tgt = np.array([[1, 3, 4], [1, 5, 0]])
    gen = np.random.default_rng(0)
    R = gen.normal(size=(2, 3, 8))
    for D in (2, 6):
        model = textbook_seq2seq(9, 8, form, hidden_size=4, D=D, rng=1)
        W = gen.uniform(0.1, 1.0, size=(2, 3, D))  # any weights, not only one-hot

        def loss(model: TextbookSeq2Seq = model, W: np.ndarray = W) -> float:
            return float((model.forward(src, L, tgt, attention_weights=W)[0] * R).sum())

        cache = model.forward(src, L, tgt, attention_weights=W)[2]
        assert all(c.pinned for c in cache.attn)
        grads = model.backward(R, cache).grads
        for name, value in model.params.items():
            assert_grad_close(grads[name], numeric_grad(loss, value), f"{form} D={D} {name}")
        for name in ("L_a", "LW4,2", "b4", "LW5,4", "b5"):
            if name in grads:
                np.testing.assert_array_equal(grads[name], 0.0)


def test_eq_6_11_attend_with_given_weights_is_A_times_the_weights() -> None:
    gen = np.random.default_rng(4)
    A, q = gen.normal(size=(2, 3, 4)), gen.normal(size=(2, 3))
    keep = np.ones((2, 4), dtype=bool)
    w = gen.uniform(size=(2, 4))
    ctx, alpha, n, cache = attend("dot", {}, A, keep, q, weights=w)
    np.testing.assert_allclose(ctx, np.einsum("bsd,bd->bs", A, w), atol=1e-15)
    np.testing.assert_array_equal(alpha, w)
    np.testing.assert_allclose(n, np.einsum("bsd,bs->bd", A, q), atol=1e-15)  # still scored
    assert cache.pinned and not attend("dot", {}, A, keep, q)[3].pinned
    with pytest.raises(ValueError, match=r"weights must have shape \(B, D\) = \(2, 4\), got"):
        attend("dot", {}, A, keep, q, weights=w[:, :3])


def test_eq_6_10_bad_arguments_name_the_argument() -> None:
    src, L, tgt = np.array([[3, 4]]), [2], [[1, 3]]
    context = textbook_seq2seq(9, 9, "context", hidden_size=4)
    with pytest.raises(ValueError, match="attention_weights needs an attention form"):
        context.forward(src, L, tgt, attention_weights=np.ones((1, 2, 8)))
    dot = textbook_seq2seq(9, 9, "dot", hidden_size=4, D=3)
    with pytest.raises(ValueError, match=r"attention_weights must have shape \(B, U, D\) = "):
        dot.forward(src, L, tgt, attention_weights=np.ones((1, 2, 2)))
    with pytest.raises(TypeError, match="attention_weights must be a numeric array"):
        dot.forward(src, L, tgt, attention_weights="one-hot")
    with pytest.raises(ValueError, match="model must be a TextbookSeq2Seq with attention"):
        pinned_contexts(context, [3, 4], [3])
    with pytest.raises(TypeError, match="pin must be a bool, got str"):
        pinned_contexts(dot, [3, 4], [3], pin="yes")  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"model must be a pyplay\.models\.textbook\.TextbookSeq2Seq"
    ):
        plain_seq2seq(object())  # type: ignore[arg-type]
