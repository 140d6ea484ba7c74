"""The lecture's LSTM and GRU as layered networks (:mod:`pyplay.dynamic.book_lstm`,
:mod:`pyplay.dynamic.book_gru`), held to :class:`pyplay.nn.LSTM` / :class:`pyplay.nn.GRU`.

- ``BookLSTM.from_torch`` computes the library LSTM's outputs and final states (float64, 1e-12)
  for the plain cell, without forget gate, with peepholes and with ``forget_bias``; its BPTT
  (the core kernel's, named the book's way) equals the library's backward (1e-10) and central
  differences;
- ``BookGRU.from_torch`` equals the library GRU when ``W_hn`` is diagonal and ``b_hn = 0``, and
  differs (by more than 1e-3) otherwise: the reset gate's placement (the book's GRU runs the
  core GRU with ``reset_after=False``); every layer is the slide's equation of its inputs;
- the slide's identities on the trace; argument errors.

Run with ``-s`` to see the largest differences measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.dynamic import BookGRU, BookLSTM
from pyplay.nn import GRU, LSTM

B, T, R, S = 2, 5, 3, 4
WORST: dict[str, float] = {}
LSTM_VARIANTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "no-forget-gate": {"forget_gate": False},
    "peephole": {"peephole": True},
    "peephole-no-forget-gate": {"peephole": True, "forget_gate": False},
    "forget-bias": {"forget_bias": 1.5},
    "peephole-forget-bias": {"peephole": True, "forget_bias": 1.0},
}


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[book lstm/gru] max abs difference, {kind}: {err:.2e}")


def _diff(ours: np.ndarray, theirs: np.ndarray, kind: str, tol: float) -> None:
    assert ours.shape == theirs.shape, f"{kind}: {ours.shape} != {theirs.shape}"
    err = float(np.max(np.abs(ours - theirs)))
    WORST[kind] = max(WORST.get(kind, 0.0), err)
    assert err <= tol, f"{kind}: max abs difference {err:.3e} > {tol:.0e}"


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.standard_normal((B, T, R))
    h0, c0 = rng.standard_normal((2, 1, B, S))
    return p, h0, c0, rng.standard_normal((B, T, S))


def _lstm_rows(x: np.ndarray, forget_gate: bool) -> dict[int, np.ndarray]:
    """torch's gate rows i, f, g, o (i, g, o) as the book's layers 2, 3, 1, 4 (2, 1, 4)."""
    order = (2, 3, 1, 4) if forget_gate else (2, 1, 4)
    return {m: x[k * S : (k + 1) * S] for k, m in enumerate(order)}


@pytest.mark.parametrize("variant", list(LSTM_VARIANTS))
def test_book_lstm_equals_library_lstm_forward_and_backward(variant: str) -> None:
    kw = LSTM_VARIANTS[variant]
    lstm = LSTM(R, S, dtype=np.float64, rng=3, **kw)
    book = BookLSTM.from_torch(lstm)
    p, h0, c0, dy = _data()
    y, (h_n, c_n), cache = lstm.forward(p, (h0, c0))
    trace = book.forward(p, h0[0], c0[0])
    _diff(trace.a[6], y, "LSTM output a^6 vs h", 1e-12)
    _diff(trace.a[6][:, -1], h_n[0], "LSTM output a^6 vs h", 1e-12)
    _diff(trace.a[5][:, -1], c_n[0], "LSTM CEC a^5 vs c", 1e-12)
    dx, (dh0, dc0), g = lstm.backward(dy, None, cache)
    gb = book.backward(dy, trace)
    fg = lstm.forget_gate
    for name, ours in (("weight_ih_l0", gb.IW), ("weight_hh_l0", gb.LW), ("bias_ih_l0", gb.b)):
        theirs = _lstm_rows(g[name], fg)
        for m in book.layers:
            _diff(ours[m], theirs[m], "LSTM gradients", 1e-10)
    if lstm.peephole:
        names = {2: "weight_ci_l0", 3: "weight_cf_l0", 4: "weight_co_l0"}
        for m in book.gates:
            _diff(gb.peephole[m], g[names[m]], "LSTM gradients", 1e-10)
    _diff(gb.p, dx, "LSTM gradients", 1e-10)
    _diff(gb.a0[6], dh0[0], "LSTM gradients", 1e-10)
    _diff(gb.a0[5], dc0[0], "LSTM gradients", 1e-10)


def _gradcheck(
    net: Any, run: Callable[[np.ndarray], Any], p: np.ndarray, a0: dict[int, np.ndarray]
) -> None:
    """Central differences of ``L = sum(a^6 * W)`` w.r.t. every weight, ``p`` and ``a0``."""
    W = np.random.default_rng(7).standard_normal((B, T, S))

    def loss() -> float:
        return float(np.sum(run(p).a[6] * W))

    grads = net.backward(W, run(p))
    arrays = [("IW", net.IW, grads.IW), ("LW", net.LW, grads.LW), ("b", net.b, grads.b)]
    arrays.append(("peephole", getattr(net, "peephole", {}), grads.peephole))
    arrays.append(("a0", a0, grads.a0))
    checked = 0
    for what, weights, analytic in arrays:
        assert sorted(weights) == sorted(analytic), what
        for m, w in weights.items():
            numeric = numeric_grad(loss, w)
            assert_grad_close(analytic[m], numeric, f"{what}[{m}]")
            WORST["gradcheck"] = max(
                WORST.get("gradcheck", 0.0), np.max(abs(analytic[m] - numeric))
            )
            checked += 1
    assert_grad_close(grads.p, numeric_grad(loss, p), "p")
    assert checked >= 9


@pytest.mark.parametrize("variant", ["plain", "no-forget-gate", "peephole-forget-bias"])
def test_book_lstm_backward_passes_central_differences(variant: str) -> None:
    book = BookLSTM.from_torch(LSTM(R, S, dtype=np.float64, rng=5, **LSTM_VARIANTS[variant]))
    p, h0, c0, _ = _data(1)
    a0 = {6: h0[0].copy(), 5: c0[0].copy()}
    _gradcheck(book, lambda x: book.forward(x, a0[6], a0[5]), p, a0)


def _diagonal_gru(seed: int) -> GRU:
    """A GRU whose W_hn is diagonal and b_hn = 0: where the slide and PyTorch agree."""
    gru = GRU(R, S, dtype=np.float64, rng=seed)
    W_hn = gru.params["weight_hh_l0"][2 * S :]  # (S, S) view
    W_hn[...] = np.diag(np.diag(W_hn))
    gru.params["bias_hh_l0"][2 * S :] = 0.0
    return gru


def test_book_gru_equals_library_gru_when_w_hn_is_diagonal_and_b_hn_zero() -> None:
    gru = _diagonal_gru(4)
    book = BookGRU.from_torch(gru, strict=True)
    p, h0, _, dy = _data(2)
    y, h_n, cache = gru.forward(p, h0)
    trace = book.forward(p, h0[0])
    _diff(trace.a[6], y, "GRU output a^6 vs h (diagonal W_hn, b_hn = 0)", 1e-12)
    _diff(trace.a[6][:, -1], h_n[0], "GRU output a^6 vs h (diagonal W_hn, b_hn = 0)", 1e-12)
    np.testing.assert_allclose(trace.a[4], 1.0 - _z(gru, p, h0), rtol=0, atol=1e-12)  # a^4 = 1 - z
    dx, dh0, g = gru.backward(dy, None, cache)
    gb = book.backward(dy, trace)
    rows = {2: slice(0, S), 4: slice(S, 2 * S), 1: slice(2 * S, 3 * S)}
    sign = {1: 1.0, 2: 1.0, 4: -1.0}  # layer 4 holds the negated z weights
    for m, rs in rows.items():
        _diff(gb.IW[m], sign[m] * g["weight_ih_l0"][rs], "GRU gradients (diagonal W_hn)", 1e-10)
        _diff(gb.b[m], sign[m] * g["bias_ih_l0"][rs], "GRU gradients (diagonal W_hn)", 1e-10)
        if m != 1:  # LW^{1,3} is full, torch's W_hn diagonal: compare the diagonal
            _diff(gb.LW[m], sign[m] * g["weight_hh_l0"][rs], "GRU gradients (diagonal W_hn)", 1e-10)
    _diff(
        np.diag(gb.LW[1]),
        np.diag(g["weight_hh_l0"][2 * S :]),
        "GRU gradients (diagonal W_hn)",
        1e-10,
    )
    _diff(gb.p, dx, "GRU gradients (diagonal W_hn)", 1e-10)
    _diff(gb.a0[6], dh0[0], "GRU gradients (diagonal W_hn)", 1e-10)


def _z(gru: GRU, p: np.ndarray, h0: np.ndarray) -> np.ndarray:
    """PyTorch's update gate z over time, from the library's record."""
    _, _, cache = gru.forward(p, h0, record=True)
    assert cache.record is not None
    return cache.record["l0"]["z"]


@pytest.mark.parametrize("where", ["full W_hn", "b_hn != 0"])
def test_book_gru_differs_from_pytorch_where_the_reset_gate_sits(where: str) -> None:
    gru = _diagonal_gru(6)
    if where == "full W_hn":
        gru.params["weight_hh_l0"][2 * S :] = np.random.default_rng(1).uniform(-0.9, 0.9, (S, S))
    else:
        gru.params["bias_hh_l0"][2 * S :] = 0.8
    p, h0, _, _ = _data(3)
    y, _, _ = gru.forward(p, h0)
    book = BookGRU.from_torch(gru)  # maps what it can
    err = float(np.max(np.abs(book.forward(p, h0[0]).a[6] - y)))
    WORST[f"GRU output vs PyTorch's, {where} (must differ)"] = err
    assert err > 1e-3, f"{where}: the slide's reset placement should differ, got {err:.2e}"
    with pytest.raises(ValueError, match="W_hn"):
        BookGRU.from_torch(gru, strict=True)


def test_book_gru_backward_passes_central_differences() -> None:
    book = BookGRU.from_torch(GRU(R, S, dtype=np.float64, rng=8))  # full W_hn: the slide's GRU
    p, h0, _, _ = _data(4)
    a0 = {6: h0[0].copy()}
    _gradcheck(book, lambda x: book.forward(x, a0[6]), p, a0)


def test_gru_output_is_the_slides_weighted_average_and_differencing_layer() -> None:
    book = BookGRU.from_torch(GRU(R, S, dtype=np.float64, rng=9))
    p, h0, _, _ = _data(5)
    tr = book.forward(p, h0[0])
    a6_prev = np.concatenate([h0[0][:, None], tr.a[6][:, :-1]], axis=1)  # a^6(t-1), (B, T, S)
    a1, a4 = tr.a[1], tr.a[4]
    np.testing.assert_allclose(tr.a[6], a4 * a1 + (1 - a4) * a6_prev, rtol=0, atol=1e-14)
    np.testing.assert_allclose(tr.a[6], a4 * (a1 - a6_prev) + a6_prev, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(tr.a[5], a1 - a6_prev)  # LW^{5,1} = I, LW^{5,6} = -I
    np.testing.assert_array_equal(tr.a[3], tr.a[2] * a6_prev)  # reset before layer 1
    # each layer is the slide's equation of its inputs: the reset acts before LW^{1,3}
    IW, LW, b = book.IW, book.LW, book.b

    def logsig(n: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-n))

    np.testing.assert_allclose(a1, np.tanh(p @ IW[1].T + tr.a[3] @ LW[1].T + b[1]), atol=1e-14)
    np.testing.assert_allclose(tr.a[2], logsig(p @ IW[2].T + a6_prev @ LW[2].T + b[2]), atol=1e-14)
    np.testing.assert_allclose(a4, logsig(p @ IW[4].T + a6_prev @ LW[4].T + b[4]), atol=1e-14)


def test_cec_keeps_a5_constant_with_the_forget_gate_open_and_input_gate_closed() -> None:
    book = BookLSTM.from_torch(LSTM(R, S, dtype=np.float64, rng=2))
    book.b[3][:] = 40.0  # b^3: the feedback (forget) gate saturated open, a^3 = 1
    book.b[2][:] = -40.0  # the input gate closed, a^2 = 0
    p = np.random.default_rng(6).standard_normal((B, 30, R))
    a5_0 = np.random.default_rng(7).standard_normal((B, S))
    tr = book.forward(p, None, a5_0)
    np.testing.assert_allclose(tr.a[5], np.broadcast_to(a5_0[:, None], tr.a[5].shape), atol=1e-12)
    # and b^3 is the forget gate's bias: closing the gate instead empties the CEC
    book.b[3][:] = -40.0
    assert np.max(np.abs(book.forward(p, None, a5_0).a[5])) < 1e-12


def test_b3_is_the_forget_gate_bias_and_forget_bias_lands_there() -> None:
    base = LSTM(R, S, dtype=np.float64, rng=11)
    shifted = LSTM(R, S, dtype=np.float64, rng=11, forget_bias=2.0)
    b0, b1 = BookLSTM.from_torch(base).b, BookLSTM.from_torch(shifted).b
    np.testing.assert_allclose(b1[3] - b0[3], 2.0, rtol=0, atol=1e-15)
    for m in (1, 2, 4):
        np.testing.assert_array_equal(b1[m], b0[m])
    original = BookLSTM.from_torch(LSTM(R, S, dtype=np.float64, forget_gate=False))
    assert original.layers == (1, 2, 4) and 3 not in original.b
    tr = original.forward(np.ones((1, 3, R)))
    np.testing.assert_array_equal(tr.a[3], 1.0)  # no forget gate: a^5(t) = a^5(t-1) + a^2 a^1
    np.testing.assert_allclose(tr.a[5][:, 1:] - tr.a[5][:, :-1], (tr.a[2] * tr.a[1])[:, 1:])


def test_argument_errors_name_the_argument() -> None:
    book = BookLSTM.from_torch(LSTM(R, S, dtype=np.float64))
    with pytest.raises(ValueError, match=r"p must have shape \(B, T, R\)"):
        book.forward(np.zeros((B, T, R + 1)))
    with pytest.raises(ValueError, match="p must be a 3-D array"):
        book.forward(np.zeros((T, R)))
    with pytest.raises(TypeError, match="p must be a numeric array"):
        book.forward("text")
    with pytest.raises(ValueError, match=r"a5_0 must have shape \(B, S\)"):
        book.forward(np.zeros((B, T, R)), None, np.zeros((B, S + 1)))
    trace = book.forward(np.zeros((B, T, R)))
    with pytest.raises(ValueError, match=r"da6 must have shape \(B, T, S\)"):
        book.backward(np.zeros((B, T, S + 1)), trace)
    other = BookLSTM.from_torch(LSTM(R, S, dtype=np.float64))
    with pytest.raises(ValueError, match="cache must be the trace of this network"):
        other.backward(np.zeros((B, T, S)), trace)
    with pytest.raises(ValueError, match=r"IW must have the layers \[1, 2, 3, 4\], got \[1, 2\]"):
        BookLSTM({1: np.zeros((S, R)), 2: np.zeros((S, R))}, book.LW, book.b)
    with pytest.raises(ValueError, match=r"LW\[2\] must have shape \(S, S\)"):
        BookLSTM(book.IW, {**book.LW, 2: np.zeros((S, S + 1))}, book.b)
    with pytest.raises(ValueError, match=r"IW\[4\] must have shape \(S, R\) = \(4, 3\)"):
        BookLSTM({**book.IW, 4: np.zeros((S, R + 1))}, book.LW, book.b)
    with pytest.raises(TypeError, match="b must be a dict of layer number"):
        BookLSTM(book.IW, book.LW, [1, 2])
    with pytest.raises(TypeError, match="forget_gate must be True or False, got 1"):
        BookLSTM(book.IW, book.LW, book.b, forget_gate=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"lstm must be a pyplay\.nn\.LSTM, got GRU"):
        BookLSTM.from_torch(GRU(R, S))
    with pytest.raises(ValueError, match="lstm must have num_layers=1"):
        BookLSTM.from_torch(LSTM(R, S, num_layers=2))
    with pytest.raises(TypeError, match=r"gru must be a pyplay\.nn\.GRU, got LSTM"):
        BookGRU.from_torch(LSTM(R, S))
    with pytest.raises(ValueError, match="gru must have num_layers=1 and bidirectional=False"):
        BookGRU.from_torch(GRU(R, S, bidirectional=True))
    with pytest.raises(TypeError, match="strict must be True or False"):
        BookGRU.from_torch(GRU(R, S), strict="yes")  # type: ignore[arg-type]
    gru = BookGRU.from_torch(GRU(R, S, dtype=np.float64))
    with pytest.raises(ValueError, match=r"a6_0 must have shape \(B, S\)"):
        gru.forward(np.zeros((B, T, R)), np.zeros((B + 1, S)))
