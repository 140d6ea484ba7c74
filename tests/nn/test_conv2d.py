"""Conv2d: the im2col kernel against the plain loops, central differences (float64) and
torch.nn.Conv2d; bad arguments refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.nn import Conv2d
from pyplay.nn.conv2d import conv2d_reference, conv2d_reference_backward

# (in, out, kernel, stride, padding, input H x W): square and oblong kernels, strides that
# leave rows unread, padding on one axis only
SETTINGS = [
    (2, 3, 3, 1, 1, (5, 6)),
    (3, 4, 3, 2, 1, (7, 6)),
    (2, 2, (2, 3), (2, 1), (0, 1), (5, 5)),
    (1, 3, 4, 4, 0, (8, 9)),
]


@pytest.mark.parametrize(("C", "O", "k", "s", "p", "hw"), SETTINGS)
def test_conv2d_gradients_match_central_differences(C, O, k, s, p, hw) -> None:
    rng = np.random.default_rng(0)
    layer = Conv2d(C, O, k, stride=s, padding=p, dtype=np.float64, rng=1)
    x = rng.normal(size=(2, C, *hw))
    y, cache = layer.forward(x)
    R = rng.normal(size=y.shape)
    dx, grads = layer.backward(R, cache)
    assert set(grads) == set(layer.params)

    def loss() -> float:
        return float(np.sum(layer.forward(x)[0] * R))

    assert_grad_close(dx, numeric_grad(loss, x), "dx")
    for name, value in layer.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, value), name)


@pytest.mark.parametrize(("C", "O", "k", "s", "p", "hw"), SETTINGS)
def test_the_im2col_kernel_equals_the_plain_loops(C, O, k, s, p, hw) -> None:
    rng = np.random.default_rng(3)
    layer = Conv2d(C, O, k, stride=s, padding=p, dtype=np.float64, rng=2)
    x = rng.normal(size=(3, C, *hw))
    y, cache = layer.forward(x)
    W, b = layer.params["weight"], layer.params["bias"]
    np.testing.assert_allclose(y, conv2d_reference(x, W, b, layer.stride, layer.padding), 1e-12)
    R = rng.normal(size=y.shape)
    dx, grads = layer.backward(R, cache)
    rdx, rdW, rdb = conv2d_reference_backward(R, x, W, layer.stride, layer.padding)
    for fast, plain in ((dx, rdx), (grads["weight"], rdW), (grads["bias"], rdb)):
        np.testing.assert_allclose(fast, plain, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("C", "O", "k", "s", "p", "hw"), SETTINGS)
def test_conv2d_matches_torch_forward_and_gradients(C, O, k, s, p, hw, bias) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    layer = Conv2d(C, O, k, stride=s, padding=p, bias=bias, dtype=np.float64, rng=5)
    twin = torch.nn.Conv2d(C, O, k, stride=s, padding=p, bias=bias).double()
    twin.load_state_dict({n: torch.from_numpy(v.copy()) for n, v in layer.params.items()})
    x = rng.normal(size=(2, C, *hw))
    y, cache = layer.forward(x)
    R = rng.normal(size=y.shape)
    dx, grads = layer.backward(R, cache)
    xt = torch.from_numpy(x).requires_grad_()
    yt = twin(xt)
    (yt * torch.from_numpy(R)).sum().backward()
    assert max_rel_error(y, yt.detach().numpy()) < 1e-6
    assert max_rel_error(dx, xt.grad.numpy()) < 1e-6
    for name, p_t in twin.named_parameters():
        assert max_rel_error(grads[name], p_t.grad.numpy()) < 1e-6, name


def test_conv2d_has_torchs_default_initialisation_bounds_and_float32() -> None:
    layer = Conv2d(3, 8, 3, rng=0)
    k = 1 / np.sqrt(3 * 3 * 3)
    assert layer.params["weight"].shape == (8, 3, 3, 3) and layer.params["bias"].shape == (8,)
    assert all(np.abs(v).max() <= k for v in layer.params.values())
    assert all(v.dtype == np.float32 for v in layer.params.values())
    y, cache = layer.forward(np.zeros((2, 3, 6, 6)))
    assert y.dtype == np.float32 and y.shape == (2, 8, 4, 4)
    assert layer.backward(np.ones_like(y), cache)[0].dtype == np.float32
    assert layer.output_shape(24, 24) == (22, 22)
    assert Conv2d(3, 8, 3, stride=2, padding=1).output_shape(24, 24) == (12, 12)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"in_channels": 0}, ValueError, r"in_channels must be >= 1, got 0"),
        ({"out_channels": 2.0}, TypeError, r"out_channels must be an integer, got 2\.0"),
        ({"kernel_size": 0}, ValueError, r"kernel_size must be >= 1, got 0"),
        ({"kernel_size": (3, 3, 3)}, ValueError, r"kernel_size must be an integer or a pair"),
        ({"kernel_size": (3, 0)}, ValueError, r"kernel_size\[1\] must be >= 1, got 0"),
        ({"stride": 0}, ValueError, r"stride must be >= 1, got 0"),
        ({"stride": "2"}, TypeError, r"stride must be an integer or a pair of integers, got '2'"),
        ({"padding": -1}, ValueError, r"padding must be >= 0, got -1"),
        ({"padding": "same"}, TypeError, r"padding must be an integer .* got 'same'"),
        ({"bias": 1}, TypeError, r"bias must be True or False, got 1"),
        ({"dtype": np.int32}, TypeError, r"dtype must be numpy\.float32 or numpy\.float64"),
    ],
)
def test_bad_constructor_arguments_are_refused_by_name(kwargs, error, message) -> None:
    args = {"in_channels": 2, "out_channels": 3, "kernel_size": 3, **kwargs}
    with pytest.raises(error, match=message):
        Conv2d(**args)


def test_bad_inputs_are_refused_by_name() -> None:
    layer = Conv2d(2, 3, 3, padding=1)
    with pytest.raises(ValueError, match=r"input must be a 4-D array \(B, C, H, W\), got shape"):
        layer.forward(np.zeros((2, 5, 5)))
    with pytest.raises(ValueError, match=r"input must have in_channels=2 channels .* \(1, 3, 5"):
        layer.forward(np.zeros((1, 3, 5, 5)))
    with pytest.raises(ValueError, match=r"at least as large as the kernel \(5, 5\) once padded"):
        Conv2d(2, 3, 5).forward(np.zeros((1, 2, 3, 6)))
    with pytest.raises(ValueError, match="input must be finite"):
        layer.forward(np.full((1, 2, 4, 4), np.nan))
    _, cache = layer.forward(np.zeros((1, 2, 4, 4)))
    with pytest.raises(ValueError, match=r"dy must have the output's shape \(1, 3, 4, 4\)"):
        layer.backward(np.zeros((1, 3, 4, 3)), cache)
