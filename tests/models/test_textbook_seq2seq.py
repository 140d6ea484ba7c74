"""Hagan's seq2seq exactly as the chapter writes it (pyplay.models.textbook.seq2seq,
attention, trace): each test is named after the equation or figure it checks."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.models.textbook import TEXTBOOK_FORMS, TextbookSeq2Seq, textbook_seq2seq, textbook_trace
from pyplay.models.textbook.attention import EPS_PD, general_weight
from pyplay.tasks.pairs import BOS
from pyplay.tasks.seq2seq import Reversal
from pyplay.train import Trainer

SOURCE, TARGET = [3, 5, 7, 4, 9], [9, 4, 7, 5, 3]


def _forward(model: TextbookSeq2Seq, src: list[int], tgt: list[int]) -> tuple:
    logits, weights, _ = model.forward(np.array([src]), np.array([len(src)]), [[BOS, *tgt]])
    return logits[0], None if weights is None else weights[0]


@pytest.mark.parametrize("D", [2, 5, 8])
@pytest.mark.parametrize("form", TEXTBOOK_FORMS)
def test_eq_6_5_to_6_18_the_trace_is_the_batched_models_forward(form: str, D: int) -> None:
    model = textbook_seq2seq(11, 11, form, hidden_size=6, D=D, rng=3)
    trace = textbook_trace(model, SOURCE, TARGET)
    logits, weights = _forward(model, SOURCE, TARGET)
    assert np.max(np.abs(trace.logits - logits)) < 1e-12
    np.testing.assert_allclose(trace.probs.sum(axis=1), 1.0, atol=1e-12)
    if form == "context":  # eq. 6.6: the constant a^1(T) enters every step
        assert weights is None and trace.A is None
        np.testing.assert_array_equal(trace.c, np.broadcast_to(trace.a1[-1], trace.c.shape))
        return
    assert trace.weights is not None and trace.alpha is not None and trace.A is not None
    assert np.max(np.abs(trace.weights - weights)) < 1e-12
    assert trace.A.shape == (6, D) and trace.alpha.shape == (len(TARGET) + 1, D)


def test_eq_6_9_scores_with_the_decoders_previous_output() -> None:
    model = textbook_seq2seq(11, 11, "dot", hidden_size=6, D=5, rng=1)
    tr = textbook_trace(model, SOURCE, TARGET)
    assert tr.A is not None and tr.n is not None
    queries = np.vstack([tr.a1[-1], tr.a2[:-1]])  # a^2(T) = a^1(T), a^2(T+1), ...
    np.testing.assert_allclose(tr.n, queries @ tr.A, atol=1e-14)  # n^4(t) = A^T a^2(t-1)
    assert np.max(np.abs(tr.n - tr.a2 @ tr.A)) > 1e-3  # not Luong's a^2(t)
    by = {s.symbol: s for s in tr.steps}
    assert by["n⁴(6)"].text == "n⁴(6) = [A¹(5)]ᵀ a²(5)   (6.9)"
    assert by["a⁴(6)"].text.endswith("(6.10)") and by["a⁵(6)"].text.endswith("(6.11)")
    assert by["a²(6)"].text.startswith("a²(6) = tansig(LW²˒³ a³(5) + LW²˒⁵ a⁵(6) + LW²˒² a²(5)")
    assert "\n    from a²(5) = a¹(5), a³(5) = one-hot BOS" in by["a²(6)"].text
    assert by["n³(6)"].text == "n³(6) = LW³˒² a²(6) + b³   (6.7)"
    np.testing.assert_allclose(tr.c, tr.alpha @ tr.A.T, atol=1e-14)  # a^5 = A^1(T) a^4


def test_eq_6_6_and_figure_6_6_layer_numbers_in_the_parameter_names() -> None:
    names = {f: list(textbook_seq2seq(9, 8, f, hidden_size=4).params) for f in TEXTBOOK_FORMS}
    common = ["IW1,1", "LW1,1", "b1", "LW2,3"]
    assert names["context"] == [*common, "LW2,1", "LW2,2", "b2", "LW3,2", "b3"]
    assert names["dot"] == [*common, "LW2,5", "LW2,2", "b2", "LW3,2", "b3"]
    assert names["general"] == [*common, "LW2,5", "LW2,2", "b2", "L_a", "LW3,2", "b3"]
    assert names["concat"][4:9] == ["LW2,6", "LW2,2", "b2", "LW4,2", "b4"]
    assert names["concat"][9:11] == ["LW5,4", "b5"]
    model = textbook_seq2seq(9, 8, "concat", hidden_size=4)
    assert model.params["IW1,1"].shape == (4, 9) and model.params["LW2,3"].shape == (4, 8)
    assert model.params["LW4,2"].shape == (4, 8) and model.params["LW5,4"].shape == (1, 4)


def test_eq_6_8_the_delay_line_length_D_is_the_callers() -> None:
    T = len(SOURCE)
    short = textbook_trace(textbook_seq2seq(11, 11, "dot", hidden_size=6, D=2), SOURCE, TARGET)
    assert short.A is not None and short.weights is not None
    np.testing.assert_array_equal(short.A, short.a1[[T - 1, T - 2]].T)  # [a^1(T) a^1(T-1)]
    assert np.all(short.weights[:, : T - 2] == 0.0)  # a^1(1..T-2) are not in A^1(T)
    assert "A¹(5) = [a¹(5) a¹(4)]   (6.8, TDL_hstack, D = 2)" in [s.text for s in short.steps]
    long = textbook_trace(textbook_seq2seq(11, 11, "dot", hidden_size=6, D=7), SOURCE, TARGET)
    assert long.A is not None and long.alpha is not None
    np.testing.assert_array_equal(long.A[:, T:], 0.0)  # initial conditions of the TDL
    assert np.all(long.alpha[:, T:] == 0.0)  # masked: a choice the book leaves open
    assert any("taps before t = 1 are zero and masked" in s.text for s in long.steps)


def test_eq_6_11_a_one_hot_first_weight_is_the_standard_seq2seq() -> None:
    """'If the first element of a^4(t) is equal 1 ... the context will again be a^1(T)': with
    D = 1 the only weight is 1, and the network is Figure 6.4's with LW^{2,1} = LW^{2,5}."""
    attn = textbook_seq2seq(11, 11, "dot", hidden_size=6, D=1, rng=4)
    plain = textbook_seq2seq(11, 11, "context", hidden_size=6, rng=9)
    for k, v in attn.params.items():
        plain.params["LW2,1" if k == "LW2,5" else k][...] = v
    tr = textbook_trace(attn, SOURCE, TARGET)
    assert tr.alpha is not None
    np.testing.assert_array_equal(tr.alpha, 1.0)
    np.testing.assert_allclose(
        _forward(attn, SOURCE, TARGET)[0], _forward(plain, SOURCE, TARGET)[0]
    )


def test_eq_6_12_general_weight_is_positive_definite() -> None:
    model = textbook_seq2seq(11, 11, "general", hidden_size=5, rng=2)
    for L in (model.params["L_a"], np.zeros((5, 5)), np.outer(np.arange(5.0), np.ones(5))):
        eig = np.linalg.eigvalsh(general_weight(L))
        assert eig.min() >= EPS_PD * (1 - 1e-9)  # even for a zero or rank-one L_a
    tr = textbook_trace(model, SOURCE, TARGET)
    assert tr.A is not None and tr.n is not None
    W = general_weight(model.params["L_a"])
    queries = np.vstack([tr.a1[-1], tr.a2[:-1]])
    np.testing.assert_allclose(tr.n, queries @ W.T @ tr.A, atol=1e-13)  # [A^1]^T W_a a^2(t-1)
    assert next(s for s in tr.steps if s.symbol == "W_a").text.startswith("W_a = L_a L_aᵀ + εI")


def test_eq_6_13_to_6_18_concatenation_attention() -> None:
    model = textbook_seq2seq(11, 11, "concat", hidden_size=4, D=6, rng=5)
    tr = textbook_trace(model, SOURCE, TARGET)
    by = {s.symbol: s for s in tr.steps}
    Abar = by["Ā¹˒²(7)"].value  # (S1 + S2, D) eq. 6.14: [a^1(T-j+1); a^2(t-1)] per column
    np.testing.assert_array_equal(Abar[:4, 0], tr.a1[-1])
    np.testing.assert_array_equal(Abar[4:], np.tile(tr.a2[0][:, None], (1, 6)))
    p = model.params
    A4 = np.tanh(p["LW4,2"] @ Abar + p["b4"][:, None])
    np.testing.assert_allclose(by["A⁴(7)"].value, A4, atol=1e-15)  # eq. 6.15
    np.testing.assert_allclose(by["N⁵(7)"].value, p["LW5,4"] @ A4 + p["b5"], atol=1e-15)
    assert tr.alpha is not None and tr.A is not None
    np.testing.assert_allclose(by["a⁶(7)"].value, tr.A @ tr.alpha[1], atol=1e-15)  # eq. 6.18
    assert by["a⁵(7)"].text.endswith("(6.17)") and "LW²˒⁶ a⁶(7)" in by["a²(7)"].text


@pytest.mark.slow
@pytest.mark.parametrize("form", TEXTBOOK_FORMS)
def test_gradcheck_bptt_through_decoder_attention_delay_line_and_encoder(form: str) -> None:
    src, L = np.array([[3, 4, 5, 6], [7, 3, 0, 0]]), np.array([4, 2])
    tgt = np.array([[1, 3, 4], [1, 5, 0]])
    R = np.random.default_rng(0).normal(size=(2, 3, 8))
    for D in (2, 6):  # D < T and D > T
        model = textbook_seq2seq(9, 8, form, hidden_size=4, D=D, rng=1)

        def loss(model: TextbookSeq2Seq = model) -> float:
            return float((model.forward(src, L, tgt)[0] * R).sum())

        grads = model.backward(R, model.forward(src, L, tgt)[2]).grads
        for name, value in model.params.items():
            assert_grad_close(grads[name], numeric_grad(loss, value), f"{form} D={D} {name}")
        if form == "concat":
            assert np.all(np.abs(grads["b5"]) < 1e-12)  # the softmax cancels b^5


def test_greedy_decoding_steps_are_the_forward_pass() -> None:
    model = textbook_seq2seq(11, 11, "general", hidden_size=6, D=4, rng=7)
    src, L = np.array([[3, 5, 7, 4], [6, 8, 0, 0]]), np.array([4, 2])
    out = model.greedy(src, L, max_length=6)
    for b, ids in enumerate(out):
        logits, _ = _forward(model, list(src[b, : L[b]]), ids)
        assert list(np.argmax(logits[: len(ids)], axis=1)) == ids


@pytest.mark.slow
def test_the_books_attention_learns_reversal_and_a_short_delay_line_does_not() -> None:
    scores = {}
    for name, form, D in (("context", "context", 8), ("dot", "dot", 8), ("dot D=2", "dot", 2)):
        task = Reversal(n_symbols=6, min_len=3, max_len=8, rng=0)
        V = len(task.src_vocab)
        model = textbook_seq2seq(V, V, form, hidden_size=32, D=D, rng=0)
        trainer = Trainer(model, task, lr=0.01, batch_size=32, clip=1.0)
        for _ in trainer.run(300):
            pass
        scores[name] = trainer.evaluate(batch_size=256)["exact_match"]
    print(f"reversal exact match after 300 steps: {scores}")
    assert scores["dot"] >= 0.95, scores
    assert scores["context"] < 0.7 and scores["dot D=2"] < 0.7, scores


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match="form must be one of 'context', 'dot', 'general'"):
        TextbookSeq2Seq(9, 9, "additive")
    with pytest.raises(ValueError, match="D must be >= 1, got 0"):
        TextbookSeq2Seq(9, 9, "dot", D=0)
    with pytest.raises(
        TypeError, match=r"model must be a pyplay\.models\.textbook\.TextbookSeq2Seq"
    ):
        textbook_trace("model", [3], [4])
    model = textbook_seq2seq(11, 11, "dot", hidden_size=4)
    with pytest.raises(ValueError, match=r"source must hold symbol ids 3\.\.10, got .* max 11"):
        textbook_trace(model, [3, 11], [4])
    with pytest.raises(ValueError, match=r"target must not hold EOS \(2\)"):
        textbook_trace(model, [3], [2])
    with pytest.raises(ValueError, match="lengths must lie between 1 and T=2"):
        model.forward(np.array([[3, 4]]), np.array([3]), [[1]])
    with pytest.raises(ValueError, match=r"src must hold ids 0\.\.10"):
        model.forward(np.array([[3, 12]]), np.array([2]), [[1]])
