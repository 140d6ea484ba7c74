"""The fast normal CDF behind gelu against its plain reference (math.erf on every element),
and the activation's derivative against central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyplay.nn.gelu import _P32, _Q32, _horner, activate, normal_cdf, normal_cdf_reference


def _points() -> np.ndarray:
    rng = np.random.default_rng(0)
    grid = np.linspace(-40.0, 40.0, 20_001)  # both branches, their joins, the far tails
    joins = np.array([1.0, np.sqrt(2.0), 8.0 * np.sqrt(2.0), 0.0, -0.0, 1e-300, 1e-8])
    return np.concatenate([grid, rng.normal(scale=3.0, size=5_000), joins, -joins])


def test_normal_cdf_matches_the_reference_in_float64() -> None:
    a = _points()
    fast, ref = normal_cdf(a), normal_cdf_reference(a)
    assert fast.dtype == np.float64
    np.testing.assert_allclose(fast, ref, rtol=0, atol=4e-16)
    # relative precision where 1 + erf cancels (the reference's 0.5 (1 + erf) loses it there)
    exact = np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in a])
    tail = (exact > 1e-300) & (np.abs(a) < 11.3)  # below that z = 8 is clipped (error < 1e-28)
    np.testing.assert_allclose(fast[tail], exact[tail], rtol=1e-13)


def test_normal_cdf_in_float32_stays_float32() -> None:
    a = _points().astype(np.float32)
    fast = normal_cdf(a)
    assert fast.dtype == np.float32
    np.testing.assert_allclose(fast, normal_cdf_reference(a.astype(np.float64)), atol=3e-7)


def test_the_float32_rational_is_the_fit_the_docstring_claims() -> None:
    # erfc(z) exp(z^2) / 2 = P(z) / Q(z) on [0, 8] within 3.5e-9 relative, in float64
    z = np.linspace(0.0, 8.0, 40_001)
    exact = np.array([0.5 * math.erfc(v) * math.exp(v * v) for v in z])
    fit = _horner(z, _P32, False) / _horner(z, _Q32, True)
    np.testing.assert_allclose(fit, exact, rtol=3.5e-9, atol=0)


def test_normal_cdf_in_float32_is_relatively_precise_in_the_lower_tail() -> None:
    # where Phi is small (down to 1e-29) float32 keeps its relative precision; the rounding of
    # a^2 / 2 in float32 inside exp is what is left (under 1e-5 at a = -11.3)
    a = np.linspace(-11.3, 0.0, 20_001).astype(np.float32)
    exact = np.array([0.5 * math.erfc(-float(v) / math.sqrt(2.0)) for v in a])
    np.testing.assert_allclose(normal_cdf(a), exact, rtol=1e-5, atol=0)


def test_normal_cdf_keeps_the_shape() -> None:
    a = np.random.default_rng(1).normal(size=(2, 3, 4))
    assert normal_cdf(a).shape == (2, 3, 4)
    np.testing.assert_allclose(normal_cdf(a), normal_cdf_reference(a), atol=4e-16)


@pytest.mark.parametrize("name", ["gelu", "relu"])
def test_derivative_matches_central_differences(name: str) -> None:
    a = np.random.default_rng(2).normal(scale=2.0, size=200)
    a = a[np.abs(a) > 1e-3]  # relu's kink
    y, dy = activate(name, a)
    h = 1e-6
    numeric = (activate(name, a + h)[0] - activate(name, a - h)[0]) / (2 * h)
    np.testing.assert_allclose(dy, numeric, rtol=1e-7, atol=1e-9)
    if name == "gelu":
        np.testing.assert_allclose(y, a * normal_cdf_reference(a), rtol=1e-14, atol=1e-15)
