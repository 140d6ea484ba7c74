"""Losses: central-difference gradients, parity with torch.nn.functional, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.losses import cross_entropy, log_softmax, mse, softmax


def _ce_case(shape, V=5, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(*shape, V)) * 3
    y = rng.integers(0, V, size=shape)
    return z, y


@pytest.mark.parametrize("shape", [(6,), (2, 4)])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("masked", [False, True])
def test_cross_entropy_gradient(shape, smoothing, reduction, masked):
    z, y = _ce_case(shape)
    y.reshape(-1)[1] = -100  # one ignored position
    mask = None
    if masked:
        mask = np.ones(shape, dtype=bool)
        mask.reshape(-1)[0] = False
    kw = dict(label_smoothing=smoothing, reduction=reduction, mask=mask)
    _, dz = cross_entropy(z, y, **kw)

    def loss() -> float:
        return float(np.sum(cross_entropy(z, y, **kw)[0]))

    assert_grad_close(dz, numeric_grad(loss, z), "dlogits")


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_matches_torch(smoothing, reduction):
    torch = pytest.importorskip("torch")
    z, y = _ce_case((3, 4), V=6, seed=1)
    y[0, 2] = -100
    loss, dz = cross_entropy(z, y, label_smoothing=smoothing, reduction=reduction)
    zt = torch.from_numpy(z.reshape(-1, 6)).requires_grad_()
    lt = torch.nn.functional.cross_entropy(
        zt,
        torch.from_numpy(y.reshape(-1)),
        ignore_index=-100,
        label_smoothing=smoothing,
        reduction=reduction,
    )
    lt.sum().backward()
    got = np.asarray(loss).reshape(-1)
    assert max_rel_error(got, lt.detach().numpy().reshape(-1)) < 1e-6
    assert max_rel_error(dz.reshape(-1, 6), zt.grad.numpy()) < 1e-6


def test_cross_entropy_is_stable_for_huge_logits():
    z = np.array([[1e4, 0.0, -1e4]])
    loss, dz = cross_entropy(z, np.array([0]))
    assert loss == pytest.approx(0.0, abs=1e-12) and np.isfinite(dz).all()
    loss, _ = cross_entropy(z, np.array([2]))
    assert loss == pytest.approx(2e4)
    np.testing.assert_allclose(softmax(z).sum(), 1.0)
    assert np.isfinite(log_softmax(z)).all()


def test_cross_entropy_with_nothing_counted_is_zero():
    z, y = _ce_case((4,))
    loss, dz = cross_entropy(z, y, mask=np.zeros(4, dtype=bool))
    assert loss == 0.0 and not dz.any()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("masked", [False, True])
def test_mse_gradient_and_torch(reduction, masked):
    rng = np.random.default_rng(3)
    p, t = rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2))
    mask = rng.random((2, 3, 2)) < 0.6 if masked else None
    _, dp = mse(p, t, mask=mask, reduction=reduction)

    def loss() -> float:
        return float(np.sum(mse(p, t, mask=mask, reduction=reduction)[0]))

    assert_grad_close(dp, numeric_grad(loss, p), "dpred")
    torch = pytest.importorskip("torch")
    if not masked:
        pt = torch.from_numpy(p).requires_grad_()
        lt = torch.nn.functional.mse_loss(pt, torch.from_numpy(t), reduction=reduction)
        lt.sum().backward()
        got = np.asarray(mse(p, t, reduction=reduction)[0]).reshape(-1)
        assert max_rel_error(got, lt.detach().numpy().reshape(-1)) < 1e-6
        assert max_rel_error(dp, pt.grad.numpy()) < 1e-6


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (
            lambda: cross_entropy(np.zeros((2, 3, 4, 5)), np.zeros((2, 3, 4), int)),
            ValueError,
            "logits",
        ),
        (lambda: cross_entropy(np.zeros((2, 5)), np.zeros(3, int)), ValueError, "targets"),
        (lambda: cross_entropy(np.zeros((2, 5)), np.zeros(2)), TypeError, "targets"),
        (lambda: cross_entropy(np.zeros((2, 5)), np.array([0, 7])), ValueError, "0..4"),
        (
            lambda: cross_entropy(np.zeros((2, 5)), np.zeros(2, int), label_smoothing=1.0),
            ValueError,
            "label_smoothing",
        ),
        (
            lambda: cross_entropy(np.zeros((2, 5)), np.zeros(2, int), reduction="avg"),
            ValueError,
            "reduction",
        ),
        (
            lambda: cross_entropy(np.zeros((2, 5)), np.zeros(2, int), mask=np.ones(2)),
            TypeError,
            "mask",
        ),
        (lambda: cross_entropy(np.full((2, 5), np.nan), np.zeros(2, int)), ValueError, "logits"),
        (lambda: mse(np.zeros(3), np.zeros(4)), ValueError, "target"),
    ],
)
def test_bad_input_names_the_argument(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
