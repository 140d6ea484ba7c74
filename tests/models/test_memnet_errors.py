"""Bad arguments to the memory nets are refused with messages naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.models.memory import AttendRNN, AttendState, MemoryNet, MemoryState


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(update="append"), ValueError, "update must be one of 'overwrite', 'residual'"),
        (dict(memory_size=0), ValueError, "memory_size must be >= 1, got 0"),
        (dict(memory_width=-2), ValueError, "memory_width must be >= 1"),
        (dict(read_heads=0), ValueError, "read_heads must be >= 1"),
        (dict(write_heads=0), ValueError, "write_heads must be >= 1"),
        (dict(hidden_size=2.0), TypeError, "hidden_size must be an integer"),
        (dict(input_kind="image"), ValueError, "input_kind must be one of"),
        (dict(dtype=np.int32), TypeError, "dtype must be numpy.float32 or numpy.float64"),
        (dict(rng="seed"), TypeError, "rng must be a numpy.random.Generator"),
    ],
)
def test_bad_construction(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        MemoryNet(4, 3, **kwargs)


def test_bad_inputs_and_states() -> None:
    model = MemoryNet(4, 3, hidden_size=3, memory_size=2, memory_width=2)
    with pytest.raises(ValueError, match=r"inputs must be a 2-D array \(B, T\) token ids"):
        model.forward(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match=r"token ids in 0..3, got min 0 and max 4"):
        model.forward(np.array([[0, 4]]))
    with pytest.raises(TypeError, match="inputs must hold integer indices"):
        model.forward(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="lengths must lie between 1 and T=2"):
        model.forward(np.array([[0, 1]]), lengths=np.array([3]))
    with pytest.raises(TypeError, match="state must be a MemoryState"):
        model.forward(np.array([[0, 1]]), state=(1, 2))
    bad = MemoryState(np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 2)), np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match=r"state.M must have shape \(1, 2, 2\), got \(1, 3, 2\)"):
        model.forward(np.array([[0, 1]]), state=bad)
    real = AttendRNN(3, 2, hidden_size=2, input_kind="real")
    with pytest.raises(ValueError, match=r"inputs must have shape \(B, T, input_size=3\)"):
        real.forward(np.zeros((1, 2, 4)))
    with pytest.raises(ValueError, match="inputs must be finite"):
        real.forward(np.full((1, 2, 3), np.nan))


def test_bad_attend_states() -> None:
    model = AttendRNN(3, 2, hidden_size=2, input_kind="real")
    x = np.zeros((1, 2, 3))
    _, state, _ = model.forward(x)  # history (1, 2, 2)
    with pytest.raises(TypeError, match="state must be an AttendState, got tuple"):
        model.forward(x, state=(state.h, state.c))
    with pytest.raises(ValueError, match=r"state.h must have shape \(1, 2\), got \(1, 3\)"):
        model.forward(x, state=AttendState(np.zeros((1, 3)), state.c, state.history))
    with pytest.raises(ValueError, match=r"state.c must have shape \(1, 2\), got \(2, 2\)"):
        model.forward(x, state=AttendState(state.h, np.zeros((2, 2)), state.history))
    bad = np.zeros((1, 2, 3))
    with pytest.raises(ValueError, match=r"state.history must have shape \(1, 2, 2\), got"):
        model.forward(x, state=AttendState(state.h, state.c, bad))
    y, _, _ = model.forward(x, state=state)  # the state it returned continues the sequence
    assert y.shape == (1, 2, 2)


def test_bad_gradients_arguments() -> None:
    model = MemoryNet(4, 3, hidden_size=3, memory_size=2, memory_width=2)
    y, _, cache = model.forward(np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match=r"dy must have shape \(B, T, output_size\)"):
        model.backward(np.zeros((1, 2, 3)), cache)
    with pytest.raises(TypeError, match=r"cache must come from MemoryNet\.forward"):
        model.backward(y, None)
    with pytest.raises(ValueError, match="dstate must be None"):
        model.backward(y, cache, dstate=np.zeros(3))
