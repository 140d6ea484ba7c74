r"""An LDDN in the textbook's own notation: its equations as text, and a diagram layout.

:func:`equations` writes, for every layer in simulation order, the net input and the output
as *Neural Network Design* prints them,

.. code-block:: text

    n¹(t) = IW¹˒¹(0) p¹(t) + IW¹˒¹(1) p¹(t−1) + LW¹˒¹(1) a¹(t−1) + b¹
    a¹(t) = tansig(n¹(t))

and, with ``net`` given, the same equations with the numbers of every scalar (1 x 1) weight
put in. :func:`diagram` places inputs and layers on a grid (inputs in column 0, each layer one
column right of its furthest delay-0 source) and lists the connections with their delay sets,
so a view can draw the network the way the book does. Plain text and plain data: no plotting
(the Dynamic networks, Time series and Textbook seq2seq lessons draw and show them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyplay.dynamic.lddn import LDDN
from pyplay.dynamic.spec import LDDNSpec, WeightSpec, parse_spec, simulation_order
from pyplay.models.textbook.trace import sup  # the book's superscripts, written once

__all__ = ["Diagram", "Edge", "Node", "delay_text", "diagram", "equations", "sup"]


def _at(symbol: str, d: int) -> str:
    """``p¹(t−2)`` style: the signal at time t - d."""
    return f"{symbol}(t)" if d == 0 else f"{symbol}(t−{d})"


def _number(x: float) -> str:
    return f"{x:.4g}".replace("-", "−")


def delay_text(delays: tuple[int, ...]) -> str:
    """A connection's delay set as the diagram labels it: ``"D"`` for one step, ``"TDL 0,1,2"``
    for a tapped delay line, nothing for a plain (delay-0) connection."""
    if delays == (0,):
        return ""
    if delays == (1,):
        return "D"
    return "TDL " + ",".join(str(d) for d in delays)


def _terms(
    spec: LDDNSpec, m: int, net: LDDN | None
) -> list[str]:  # the summands of n^m(t), in the book's order
    terms: list[str] = []

    def add(kind: str, w: WeightSpec, signal: str) -> None:
        key = f"{kind}{m},{w.source}"
        for k, d in enumerate(w.delays):
            name = f"{kind}{sup(f'{m},{w.source}')}({d})"
            if net is not None and net.params[key][k].size == 1:
                name = _number(float(net.params[key][k].ravel()[0]))
            terms.append(f"{name} {_at(signal + sup(w.source), d)}")

    for w in spec.input_weights:
        if w.to == m:
            add("IW", w, "p")
    for w in spec.layer_weights:
        if w.to == m:
            add("LW", w, "a")
    if spec.layers[m - 1].bias:
        b = f"b{sup(m)}"
        if net is not None and net.params[f"b{m}"].size == 1:
            b = _number(float(net.params[f"b{m}"][0]))
        terms.append(b)
    return terms


def equations(description: Any, net: LDDN | None = None) -> list[str]:
    """The network's equations, two lines per layer in simulation order.

    Parameters
    ----------
    description : dict, LDDNSpec or LDDN
        The network (validated as :func:`~pyplay.dynamic.spec.parse_spec` does).
    net : LDDN, optional
        Put the values of the scalar weights and biases into the equations.

    Returns
    -------
    list of str
        ``n^m(t) = ...`` then ``a^m(t) = f^m(n^m(t))`` for every layer; a last line names the
        network's outputs when they are not just the last layer.
    """
    if isinstance(description, LDDN):
        net = net or description
        spec = description.spec
    else:
        spec = parse_spec(description)
    lines: list[str] = []
    for m in simulation_order(len(spec.layers), spec.layer_weights):
        terms = _terms(spec, m, net)
        lines.append(f"n{sup(m)}(t) = " + (" + ".join(terms) if terms else "0"))
        lines.append(f"a{sup(m)}(t) = {spec.layers[m - 1].transfer}(n{sup(m)}(t))")
    if spec.outputs != (len(spec.layers),):
        lines.append("outputs: " + ", ".join(f"a{sup(m)}(t)" for m in spec.outputs))
    return [line.replace("+ −", "− ") for line in lines]


@dataclass(frozen=True)
class Node:
    """An input (``kind="input"``, label ``p¹``) or a layer (``"layer"``, label ``layer 1``)
    at grid position (``column``, ``row``); ``detail`` holds size and transfer function."""

    key: str
    kind: str
    label: str
    detail: str
    column: int
    row: int


@dataclass(frozen=True)
class Edge:
    """A weight from node ``source`` to node ``target``: its name (``IW¹˒¹``), its delay label
    (:func:`delay_text`) and whether it feeds back (a delayed connection to a layer that is not
    to the right of its source)."""

    source: str
    target: str
    name: str
    delays: str
    feedback: bool


@dataclass(frozen=True)
class Diagram:
    """Nodes and edges of an LDDN; ``columns`` and ``rows`` size the grid."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    columns: int
    rows: int


def diagram(description: Any) -> Diagram:
    """Grid layout of the network for drawing (see the module docstring)."""
    spec = description.spec if isinstance(description, LDDN) else parse_spec(description)
    column: dict[int, int] = {}
    for m in simulation_order(len(spec.layers), spec.layer_weights):
        sources = [w.source for w in spec.layer_weights if w.to == m and w.delays[0] == 0]
        column[m] = 1 + max((column[s] for s in sources), default=0)
    per_column: dict[int, int] = {}
    nodes: list[Node] = []
    for l, R in enumerate(spec.inputs, start=1):
        nodes.append(Node(f"p{l}", "input", f"p{sup(l)}", f"R{sup(l)} = {R}", 0, l - 1))
    for m, layer in enumerate(spec.layers, start=1):
        c = column[m]
        row = per_column.get(c, 0)
        per_column[c] = row + 1
        detail = f"S{sup(m)} = {layer.size}, {layer.transfer}" + ("" if layer.bias else ", no b")
        nodes.append(Node(f"a{m}", "layer", f"layer {m}", detail, c, row))
    edges = [
        Edge(
            f"p{w.source}",
            f"a{w.to}",
            f"IW{sup(f'{w.to},{w.source}')}",
            delay_text(w.delays),
            False,
        )
        for w in spec.input_weights
    ]
    edges += [
        Edge(
            f"a{w.source}",
            f"a{w.to}",
            f"LW{sup(f'{w.to},{w.source}')}",
            delay_text(w.delays),
            column[w.to] <= column[w.source],
        )
        for w in spec.layer_weights
    ]
    rows = max([len(spec.inputs), *per_column.values()])
    return Diagram(tuple(nodes), tuple(edges), 1 + max(column.values()), rows)
