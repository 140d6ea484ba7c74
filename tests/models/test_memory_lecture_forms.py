"""The lecture's forms of the memory nets: the controller that also reads its previous output,
s^t = h(x^t, s^{t-1}, y^{t-1}, r^{t-1}), and attending to previous states with the attended
state replacing the previous one, s^t = h(x^t, s~^{t-1}, y^{t-1}): central-difference gradient
checks (float64), sequences continued from the returned state, and the defaults unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from test_memnet_gradcheck import _check

from pyplay.models.memory import AttendRNN, AttendState, MemoryNet


@pytest.mark.slow
@pytest.mark.parametrize(
    "kw", [{}, {"addressing": "location", "read_heads": 2}, {"key_function": "linear"}]
)
def test_the_controller_reading_its_previous_output_has_exact_gradients(kw) -> None:
    model = MemoryNet(3, 4, hidden_size=5, memory_size=4, memory_width=3, feedback="output",
                      input_kind="real", dtype=np.float64, rng=1, **kw)  # fmt: skip
    assert model.params["controller.weight_ih"].shape == (20, 3 + 4 + model.read_heads * 3)
    _check(model)


@pytest.mark.slow
def test_attending_in_the_lectures_form_has_exact_gradients() -> None:
    model = AttendRNN(3, 4, hidden_size=5, form="state", input_kind="real", dtype=np.float64, rng=1)
    assert model.params["head.weight"].shape == (4, 5)
    _check(model, T=5)


def test_a_sequence_continues_from_the_returned_state() -> None:
    x = np.random.default_rng(1).standard_normal((2, 6, 3))
    for model in (
        AttendRNN(3, 2, hidden_size=4, form="state", input_kind="real", dtype=np.float64),
        MemoryNet(3, 2, hidden_size=4, memory_size=3, memory_width=2, feedback="output",
                  input_kind="real", dtype=np.float64),
    ):  # fmt: skip
        y, _, _ = model.forward(x)
        y1, state, _ = model.forward(x[:, :2])
        y2, _, _ = model.forward(x[:, 2:], state)
        np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), y, atol=1e-12)
        assert state.y is not None and np.array_equal(state.y, y1[:, -1])


def test_the_attended_state_replaces_the_previous_state() -> None:
    """p^t all on the last state gives back the LSTM step from s^{t-1}: the step's (h, c)
    input is sum_i p_i (h^i, c^i), checked against the cache."""
    model = AttendRNN(3, 2, hidden_size=4, form="state", input_kind="real", dtype=np.float64)
    x = np.random.default_rng(2).standard_normal((1, 5, 3))
    _, state, cache = model.forward(x)
    for t in range(1, 5):
        p = cache.attention[0, t, :t]
        np.testing.assert_allclose(cache.steps[t].h_prev[0], p @ cache.history[0, :t])
        np.testing.assert_allclose(cache.steps[t].c_prev[0], p @ cache.cells[0, :t])
        np.testing.assert_allclose(p.sum(), 1.0)
    np.testing.assert_array_equal(cache.steps[0].h_prev, 0.0)
    assert state.cells is not None and state.cells.shape == (1, 5, 4)
    with pytest.raises(ValueError, match=r"state.cells must have shape \(1, 5, 4\)"):
        model.forward(x, AttendState(state.h, state.c, state.history))
    with pytest.raises(ValueError, match="form must be one of"):
        AttendRNN(3, 2, form="output")


def test_the_defaults_are_the_forms_before() -> None:
    assert MemoryNet(3, 2).config["feedback"] == "none" and MemoryNet(3, 2).hard == "none"
    attend = AttendRNN(3, 2, hidden_size=4)
    assert attend.form == "input" and attend.params["head.weight"].shape == (2, 8)
    assert attend.params["controller.weight_ih"].shape == (16, 3 + 4)
