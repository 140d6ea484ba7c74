"""Central-difference gradient checks (float64) of the dynamic networks.

Transfer functions (``backward`` and the book's ``jacobian``), delays and tapped delay lines
(linear maps: ``backward`` must be the adjoint), and LDDNs of several shapes: delay sets with
and without 0, feedback from the same and from later layers, two and three layers, more than
one input and output, every transfer function, and the toolbox constructors. Each checks the
gradient of ``L = sum(out * R)`` with respect to every parameter, the inputs and both kinds of
initial conditions. Run with ``-s`` to see the largest error met.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.networks import distdelaynet, layrecnet, narxnet, timedelaynet
from pyplay.dynamic.tdl import TDL, Delay, TDL_hstack
from pyplay.dynamic.transfer import TRANSFERS, get_transfer

B, T = 2, 5
WORST: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_worst() -> Iterator[None]:
    yield
    for kind, err in sorted(WORST.items()):
        print(f"\n[gradcheck] max abs error, {kind}: {err:.2e}")


def check(analytic: np.ndarray, numeric: np.ndarray, name: str, kind: str) -> None:
    assert analytic.shape == numeric.shape, f"{name}: {analytic.shape} != {numeric.shape}"
    if numeric.size == 0:  # e.g. no initial conditions for a net without delays
        return
    assert_grad_close(analytic, numeric, name)
    err = float(np.max(np.abs(analytic - numeric))) if numeric.size else 0.0
    WORST[kind] = max(WORST.get(kind, 0.0), err)


# ------------------------------------------------------------------------ transfer functions
@pytest.mark.parametrize("name", list(TRANSFERS))
def test_transfer_backward_and_jacobian(name: str) -> None:
    f = get_transfer(name)
    rng = np.random.default_rng(0)
    n = rng.standard_normal((3, 4))
    R = rng.standard_normal((3, 4))
    dn = f.backward(R, n, f(n))
    check(dn, numeric_grad(lambda: float(np.sum(f(n) * R)), n), name, "transfer")
    J = f.jacobian(n)  # (3, 4, 4), J[b, i, j] = d a_i / d n_j
    np.testing.assert_allclose(np.einsum("bi,bij->bj", R, J), dn, rtol=0, atol=1e-14)
    if f.elementwise:
        assert np.all(J[:, ~np.eye(4, dtype=bool)] == 0)  # the book's diagonal F-dot


def test_transfer_values() -> None:
    n = np.array([-800.0, -1.0, 0.0, 2.0, 800.0])
    tansig = 2 / (1 + np.exp(-2 * n.clip(-50))) - 1  # the toolbox's formula
    np.testing.assert_allclose(get_transfer("tansig")(n), tansig, rtol=1e-15, atol=1e-15)
    logsig = 1 / (1 + np.exp(-n.clip(-50)))
    np.testing.assert_allclose(get_transfer("logsig")(n), logsig, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(get_transfer("poslin")(n), [0, 0, 0, 2, 800])
    np.testing.assert_array_equal(get_transfer("purelin")(n), n)
    s = get_transfer("softmax")(n)
    assert np.isfinite(s).all() and s.sum() == pytest.approx(1.0) and s[-1] == 1.0


# ------------------------------------------------------------------------ delays
def test_delay_and_tdl_backward_are_the_adjoint() -> None:
    rng = np.random.default_rng(1)
    u = rng.standard_normal((B, T, 3))
    u0 = rng.standard_normal((B, 1, 3))
    delay = Delay(3)
    R = rng.standard_normal((B, T, 3))
    du, du0 = delay.backward(R)
    check(du, numeric_grad(lambda: float(np.sum(delay.forward(u, u0[:, 0]) * R)), u), "du", "tdl")
    check(
        du0[:, None],
        numeric_grad(lambda: float(np.sum(delay.forward(u, u0[:, 0]) * R)), u0),
        "du0",
        "tdl",
    )
    for delays in [(0,), (1,), (0, 2), (1, 2, 4)]:
        tdl = TDL(3, delays)
        v0 = rng.standard_normal((B, tdl.D, 3))
        Rt = rng.standard_normal((B, T, len(delays), 3))

        def loss(tdl: TDL = tdl, v0: np.ndarray = v0, Rt: np.ndarray = Rt) -> float:
            return float(np.sum(tdl.forward(u, v0) * Rt))

        du, dv0 = tdl.backward(Rt)
        check(du, numeric_grad(loss, u), f"TDL{delays} du", "tdl")
        check(dv0, numeric_grad(loss, v0), f"TDL{delays} du0", "tdl")
    hs = TDL_hstack(3, 3)
    w0 = rng.standard_normal((B, 2, 3))
    Rh = rng.standard_normal((B, T, 3, 3))  # (B, T, S, D)
    du, dw0 = hs.backward(Rh)
    check(du, numeric_grad(lambda: float(np.sum(hs.forward(u, w0) * Rh)), u), "hstack du", "tdl")
    check(dw0, numeric_grad(lambda: float(np.sum(hs.forward(u, w0) * Rh)), w0), "hstack du0", "tdl")


# ------------------------------------------------------------------------ LDDNs
def lw(to: int, source: int, *delays: int) -> dict[str, Any]:
    return {"to": to, "from": source, "delays": list(delays)}


DESCRIPTIONS: dict[str, dict[str, Any]] = {
    "fir-3taps": {
        "inputs": [2],
        "layers": [{"size": 2, "transfer": "purelin"}],
        "input_weights": [lw(1, 1, 0, 1, 2)],
    },
    "elman": {
        "inputs": [2],
        "layers": [{"size": 3, "transfer": "tansig"}, {"size": 2, "transfer": "purelin"}],
        "input_weights": [lw(1, 1, 0)],
        "layer_weights": [lw(1, 1, 1), lw(2, 1, 0)],
    },
    "delayed-chain-no-feedback": {
        "inputs": [1],
        "layers": [{"size": 3, "transfer": "tansig"}, {"size": 1, "transfer": "purelin"}],
        "input_weights": [lw(1, 1, 1, 3)],
        "layer_weights": [lw(2, 1, 0, 1, 2)],
    },
    "two-layers-feedback": {
        "inputs": [2, 1],
        "layers": [{"size": 3, "transfer": "logsig"}, {"size": 2, "transfer": "tansig"}],
        "input_weights": [lw(1, 1, 0, 2), lw(2, 2, 1)],
        "layer_weights": [lw(2, 1, 0, 1), lw(1, 2, 1, 3), lw(1, 1, 2)],
        "outputs": [2, 1],
    },
    "three-layers": {
        "inputs": [2, 1],
        "layers": [
            {"size": 3, "transfer": "poslin", "bias": False},
            {"size": 3, "transfer": "softmax"},
            {"size": 2, "transfer": "purelin"},
        ],
        "input_weights": [lw(1, 1, 1), lw(2, 2, 0)],
        "layer_weights": [lw(2, 1, 0), lw(3, 2, 0, 2), lw(3, 3, 1), lw(1, 3, 2)],
        "outputs": [3, 2],
    },
    "layer-order-not-numbering": {  # layer 2 feeds layer 1 within a step
        "inputs": [1],
        "layers": [{"size": 2, "transfer": "tansig"}, {"size": 3, "transfer": "logsig"}],
        "input_weights": [lw(2, 1, 0, 1)],
        "layer_weights": [lw(1, 2, 0), lw(2, 1, 1)],
        "outputs": [1],
    },
}
for _name in TRANSFERS:
    DESCRIPTIONS[f"every-transfer-{_name}"] = {
        "inputs": [2],
        "layers": [{"size": 3, "transfer": _name}, {"size": 2, "transfer": "purelin"}],
        "input_weights": [lw(1, 1, 0, 1)],
        "layer_weights": [lw(1, 1, 1, 2), lw(2, 1, 0), lw(1, 2, 1)],
    }


def gradcheck_net(net: LDDN, seed: int = 0, kind: str = "lddn") -> None:
    rng = np.random.default_rng(seed)
    p = rng.standard_normal((B, T, net.input_size))
    p0 = rng.standard_normal((B, net.num_input_delays, net.input_size))
    a0 = 0.5 * rng.standard_normal((B, net.num_layer_delays, net.layer_size))
    R = rng.standard_normal((B, T, net.output_size))

    def loss() -> float:
        return float(np.sum(net.forward(p, a0, p0)[0] * R))

    _, cache = net.forward(p, a0, p0)
    g = net.backward_full(R, cache)
    assert list(g.params) == list(net.params)
    for name, value in net.params.items():
        assert g.params[name].shape == value.shape and g.params[name].dtype == value.dtype
        check(g.params[name], numeric_grad(loss, value), name, kind)
    check(g.dp, numeric_grad(loss, p), "dp", kind)
    check(g.dp0, numeric_grad(loss, p0), "dp0", kind)
    check(g.da0, numeric_grad(loss, a0), "da0", kind)
    result = net.backward(R, cache)
    grads, dp = result.grads, result.dinputs
    np.testing.assert_array_equal(dp, g.dp)
    for name in grads:
        np.testing.assert_array_equal(grads[name], g.params[name])


@pytest.mark.parametrize("name", list(DESCRIPTIONS))
def test_lddn_gradients_match_central_differences(name: str) -> None:
    gradcheck_net(LDDN(DESCRIPTIONS[name], rng=3), seed=len(name))


def test_layer_order_follows_zero_delay_connections() -> None:
    assert LDDN(DESCRIPTIONS["layer-order-not-numbering"]).order == (2, 1)
    assert LDDN(DESCRIPTIONS["three-layers"]).order == (1, 2, 3)


NETWORKS = {
    "timedelaynet": lambda: timedelaynet((0, 2, 3), (3,), input_size=2, output_size=2, rng=1),
    "distdelaynet": lambda: distdelaynet(((0, 1), (1, 2), (0, 1)), (3, 2), rng=1),
    "layrecnet": lambda: layrecnet((1, 2), (3, 2), input_size=2, rng=1),
    "narx-open": lambda: narxnet((0, 1), (1, 2), (3,), input_size=2, output_size=2, rng=1),
    "narx-closed": lambda: narxnet(
        (0, 1), (1, 2), (3,), input_size=2, output_size=2, loop="closed", rng=1
    ),
}


@pytest.mark.parametrize("name", list(NETWORKS))
def test_network_gradients_match_central_differences(name: str) -> None:
    gradcheck_net(NETWORKS[name](), seed=7, kind="networks")


def test_backward_is_pure_and_uses_the_weights_of_its_forward() -> None:
    net = LDDN(DESCRIPTIONS["two-layers-feedback"], rng=0)
    rng = np.random.default_rng(2)
    p = rng.standard_normal((B, T, net.input_size))
    R = rng.standard_normal((B, T, net.output_size))
    _, cache = net.forward(p)
    result = net.backward(R, cache)
    first, dp = result.grads, result.dinputs
    for value in net.params.values():
        value *= 1.5  # an optimiser step between forward and backward
    result = net.backward(R, cache)
    second, dp2 = result.grads, result.dinputs
    np.testing.assert_array_equal(dp, dp2)
    arrays = list(second.values()) + list(net.params.values())
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
    for i in range(len(arrays)):  # no gradient shares memory with another or a parameter
        for j in range(i + 1, len(arrays)):
            assert not np.shares_memory(arrays[i], arrays[j])


def test_float32_forward_backward_keep_the_dtype() -> None:
    net = LDDN(DESCRIPTIONS["three-layers"], dtype=np.float32, rng=0)
    p = np.random.default_rng(0).standard_normal((B, T, net.input_size))
    out, cache = net.forward(p)
    result = net.backward(np.ones_like(out), cache)
    grads, dp = result.grads, result.dinputs
    assert out.dtype == dp.dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads.values())
    ref = LDDN(DESCRIPTIONS["three-layers"], dtype=np.float64, rng=0)
    np.testing.assert_allclose(out, ref.forward(p)[0], rtol=0, atol=1e-5)
