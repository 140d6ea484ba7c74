"""LayerNorm: central-difference gradient checks, parity with ``torch.nn.LayerNorm`` and bad
input.

Run with ``-s`` to see the largest relative error met in this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.nn.layernorm import LayerNorm

WORST: dict[str, float] = {}

# (normalized_shape, input shape, elementwise_affine, bias)
CONFIGS: dict[str, tuple[Any, tuple[int, ...], bool, bool]] = {
    "affine": (5, (2, 3, 5), True, True),
    "no-bias": (5, (2, 3, 5), True, False),
    "no-affine": (5, (2, 3, 5), False, True),
    "two-axes": ((3, 4), (2, 3, 4), True, True),
    "vector": (6, (6,), True, True),
}


def _case(name: str, seed: int) -> tuple[LayerNorm, np.ndarray]:
    shape, xshape, affine, bias = CONFIGS[name]
    m = LayerNorm(shape, eps=1e-5, elementwise_affine=affine, bias=bias, dtype=np.float64)
    rng = np.random.default_rng(seed)
    for p in m.params.values():  # away from the ones and zeros of the initialisation
        p[...] = 1.0 + 0.5 * rng.standard_normal(p.shape)
    return m, 2.0 * rng.standard_normal(xshape) + 0.7


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gradients(name: str) -> None:
    m, x = _case(name, 1)
    R = np.random.default_rng(2).standard_normal(x.shape)

    def loss() -> float:
        return float((m.forward(x)[0] * R).sum())

    _, cache = m.forward(x)
    dx, grads = m.backward(R, cache)
    assert list(grads) == list(m.params)
    assert_grad_close(dx, numeric_grad(loss, x), f"{name} dx")
    for pname, p in m.params.items():
        assert_grad_close(grads[pname], numeric_grad(loss, p), f"{name} {pname}")


def test_output_is_normalised_without_affine() -> None:
    m, x = _case("no-affine", 3)
    y, _ = m.forward(x)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0 / (1.0 + 1e-5 / x.var(axis=-1)), rtol=1e-12)
    assert m.params == {}


# --------------------------------------------------------------------------- torch parity
TOL = 1e-6


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[parity] max relative error, {kind}: {err:.2e}")


def close(ours: np.ndarray, theirs: Any, what: str) -> None:
    err = max_rel_error(ours, theirs.detach().numpy())
    WORST["layernorm"] = max(WORST.get("layernorm", 0.0), err)
    assert err < TOL, f"{what}: max relative error {err:.2e}"


@pytest.mark.parametrize("name", list(CONFIGS))
def test_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    shape, _, affine, bias = CONFIGS[name]
    m, x = _case(name, 4)
    t = torch.nn.LayerNorm(
        shape, eps=1e-5, elementwise_affine=affine, bias=bias, dtype=torch.float64
    )
    assert list(t.state_dict()) == list(m.params)
    t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in m.params.items()})
    R = np.random.default_rng(5).standard_normal(x.shape)
    y, cache = m.forward(x)
    dx, grads = m.backward(R, cache)
    xt = torch.tensor(x, requires_grad=True)
    yt = t(xt)
    (yt * torch.tensor(R)).sum().backward()
    close(y, yt, "y")
    close(dx, xt.grad, "dx")
    for pname, p in t.named_parameters():
        close(grads[pname], p.grad, pname)


def test_initialisation_and_float32() -> None:
    m = LayerNorm(4)
    assert m.normalized_shape == (4,)
    assert np.all(m.params["weight"] == 1.0) and np.all(m.params["bias"] == 0.0)
    x = np.random.default_rng(0).standard_normal((3, 4))
    y, cache = m.forward(x)
    dx, grads = m.backward(np.ones_like(y), cache)
    assert all(a.dtype == np.float32 for a in (y, dx, *grads.values()))
    y64, _ = LayerNorm(4, dtype=np.float64).forward(x)
    assert max_rel_error(y, y64) < 1e-5


# ------------------------------------------------------------------------------- bad input
def _raises(exc: type[Exception], name: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, f"{name!r} not named in: {message}"
    assert "got" in message, f"the given value is not reported in: {message}"


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"normalized_shape": 0}, ValueError, "normalized_shape"),
        ({"normalized_shape": "4"}, TypeError, "normalized_shape"),
        ({"normalized_shape": ()}, TypeError, "normalized_shape"),
        ({"normalized_shape": (3, 0)}, ValueError, "normalized_shape"),
        ({"normalized_shape": 4, "eps": 0.0}, ValueError, "eps"),
        ({"normalized_shape": 4, "elementwise_affine": 1}, TypeError, "elementwise_affine"),
        ({"normalized_shape": 4, "bias": None}, TypeError, "bias"),
        ({"normalized_shape": 4, "dtype": np.int32}, TypeError, "dtype"),
    ],
    ids=["zero", "str", "empty", "zero-axis", "eps", "affine", "bias", "dtype"],
)
def test_bad_constructor_arguments(kwargs: dict[str, Any], exc: type[Exception], name: str) -> None:
    _raises(exc, name, lambda: LayerNorm(**kwargs))


def test_bad_input() -> None:
    m = LayerNorm((3, 4), dtype=np.float64)
    x = np.zeros((2, 3, 4))
    _raises(ValueError, "x", lambda: m.forward(x[..., :3]))
    _raises(ValueError, "x", lambda: m.forward(np.zeros(4)))
    _raises(TypeError, "x", lambda: m.forward(np.zeros((2, 3, 4), dtype=bool)))
    _raises(ValueError, "x", lambda: m.forward(np.full((3, 4), np.nan)))
    _, cache = m.forward(x)
    _raises(ValueError, "dy", lambda: m.backward(np.ones((2, 3, 3)), cache))
