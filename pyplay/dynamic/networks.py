r"""The toolbox's dynamic networks as LDDN descriptions, and NARX open/closed-loop conversion.

All constructors build a chain of hidden layers ``1 .. H`` (``transfer``, default tansig) and an
output layer ``H + 1`` (``output_transfer``, default purelin) joined by delay-0 layer weights
:math:`LW^{m+1,m}(0)`, and differ in where the delays sit:

``timedelaynet``: focused time-delay network
    A tapped delay line on the input only: :math:`n^1(t) = \sum_{d \in DI} IW^{1,1}(d) p(t-d)
    + b^1`. Static inside, finite memory (an FIR filter with a nonlinear read-out).
``distdelaynet``: distributed time-delay network
    A delay set on *every* connection: :math:`IW^{1,1}(d)` on ``delays[0]``,
    :math:`LW^{m+1,m}(d)` on ``delays[m]``.
``layrecnet``: layered recurrent network (Elman when ``layer_delays = [1]``)
    Each hidden layer feeds back to itself: :math:`n^m(t) = \dots + \sum_{d}
    LW^{m,m}(d) a^m(t-d)`.
``narxnet``: nonlinear autoregressive with exogenous input
    :math:`y(t) = f\bigl(u(t - d_u) \dots, y(t - d_y) \dots\bigr)`. **Open loop**
    (series-parallel, for training): the measured :math:`y` is input 2 through
    :math:`IW^{1,2}(d_y)`, so there is no recurrence and all steps run in one pass. **Closed
    loop** (parallel, for multi-step prediction): the network's own output is fed back through
    :math:`LW^{1,M}(d_y)`. :func:`closeloop` and :func:`openloop` convert one into the other;
    the new network *shares* the weight arrays (``IW1,2`` becomes ``LW1,M``), so training one
    trains the other.

:func:`preparets` (MATLAB's name) cuts series into inputs, initial conditions and targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import numpy as np

from pyplay._checks import check_array, check_int, check_shape
from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.tdl import check_delays

__all__ = [
    "DEFAULTS",
    "NetOptions",
    "Prepared",
    "closeloop",
    "distdelaynet",
    "layrecnet",
    "narxnet",
    "openloop",
    "preparets",
    "timedelaynet",
]


class NetOptions(TypedDict, total=False):
    """The options every builder takes by keyword, with their defaults in :data:`DEFAULTS`:
    ``input_size`` and ``output_size`` (1), ``transfer`` of the hidden layers ("tansig"),
    ``output_transfer`` ("purelin"), ``dtype`` (numpy.float64) and ``rng`` (0: a seed or a
    numpy Generator)."""

    input_size: int
    output_size: int
    transfer: str
    output_transfer: str
    dtype: Any
    rng: np.random.Generator | int | None


DEFAULTS: NetOptions = {
    "input_size": 1,
    "output_size": 1,
    "transfer": "tansig",
    "output_transfer": "purelin",
    "dtype": np.float64,
    "rng": 0,
}


def _sizes(hidden_sizes: Any) -> list[int]:
    if not isinstance(hidden_sizes, Sequence) or isinstance(hidden_sizes, str):
        raise TypeError(f"hidden_sizes must be a list of layer sizes, got {hidden_sizes!r}")
    return [check_int(f"hidden_sizes[{k}]", s, min_value=1) for k, s in enumerate(hidden_sizes)]


def _chain(n_layers: int, delays: list[tuple[int, ...]] | None = None) -> list[dict[str, Any]]:
    """LW^{m+1,m} on ``delays[m-1]`` (default [0]) for m = 1 .. n_layers - 1."""
    return [
        {"to": m + 1, "from": m, "delays": list(delays[m - 1]) if delays else [0]}
        for m in range(1, n_layers)
    ]


def _network(
    hidden: list[int],
    options: NetOptions,
    input_weights: list[dict[str, Any]],
    layer_weights: list[dict[str, Any]],
    **more: Any,
) -> LDDN:
    """The LDDN of hidden layers ``hidden`` and an output layer (``options`` over
    :data:`DEFAULTS`) with these weights; ``more`` adds description entries (``feedback``)."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"unexpected keyword arguments {unknown}; the options are {list(DEFAULTS)}")
    o: NetOptions = {**DEFAULTS, **options}
    layers = [{"size": size, "transfer": o["transfer"]} for size in hidden]
    output_size = check_int("output_size", o["output_size"], min_value=1)
    layers.append({"size": output_size, "transfer": o["output_transfer"]})
    inputs = [check_int("input_size", o["input_size"], min_value=1)]
    if "feedback" in more:  # the measured output is input 2 (open-loop NARX)
        inputs.append(output_size)
    desc = {
        "inputs": inputs,
        "layers": layers,
        "input_weights": input_weights,
        "layer_weights": layer_weights,
        **more,
    }
    return LDDN(desc, dtype=o["dtype"], rng=o["rng"])


def _at_least_one(name: str, delays: tuple[int, ...]) -> tuple[int, ...]:
    if delays[0] < 1:
        raise ValueError(
            f"{name} must all be >= 1 (a delay-0 loop has no solution), got {list(delays)}"
        )
    return delays


def timedelaynet(
    input_delays: Sequence[int] = (0, 1),
    hidden_sizes: Sequence[int] = (10,),
    **options: Unpack[NetOptions],
) -> LDDN:
    """Focused time-delay network: a TDL on the input, then a static feed-forward network.
    ``options``: :class:`NetOptions`."""
    hidden = _sizes(hidden_sizes)
    delays = list(check_delays("input_delays", input_delays))
    iw = [{"to": 1, "from": 1, "delays": delays}]
    return _network(hidden, options, iw, _chain(len(hidden) + 1))


def distdelaynet(
    delays: Sequence[Sequence[int]] = ((0, 1), (0, 1)),
    hidden_sizes: Sequence[int] = (10,),
    **options: Unpack[NetOptions],
) -> LDDN:
    """Distributed time-delay network: ``delays[0]`` on the input weight, ``delays[m]`` on
    :math:`LW^{m+1,m}`; one delay list per layer (``len(hidden_sizes) + 1`` of them).
    ``options``: :class:`NetOptions`."""
    hidden = _sizes(hidden_sizes)
    M = len(hidden) + 1
    if not isinstance(delays, Sequence) or len(delays) != M:
        raise ValueError(
            f"delays must hold one delay list per layer ({M}: the input weight and "
            f"each layer weight), got {delays!r}"
        )
    sets = [check_delays(f"delays[{k}]", d) for k, d in enumerate(delays)]
    iw = [{"to": 1, "from": 1, "delays": list(sets[0])}]
    return _network(hidden, options, iw, _chain(M, sets[1:]))


def layrecnet(
    layer_delays: Sequence[int] = (1,),
    hidden_sizes: Sequence[int] = (10,),
    **options: Unpack[NetOptions],
) -> LDDN:
    """Layered recurrent network: every hidden layer feeds back to itself on ``layer_delays``
    (all >= 1); ``layer_delays=[1]`` with one hidden layer is Elman's network.
    ``options``: :class:`NetOptions`."""
    hidden = _sizes(hidden_sizes)
    if not hidden:
        raise ValueError(
            "hidden_sizes must hold at least one layer for a recurrent network, got []"
        )
    fb = _at_least_one("layer_delays", check_delays("layer_delays", layer_delays))
    loops = [{"to": m, "from": m, "delays": list(fb)} for m in range(1, len(hidden) + 1)]
    iw = [{"to": 1, "from": 1, "delays": [0]}]
    return _network(hidden, options, iw, loops + _chain(len(hidden) + 1))


def narxnet(
    input_delays: Sequence[int] = (1, 2),
    feedback_delays: Sequence[int] = (1, 2),
    hidden_sizes: Sequence[int] = (10,),
    loop: str = "open",
    **options: Unpack[NetOptions],
) -> LDDN:
    """NARX network, open loop (input 1: ``u``, input 2: the measured ``y``) or closed loop
    (input ``u`` only, output fed back). The same ``rng`` gives the same weights in both.
    ``options``: :class:`NetOptions`."""
    du = check_delays("input_delays", input_delays)
    dy = _at_least_one("feedback_delays", check_delays("feedback_delays", feedback_delays))
    hidden = _sizes(hidden_sizes)
    M = len(hidden) + 1
    iw = [{"to": 1, "from": 1, "delays": list(du)}, {"to": 1, "from": 2, "delays": list(dy)}]
    net = _network(hidden, options, iw, _chain(M), feedback=[{"input": 2, "layer": M}])
    if loop == "open":
        return net
    if loop == "closed":
        return closeloop(net)
    raise ValueError(f"loop must be 'open' or 'closed', got {loop!r}")


def closeloop(net: LDDN) -> LDDN:
    """The parallel (closed-loop) form of an open-loop network with ``feedback``.

    Each feedback input :math:`l` standing for layer :math:`j` is removed and every
    :math:`IW^{m,l}` becomes :math:`LW^{m,j}` with the same delays and **the same array**.
    """
    s = _spec_dict(net, "open")
    fb = {f["input"]: f["layer"] for f in s["feedback"]}
    keep = [l for l in range(1, len(s["inputs"]) + 1) if l not in fb]
    new_index = {l: k for k, l in enumerate(keep, start=1)}
    params: dict[str, np.ndarray] = {}
    iw, lw = [], list(s["layer_weights"])
    existing = {(w["to"], w["from"]) for w in lw}
    for w in s["input_weights"]:
        m, l = w["to"], w["from"]
        old = net.params[f"IW{m},{l}"]
        if l in fb:
            j = fb[l]
            if (m, j) in existing:
                raise ValueError(
                    f"cannot close the loop: LW{m},{j} exists already besides IW{m},{l}"
                )
            if w["delays"][0] < 1:
                raise ValueError(
                    f"cannot close the loop: IW{m},{l} has delay 0 (feedback needs >= 1)"
                )
            lw.append({"to": m, "from": j, "delays": w["delays"]})
            params[f"LW{m},{j}"] = old
        else:
            iw.append({**w, "from": new_index[l]})
            params[f"IW{m},{new_index[l]}"] = old
    for name, value in net.params.items():
        if not name.startswith("IW"):
            params[name] = value
    s.update(
        inputs=[s["inputs"][l - 1] for l in keep], input_weights=iw, layer_weights=lw, loop="closed"
    )
    return LDDN(s, dtype=net.dtype, params=params)


def openloop(net: LDDN) -> LDDN:
    """The series-parallel (open-loop) form of a closed-loop network: the inverse of
    :func:`closeloop` (every layer weight *from* a feedback layer becomes an input weight from
    its open-loop input), sharing the arrays."""
    s = _spec_dict(net, "closed")
    fb = {f["layer"]: f["input"] for f in s["feedback"]}
    slots = len(s["inputs"]) + len(fb)
    others = [l for l in range(1, slots + 1) if l not in fb.values()]  # exogenous positions
    inputs = [0] * slots
    for j, l in fb.items():
        inputs[l - 1] = net.sizes[j]
    for k, l in enumerate(others):
        inputs[l - 1] = s["inputs"][k]
    params: dict[str, np.ndarray] = {}
    iw, lw = [], []
    for w in s["input_weights"]:
        l = others[w["from"] - 1]
        iw.append({**w, "from": l})
        params[f"IW{w['to']},{l}"] = net.params[f"IW{w['to']},{w['from']}"]
    for w in s["layer_weights"]:
        name = f"LW{w['to']},{w['from']}"
        if w["from"] in fb:
            l = fb[w["from"]]
            iw.append({"to": w["to"], "from": l, "delays": w["delays"]})
            params[f"IW{w['to']},{l}"] = net.params[name]
        else:
            lw.append(w)
            params[name] = net.params[name]
    for name, value in net.params.items():
        if name.startswith("b"):
            params[name] = value
    s.update(inputs=inputs, input_weights=iw, layer_weights=lw, loop="open")
    return LDDN(s, dtype=net.dtype, params=params)


def _spec_dict(net: LDDN, loop: str) -> dict[str, Any]:
    from pyplay.dynamic.spec import to_dict

    if not isinstance(net, LDDN):
        raise TypeError(f"net must be an LDDN, got {type(net).__name__}")
    if not net.spec.feedback:
        raise ValueError("net has no feedback declared (build it with narxnet or give 'feedback')")
    if net.spec.loop != loop:
        raise ValueError(f"net must be in {loop} loop form, got loop={net.spec.loop!r}")
    return to_dict(net.spec)


@dataclass(frozen=True)
class Prepared:
    """Series cut for :meth:`LDDN.forward`: ``net.forward(p, a0, p0)`` should give ``targets``."""

    p: np.ndarray  # (B, T, R)
    p0: np.ndarray  # (B, DI, R)
    a0: np.ndarray  # (B, DL, S)
    targets: np.ndarray  # (B, T, O)


def preparets(net: LDDN, u: Any, y: Any) -> Prepared:
    """MATLAB's ``preparets``: the first ``shift`` steps of the series become initial conditions.

    Parameters
    ----------
    net : LDDN
    u : array (B, N, R_u)
        The exogenous inputs (all inputs except the feedback ones).
    y : array (B, N, O)
        The targets of the output layers; a feedback layer's columns are also its open-loop
        input (open loop) or its layer initial conditions (closed loop).

    Returns
    -------
    Prepared, with ``T = N - shift`` steps, ``shift = DI`` (open) or ``max(DI, DL)`` (closed).
    """
    s = net.spec
    fb_inputs = {f.input: f.layer for f in s.feedback}
    closed = s.loop == "closed"
    R_u = net.input_size - (0 if closed else sum(s.inputs[l - 1] for l in fb_inputs))
    u = check_array("u", u, ndim=3, dtype=net.dtype, layout="(B, N, R_u)")
    check_shape("u", u, (None, None, R_u), "(B, N, R_u)")
    y = check_array("y", y, ndim=3, dtype=net.dtype, layout="(B, N, O)")
    check_shape("y", y, (u.shape[0], u.shape[1], net.output_size), "(B, N, O)")
    DI, DL = net.num_input_delays, net.num_layer_delays
    shift = max(DI, DL) if closed else DI
    if u.shape[1] <= shift:
        raise ValueError(
            f"u and y must be longer than the {shift} initial steps, got N={u.shape[1]}"
        )
    out_cols, start = {}, 0
    for m in s.outputs:
        out_cols[m] = slice(start, start + net.sizes[m])
        start += net.sizes[m]
    if closed or not fb_inputs:
        X = u  # (B, N, R)
    else:
        parts, col = [], 0
        for l in range(1, len(s.inputs) + 1):
            if l in fb_inputs:
                parts.append(y[:, :, out_cols[fb_inputs[l]]])  # (B, N, S^m)
            else:
                parts.append(u[:, :, col : col + s.inputs[l - 1]])  # (B, N, R^l)
                col += s.inputs[l - 1]
        X = np.concatenate(parts, axis=-1)  # (B, N, R)
    B = u.shape[0]
    a0 = np.zeros((B, DL, net.layer_size), dtype=net.dtype)  # (B, DL, S)
    if closed:
        for f in s.feedback:
            cols = net.layer_columns[f.layer]
            a0[:, :, cols] = y[:, shift - DL : shift, out_cols[f.layer]]
    p = X[:, shift:].copy()  # (B, N - shift, R)
    p0 = X[:, shift - DI : shift].copy()  # (B, DI, R)
    return Prepared(p, p0, a0, y[:, shift:].copy())  # targets (B, N - shift, O)
