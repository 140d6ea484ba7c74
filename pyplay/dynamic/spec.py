r"""The declarative description of a layered digital dynamic network (LDDN).

A network is described by plain data, a ``dict`` (JSON-friendly) or an :class:`LDDNSpec`; it is
validated field by field, never evaluated as code. Inputs and layers are numbered from 1, as in
the book's :math:`IW^{m,l}` (to layer ``m`` from input ``l``) and :math:`LW^{m,l}` (to layer
``m`` from layer ``l``)::

    {
        "inputs": [1],                                   # R^1 = 1: sizes of the inputs
        "layers": [
            {"size": 10, "transfer": "tansig"},          # S^1 = 10, bias b^1 (default)
            {"size": 1, "transfer": "purelin", "bias": True},
        ],
        "input_weights": [{"to": 1, "from": 1, "delays": [0, 1, 2]}],   # IW^{1,1}(0..2)
        "layer_weights": [
            {"to": 2, "from": 1, "delays": [0]},         # LW^{2,1}(0): feed-forward
            {"to": 1, "from": 2, "delays": [1, 2]},      # LW^{1,2}(1), LW^{1,2}(2): feedback
        ],
        "outputs": [2],                                  # optional, default: the last layer
    }

Fields
    ``inputs`` (required)
        List of input sizes :math:`R^l` (may be empty: an autonomous network).
    ``layers`` (required)
        Non-empty list of ``{"size": S^m, "transfer": name, "bias": bool}``; ``transfer`` is
        one of :data:`~pyplay.dynamic.transfer.TRANSFERS` (default ``"tansig"``), ``bias``
        defaults to True.
    ``input_weights``, ``layer_weights``
        Lists of ``{"to": m, "from": l, "delays": [d, ...]}``: the delay sets
        :math:`DI_{m,l}` and :math:`DL_{m,l}`, strictly increasing, non-negative. One entry per
        ``(to, from)`` pair. A delay-0 layer weight is a feed-forward connection within a time
        step; delay-0 connections must not form a cycle (each loop needs a delay >= 1).
    ``outputs``
        Layers whose outputs the network returns, in this order.
    ``feedback``, ``loop``
        NARX bookkeeping for :func:`~pyplay.dynamic.networks.closeloop`: a list of
        ``{"input": l, "layer": m}`` saying that input ``l`` of the *open-loop* form is the
        target of output layer ``m``; ``loop`` is ``"open"`` (default: input ``l`` exists) or
        ``"closed"`` (it is replaced by layer weights from layer ``m``; ``l`` is still its
        position in the open-loop form).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyplay._checks import check_choice, check_int
from pyplay.dynamic.tdl import check_delays
from pyplay.dynamic.transfer import TRANSFERS

__all__ = ["FeedbackSpec", "LDDNSpec", "LayerSpec", "WeightSpec", "parse_spec", "to_dict"]


@dataclass(frozen=True)
class LayerSpec:
    """Layer :math:`m`: :math:`S^m` neurons, transfer function :math:`f^m`, bias or not."""

    size: int
    transfer: str = "tansig"
    bias: bool = True


@dataclass(frozen=True)
class WeightSpec:
    """A weight to layer ``to`` from input/layer ``source`` on the delays ``delays``."""

    to: int
    source: int
    delays: tuple[int, ...]


@dataclass(frozen=True)
class FeedbackSpec:
    """Open-loop input ``input`` stands for the output of layer ``layer``."""

    input: int
    layer: int


@dataclass(frozen=True)
class LDDNSpec:
    """A validated description (build one with :func:`parse_spec`)."""

    inputs: tuple[int, ...]
    layers: tuple[LayerSpec, ...]
    input_weights: tuple[WeightSpec, ...]
    layer_weights: tuple[WeightSpec, ...]
    outputs: tuple[int, ...]
    feedback: tuple[FeedbackSpec, ...] = ()
    loop: str = "open"


_TOP = ("inputs", "layers", "input_weights", "layer_weights", "outputs", "feedback", "loop")
_LAYER = ("size", "transfer", "bias")
_WEIGHT = ("to", "from", "delays")
_FEEDBACK = ("input", "layer")


def _fields(name: str, obj: Any, allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    if not isinstance(obj, Mapping):
        raise TypeError(f"{name} must be a dict with the fields {list(allowed)}, got {obj!r}")
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        raise ValueError(f"{name} has unknown field {unknown[0]!r}; allowed: {list(allowed)}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ValueError(f"{name} is missing the required field {missing[0]!r}")


def _list(name: str, obj: Any) -> list[Any]:
    if not isinstance(obj, list | tuple):
        raise TypeError(f"{name} must be a list, got {obj!r} ({type(obj).__name__})")
    return list(obj)


def _layer(name: str, obj: Any) -> LayerSpec:
    _fields(name, obj, _LAYER, ("size",))
    bias = obj.get("bias", True)
    if not isinstance(bias, bool):
        raise TypeError(f"{name}.bias must be True or False, got {bias!r}")
    transfer = obj.get("transfer", "tansig")
    return LayerSpec(
        size=check_int(f"{name}.size", obj["size"], min_value=1),
        transfer=check_choice(f"{name}.transfer", transfer, tuple(TRANSFERS)),
        bias=bias,
    )


def _weights(field: str, items: Any, n_from: int, what: str, M: int) -> tuple[WeightSpec, ...]:
    out: list[WeightSpec] = []
    seen: dict[tuple[int, int], int] = {}
    kind = "IW" if field == "input_weights" else "LW"
    for k, obj in enumerate(_list(field, items)):
        name = f"{field}[{k}]"
        _fields(name, obj, _WEIGHT, _WEIGHT)
        to = _number(f"{name}.to", obj["to"], M, "a layer")
        source = _number(f"{name}.from", obj["from"], n_from, what)
        if (to, source) in seen:
            raise ValueError(
                f"{name} repeats the connection {kind}{to},{source} of "
                f"{field}[{seen[to, source]}]; put all its delays in one list"
            )
        seen[to, source] = k
        out.append(WeightSpec(to, source, check_delays(f"{name}.delays", obj["delays"])))
    return tuple(out)


def _number(name: str, value: Any, high: int, what: str) -> int:
    """``value`` as the number of one of the ``high`` inputs or layers (``what``: "a layer")."""
    v = check_int(name, value, min_value=1)
    if v > high:
        raise ValueError(
            f"{name} must be {what} number between 1 and {high}, got {v}"
            if high
            else f"{name} refers to {what} {v}, but the network has none"
        )
    return v


def _numbers(name: str, items: Any, high: int, what: str) -> tuple[int, ...]:
    out = tuple(_number(f"{name}[{k}]", v, high, what) for k, v in enumerate(_list(name, items)))
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a number, got {list(out)}")
    return out


def simulation_order(layers: int, layer_weights: tuple[WeightSpec, ...]) -> tuple[int, ...]:
    """Layer numbers in an order where every delay-0 source comes before its target.

    Ties go to the lower layer number. Raises ValueError naming a zero-delay cycle.
    """
    succ: dict[int, list[int]] = {m: [] for m in range(1, layers + 1)}
    indeg = dict.fromkeys(succ, 0)
    for w in layer_weights:
        if w.delays[0] == 0:
            succ[w.source].append(w.to)
            indeg[w.to] += 1
    ready = [m for m in succ if indeg[m] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        m = heapq.heappop(ready)
        order.append(m)
        for nxt in succ[m]:
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) == layers:
        return tuple(order)
    # walk backwards along zero-delay edges among the unplaced layers until one repeats
    left = {m for m in succ if m not in order}
    pred = {m: [s for s in left if m in succ[s]] for m in left}
    path = [min(left)]
    while path[-1] not in path[:-1]:
        path.append(min(pred[path[-1]]))
    cycle = path[path.index(path[-1]) :][::-1]  # source -> ... -> source
    edges = ", ".join(f"LW{b},{a}(d=0)" for a, b in itertools.pairwise(cycle))
    raise ValueError(
        "layer_weights form a zero-delay cycle "
        + " -> ".join(str(m) for m in cycle)
        + f" ({edges}): a layer would need its own output within the same time step; "
        "give at least one of these connections delays >= 1 only"
    )


def parse_spec(description: Any) -> LDDNSpec:
    """Validate a description (dict or :class:`LDDNSpec`) and return an :class:`LDDNSpec`.

    Raises TypeError / ValueError naming the field (e.g. ``layer_weights[1].delays[0]``).
    """
    if isinstance(description, LDDNSpec):
        description = to_dict(description)
    _fields("description", description, _TOP, ("inputs", "layers"))
    inputs = tuple(
        check_int(f"inputs[{k}]", r, min_value=1)
        for k, r in enumerate(_list("inputs", description["inputs"]))
    )
    layer_items = _list("layers", description["layers"])
    if not layer_items:
        raise ValueError("layers must hold at least one layer, got []")
    layers = tuple(_layer(f"layers[{k}]", obj) for k, obj in enumerate(layer_items))
    M = len(layers)
    iw = _weights("input_weights", description.get("input_weights", []), len(inputs), "an input", M)
    lw = _weights("layer_weights", description.get("layer_weights", []), M, "a layer", M)
    outputs = _numbers("outputs", description.get("outputs", [M]), M, "a layer")
    if not outputs:
        raise ValueError("outputs must name at least one layer, got []")
    loop = check_choice("loop", description.get("loop", "open"), ("open", "closed"))
    n_open = len(inputs) + (
        len(_list("feedback", description.get("feedback", []))) if loop == "closed" else 0
    )
    feedback: list[FeedbackSpec] = []
    for k, obj in enumerate(_list("feedback", description.get("feedback", []))):
        name = f"feedback[{k}]"
        _fields(name, obj, _FEEDBACK, _FEEDBACK)
        i = _number(f"{name}.input", obj["input"], n_open, "an input")
        m = check_int(f"{name}.layer", obj["layer"], min_value=1)
        if m not in outputs:
            raise ValueError(f"{name}.layer must be one of the outputs {list(outputs)}, got {m}")
        if loop == "open" and inputs[i - 1] != layers[m - 1].size:
            raise ValueError(
                f"{name}: input {i} (size {inputs[i - 1]}) must have the size of layer {m} "
                f"({layers[m - 1].size}) whose target it is"
            )
        if any(f.input == i or f.layer == m for f in feedback):
            raise ValueError(f"{name} repeats input {i} or layer {m} of an earlier entry")
        feedback.append(FeedbackSpec(i, m))
    simulation_order(M, lw)  # refuse zero-delay cycles now
    return LDDNSpec(inputs, layers, iw, lw, outputs, tuple(feedback), loop)


def to_dict(spec: LDDNSpec) -> dict[str, Any]:
    """The plain-data (JSON-friendly) form of ``spec``; ``parse_spec(to_dict(s)) == s``."""

    def weights(ws: tuple[WeightSpec, ...]) -> list[dict[str, Any]]:
        return [{"to": w.to, "from": w.source, "delays": list(w.delays)} for w in ws]

    return {
        "inputs": list(spec.inputs),
        "layers": [{"size": s.size, "transfer": s.transfer, "bias": s.bias} for s in spec.layers],
        "input_weights": weights(spec.input_weights),
        "layer_weights": weights(spec.layer_weights),
        "outputs": list(spec.outputs),
        "feedback": [{"input": f.input, "layer": f.layer} for f in spec.feedback],
        "loop": spec.loop,
    }
