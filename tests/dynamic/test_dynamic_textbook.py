"""The worked examples of Hagan's chapter on dynamic networks, and parity with the core RNN.

* The three-tap moving average, :math:`a(t) = (p(t) + p(t-1) + p(t-2)) / 3`, on a square wave.
* The first-order recurrent network :math:`a(t) = lw\\, a(t-1) + iw\\, p(t)` with
  :math:`lw = iw = 1/2` on a step and on a square wave (exact: powers of 1/2 are exact in
  binary floating point).
* Its impulse response with :math:`lw = 1/2, iw = 1`: :math:`a(t) = 0.5^{t-1}`, and the
  gradient :math:`\\partial a(T) / \\partial a(t) = 0.5^{T-t}` that decays by the same factor
  going back in time.
* An LDDN with one tansig layer and :math:`LW^{1,1}(1)` is Elman's network: it reproduces
  :class:`pyplay.nn.RNN` (tanh, one layer) outputs and every gradient to 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import max_rel_error
from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.tdl import TDL, Delay, TDL_hstack
from pyplay.nn.rnn import RNN

SQUARE = np.array([1, 1, 1, -1, -1, -1] * 3, dtype=np.float64)  # period 6, t = 1..18


def linear_net(iw: list[float], iw_delays: list[int], lw: float | None = None) -> LDDN:
    """One purelin neuron, no bias: IW^{1,1}(d) on ``iw_delays``, LW^{1,1}(1) = lw."""
    desc = {
        "inputs": [1],
        "layers": [{"size": 1, "transfer": "purelin", "bias": False}],
        "input_weights": [{"to": 1, "from": 1, "delays": iw_delays}],
        "layer_weights": [] if lw is None else [{"to": 1, "from": 1, "delays": [1]}],
    }
    net = LDDN(desc)
    net.params["IW1,1"][:, 0, 0] = iw
    if lw is not None:
        net.params["LW1,1"][0, 0, 0] = lw
    return net


def run(net: LDDN, p: np.ndarray) -> np.ndarray:
    return net.forward(p[None, :, None])[0][0, :, 0]  # (T,)


def test_three_tap_moving_average_on_a_square_wave() -> None:
    net = linear_net([1 / 3, 1 / 3, 1 / 3], [0, 1, 2])
    a = run(net, SQUARE)
    # zero initial conditions p(0) = p(-1) = 0, then the average of the last three inputs
    expected = np.array([1, 2, 3, 1, -1, -3, -1, 1, 3, 1, -1, -3, -1, 1, 3, 1, -1, -3]) / 3
    np.testing.assert_allclose(a, expected, rtol=0, atol=1e-15)
    # with initial conditions p(-1) = p(0) = -1 the first outputs change accordingly
    a_ic, _ = net.forward(SQUARE[None, :, None], p0=-np.ones((1, 2, 1)))
    np.testing.assert_allclose(a_ic[0, :3, 0], [-1 / 3, 1 / 3, 1], rtol=0, atol=1e-15)


def test_moving_average_is_a_weighted_tapped_delay_line() -> None:
    taps = TDL(1, (0, 1, 2)).forward(SQUARE[None, :, None])  # (1, T, 3, 1)
    stacked = TDL_hstack(1, 3).forward(SQUARE[None, :, None])  # (1, T, 1, 3) S x D matrices
    np.testing.assert_array_equal(taps[..., 0], stacked[:, :, 0, :])
    net = linear_net([1 / 3, 1 / 3, 1 / 3], [0, 1, 2])
    iw_row = net.params["IW1,1"].transpose(1, 0, 2).reshape(1, 3)  # [IW(0) IW(1) IW(2)]
    flat = TDL_hstack.vec(stacked)[0]  # (T, 3)
    np.testing.assert_allclose(flat @ iw_row.T, run(net, SQUARE)[:, None], atol=1e-15)


def test_eq_6_1_the_delay_outputs_its_previous_input() -> None:
    """Eq. 6.1: a(t) = u(t - 1), with the initial condition a(1) = u(0)."""
    u = np.array([[[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]]])  # (1, T, S)
    a = Delay(2).forward(u, u0=np.array([[7.0, -7.0]]))
    np.testing.assert_array_equal(a[0], [[7.0, -7.0], [1.0, -1.0], [2.0, -2.0]])


def test_eq_6_2_tdl_hstack_is_the_books_S_by_D_matrix() -> None:
    """Eq. 6.2: one S x 1 vector in, the S x D matrix [a(t) a(t-1) ... a(t-D+1)] out."""
    S, D, T = 2, 3, 5
    a = np.arange(1, T + 1, dtype=np.float64)[:, None] * np.array([1.0, -10.0])  # (T, S)
    a0 = np.array([[[0.25, -2.5], [0.5, -5.0]]])  # (1, D-1, S) a(-1), a(0)
    A = TDL_hstack(S, D).forward(a[None], a0)  # (1, T, S, D)
    assert A.shape == (1, T, S, D)
    np.testing.assert_array_equal(A[0, 4], np.stack([a[4], a[3], a[2]], axis=1))  # A(5)
    np.testing.assert_array_equal(A[0, 0], np.stack([a[0], a0[0, 1], a0[0, 0]], axis=1))
    np.testing.assert_array_equal(TDL_hstack.vec(A)[0, 4], np.concatenate([a[4], a[3], a[2]]))


@pytest.mark.parametrize("D", [1, 3, 7])
def test_the_textbook_models_delay_line_is_tdl_hstack_read_at_the_last_step(D: int) -> None:
    """Eq. 6.8: the book's seq2seq gathers A^1(T) (pyplay.models.textbook.attention.delay_line)
    as TDL_hstack would give it at each source's last step T, zeros before t = 1; and its
    backward is TDL_hstack's backward of a gradient at step T only."""
    from pyplay.models.textbook.attention import delay_line, delay_line_backward

    rng = np.random.default_rng(0)
    B, S, H = 3, 5, 2
    a1 = rng.standard_normal((B, S, H))
    L = np.array([5, 2, 4])
    A, keep = delay_line(a1, L, D)  # (B, H, D)
    full = TDL_hstack(H, D).forward(a1)  # (B, S, H, D)
    rows = np.arange(B)
    np.testing.assert_array_equal(A, full[rows, L - 1])
    np.testing.assert_array_equal(keep, np.arange(D)[None, :] < L[:, None])
    dA = rng.standard_normal((B, H, D))
    dz = np.zeros((B, S, H, D))
    dz[rows, L - 1] = dA
    np.testing.assert_allclose(
        delay_line_backward(dA, L, S), TDL_hstack(H, D).backward(dz)[0], rtol=0, atol=1e-15
    )


def test_first_order_recurrent_net_step_response() -> None:
    net = linear_net([0.5], [0], lw=0.5)
    a = run(net, np.ones(20))
    t = np.arange(1, 21)
    np.testing.assert_array_equal(a, 1 - 0.5**t)  # a(t) = 1/2 sum_{k<t} 2^-k, exactly


def test_first_order_recurrent_net_square_wave() -> None:
    net = linear_net([0.5], [0], lw=0.5)
    a = run(net, SQUARE)
    expected, prev = [], 0.0
    for p in SQUARE:  # the book's recursion, written out
        prev = 0.5 * prev + 0.5 * p
        expected.append(prev)
    np.testing.assert_array_equal(a, expected)
    np.testing.assert_array_equal(a[:6], [0.5, 0.75, 0.875, -0.0625, -0.53125, -0.765625])


def test_impulse_response_and_its_gradient_decay() -> None:
    T = 12
    net = linear_net([1.0], [0], lw=0.5)
    impulse = np.zeros(T)
    impulse[0] = 1.0
    _, cache = net.forward(impulse[None, :, None])
    a = cache.A[1][net.num_layer_delays :, 0, 0]
    np.testing.assert_array_equal(a, 0.5 ** np.arange(T))  # a(t) = 0.5^(t-1), t = 1..T
    dout = np.zeros((1, T, 1))
    dout[0, -1, 0] = 1.0  # L = a(T)
    g = net.backward_full(dout, cache)
    da = g.da[1][0, :, 0]  # dL/da(t), total
    np.testing.assert_array_equal(da, 0.5 ** (T - np.arange(1, T + 1)))
    np.testing.assert_array_equal(da[:-1] / da[1:], np.full(T - 1, 0.5))  # same factor lw
    np.testing.assert_array_equal(g.dp[0, :, 0], da)  # iw = 1: dL/dp(t) = dL/da(t)
    np.testing.assert_array_equal(g.da0[0, :, 0], [0.5**T])  # and on to a(0)
    # dL/dlw = sum_t dL/dn(t) a(t-1) = sum_{t=2..T} 0.5^(T-t) 0.5^(t-2) = (T-1) 0.5^(T-2)
    assert g.params["LW1,1"][0, 0, 0] == (T - 1) * 0.5 ** (T - 2)


# ------------------------------------------------------------------------ Elman parity
ELMAN = {
    "inputs": [3],
    "layers": [{"size": 4, "transfer": "tansig"}],
    "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
    "layer_weights": [{"to": 1, "from": 1, "delays": [1]}],
}


@pytest.mark.parametrize("B, T", [(1, 1), (3, 7), (5, 20)])
def test_elman_lddn_matches_the_core_rnn(B: int, T: int) -> None:
    rnn = RNN(3, 4, nonlinearity="tanh", dtype=np.float64, rng=5)
    rp = rnn.params
    net = LDDN(ELMAN, rng=0)
    net.params["IW1,1"][0] = rp["weight_ih_l0"]
    net.params["LW1,1"][0] = rp["weight_hh_l0"]
    net.params["b1"][...] = rp["bias_ih_l0"] + rp["bias_hh_l0"]  # one bias b^1 for two
    rng = np.random.default_rng(B * T)
    x = rng.standard_normal((B, T, 3))
    h0 = 0.5 * rng.standard_normal((1, B, 4))
    R = rng.standard_normal((B, T, 4))
    out_rnn, _, cache_rnn = rnn.forward(x, h0)
    dx, dh0, grads = rnn.backward(R, None, cache_rnn)
    out, cache = net.forward(x, a0=h0.transpose(1, 0, 2))  # a(0) = h_0: (B, 1, 4)
    g = net.backward_full(R, cache)
    pairs = [
        (out, out_rnn),
        (g.dp, dx),
        (g.da0, dh0.transpose(1, 0, 2)),
        (g.params["IW1,1"][0], grads["weight_ih_l0"]),
        (g.params["LW1,1"][0], grads["weight_hh_l0"]),
        (g.params["b1"], grads["bias_ih_l0"]),
        (g.params["b1"], grads["bias_hh_l0"]),
    ]
    worst = max(max_rel_error(ours, theirs) for ours, theirs in pairs)
    print(f"\n[elman parity] B={B} T={T}: max relative error {worst:.1e}")
    assert worst < 1e-10
