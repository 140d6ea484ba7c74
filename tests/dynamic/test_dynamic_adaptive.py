"""The adaptive filter of the NLP lecture (a TDL, one purelin neuron, LMS), in the
noise-cancellation setting (pyplay.dynamic.adaptive).

The lecture's slide gives the filter's equation, a(k) = purelin(Wp + b) = sum_i w_1,i
y(k-i+1) + b, but prints no worked numbers; the setting is that of NND2 ch. 10 (signal uniform
on [-0.2, 0.2], noise source 1.2 sin(2 pi k/3), contaminating noise 0.12 sin(2 pi k/3 + pi/2),
two taps, alpha = 0.1). Every expected number below is derived from that setting, not typed in.
"""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.dynamic.adaptive import lms_filter, noise_cancellation, wiener_solution

# the setting's statistics, derived: E[v(k) v(k-d)] = 1.2^2/2 cos(2 pi d/3),
# E[m(k) v(k-d)] = 1.2 * 0.12 / 2 * cos(pi/2 + 2 pi d/3); s is independent of v
R_EXACT = 0.72 * np.array([[1.0, np.cos(2 * np.pi / 3)], [np.cos(2 * np.pi / 3), 1.0]])
H_EXACT = 0.072 * np.cos(np.pi / 2 + 2 * np.pi * np.arange(2) / 3)
X_STAR = np.linalg.solve(R_EXACT, H_EXACT)
MSE_MIN = 0.4**2 / 12  # E[s^2]: what is left when the filter cancels m exactly


def test_adaptive_filter_output_is_the_tdl_sum() -> None:
    """a(k) = sum_{i=1}^R w_1,i y(k-i+1) + b, zero initial conditions."""
    y, t = np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.3, 0.1, -0.4, 0.2])
    w0 = np.array([0.5, -0.25, 2.0])
    records = list(lms_filter(y, t, 3, lr=0.05, bias=True, w0=w0))
    for r in records:
        k = r.k
        taps = [y[k - i] if k - i >= 0 else 0.0 for i in range(1, 4)]  # y(k-i+1), 1-based
        assert r.a == pytest.approx(float(np.dot(r.w, taps)) + r.b, abs=1e-15)
        assert r.e == pytest.approx(r.t - r.a, abs=1e-15)
    w1 = w0 + 2 * 0.05 * records[0].e * np.array([1.0, 0.0, 0.0])  # W(2) = W(1) + 2 a e p^T
    np.testing.assert_allclose(records[1].w, w1, atol=1e-15)
    assert records[1].b == pytest.approx(2 * 0.05 * records[0].e)


def test_noise_cancellation_statistics_and_wiener_weights() -> None:
    sig = noise_cancellation(30_000, rng=0)
    x, R, h = wiener_solution(sig.v, sig.t, 2)
    np.testing.assert_allclose(R, R_EXACT, atol=1e-3)
    np.testing.assert_allclose(h, H_EXACT, atol=3e-3)
    np.testing.assert_allclose(x, X_STAR, atol=0.01)
    assert np.mean(sig.s**2) == pytest.approx(MSE_MIN, rel=0.02)


def test_lms_converges_on_the_noise_cancellation_setting() -> None:
    sig = noise_cancellation(3000, rng=1)
    before = np.mean(sig.m**2)  # the noise power in t = s + m
    for lr in (0.1, 0.02):
        records = list(lms_filter(sig.v, sig.t, n_taps=2, lr=lr))
        w = np.array([r.w for r in records])  # (K, 2) the trajectory
        e = np.array([r.e for r in records])  # (K,) the restored signal
        mean_w = w[-1000:].mean(axis=0)
        left = np.mean((e[-1000:] - sig.s[-1000:]) ** 2)  # what is left of the noise m
        mse = np.mean(e[-1000:] ** 2)
        print(
            f"LMS alpha={lr}: w -> {mean_w} (x* {X_STAR}), noise power {before:.4f} -> "
            f"{left:.2e}, MSE {mse:.5f} (min {MSE_MIN:.5f})"
        )
        np.testing.assert_allclose(mean_w, X_STAR, atol=0.01)
        assert left < {0.1: 0.5, 0.02: 0.1}[lr] * before  # a smaller alpha cancels better
        assert MSE_MIN < mse < {0.1: 1.25, 0.02: 1.1}[lr] * MSE_MIN
    first = next(lms_filter(sig.v, sig.t, n_taps=2, lr=0.1))
    assert abs(first.e - sig.s[0]) > 0.05  # w(1) = 0: the noise m(1) is all there


def test_lms_diverges_above_the_stable_learning_rate() -> None:
    """The mean weights converge for alpha < 1 / lambda_max(R) = 1 / 1.08; alpha above the
    bound blows up, half of it settles."""
    lam_max = float(np.linalg.eigvalsh(R_EXACT).max())
    assert lam_max == pytest.approx(1.08)
    sig = noise_cancellation(400, rng=2)
    last = list(lms_filter(sig.v, sig.t, 2, lr=1.2 / lam_max))[-1]
    assert not np.all(np.abs(last.w) < 1e6)  # inf or huge
    stable = np.array([r.w for r in lms_filter(sig.v, sig.t, 2, lr=0.5 / lam_max)])  # (K, 2)
    assert np.all(np.abs(stable) < 1.0)
    assert np.linalg.norm(stable[-200:].mean(axis=0) - X_STAR) < 0.05


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match="lr must be a positive number, got 0"):
        next(lms_filter([1.0], [1.0], 1, lr=0))
    with pytest.raises(ValueError, match=r"t must have the shape of y \(2,\)"):
        next(lms_filter([1.0, 2.0], [1.0], 1, lr=0.1))
    with pytest.raises(ValueError, match=r"w0 must have shape \(2,\)"):
        next(lms_filter([1.0, 2.0], [1.0, 0.0], 2, lr=0.1, w0=[1.0]))
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        noise_cancellation(0)
