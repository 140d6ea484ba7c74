"""Property tests (hypothesis) of the recurrent layers and ``pad_sequences`` over random sizes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyplay.nn.gru import GRU
from pyplay.nn.lstm import LSTM
from pyplay.nn.rnn import RNN
from pyplay.nn.sequences import pad_sequences

LAYERS = {"rnn": RNN, "lstm": LSTM, "gru": GRU}


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    B = draw(st.integers(1, 5))
    T = draw(st.integers(1, 6))
    ragged = draw(st.booleans())
    lengths = (
        np.array(draw(st.lists(st.integers(1, T), min_size=B, max_size=B))) if ragged else None
    )
    return {
        "cell": draw(st.sampled_from(sorted(LAYERS))),
        "B": B,
        "T": T,
        "F": draw(st.integers(1, 4)),
        "H": draw(st.integers(1, 5)),
        "num_layers": draw(st.integers(1, 2)),
        "bidirectional": draw(st.booleans()),
        "dtype": draw(st.sampled_from([np.float32, np.float64])),
        "lengths": lengths,
        "seed": draw(st.integers(0, 2**16)),
        "scale": draw(st.sampled_from([0.1, 1.0, 30.0])),  # 30: saturated gates
    }


def _build(p: dict[str, Any]) -> Any:
    return LAYERS[p["cell"]](
        p["F"],
        p["H"],
        num_layers=p["num_layers"],
        bidirectional=p["bidirectional"],
        dtype=p["dtype"],
        rng=p["seed"],
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(problems())
def test_shapes_padding_and_finiteness(p: dict[str, Any]) -> None:
    layer = _build(p)
    B, T, H, D, L = p["B"], p["T"], p["H"], layer.num_directions, p["num_layers"]
    rng = np.random.default_rng(p["seed"])
    x = p["scale"] * rng.standard_normal((B, T, p["F"]))
    out, state, cache = layer.forward(x, lengths=p["lengths"])
    states = list(state) if p["cell"] == "lstm" else [state]

    assert out.shape == (B, T, D * H) and out.dtype == np.dtype(p["dtype"])
    assert all(s.shape == (L * D, B, H) and s.dtype == out.dtype for s in states)
    assert np.isfinite(out).all() and all(np.isfinite(s).all() for s in states)
    lengths = np.full(B, T) if p["lengths"] is None else p["lengths"]
    padded = np.arange(T)[None, :] >= lengths[:, None]  # (B, T)
    assert np.all(out[padded] == 0.0)
    # h_n of the last layer: forward direction at each sequence's last step, reverse at step 0
    rows = np.arange(B)
    np.testing.assert_array_equal(states[0][(L - 1) * D], out[rows, lengths - 1, :H])
    if D == 2:
        np.testing.assert_array_equal(states[0][-1], out[:, 0, H:])

    dout = rng.standard_normal(out.shape)
    dx, dstate, grads = layer.backward(dout, None, cache)
    assert dx.shape == x.shape and np.isfinite(dx).all()
    assert np.all(dx[padded] == 0.0)
    dstates = list(dstate) if p["cell"] == "lstm" else [dstate]
    assert all(d.shape == (L * D, B, H) and np.isfinite(d).all() for d in dstates)
    assert grads.keys() == layer.params.keys()
    for name, g in grads.items():
        assert g.shape == layer.params[name].shape and g.dtype == layer.params[name].dtype
        assert np.isfinite(g).all()


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(problems())
def test_a_padded_batch_equals_its_sequences_one_by_one(p: dict[str, Any]) -> None:
    """Packed semantics: padding changes nothing for the valid steps, states and gradients."""
    p = p | {"dtype": np.float64}
    layer = _build(p)
    B, T, F = p["B"], p["T"], p["F"]
    rng = np.random.default_rng(p["seed"])
    lengths = np.full(B, T) if p["lengths"] is None else p["lengths"]
    seqs = [rng.standard_normal((int(n), F)) for n in lengths]
    x, got_lengths = pad_sequences(seqs, padding_value=float(rng.standard_normal()))
    np.testing.assert_array_equal(got_lengths, lengths)
    out, state, cache = layer.forward(x, lengths=lengths)
    dout = rng.standard_normal(out.shape)
    dx, _, grads = layer.backward(dout, None, cache)
    lstm = p["cell"] == "lstm"
    total = {name: np.zeros_like(g) for name, g in grads.items()}
    for b, seq in enumerate(seqs):
        n = seq.shape[0]
        out_b, state_b, cache_b = layer.forward(seq[None])
        np.testing.assert_allclose(out[b, :n], out_b[0], rtol=1e-10, atol=1e-12)
        for s, s_b in zip(state if lstm else [state], state_b if lstm else [state_b], strict=True):
            np.testing.assert_allclose(s[:, b], s_b[:, 0], rtol=1e-10, atol=1e-12)
        dx_b, _, grads_b = layer.backward(dout[b : b + 1, :n], None, cache_b)
        np.testing.assert_allclose(dx[b, :n], dx_b[0], rtol=1e-10, atol=1e-12)
        for name, g in grads_b.items():
            total[name] += g
    for name, g in grads.items():
        np.testing.assert_allclose(g, total[name], rtol=1e-9, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(1, 7), min_size=1, max_size=6),
    st.sampled_from([0, None]),
    st.integers(-3, 3),
)
def test_pad_sequences_round_trip(sizes: list[int], features: int | None, pad: int) -> None:
    rng = np.random.default_rng(len(sizes))
    seqs: list[np.ndarray]
    if features is None:
        seqs = [rng.integers(0, 50, size=n) for n in sizes]
    else:
        seqs = [rng.standard_normal((n, 3)) for n in sizes]
    x, lengths = pad_sequences(seqs, padding_value=pad)
    assert lengths.dtype == np.int64 and lengths.tolist() == sizes
    assert x.shape[:2] == (len(sizes), max(sizes))
    assert x.dtype == seqs[0].dtype
    for b, s in enumerate(seqs):
        np.testing.assert_array_equal(x[b, : sizes[b]], s)
        assert np.all(x[b, sizes[b] :] == pad)
