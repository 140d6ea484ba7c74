"""Linear, Embedding, Dropout, pad_sequences: gradients, PyTorch parity, errors."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.nn import Dropout, Embedding, Linear, pad_sequences


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3)])
def test_linear_gradients(bias, shape):
    rng = np.random.default_rng(0)
    layer = Linear(3, 4, bias=bias, dtype=np.float64, rng=1)
    x = rng.normal(size=shape)
    y, cache = layer.forward(x)
    R = rng.normal(size=y.shape)
    dx, grads = layer.backward(R, cache)
    assert set(grads) == set(layer.params)

    def loss() -> float:
        return float(np.sum(layer.forward(x)[0] * R))

    assert_grad_close(dx, numeric_grad(loss, x), "dx")
    for k, p in layer.params.items():
        assert_grad_close(grads[k], numeric_grad(loss, p), k)


def test_linear_and_embedding_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    lin = Linear(3, 4, dtype=np.float64, rng=0)
    tlin = torch.nn.Linear(3, 4).double()
    tlin.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in lin.params.items()})
    x = rng.normal(size=(2, 5, 3))
    R = rng.normal(size=(2, 5, 4))
    y, cache = lin.forward(x)
    dx, grads = lin.backward(R, cache)
    xt = torch.from_numpy(x).requires_grad_()
    yt = tlin(xt)
    (yt * torch.from_numpy(R)).sum().backward()
    assert max_rel_error(y, yt.detach().numpy()) < 1e-6
    assert max_rel_error(dx, xt.grad.numpy()) < 1e-6
    for k, p in tlin.named_parameters():
        assert max_rel_error(grads[k], p.grad.numpy()) < 1e-6

    emb = Embedding(6, 3, padding_idx=0, dtype=np.float64, rng=0)
    temb = torch.nn.Embedding(6, 3, padding_idx=0).double()
    temb.load_state_dict({"weight": torch.from_numpy(emb.params["weight"].copy())})
    idx = np.array([[0, 2, 2, 5], [1, 0, 2, 3]])
    R = rng.normal(size=(2, 4, 3))
    out, cache = emb.forward(idx)
    _, grads = emb.backward(R, cache)
    (temb(torch.from_numpy(idx)) * torch.from_numpy(R)).sum().backward()
    assert max_rel_error(out, temb(torch.from_numpy(idx)).detach().numpy()) < 1e-6
    assert max_rel_error(grads["weight"], temb.weight.grad.numpy()) < 1e-6


def test_embedding_gradient_accumulates_repeats_and_skips_padding():
    emb = Embedding(4, 2, padding_idx=1, dtype=np.float64, rng=0)
    assert not emb.params["weight"][1].any()
    idx = np.array([2, 2, 1, 3])
    R = np.random.default_rng(0).normal(size=(4, 2))
    _, cache = emb.forward(idx)
    _, grads = emb.backward(R, cache)
    W = emb.params["weight"]

    def loss() -> float:
        return float(np.sum(emb.forward(idx)[0] * R))

    numeric = numeric_grad(loss, W)
    numeric[1] = 0.0  # padding_idx receives no gradient by definition
    assert_grad_close(grads["weight"], numeric, "weight")
    np.testing.assert_allclose(grads["weight"][2], R[0] + R[1])


def test_dropout_masks_scale_and_switch_off():
    drop = Dropout(0.5, rng=0)
    x = np.ones((200, 50))
    y, mask = drop.forward(x)
    assert set(np.unique(y)) == {0.0, 2.0}
    assert abs(y.mean() - 1.0) < 0.05
    dx, _ = drop.backward(np.ones_like(x), mask)
    np.testing.assert_array_equal(dx, y)  # same mask, same scaling
    same, none = drop.forward(x, training=False)
    assert same is x and none is None
    again, _ = Dropout(0.5, rng=0).forward(x)
    np.testing.assert_array_equal(again, y)


def test_pad_sequences():
    tokens, lengths = pad_sequences([[1, 2, 3], [4], [5, 6]])
    np.testing.assert_array_equal(tokens, [[1, 2, 3], [4, 0, 0], [5, 6, 0]])
    np.testing.assert_array_equal(lengths, [3, 1, 2])
    feats, lengths = pad_sequences([np.ones((2, 3)), np.ones((4, 3))], padding_value=-1.0)
    assert feats.shape == (2, 4, 3) and feats[0, 3, 0] == -1.0
    with pytest.raises(ValueError, match=r"seqs\[1\]"):
        pad_sequences([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="seqs"):
        pad_sequences([])


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda: Linear(0, 3), ValueError, "in_features"),
        (lambda: Linear(3, 2).forward(np.ones((2, 4))), ValueError, "in_features=3"),
        (lambda: Linear(3, 2).forward("abc"), TypeError, "x"),
        (lambda: Embedding(5, 2).forward(np.array([1.0, 2.0])), TypeError, "input"),
        (lambda: Embedding(5, 2).forward(np.array([1, 5])), ValueError, "0..4"),
        (lambda: Embedding(5, 2).forward(np.array([-1])), ValueError, "input"),
        (lambda: Embedding(5, 2, padding_idx=7), ValueError, "padding_idx"),
        (lambda: Dropout(1.0), ValueError, "p"),
        (lambda: Linear(3, 2, rng="seed"), TypeError, "rng"),
        (lambda: Linear(3, 2, dtype=np.int64), TypeError, "dtype"),
    ],
)
def test_bad_input_names_the_argument(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
