"""Initial conditions of an LDDN layer by layer (Hagan, *Neural Network Design*, after eq. 6.1:
"the initial condition for the delay, a(0), is indicated by the vertical arrow going into the
delay block"): ``pyplay.dynamic.initial`` builds ``a0`` from each delayed layer's a(0), BPTT's
gradients with nonzero initial conditions against central differences, lecture 8's worked
impulse response with its initial condition, and delayed feed-forward weights (the distributed
time-delay network) simulated in one pass."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.dynamic import (
    LDDN,
    delayed_layers,
    distdelaynet,
    initial_gradients,
    initial_outputs,
    layrecnet,
    narxnet,
)

B, T = 2, 6


def impulse_response_net() -> LDDN:
    """Lecture 8's "Network response" slide: a(t) = iw p(t) + lw a(t-1), lw = 0.5, iw = 1."""
    desc = {
        "inputs": [1],
        "layers": [{"size": 1, "transfer": "purelin", "bias": False}],
        "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
        "layer_weights": [{"to": 1, "from": 1, "delays": [1]}],
    }
    params = {"IW1,1": np.ones((1, 1, 1)), "LW1,1": np.full((1, 1, 1), 0.5)}
    return LDDN(desc, params=params)


def test_lecture8_impulse_response_with_zero_and_nonzero_initial_condition() -> None:
    """Lecture 8: "Apply the input sequence of a one followed by 9 zeros, with zero initial
    condition": a(1) = 1, a(2) = 0.5, a(t) = 0.5^(t-1). The slide gives no nonzero a(0); its
    equation a(t) = p(t) + 0.5 a(t-1) then adds 0.5^t a(0), so a(0) = -1 gives a(t) = 0.5^t;
    and dL/da(0) for L = a(10) is lw^10."""
    net = impulse_response_net()
    p = np.zeros((1, 10, 1))
    p[0, 0, 0] = 1.0
    t = np.arange(1, 11)
    zero, _ = net.forward(p, initial_outputs(net, {1: 0.0}))
    np.testing.assert_array_equal(zero[0, :, 0], 0.5 ** (t - 1))
    np.testing.assert_array_equal(zero[0, :2, 0], [1.0, 0.5])
    out, cache = net.forward(p, initial_outputs(net, {1: -1.0}))
    np.testing.assert_array_equal(out[0, :, 0], 0.5**t)
    dout = np.zeros_like(out)
    dout[0, -1, 0] = 1.0  # L = a(10)
    da0 = initial_gradients(net, net.backward_full(dout, cache).da0)
    np.testing.assert_array_equal(da0[1], [[[0.5**10]]])


def test_initial_outputs_put_each_layers_values_in_its_rows_and_columns() -> None:
    net = distdelaynet(((0, 1), (1, 2)), (3,), rng=0)  # layer 1 read at delays 1, 2
    assert delayed_layers(net) == {1: 2} and net.num_layer_delays == 2
    a0 = initial_outputs(net, {1: 0.5}, batch=B)  # a^1(0) = 0.5, a^1(-1) = 0
    assert a0.shape == (B, 2, 4)
    np.testing.assert_array_equal(a0[:, 1, :3], 0.5)
    assert not a0[:, 0].any() and not a0[:, :, 3].any()  # a(-1) and the output layer
    rows = np.arange(B * 2 * 3, dtype=np.float64).reshape(B, 2, 3)  # a(-1), a(0)
    np.testing.assert_array_equal(initial_outputs(net, {1: rows}, batch=B)[:, :, :3], rows)
    per_sequence = initial_outputs(net, {1: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}, batch=B)
    np.testing.assert_array_equal(per_sequence[:, 1, :3], [[1, 2, 3], [4, 5, 6]])
    elman = layrecnet((1, 3), (2, 2), rng=0)
    assert delayed_layers(elman) == {1: 3, 2: 3}
    a0 = initial_outputs(elman, {2: [1.0, -1.0]})
    np.testing.assert_array_equal(a0[0, -1], [0, 0, 1, -1, 0])  # layer 2's columns, a(0)
    assert delayed_layers(narxnet(loop="open")) == {}  # its feedback is an input


def test_initial_outputs_refuse_what_does_not_fit_naming_it() -> None:
    net = distdelaynet(((0, 1), (1, 2)), (3,), rng=0)
    with pytest.raises(ValueError, match="layer 2, which no weight reads through a delay; the "
                       "delayed layers: 1"):  # fmt: skip
        initial_outputs(net, {2: 0.0})
    with pytest.raises(ValueError, match=r"values\[1\] must be a number.*got shape \(2,\)"):
        initial_outputs(net, {1: [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"\(B, D, S\^1\) = \(3, 2, 3\); got shape \(3, 1, 3\)"):
        initial_outputs(net, {1: np.zeros((3, 1, 3))}, batch=3)
    with pytest.raises(ValueError, match="finite numbers"):
        initial_outputs(net, {1: np.nan})
    with pytest.raises(TypeError, match="values must be a dict"):
        initial_outputs(net, [0.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="none: the network has no layer delays"):
        initial_outputs(narxnet(loop="open"), {1: 0.0})
    with pytest.raises(ValueError, match=r"da0 must have shape \(B, DL, S\) = \(B, 2, 4\)"):
        initial_gradients(net, np.zeros((1, 1, 4)))


NETS = {
    "distdelaynet": lambda: distdelaynet(((0, 1, 2), (0, 1, 2)), (3,), rng=2),
    "layrecnet": lambda: layrecnet((1, 2), (3, 2), rng=2),
    "narx-closed": lambda: narxnet((0, 1), (1, 2), (3,), loop="closed", rng=2),
}


@pytest.mark.parametrize("name", list(NETS))
def test_gradients_with_nonzero_initial_conditions_match_central_differences(name: str) -> None:
    """BPTT (the module docstring of pyplay.dynamic.lddn) with every delayed layer started at
    nonzero initial conditions: the weights' gradients and dL/da^l(1-D) .. dL/da^l(0) by layer,
    against float64 central differences."""
    net = NETS[name]()
    rng = np.random.default_rng(5)
    p = rng.standard_normal((B, T, net.input_size))
    values = {m: rng.standard_normal((B, D, net.sizes[m])) for m, D in delayed_layers(net).items()}
    R = rng.standard_normal((B, T, net.output_size))

    def loss() -> float:
        return float(np.sum(net.forward(p, initial_outputs(net, values, batch=B))[0] * R))

    _, cache = net.forward(p, initial_outputs(net, values, batch=B))
    g = net.backward_full(R, cache)
    for key, value in net.params.items():
        assert_grad_close(g.params[key], numeric_grad(loss, value), key)
    by_layer = initial_gradients(net, g.da0)
    assert set(by_layer) == set(values)
    for m, value in values.items():
        numeric = numeric_grad(loss, value)
        assert np.abs(numeric).max() > 0  # a(0) matters to the loss
        assert_grad_close(by_layer[m], numeric, f"a{m}(0)")


def test_delayed_weights_from_earlier_layers_run_all_steps_at_once() -> None:
    """A distributed time-delay network has delays between layers but no feedback: each layer
    runs over all T steps in one pass, with the same outputs and gradients as step by step."""
    net = distdelaynet(((0, 1, 2), (0, 1, 2)), (3,), rng=1)
    assert not net.recurrent
    assert layrecnet().recurrent and narxnet(loop="closed").recurrent
    rng = np.random.default_rng(0)
    p = rng.standard_normal((B, T, 1))
    a0 = initial_outputs(net, {1: rng.standard_normal((B, 2, 3))}, batch=B)
    R = rng.standard_normal((B, T, 1))
    out, cache = net.forward(p, a0)
    g = net.backward_full(R, cache)
    net.recurrent = True  # step by step, as a network with feedback runs
    out_steps, cache_steps = net.forward(p, a0)
    g_steps = net.backward_full(R, cache_steps)
    np.testing.assert_allclose(out, out_steps, rtol=0, atol=1e-14)
    for key in net.params:
        np.testing.assert_allclose(g.params[key], g_steps.params[key], rtol=0, atol=1e-13)
    np.testing.assert_allclose(g.da0, g_steps.da0, rtol=0, atol=1e-13)
