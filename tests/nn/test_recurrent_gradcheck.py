"""Central-difference gradient checks (float64) of RNN, LSTM and GRU.

For every cell, stack depth, direction setting and with/without ragged lengths, the loss
``L = sum(out * R) + sum(h_n * R_h) [+ sum(c_n * R_c)]`` is differentiated numerically with
respect to ``x``, the initial state and every parameter, and compared with ``backward``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.nn.gru import GRU
from pyplay.nn.lstm import LSTM
from pyplay.nn.rnn import RNN

B, T, F, H = 3, 4, 3, 4
LENGTHS = np.array([2, 4, 1])  # unsorted and ragged

CELLS: dict[str, Callable[..., Any]] = {
    "rnn-tanh": lambda **kw: RNN(F, H, nonlinearity="tanh", **kw),
    "rnn-relu": lambda **kw: RNN(F, H, nonlinearity="relu", **kw),
    "rnn-linear": lambda **kw: RNN(F, H, nonlinearity="linear", **kw),
    "lstm": lambda **kw: LSTM(F, H, **kw),
    "lstm-peephole": lambda **kw: LSTM(F, H, peephole=True, forget_bias=1.0, **kw),
    "lstm-noforget": lambda **kw: LSTM(F, H, forget_gate=False, **kw),
    "lstm-noforget-peephole": lambda **kw: LSTM(F, H, forget_gate=False, peephole=True, **kw),
    "gru": lambda **kw: GRU(F, H, **kw),
    "gru-reset-before": lambda **kw: GRU(F, H, reset_after=False, **kw),
}


class Problem:
    """A layer, inputs, initial state and a random linear loss on its outputs and final state."""

    def __init__(self, layer: Any, lengths: np.ndarray | None, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.layer, self.lengths = layer, lengths
        self.has_cell = isinstance(layer, LSTM)
        D = layer.num_directions
        shape = (layer.num_layers * D, B, H)
        self.x = rng.standard_normal((B, T, F))
        self.state = [0.5 * rng.standard_normal(shape) for _ in range(2 if self.has_cell else 1)]
        self.R = rng.standard_normal((B, T, D * H))  # dL/dout, nonzero at padded steps too
        self.R_state = [rng.standard_normal(shape) for _ in self.state]  # dL/d(h_n[, c_n])

    def pack(self, arrays: list[np.ndarray]) -> Any:
        return tuple(arrays) if self.has_cell else arrays[0]

    def forward(self, training: bool = False) -> tuple[np.ndarray, list[np.ndarray], Any]:
        out, state, cache = self.layer.forward(
            self.x, self.pack(self.state), self.lengths, training=training
        )
        return out, list(state) if self.has_cell else [state], cache

    def loss(self, training: bool = False) -> float:
        out, state, _ = self.forward(training)
        return float(
            np.sum(out * self.R)
            + sum(np.sum(s * r) for s, r in zip(state, self.R_state, strict=True))
        )

    def analytic(self, training: bool = False) -> tuple[np.ndarray, list[np.ndarray], dict]:
        _, _, cache = self.forward(training)
        dx, dstate, grads = self.layer.backward(self.R, self.pack(self.R_state), cache)
        return dx, list(dstate) if self.has_cell else [dstate], grads

    def check(self, loss: Callable[[], float], training: bool = False) -> None:
        dx, dstate, grads = self.analytic(training)
        assert_grad_close(dx, numeric_grad(loss, self.x), "dx")
        for k, (d, s) in enumerate(zip(dstate, self.state, strict=True)):
            assert_grad_close(d, numeric_grad(loss, s), f"dstate[{k}]")
        assert grads.keys() == self.layer.params.keys()
        for name, p in self.layer.params.items():
            assert grads[name].shape == p.shape and grads[name].dtype == p.dtype
            assert_grad_close(grads[name], numeric_grad(loss, p), name)


def _shapes() -> list[Any]:
    """Every cell with one or two layers, one or both directions, full or ragged lengths; a
    gated cell's stacked or bidirectional checks take a few times longer: slow tier."""
    cases = []
    for cell in CELLS:
        for num_layers, layers in [(1, "1layer"), (2, "2layers")]:
            for bidirectional, direction in [(False, "uni"), (True, "bi")]:
                for ragged, lengths in [(False, "full"), (True, "lengths")]:
                    big = not cell.startswith("rnn") and (num_layers > 1 or bidirectional)
                    cases.append(
                        pytest.param(
                            cell,
                            num_layers,
                            bidirectional,
                            ragged,
                            id=f"{cell}-{layers}-{direction}-{lengths}",
                            marks=[pytest.mark.slow] if big else [],
                        )
                    )
    return cases


@pytest.mark.parametrize(("cell", "num_layers", "bidirectional", "ragged"), _shapes())
def test_gradients_match_central_differences(
    cell: str, num_layers: int, bidirectional: bool, ragged: bool
) -> None:
    layer = CELLS[cell](num_layers=num_layers, bidirectional=bidirectional, dtype=np.float64, rng=3)
    problem = Problem(layer, LENGTHS if ragged else None, seed=num_layers + 2 * bidirectional)
    problem.check(problem.loss)


@pytest.mark.parametrize("cell", ["rnn-tanh", "lstm", "gru"])
def test_gradients_without_bias(cell: str) -> None:
    layer = CELLS[cell](bias=False, dtype=np.float64, rng=1)
    assert not any(name.startswith("bias") for name in layer.params)
    problem = Problem(layer, LENGTHS)
    problem.check(problem.loss)


@pytest.mark.slow
@pytest.mark.parametrize("cell", ["rnn-tanh", "lstm", "gru"])
def test_gradients_with_a_fixed_dropout_mask(cell: str) -> None:
    """Dropout between layers: the generator is rewound before every forward, so the numeric
    loss sees the very mask the analytic forward drew."""
    layer = CELLS[cell](num_layers=2, bidirectional=True, dropout=0.5, dtype=np.float64, rng=5)
    problem = Problem(layer, LENGTHS)
    start = layer.generator.bit_generator.state

    def loss() -> float:
        layer.generator.bit_generator.state = start
        return problem.loss(training=True)

    layer.generator.bit_generator.state = start
    out_masked, _, _ = problem.forward(training=True)
    out_plain, _, _ = problem.forward(training=False)
    assert not np.allclose(out_masked, out_plain)  # the mask really changes the computation
    layer.generator.bit_generator.state = start
    problem.check(loss, training=True)


@pytest.mark.parametrize("cell", list(CELLS))
def test_backward_is_a_pure_function_of_the_cache(cell: str) -> None:
    layer = CELLS[cell](num_layers=2, bidirectional=True, dtype=np.float64, rng=0)
    problem = Problem(layer, LENGTHS)
    _, _, cache = problem.forward()
    R = problem.R.copy()
    first = layer.backward(problem.R, problem.pack(problem.R_state), cache)
    second = layer.backward(problem.R, problem.pack(problem.R_state), cache)
    np.testing.assert_array_equal(problem.R, R)  # dout untouched
    np.testing.assert_array_equal(first[0], second[0])
    for name in layer.params:
        np.testing.assert_array_equal(first[2][name], second[2][name])


@pytest.mark.parametrize("cell", list(CELLS))
def test_padded_steps_get_no_gradient(cell: str) -> None:
    layer = CELLS[cell](num_layers=2, bidirectional=True, dtype=np.float64, rng=2)
    problem = Problem(layer, LENGTHS)
    dx, _, _ = problem.analytic()
    padded = np.arange(T)[None, :] >= LENGTHS[:, None]  # (B, T)
    assert np.all(dx[padded] == 0.0)
    assert np.all(np.abs(dx[~padded]).sum(axis=-1) > 0)
    # and the values at padded input positions do not matter at all
    out, state, _ = problem.forward()
    problem.x[padded] = 7.0
    out2, state2, _ = problem.forward()
    np.testing.assert_array_equal(out, out2)
    for s, s2 in zip(state, state2, strict=True):
        np.testing.assert_array_equal(s, s2)


# ---------------------------------------------------------------------------------- dropout
@pytest.mark.parametrize("cell", ["rnn-tanh", "lstm", "gru"])
def test_dropout_off_in_evaluation_and_after_the_last_layer(cell: str) -> None:
    x = np.random.default_rng(0).standard_normal((B, T, F))
    plain = CELLS[cell](num_layers=2, dtype=np.float64, rng=9)
    dropped = CELLS[cell](num_layers=2, dropout=0.5, dtype=np.float64, rng=9)
    for name, p in plain.params.items():  # same seed, same initialisation
        np.testing.assert_array_equal(p, dropped.params[name])
    reference = plain.forward(x)[0]
    np.testing.assert_array_equal(dropped.forward(x, training=False)[0], reference)
    assert not np.allclose(dropped.forward(x, training=True)[0], reference)
    single = CELLS[cell](num_layers=1, dropout=0.5, dtype=np.float64, rng=9)
    np.testing.assert_array_equal(
        single.forward(x, training=True)[0], single.forward(x, training=False)[0]
    )


@pytest.mark.parametrize("cell", ["rnn-tanh", "lstm", "gru"])
def test_dropout_masks_are_reproducible_from_the_seed(cell: str) -> None:
    x = np.random.default_rng(1).standard_normal((B, T, F))
    a = CELLS[cell](num_layers=3, dropout=0.3, dtype=np.float64, rng=11)
    b = CELLS[cell](num_layers=3, dropout=0.3, dtype=np.float64, rng=11)
    first_a, first_b = a.forward(x)[0], b.forward(x)[0]
    np.testing.assert_array_equal(first_a, first_b)
    assert not np.array_equal(a.forward(x)[0], first_a)  # a fresh mask on the next call
    # the masks come from the layer's own Generator, not from a shared one
    shared = np.random.default_rng(11)
    c = CELLS[cell](num_layers=3, dropout=0.3, dtype=np.float64, rng=shared)
    shared.random(100)
    np.testing.assert_array_equal(c.forward(x)[0], first_a)


@pytest.mark.parametrize("cell", list(CELLS))
def test_backward_uses_the_weights_of_its_forward(cell: str) -> None:
    """An optimiser updating ``params`` in place between forward and backward does not change
    the gradient of the computation that forward did."""
    layer = CELLS[cell](num_layers=2, bidirectional=True, dtype=np.float64, rng=4)
    problem = Problem(layer, LENGTHS)
    _, _, cache = problem.forward()
    expected = layer.backward(problem.R, problem.pack(problem.R_state), cache)
    for p in layer.params.values():
        p *= 1.5  # an in-place update after forward
    got = layer.backward(problem.R, problem.pack(problem.R_state), cache)
    np.testing.assert_array_equal(got[0], expected[0])
    for name in layer.params:
        np.testing.assert_array_equal(got[2][name], expected[2][name])


@pytest.mark.parametrize("cell", list(CELLS))
def test_gradients_are_separate_arrays(cell: str) -> None:
    """An optimiser may update gradients in place: no two of them share memory, and none
    shares memory with a parameter."""
    layer = CELLS[cell](num_layers=2, bidirectional=True, dtype=np.float64, rng=4)
    _, _, grads = Problem(layer, LENGTHS).analytic()
    arrays = list(grads.values()) + list(layer.params.values())
    for a in range(len(arrays)):
        for b in range(a + 1, len(arrays)):
            assert not np.shares_memory(arrays[a], arrays[b])


@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize(
    "cell",
    [
        "rnn-tanh",
        pytest.param("lstm", marks=pytest.mark.slow),
        pytest.param("gru", marks=pytest.mark.slow),
    ],
)
def test_gradients_with_residual_connections_between_layers(cell: str, bidirectional: bool) -> None:
    """GNMT's residual stack: the second layer adds its input to its output (with dropout)."""
    kw: dict[str, Any] = dict(num_layers=2, bidirectional=bidirectional, dtype=np.float64)
    layer = CELLS[cell](residual=True, dropout=0.3, rng=4, **kw)
    problem = Problem(layer, LENGTHS)
    start = layer.generator.bit_generator.state

    def loss() -> float:
        layer.generator.bit_generator.state = start
        return problem.loss(training=True)

    layer.generator.bit_generator.state = start
    problem.check(loss, training=True)
    # the residual sum is the only difference: out - out_plain is the first layer's output
    D = layer.num_directions
    residual, _, _ = problem.forward()
    plain, _, _ = Problem(CELLS[cell](rng=4, **kw), LENGTHS).forward()
    first = CELLS[cell](num_layers=1, bidirectional=bidirectional, dtype=np.float64, rng=4)
    below, _, _ = first.forward(problem.x, problem.pack([s[:D] for s in problem.state]), LENGTHS)
    np.testing.assert_allclose(residual - plain, below, atol=1e-12)
