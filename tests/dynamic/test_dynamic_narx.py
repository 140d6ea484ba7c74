"""NARX networks, open and closed loop; preparets; the bundled identification series; training.

The learning test: a NARX network (delays 1, 2 on u and y, 10 tansig neurons) trained in open
loop (series-parallel) on windows of the bundled Narendra series, then closed (parallel) and run
freely over the 500 held-out steps, against a static network (u(t) only, same size, same
training). Measured with these seeds: closed-loop NARX MSE 9.8e-5, static 0.227 (predicting
the mean: 0.475), a ratio of about 2300; over seeds 0-5 the closed-loop MSE stayed below
2.8e-3 (ratio > 80). The test asks for a ratio of 20 and a closed-loop MSE below 0.01.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.networks import closeloop, narxnet, openloop, preparets, timedelaynet
from pyplay.dynamic.spec import parse_spec, to_dict
from pyplay.dynamic.train import fit, mse
from pyplay.optim import SGD
from pyplay.tasks.sysid import load_narendra, narendra_series

HELD_OUT = 500  # the last samples of the bundled series, as in the Time series lesson


def _windows(length: int, batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` seeded windows ``u``, ``y`` (batch, length, 1) of the bundled series, drawn
    from its training stretch only (the Time series lesson's recipe)."""
    u, y = load_narendra()
    n_train = u.size - HELD_OUT
    starts = np.random.default_rng(seed).integers(0, n_train - length + 1, size=batch)
    idx = starts[:, None] + np.arange(length)[None, :]  # (batch, length)
    return u[idx][..., None], y[idx][..., None]


def test_closeloop_shares_the_weights_and_openloop_inverts_it() -> None:
    op = narxnet((0, 1), (1, 2), (4,), input_size=2, output_size=1, rng=3)
    cl = closeloop(op)
    assert list(op.params) == ["IW1,1", "IW1,2", "LW2,1", "b1", "b2"]
    assert sorted(cl.params) == ["IW1,1", "LW1,2", "LW2,1", "b1", "b2"]
    assert cl.params["LW1,2"] is op.params["IW1,2"]  # the same array, not a copy
    for name in ("IW1,1", "LW2,1", "b1", "b2"):
        assert cl.params[name] is op.params[name]
    assert cl.spec.loop == "closed" and cl.input_size == 2 and cl.num_layer_delays == 2
    back = openloop(cl)
    assert back.spec == op.spec
    assert all(back.params[k] is op.params[k] for k in op.params)
    ref = narxnet((0, 1), (1, 2), (4,), input_size=2, output_size=1, loop="closed", rng=3)
    assert ref.spec == cl.spec
    for name, value in ref.params.items():
        np.testing.assert_array_equal(value, cl.params[name])  # same rng, same weights


def test_closed_loop_equals_open_loop_fed_with_its_own_outputs() -> None:
    op = narxnet((0, 2), (1, 3), (5,), input_size=2, output_size=2, rng=1)
    cl = closeloop(op)
    rng = np.random.default_rng(0)
    u = rng.standard_normal((3, 15, 2))
    y = rng.standard_normal((3, 15, 2))
    prc = preparets(cl, u, y)
    assert prc.p.shape == (3, 12, 2) and prc.a0.shape == (3, 3, 7) and prc.p0.shape == (3, 2, 2)
    yhat, _ = cl.forward(prc.p, prc.a0, prc.p0)
    own = y.copy()
    own[:, 3:] = yhat  # the closed loop's own predictions after the 3 initial steps
    pro = preparets(op, u, own)
    assert pro.p.shape == (3, 12, 4)  # [u y], DI = 3 initial steps
    out, _ = op.forward(pro.p, pro.a0, pro.p0)
    np.testing.assert_allclose(out, yhat, rtol=0, atol=1e-14)


def test_preparets_aligns_inputs_initial_conditions_and_targets() -> None:
    net = timedelaynet((0, 1, 3), (2,), rng=0)
    u = np.arange(10.0)[None, :, None]
    y = 10 * u
    pr = preparets(net, u, y)
    np.testing.assert_array_equal(pr.p0[0, :, 0], [0, 1, 2])
    np.testing.assert_array_equal(pr.p[0, :, 0], np.arange(3, 10))
    np.testing.assert_array_equal(pr.targets[0, :, 0], 10 * np.arange(3, 10))
    op = narxnet((1,), (1, 2), (2,), rng=0)
    pr = preparets(op, u, y)
    np.testing.assert_array_equal(pr.p0[0], [[0, 0], [1, 10]])  # [u y], oldest first
    np.testing.assert_array_equal(pr.p[0, 0], [2, 20])


def test_spec_round_trip_is_plain_json() -> None:
    net = closeloop(narxnet((0, 1), (1, 2), (3, 2), rng=0))
    text = json.dumps(to_dict(net.spec))
    assert parse_spec(json.loads(text)) == net.spec
    assert LDDN(json.loads(text), params=net.params).params["LW1,3"] is net.params["LW1,3"]


# ------------------------------------------------------------------------ the task
def test_bundled_series_matches_its_recipe() -> None:
    u, y = load_narendra()
    u_ref, y_ref = narendra_series(n=3000, seed=2024)
    assert u.shape == y.shape == (3000,)
    np.testing.assert_allclose(u, u_ref, rtol=0, atol=5e-7)  # six decimals in the file
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=5e-7)
    assert 0.5 < float(np.mean(np.diff(u) == 0)) < 0.95  # held levels: the input has memory


# ------------------------------------------------------------------------ training
def test_fit_yields_decreasing_losses_and_accepts_an_optimiser() -> None:
    wu, wy = _windows(21, 16, seed=0)  # 20 steps after one of history
    net = timedelaynet((0, 1), (3,), rng=0)
    pr = preparets(net, wu, wy)
    before = mse(net, pr.p, pr.targets, p0=pr.p0)
    run = fit(net, pr.p, pr.targets, 200, lr=0.02, p0=pr.p0, rng=0)
    losses = list(run)
    assert len(losses) == 200 and losses[0] == pytest.approx(before)
    assert losses[-1] < 0.5 * losses[0]
    sgd = SGD(net.params, lr=0.05)
    again = list(fit(net, pr.p, pr.targets, 5, optimizer=sgd, batch_size=4, p0=pr.p0, rng=1))
    assert sgd.step_count == 5 and len(again) == 5


@pytest.mark.slow
def test_narx_closed_loop_beats_a_static_network_on_multistep_prediction() -> None:
    start = time.perf_counter()
    wu, wy = _windows(42, 128, seed=0)  # 40 steps after two of history
    u, y = load_narendra()
    n_train = u.size - HELD_OUT
    lo = n_train - 2  # the held-out stretch after its two initial conditions
    tu, ty = u[None, lo:, None], y[None, lo:, None]  # (1, 502, 1) each
    mean_predictor = float(np.mean((y[n_train:] - y[:n_train].mean()) ** 2))

    def train(net: LDDN, p: np.ndarray, y: np.ndarray, p0: np.ndarray) -> None:
        for lr, steps in ((0.01, 2000), (0.002, 1000)):  # Adam, then a smaller step
            for _ in fit(net, p, y, steps, lr=lr, p0=p0, batch_size=32, rng=0):
                pass

    op = narxnet((1, 2), (1, 2), (10,), rng=0)
    pr = preparets(op, wu, wy)
    train(op, pr.p, pr.targets, pr.p0)
    cl = closeloop(op)
    pc = preparets(cl, tu, ty)  # y only supplies the two initial conditions
    narx = mse(cl, pc.p, pc.targets, pc.a0, pc.p0)

    static = timedelaynet((0,), (10,), rng=0)  # a(t) from u(t) only
    ps = preparets(static, wu[:, 2:], wy[:, 2:])
    train(static, ps.p, ps.targets, ps.p0)
    pt = preparets(static, tu[:, 2:], ty[:, 2:])
    base = mse(static, pt.p, pt.targets)
    seconds = time.perf_counter() - start
    print(
        f"\n[narx] closed-loop MSE {narx:.2e}, static {base:.3e}, ratio {base / narx:.0f}, "
        f"mean predictor {mean_predictor:.3f}, {seconds:.1f} s"
    )
    assert base < 0.8 * mean_predictor  # the static net did learn the average map
    assert narx < 0.01
    assert narx * 20 < base


def test_fit_is_the_trainer_on_windows_with_its_divergence_rule() -> None:
    from pyplay.dynamic import LDDNObjective, Windows
    from pyplay.train import Trainer

    rng = np.random.default_rng(0)
    u = rng.standard_normal((6, 10, 1))
    y = np.tanh(u.cumsum(axis=1))  # (6, 10, 1)
    net, twin = (narxnet((0, 1), (1, 2), (4,), rng=2) for _ in range(2))
    pr = preparets(net, u, y)
    losses = list(fit(net, pr.p, pr.targets, 12, lr=0.01, p0=pr.p0, batch_size=4, rng=3))
    windows = Windows(pr.p, pr.targets, p0=pr.p0, dtype=twin.dtype, rng=3)
    trainer = Trainer(twin, windows, lr=0.01, batch_size=4, clip=None)
    assert isinstance(trainer.objective, LDDNObjective)
    assert [r.loss for r in trainer.run(12)] == losses
    for name in net.params:
        np.testing.assert_array_equal(net.params[name], twin.params[name])
    assert set(trainer.evaluate(batch_size=6)) == {"loss"}
    before = {k: v.copy() for k, v in net.params.items()}
    with np.errstate(all="ignore"):
        blown = list(fit(net, pr.p, pr.targets, 50, optimizer=SGD(net.params, lr=1e30), p0=pr.p0))
    assert len(blown) < 50 and not np.isfinite(blown[-1])  # stopped at the first bad step
    assert all(np.isfinite(v).all() for v in net.params.values())  # the last good weights
    assert any(not np.array_equal(net.params[k], before[k]) for k in before)
