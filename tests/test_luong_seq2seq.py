"""Luong's form in the book's notation (pyplay.dynamic.luong_attention / luong_seq2seq): its
equations, computed through a TDL of encoder states, are the library's EncoderDecoder."""

from __future__ import annotations

import time

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.dynamic import (
    LUONG_FORMS,
    LuongTDLAttention,
    luong_form,
    luong_seq2seq,
    luong_trace,
    source_order,
)
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.seq2seq.luong import make_scorer
from pyplay.nn.attention import CosineAttention
from pyplay.tasks.seq2seq import Reversal
from pyplay.train import Trainer

LIBRARY = {"dot": "dot", "general": "general", "concat": "additive"}
SOURCE, TARGET = [3, 5, 7, 4, 9, 6], [6, 9, 4, 7, 5, 3]


def _library(model: EncoderDecoder, src: list[int], tgt: list[int]) -> tuple:
    logits, weights, cache = model.forward(np.array([src]), np.array([len(src)]), [[1, *tgt]])
    return logits[0], weights, cache


@pytest.mark.parametrize("cell", ["rnn", "gru"])
@pytest.mark.parametrize("form", LUONG_FORMS)
def test_trace_is_the_encoder_decoders_own_forward(form: str, cell: str) -> None:
    model = luong_seq2seq(11, 11, form, hidden_size=12, cell=cell, rng=3)
    assert luong_form(model) == form
    trace = luong_trace(model, SOURCE, TARGET)
    logits, weights, cache = _library(model, SOURCE, TARGET)
    S, U, H = len(SOURCE), len(TARGET) + 1, 12
    assert trace.logits.shape == (U, 11) and trace.a1.shape == (S, H) and trace.c.shape == (U, H)
    assert np.max(np.abs(trace.logits - logits)) < 1e-12
    np.testing.assert_allclose(trace.probs.sum(axis=1), 1.0, atol=1e-12)
    if form == "context":
        assert weights is None and trace.A is None and trace.alpha is None
        np.testing.assert_array_equal(trace.c, np.broadcast_to(trace.a1[-1], (U, H)))
        return
    assert trace.weights is not None and trace.alpha is not None and trace.A is not None
    assert np.max(np.abs(trace.weights - weights[0])) < 1e-12  # alpha(t), every step
    cs = cache.attn.cs[0]  # (U, K + H) [c(t); a2(t)] inside LuongAttention
    assert np.max(np.abs(trace.c - cs[:, :H])) < 1e-12  # c(t) = A alpha(t)
    assert np.max(np.abs(trace.a2 - cs[:, H:])) < 1e-12  # the decoder's own a2(t)
    np.testing.assert_array_equal(trace.A, trace.a1[::-1].T)  # [a1(S) ... a1(1)]
    np.testing.assert_array_equal(trace.weights, trace.alpha[:, ::-1])


def test_trace_steps_carry_equation_code_and_value() -> None:
    model = luong_seq2seq(11, 11, "general", hidden_size=8, rng=0)
    trace = luong_trace(model, SOURCE[:3], TARGET[:2])
    symbols = [s.symbol for s in trace.steps]
    assert symbols[:4] == ["a¹(1)", "a¹(2)", "a¹(3)", "A"]
    assert symbols[4:11] == ["a²(1)", "n(1)", "α(1)", "c(1)", "a³(1)", "n⁴(1)", "a⁴(1)"]
    assert len(trace.steps) == 3 + 1 + 3 * 7
    by = {s.symbol: s for s in trace.steps}
    assert by["n(2)"].text == "n(2) = Aᵀ W a²(2)" and by["n(2)"].latex == "n(2) = A^T W a^2(2)"
    assert "GeneralAttention" in by["n(2)"].code and "TDL_hstack" in by["A"].code
    assert "a²(0) = a¹(3)" in by["a²(1)"].text
    np.testing.assert_array_equal(by["α(2)"].value, trace.alpha[1])
    np.testing.assert_array_equal(by["a¹(2)"].value, trace.a1[1])
    concat = luong_trace(luong_seq2seq(11, 11, "concat", hidden_size=8), [3], [])
    assert {s.symbol for s in concat.steps} >= {"A", "n(1)", "a⁴(1)"}
    assert next(s for s in concat.steps if s.symbol == "n(1)").text.startswith("nⱼ(1) = vᵀ tansig")
    context = luong_trace(luong_seq2seq(11, 11, "context", hidden_size=8), [3, 4], [5])
    dec = next(s for s in context.steps if s.symbol == "a²(1)")
    assert "LW²˒¹ c" in dec.text and "LW^{2,1} c" in dec.latex


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_tdl_attention_equals_the_library_scorer_on_a_padded_batch(score: str) -> None:
    rng = np.random.default_rng(0)
    B, U, S, H = 3, 4, 5, 6
    a2, a1 = rng.normal(size=(B, U, H)), rng.normal(size=(B, S, H))
    lengths = np.array([5, 3, 1])
    mask = np.arange(S)[None, :] < lengths[:, None]
    lib = make_scorer(LIBRARY[score], H, H, dtype=np.float64, rng=1)
    c_lib, w_lib, cache_lib = lib.forward(a2, a1, a1, mask=mask)
    book = LuongTDLAttention.from_scorer(lib, H, H)
    c, alpha, cache = book.forward(a2, a1, lengths)
    assert np.max(np.abs(c - c_lib)) < 1e-12
    assert np.max(np.abs(source_order(alpha, lengths) - w_lib)) < 1e-12
    assert np.all(alpha[2, :, 1:] == 0.0)  # a length-1 row: the taps past a1(1) are masked
    A = book.memory(a1, lengths)
    np.testing.assert_array_equal(A[1, :, :3], a1[1, 2::-1].T)  # [a1(3) a1(2) a1(1)]
    np.testing.assert_array_equal(A[1, :, 3:], 0.0)  # the TDL's initial conditions
    dc = rng.normal(size=c.shape)
    dq, dk, dv, g_lib = lib.backward(dc, cache_lib)
    da2, da1, g = book.backward(dc, cache)
    assert np.max(np.abs(da2 - dq)) < 1e-12 and np.max(np.abs(da1 - (dk + dv))) < 1e-12
    if score == "general":
        assert np.max(np.abs(g["W"] - g_lib["weight"].T)) < 1e-12
    if score == "concat":
        W_lib = np.concatenate([g_lib["weight_key"], g_lib["weight_query"]], axis=1)
        assert np.max(np.abs(g["W"] - W_lib)) < 1e-12
        assert np.max(np.abs(g["b"] - g_lib["bias"])) < 1e-12


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_gradcheck_tdl_attention(score: str) -> None:
    rng = np.random.default_rng(1)
    B, U, S, S1, S2 = 2, 3, 4, 3, 3
    book = LuongTDLAttention(score, S1, S2, Sa=4, dtype=np.float64, rng=2)
    a2, a1 = rng.normal(size=(B, U, S2)), rng.normal(size=(B, S, S1))
    lengths = np.array([4, 2])
    Rc, Ra = rng.normal(size=(B, U, S1)), rng.normal(size=(B, U, S))

    def loss() -> float:
        c, alpha, _ = book.forward(a2, a1, lengths)
        return float((c * Rc).sum() + (alpha * Ra).sum())

    _, _, cache = book.forward(a2, a1, lengths)
    da2, da1, grads = book.backward(Rc, cache, dalpha=Ra)
    assert_grad_close(da2, numeric_grad(loss, a2), "a2")
    assert_grad_close(da1, numeric_grad(loss, a1), "a1")
    assert np.all(da1[1, 2:] == 0.0)  # padded steps get no gradient
    for name, value in book.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, value), name)


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match="score must be one of 'dot', 'general', 'concat'"):
        LuongTDLAttention("additive", 3, 3)
    with pytest.raises(ValueError, match="score='dot' needs S1 equal to S2"):
        LuongTDLAttention("dot", 3, 4)
    with pytest.raises(TypeError, match=r"dtype must be numpy\.float32 or numpy\.float64"):
        LuongTDLAttention("general", 3, 3, dtype=np.int32)
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        LuongTDLAttention("general", 3, 3, rng="seed")
    book = LuongTDLAttention("general", 3, 2)
    with pytest.raises(ValueError, match=r"a1 must have shape \(B, S, S1\)"):
        book.forward(np.zeros((1, 2, 2)), np.zeros((1, 4, 2)))
    with pytest.raises(ValueError, match="a2 must be a 3-D array"):
        book.forward(np.zeros((2, 2)), np.zeros((1, 4, 3)))
    with pytest.raises(ValueError, match="lengths must lie between 1 and T=4"):
        book.forward(np.zeros((1, 2, 2)), np.zeros((1, 4, 3)), lengths=[0])
    with pytest.raises(TypeError, match="scorer must be a DotAttention"):
        LuongTDLAttention.from_scorer(CosineAttention(), 3, 3)
    with pytest.raises(ValueError, match="score must be one of 'context'"):
        luong_seq2seq(11, 11, "additive")
    with pytest.raises(TypeError, match=r"model must be a pyplay\.models\.seq2seq\.EncoderDecoder"):
        luong_trace("model", [3], [4])
    for kwargs, match in (
        ({"wiring": "init"}, "model must have wiring 'context' or 'attention', got 'init'"),
        ({"wiring": "bahdanau"}, "got 'bahdanau'"),
        ({"wiring": "attention", "score": "cosine"}, "got 'cosine'"),
        ({"wiring": "context", "num_layers": 2}, "got num_layers=2"),
        ({"wiring": "attention", "bidirectional_encoder": True}, "bidirectional_encoder=True"),
    ):
        with pytest.raises(ValueError, match=match):
            luong_form(EncoderDecoder(11, 11, 4, 4, **kwargs))
    model = luong_seq2seq(11, 11, "dot", hidden_size=4)
    with pytest.raises(ValueError, match=r"source must hold symbol ids 3\.\.10, got .* max 11"):
        luong_trace(model, [3, 11], [4])
    with pytest.raises(ValueError, match=r"target must hold ids 0\.\.10, got min -1"):
        luong_trace(model, [3], [-1, 4])
    with pytest.raises(ValueError, match=r"target must not hold EOS \(2\)"):
        luong_trace(model, [3], [2])
    assert luong_trace(model, [3], [0, 1]).logits.shape == (3, 11)  # PAD, BOS: readable
    with pytest.raises(ValueError, match="source must hold at least one token id"):
        luong_trace(model, [], [4])
    with pytest.raises(TypeError, match="source must hold integer indices"):
        luong_trace(model, [3.0], [4])


@pytest.mark.slow
def test_attention_learns_reversal_where_the_constant_context_does_not() -> None:
    start = time.perf_counter()
    scores = {}
    for form in ("context", "dot", "general", "concat"):
        task = Reversal(n_symbols=6, min_len=3, max_len=8, rng=0)
        V = len(task.src_vocab)
        model = luong_seq2seq(V, V, form, embedding_dim=16, hidden_size=32, rng=0)
        trainer = Trainer(model, task, lr=0.01, batch_size=32, clip=1.0)
        for _ in trainer.run(300):
            pass
        scores[form] = trainer.evaluate(batch_size=256)["exact_match"]
    print(f"reversal exact match after 300 steps: {scores}, {time.perf_counter() - start:.1f} s")
    assert scores["context"] < 0.5
    for form in ("dot", "general", "concat"):
        assert scores[form] >= 0.95, scores
