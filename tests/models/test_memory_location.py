"""Location addressing of the memory net (:mod:`pyplay.models.memory.location`): each stage's
hand-written backward against central differences in float64 (alone, then inside the whole net
with both write rules and several heads), and what the stages do to a weighting."""

from __future__ import annotations

import numpy as np
import pytest
from test_memnet_gradcheck import _check  # every parameter and the inputs, in float64

from gradcheck import assert_grad_close, max_rel_error, numeric_grad
from pyplay.models.memory import MemoryNet, MemoryState
from pyplay.models.memory.location import SHIFTS, address_size, locate, locate_backward


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_locate_backward_matches_central_differences() -> None:
    rng = np.random.default_rng(3)
    B, J, W = 3, 6, 4
    M = rng.standard_normal((B, J, W))
    z = rng.standard_normal((B, address_size(W, "location")))
    w_prev = _softmax(rng.standard_normal((B, J)))
    R = rng.standard_normal((B, J))

    def loss() -> float:
        return float((locate(M, z, w_prev).w * R).sum())

    dM, dz, dw_prev = locate_backward(R, M, locate(M, z, w_prev))
    for name, mine, arr in (("M", dM, M), ("z", dz, z), ("w_prev", dw_prev, w_prev)):
        numeric = numeric_grad(loss, arr)
        assert_grad_close(mine, numeric, name)
        assert max_rel_error(mine, numeric) < 1e-7


def test_stages_move_a_head_one_cell_on() -> None:
    """Gate closed (g ~ 0), all shift weight on +1, strong sharpening: the head moves from
    cell 2 to cell 3 whatever the memory holds; gate open: it goes where the content points."""
    J, W = 5, 3
    M = np.eye(J, W)[None] * 4.0 + 0.01  # (1, J, W)
    w_prev = np.eye(J)[[2]]  # (1, J) on cell 2
    z = np.zeros((1, address_size(W, "location")))
    z[0, W + 1] = -30.0  # g = sigmoid(-30): keep the last place
    z[0, W + 2 + SHIFTS.index(1)] = 30.0  # shift by +1
    z[0, -1] = 20.0  # gamma ~ 21
    np.testing.assert_allclose(locate(M, z, w_prev).w, np.eye(J)[[3]], atol=1e-9)
    w_prev = np.eye(J)[[J - 1]]  # from the last cell, +1 wraps to cell 0 (circular)
    np.testing.assert_allclose(locate(M, z, w_prev).w, np.eye(J)[[0]], atol=1e-9)
    z[0, W + 1], z[0, W + 2 + SHIFTS.index(1)] = 30.0, 0.0  # gate open, no shift preference
    z[0, W + 2 + SHIFTS.index(0)] = 30.0  # stay
    z[0, :W], z[0, W] = M[0, 1], 20.0  # key = cell 1, sharp
    assert int(locate(M, z, w_prev).w.argmax()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("update", ["overwrite", "residual"])
@pytest.mark.parametrize(("read_heads", "write_heads"), [(1, 1), (2, 2)])
def test_memnet_with_location_addressing_gradients(
    update: str, read_heads: int, write_heads: int
) -> None:
    model = MemoryNet(
        3, 4, hidden_size=5, memory_size=4, memory_width=3, read_heads=read_heads,
        write_heads=write_heads, update=update, addressing="location", input_kind="real",
        dtype=np.float64, rng=1,
    )  # fmt: skip
    assert _check(model) < 1e-6


def test_location_state_carries_the_weights_and_is_checked() -> None:
    model = MemoryNet(3, 2, hidden_size=4, memory_size=5, memory_width=3, read_heads=2,
                      addressing="location", input_kind="real", dtype=np.float64)  # fmt: skip
    x = np.random.default_rng(1).standard_normal((2, 6, 3))
    y, _, cache = model.forward(x)
    y1, state, _ = model.forward(x[:, :2])
    assert state.w is not None and state.w.shape == (2, 3, 5)
    y2, _, _ = model.forward(x[:, 2:], state)
    np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), y, atol=1e-12)
    np.testing.assert_allclose(cache.read_weights.sum(axis=3), 1.0)
    bad = MemoryState(state.h, state.c, state.r, state.M, np.zeros((2, 2, 5)))
    with pytest.raises(ValueError, match=r"state\.w must have shape \(2, 3, 5\)"):
        model.forward(x, bad)
    with pytest.raises(ValueError, match="addressing"):
        MemoryNet(3, 2, addressing="place")


def test_config_round_trip_and_size_estimate() -> None:
    model = MemoryNet(6, 4, hidden_size=5, memory_size=7, memory_width=3, read_heads=2,
                      write_heads=2, addressing="location", rng=0)  # fmt: skip
    assert model.config["addressing"] == "location"
    again = MemoryNet.from_config(model.config)
    assert {k: v.shape for k, v in again.params.items()} == {
        k: v.shape for k, v in model.params.items()
    }
    assert MemoryNet.estimate_parameters(model.config) >= model.num_parameters()
    content = MemoryNet.from_config({**model.config, "addressing": "content"})
    assert content.num_parameters() < model.num_parameters()


@pytest.mark.slow
@pytest.mark.parametrize("addressing", ["content", "location"])
def test_memnet_with_a_learned_key_function_gradients(addressing: str) -> None:
    """k_j = K M_j with K^(w) and K^(r) learned (the lecture's key function)."""
    model = MemoryNet(
        3, 4, hidden_size=5, memory_size=4, memory_width=3, read_heads=2, write_heads=2,
        addressing=addressing, key_function="linear", input_kind="real", dtype=np.float64,
        rng=1,
    )  # fmt: skip
    rng = np.random.default_rng(4)
    for name in ("write_key.weight", "read_key.weight"):  # away from the identity
        model.params[name] += 0.3 * rng.standard_normal((3, 3))
    assert _check(model) < 1e-6


def test_identity_key_function_is_the_start_of_the_linear_one() -> None:
    x = np.random.default_rng(0).standard_normal((2, 5, 3))
    plain = MemoryNet(3, 2, hidden_size=4, memory_size=5, memory_width=3, input_kind="real",
                      addressing="location", dtype=np.float64, rng=2)  # fmt: skip
    keyed = MemoryNet.from_config({**plain.config, "key_function": "linear"}, rng=2)
    np.testing.assert_allclose(keyed.forward(x)[0], plain.forward(x)[0], atol=1e-12)
    assert MemoryNet.estimate_parameters(keyed.config) >= keyed.num_parameters()
    with pytest.raises(ValueError, match="key_function"):
        MemoryNet(3, 2, key_function="mlp")
