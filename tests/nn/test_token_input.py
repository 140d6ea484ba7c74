"""Token ids read through the embedding table by the first recurrent layer (TokenInput).

The projected table is a shortcut for "embed, then project": these tests hold it to the plain
two-step version in float64, for every cell, both directions, stacked layers and ragged
batches, and check the scatter kernels it uses against ``np.add.at``.
"""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.models import SequenceModel
from pyplay.nn import GRU, LSTM, RNN, Embedding
from pyplay.nn._ops import scatter_rows, scatter_rows_reference, scatter_rows_sorted
from pyplay.nn.token_input import TokenInput

TIGHT = dict(rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("scatter", [scatter_rows, scatter_rows_sorted])
@pytest.mark.parametrize(("N", "V"), [(0, 3), (1, 1), (7, 5), (300, 40), (4096, 1100)])
def test_scatter_rows_sum_the_rows_of_each_index_like_add_at(scatter, N, V):
    rng = np.random.default_rng(N + V)
    values = rng.normal(size=(N, 6))  # (N, K)
    hit = max(1, V // 2)  # the rows below this may be hit, the others never
    index = rng.integers(0, hit, size=N)  # (N,)
    expected = scatter_rows_reference(values, index, V)  # (V, K)
    got = scatter(values, index, V)
    assert got.shape == (V, 6) and got.dtype == values.dtype
    np.testing.assert_allclose(got, expected, **TIGHT)
    if N:
        v = int(index[0])
        np.testing.assert_allclose(got[v], values[index == v].sum(axis=0), **TIGHT)
        assert not got[hit:].any()


@pytest.mark.parametrize("layer_cls", [RNN, LSTM, GRU])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_projected_table_gives_the_outputs_and_gradients_of_embedding_first(
    layer_cls, bidirectional
):
    rng = np.random.default_rng(5)
    V, E, H, B, T = 7, 3, 4, 3, 5
    emb = Embedding(V, E, dtype=np.float64, rng=1)
    rnn = layer_cls(E, H, num_layers=2, bidirectional=bidirectional, dtype=np.float64, rng=2)
    ids = rng.integers(0, V, size=(B, T))  # (B, T)
    lengths = np.array([5, 2, 4])
    D = 2 if bidirectional else 1
    dout = rng.normal(size=(B, T, D * H))  # dL/dout
    x, emb_cache = emb.forward(ids)  # (B, T, E)

    y_dense, state_dense, cache_dense = rnn.forward(x, lengths=lengths)
    dx_dense, dstate_dense, grads_dense = rnn.backward(dout, None, cache_dense)
    _, table_dense = emb.backward(dx_dense, emb_cache)

    y, state, cache = rnn.forward(emb.tokens(ids), lengths=lengths)
    dtable, dstate, grads = rnn.backward(dout, None, cache)

    np.testing.assert_allclose(y, y_dense, **TIGHT)
    for a, b in zip(np.atleast_1d(state), np.atleast_1d(state_dense), strict=True):
        np.testing.assert_allclose(a, b, **TIGHT)
    for a, b in zip(np.atleast_1d(dstate), np.atleast_1d(dstate_dense), strict=True):
        np.testing.assert_allclose(a, b, **TIGHT)
    assert list(grads) == list(grads_dense)
    for name in grads:
        np.testing.assert_allclose(grads[name], grads_dense[name], **TIGHT, err_msg=name)
    assert dtable.shape == (V, E)
    np.testing.assert_allclose(dtable, table_dense["weight"], **TIGHT)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_sequence_model_reads_the_table_unless_asked_for_the_input_gradient(cell):
    rng = np.random.default_rng(8)
    model = SequenceModel(
        cell, input_kind="tokens", input_size=6, output_size=4, hidden_size=5,
        embedding_dim=3, dtype=np.float64, rng=3,
    )  # fmt: skip
    ids = rng.integers(0, 6, size=(2, 7))  # (B, T)
    dy = rng.normal(size=(2, 7, 4))
    y, _, cache = model.forward(ids)
    y_in, _, cache_in = model.forward(ids, input_gradient=True)
    assert isinstance(cache.embedding, TokenInput)
    assert not isinstance(cache_in.embedding, TokenInput)
    np.testing.assert_allclose(y, y_in, **TIGHT)
    grads, grads_in = model.backward(dy, cache).grads, model.backward(dy, cache_in).grads
    assert list(grads) == list(grads_in) == list(model.params)
    for name in grads:
        np.testing.assert_allclose(grads[name], grads_in[name], **TIGHT, err_msg=name)
    dhs, _ = model.head.backward(dy, cache_in.head)
    dx = model.rnn.backward(dhs, None, cache_in.rnn).dx
    assert dx.shape == (2, 7, 3)  # dL/de_t at every step, as the CEC view reads it


def test_bad_token_inputs_are_refused_by_name():
    weight = np.zeros((4, 3))
    with pytest.raises(ValueError, match=r"ids must hold indices in 0\.\.3, got 4"):
        TokenInput(np.array([[0, 4]]), weight)
    with pytest.raises(TypeError, match="ids"):
        TokenInput(np.array([[0.5, 1.0]]), weight)
    with pytest.raises(ValueError, match=r"token ids \(B, T\)"):
        Embedding(4, 3).tokens(np.array([0, 1]))
    lstm = LSTM(3, 2, dtype=np.float64)
    with pytest.raises(TypeError, match=r"x\.weight must be float64"):
        lstm.forward(Embedding(4, 3, dtype=np.float32).tokens(np.array([[0, 1]])))
    with pytest.raises(ValueError, match="input_size=3"):
        lstm.forward(Embedding(4, 5, dtype=np.float64).tokens(np.array([[0, 1]])))
