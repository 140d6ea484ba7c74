"""Stability and memory of a recurrent layer (pyplay.dynamic.stability): the NLP lecture's
"network response" and "gradient also decays quickly" slides, the spectral radius of LW^{1,1},
and the constant error carousel."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.stability import (
    eigenvalues,
    gradient_through_time,
    impulse_response,
    spectral_radius,
)


def test_lecture_network_response_is_0_5_to_the_t_minus_1() -> None:
    """lw = 0.5, iw = 1, a one followed by 9 zeros: a(1) = 1, a(2) = 0.5, a(t) = 0.5^(t-1)."""
    a = impulse_response(0.5, 10, IW=[1.0])[:, 0]
    np.testing.assert_array_equal(a, 0.5 ** np.arange(10))
    assert (a[0], a[1]) == (1.0, 0.5)


def test_lecture_gradient_decays_as_0_5_to_the_10_minus_t() -> None:
    """Error only at t = 10, lw = 0.5: dF/da(t) = 0.5^(10-t) d^eF/da(10)."""
    g = gradient_through_time(0.5, 10, dF=[3.0])[:, 0]
    np.testing.assert_array_equal(g, 3.0 * 0.5 ** (10 - np.arange(1, 11)))


def test_gradient_through_time_is_the_lddns_bptt() -> None:
    LW = np.array([[0.3, -0.8], [0.6, 0.4]])
    desc = {
        "inputs": [1],
        "layers": [{"size": 2, "transfer": "tansig", "bias": False}],
        "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
        "layer_weights": [{"to": 1, "from": 1, "delays": [1]}],
    }
    net = LDDN(desc, rng=0)
    net.params["IW1,1"][0] = [[0.9], [-0.5]]
    net.params["LW1,1"][0] = LW
    T = 12
    impulse = np.zeros((1, T, 1))
    impulse[0, 0, 0] = 1.0
    out, cache = net.forward(impulse)
    np.testing.assert_allclose(out[0], impulse_response(LW, T, [0.9, -0.5], "tansig"), atol=1e-15)
    dout = np.zeros((1, T, 2))
    dout[0, -1] = [1.0, -2.0]
    bptt = net.backward_full(dout, cache).da[1][0]  # (T, S) dF/da^1(t)
    mine = gradient_through_time(LW, T, [0.9, -0.5], "tansig", dF=[1.0, -2.0])
    np.testing.assert_allclose(mine, bptt, atol=1e-14)


@pytest.mark.parametrize("rho", [0.9, 1.1])
def test_spectral_radius_above_one_explodes_below_one_decays(rho: float) -> None:
    rng = np.random.default_rng(3)
    M = rng.normal(size=(6, 6))
    LW = rho * M / spectral_radius(M)
    assert spectral_radius(LW) == pytest.approx(rho)
    assert abs(eigenvalues(LW)[0]) == pytest.approx(rho)
    a = np.linalg.norm(impulse_response(LW, 200), axis=1)  # (T,)
    g = np.linalg.norm(gradient_through_time(LW, 200), axis=1)  # (T,) index 0 is t = 1
    if rho < 1:
        assert a[-1] < 1e-6 * a[0] and g[0] < 1e-6 * g[-1]  # response and gradient vanish
    else:
        assert a[-1] > 1e6 * a[0] and g[0] > 1e6 * g[-1]  # both explode


def test_constant_error_carousel_keeps_the_gradient_and_tansig_increases_decay() -> None:
    """LW = I with a linear transfer (eigenvalues on the unit circle): the response and the
    gradient stay constant; a tansig layer's |f'| <= 1 makes the gradient decay faster."""
    I3 = np.eye(3)
    assert np.all(np.abs(eigenvalues(I3)) == 1.0)
    np.testing.assert_array_equal(impulse_response(I3, 50), np.ones((50, 3)))
    np.testing.assert_array_equal(gradient_through_time(I3, 50), np.ones((50, 3)))
    linear = np.abs(gradient_through_time(0.9, 30, IW=[2.0])[:, 0])
    tansig = np.abs(gradient_through_time(0.9, 30, IW=[2.0], transfer="tansig")[:, 0])
    assert np.all(tansig <= linear) and tansig[0] < 0.5 * linear[0]


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match=r"LW must be a square \(S, S\) matrix"):
        spectral_radius(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="IW must have 2 entries"):
        impulse_response(np.eye(2), 5, IW=[1.0])
    with pytest.raises(ValueError, match="transfer must be one of 'purelin', 'tansig'"):
        impulse_response(0.5, 5, transfer="tanh")
    with pytest.raises(ValueError, match="T must be >= 1"):
        gradient_through_time(0.5, 0)
