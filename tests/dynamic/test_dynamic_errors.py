"""Bad descriptions and bad arguments give a TypeError / ValueError naming the field.

Each case starts from a valid two-layer description, breaks one field and checks the type of
the error and that its message names the field (and, where useful, what was given).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.networks import closeloop, distdelaynet, layrecnet, narxnet, openloop
from pyplay.dynamic.spec import parse_spec
from pyplay.dynamic.tdl import TDL, Delay, TDL_hstack
from pyplay.dynamic.train import fit
from pyplay.dynamic.transfer import get_transfer

GOOD: dict[str, Any] = {
    "inputs": [2],
    "layers": [{"size": 3, "transfer": "tansig"}, {"size": 1, "transfer": "purelin"}],
    "input_weights": [{"to": 1, "from": 1, "delays": [0, 1]}],
    "layer_weights": [{"to": 2, "from": 1, "delays": [0]}, {"to": 1, "from": 2, "delays": [1]}],
    "outputs": [2],
}


def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    desc = copy.deepcopy(GOOD)
    change(desc)
    return desc


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """``"layers.1.transfer"`` -> desc["layers"][1]["transfer"] = value."""

    def change(desc: dict[str, Any]) -> None:
        *head, last = path.split(".")
        obj: Any = desc
        for key in head:
            obj = obj[int(key)] if key.isdigit() else obj[key]
        obj[int(last) if last.isdigit() else last] = value

    return change


def _del(path: str) -> Callable[[dict[str, Any]], None]:
    def change(desc: dict[str, Any]) -> None:
        *head, last = path.split(".")
        obj: Any = desc
        for key in head:
            obj = obj[int(key)] if key.isdigit() else obj[key]
        del obj[last]

    return change


CASES: list[tuple[str, Callable[[dict[str, Any]], None], type, str]] = [
    ("unknown top field", _set("layer", []), ValueError, "description has unknown field 'layer'"),
    ("missing layers", _del("layers"), ValueError, "missing the required field 'layers'"),
    ("inputs not a list", _set("inputs", 2), TypeError, r"inputs must be a list, got 2"),
    ("input size 0", _set("inputs.0", 0), ValueError, r"inputs\[0\] must be >= 1, got 0"),
    ("no layers", _set("layers", []), ValueError, "layers must hold at least one layer"),
    ("layer not a dict", _set("layers.0", 3), TypeError, r"layers\[0\] must be a dict"),
    ("layer size missing", _del("layers.1.size"), ValueError, r"layers\[1\] is missing .*'size'"),
    (
        "layer size float",
        _set("layers.0.size", 2.5),
        TypeError,
        r"layers\[0\]\.size must be an int",
    ),
    (
        "bad transfer",
        _set("layers.1.transfer", "relu"),
        ValueError,
        r"layers\[1\]\.transfer .*'relu'",
    ),
    ("bias not bool", _set("layers.0.bias", "yes"), TypeError, r"layers\[0\]\.bias must be True"),
    ("layer extra", _set("layers.0.activation", "x"), ValueError, r"layers\[0\] has unknown field"),
    ("iw to", _set("input_weights.0.to", 3), ValueError, r"input_weights\[0\]\.to must be a layer"),
    (
        "iw from",
        _set("input_weights.0.from", 2),
        ValueError,
        r"input_weights\[0\]\.from must be an input number between 1 and 1, got 2",
    ),
    (
        "iw no from",
        _del("input_weights.0.from"),
        ValueError,
        r"input_weights\[0\] is missing .*'from'",
    ),
    (
        "delays empty",
        _set("input_weights.0.delays", []),
        ValueError,
        r"input_weights\[0\]\.delays must hold at least one",
    ),
    (
        "delays order",
        _set("input_weights.0.delays", [1, 0]),
        ValueError,
        r"input_weights\[0\]\.delays must be strictly increasing",
    ),
    (
        "delays repeat",
        _set("layer_weights.1.delays", [1, 1]),
        ValueError,
        r"layer_weights\[1\]\.delays must be strictly",
    ),
    (
        "delay negative",
        _set("input_weights.0.delays", [-1]),
        ValueError,
        r"input_weights\[0\]\.delays\[0\] must be >= 0",
    ),
    (
        "delay float",
        _set("input_weights.0.delays", [0.5]),
        TypeError,
        r"input_weights\[0\]\.delays\[0\] must be an integer",
    ),
    (
        "delays string",
        _set("input_weights.0.delays", "01"),
        TypeError,
        r"input_weights\[0\]\.delays must be a list",
    ),
    (
        "lw from",
        _set("layer_weights.1.from", 5),
        ValueError,
        r"layer_weights\[1\]\.from must be a layer number between 1 and 2, got 5",
    ),
    (
        "repeat connection",
        lambda d: d["layer_weights"].append({"to": 2, "from": 1, "delays": [2]}),
        ValueError,
        r"layer_weights\[2\] repeats the connection LW2,1 of layer_weights\[0\]",
    ),
    (
        "zero-delay cycle",
        _set("layer_weights.1.delays", [0, 1]),
        ValueError,
        r"layer_weights form a zero-delay cycle 1 -> 2 -> 1 \(LW2,1\(d=0\), LW1,2\(d=0\)\)",
    ),
    (
        "zero-delay self loop",
        lambda d: d["layer_weights"].append({"to": 1, "from": 1, "delays": [0]}),
        ValueError,
        r"zero-delay cycle 1 -> 1",
    ),
    (
        "outputs range",
        _set("outputs", [3]),
        ValueError,
        r"outputs\[0\] must be a layer number between 1 and 2, got 3",
    ),
    ("outputs empty", _set("outputs", []), ValueError, "outputs must name at least one layer"),
    ("outputs repeat", _set("outputs", [2, 2]), ValueError, "outputs must not repeat"),
    ("loop", _set("loop", "half"), ValueError, r"loop must be one of 'open', 'closed', got 'half'"),
    (
        "feedback layer",
        _set("feedback", [{"input": 1, "layer": 1}]),
        ValueError,
        r"feedback\[0\]\.layer must be one of the outputs \[2\], got 1",
    ),
    (
        "feedback size",
        _set("feedback", [{"input": 1, "layer": 2}]),
        ValueError,
        r"feedback\[0\]: input 1 \(size 2\) must have the size of layer 2",
    ),
    (
        "feedback field",
        _set("feedback", [{"input": 1}]),
        ValueError,
        r"feedback\[0\] is missing the required field 'layer'",
    ),
]


@pytest.mark.parametrize(
    ("change", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_descriptions_name_the_field(change: Any, error: type, message: str) -> None:
    desc = broken(change)
    with pytest.raises(error, match=message):
        parse_spec(desc)
    with pytest.raises(error, match=message):
        LDDN(desc)


def test_three_layer_cycle_is_named_in_order() -> None:
    desc = {
        "inputs": [1],
        "layers": [{"size": 1}, {"size": 1}, {"size": 1}],
        "input_weights": [{"to": 1, "from": 1, "delays": [0]}],
        "layer_weights": [
            {"to": 2, "from": 1, "delays": [0]},
            {"to": 3, "from": 2, "delays": [0]},
            {"to": 1, "from": 3, "delays": [0, 1]},
        ],
    }
    with pytest.raises(ValueError, match=r"cycle 1 -> 2 -> 3 -> 1 \(LW2,1\(d=0\), LW3,2"):
        LDDN(desc)


def test_description_must_be_data() -> None:
    with pytest.raises(TypeError, match="description must be a dict"):
        LDDN("lambda: 1")
    net = LDDN(GOOD)
    assert LDDN(net.spec).spec == net.spec  # a parsed spec is accepted too


def test_bad_forward_backward_arguments() -> None:
    net = LDDN(GOOD)
    p = np.zeros((2, 4, 2))
    with pytest.raises(
        ValueError, match=r"p must have shape \(B, T, R\) = \('\*', '\*', 2\), got \(2, 4, 3\)"
    ):
        net.forward(np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match=r"p must be a 3-D array \(B, T, R\)"):
        net.forward(np.zeros((4, 2)))
    with pytest.raises(TypeError, match="p must be a numeric array"):
        net.forward("abc")
    with pytest.raises(ValueError, match="p must be finite"):
        net.forward(np.full((1, 2, 2), np.nan))
    with pytest.raises(ValueError, match=r"a0 must have shape \(B, DL, S\) = \(2, 1, 4\)"):
        net.forward(p, a0=np.zeros((2, 2, 4)))
    with pytest.raises(ValueError, match=r"p0 must have shape \(B, DI, R\) = \(2, 1, 2\)"):
        net.forward(p, p0=np.zeros((3, 1, 2)))
    out, cache = net.forward(p)
    with pytest.raises(ValueError, match=r"dout must have shape \(B, T, O\) = \(2, 4, 1\)"):
        net.backward(np.zeros((2, 3, 1)), cache)
    with pytest.raises(TypeError, match="cache must be the LDDNCache of forward"):
        net.backward(out, {"A": 1})
    with pytest.raises(TypeError, match=r"dtype must be numpy\.float32 or numpy\.float64"):
        LDDN(GOOD, dtype=np.int32)
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        LDDN(GOOD, rng="seed")
    bad = dict(net.params)
    bad["b1"] = np.zeros(4)
    with pytest.raises(ValueError, match=r"params\['b1'\] must be an ndarray of shape \(3,\)"):
        LDDN(GOOD, params=bad)
    with pytest.raises(ValueError, match="params must have the keys"):
        LDDN(GOOD, params={"b1": np.zeros(3)})


def test_bad_tdl_and_transfer_arguments() -> None:
    with pytest.raises(ValueError, match=r"delays must be strictly increasing"):
        TDL(2, (2, 1))
    with pytest.raises(ValueError, match=r"size must be >= 1, got 0"):
        Delay(0)
    with pytest.raises(ValueError, match=r"u0 must have shape \(B, D, S\) = \(1, 2, 1\)"):
        TDL(1, (0, 2)).forward(np.zeros((1, 3, 1)), np.zeros((1, 1, 1)))
    with pytest.raises(ValueError, match=r"u must have shape \(B, T, S\) = \('\*', '\*', 2\)"):
        TDL_hstack(2, 3).forward(np.zeros((1, 3, 1)))
    with pytest.raises(ValueError, match=r"u0 must have shape \(B, S\) = \(1, 2\)"):
        Delay(2).forward(np.zeros((1, 3, 2)), np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"D must be >= 1"):
        TDL_hstack(2, 0)
    with pytest.raises(ValueError, match=r"transfer must be one of 'tansig', .*got 'tanh'"):
        get_transfer("tanh")


def test_bad_network_and_training_arguments() -> None:
    with pytest.raises(ValueError, match=r"layer_delays must all be >= 1 .*got \[0, 1\]"):
        layrecnet((0, 1))
    with pytest.raises(ValueError, match=r"feedback_delays must all be >= 1"):
        narxnet((1,), (0, 1))
    with pytest.raises(ValueError, match=r"delays must hold one delay list per layer \(2"):
        distdelaynet(((0, 1),), (3,))
    with pytest.raises(TypeError, match=r"hidden_sizes must be a list of layer sizes"):
        narxnet((1,), (1,), 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="loop must be 'open' or 'closed'"):
        narxnet(loop="both")
    with pytest.raises(ValueError, match="net has no feedback declared"):
        closeloop(LDDN(GOOD))
    with pytest.raises(ValueError, match=r"net must be in open loop form, got loop='closed'"):
        closeloop(narxnet(loop="closed"))
    with pytest.raises(ValueError, match=r"net must be in closed loop form"):
        openloop(narxnet())
    net = LDDN(GOOD)
    p, y = np.zeros((4, 5, 2)), np.zeros((4, 5, 1))
    with pytest.raises(ValueError, match="optimizer must be one of 'sgd', 'adam'"):
        fit(net, p, y, 3, optimizer="lbfgs")
    with pytest.raises(ValueError, match=r"targets must have shape \(N, T, O\) = \(4, 5, 1\)"):
        fit(net, p, np.zeros((4, 5, 2)), 3)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        fit(net, p, y, -1)
    with pytest.raises(ValueError, match=r"batch_size must be <= 4, got 5"):
        fit(net, p, y, 1, batch_size=5)
    with pytest.raises(ValueError, match=r"a0 must have one entry per sequence of inputs \(4\)"):
        fit(net, p, y, 1, a0=np.zeros((3, 1, 4)))
