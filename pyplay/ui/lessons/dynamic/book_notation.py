r"""The lecture's LSTM and GRU in the book's notation: their equations as text and their
diagram as plain data, for the variant a network is (forget gate or not, peepholes or not);
the text of the lesson's LSTM-and-GRU sub-tab (:mod:`.book_state`), nothing the core computes.

:func:`book_equations` writes one line per layer in the order the network computes them
(:meth:`BookLSTM.forward <pyplay.dynamic.book_lstm.BookLSTM.forward>`,
:meth:`BookGRU.forward <pyplay.dynamic.book_gru.BookGRU.forward>`), then layer 7, the read-out
of :mod:`pyplay.dynamic.book_output`. :func:`book_diagram` lays the layers out as a
:class:`~pyplay.ui.lddn_notation.Diagram`: the input :math:`p^1` and the delayed output
:math:`a^6(t-1)` (a node of its own, the delay "D" that the feedback :math:`LW^{m,6}` reads) in
column 0, the layers right of what they read; the Hadamard products are edges labelled "∘",
the CEC's :math:`LW^{5,5} = I` and the peepholes are feedback arcs. Plain text and plain data:
no plotting.
"""

from __future__ import annotations

from pyplay.dynamic.book_gru import BookGRU
from pyplay.dynamic.book_lstm import BookLSTM
from pyplay.ui.lddn_notation import Diagram, Edge, Node, sup

__all__ = ["book_diagram", "book_equations"]

_READOUT = "a⁷(t) = LW⁷˒⁶ a⁶(t) + b⁷   read-out layer 7 (purelin)"


def _n(m: int, source: str, extra: str = "") -> str:
    """``n^m(t) = IW^{m,1} p(t) + LW^{m,l} a^l(..) [+ extra] + b^m``."""
    return f"IW{sup(f'{m},1')} p(t) + {source}{extra} + b{sup(m)}"


def book_equations(net: BookLSTM | BookGRU) -> list[str]:
    """The network's equations, one line a layer, in the order it computes them."""
    if isinstance(net, BookGRU):
        return [
            f"a²(t) = logsig({_n(2, 'LW²˒⁶ a⁶(t−1)')})   reset gate",
            "a³(t) = a²(t) ∘ a⁶(t−1)   the delayed output, reset before the input layer",
            f"a¹(t) = tansig({_n(1, 'LW¹˒³ a³(t)')})   input layer (candidate)",
            f"a⁴(t) = logsig({_n(4, 'LW⁴˒⁶ a⁶(t−1)')})   update gate",
            "a⁵(t) = LW⁵˒¹ a¹(t) + LW⁵˒⁶ a⁶(t−1) = a¹(t) − a⁶(t−1)   differencing layer, "
            "LW⁵˒¹ = I, LW⁵˒⁶ = −I",
            "a⁶(t) = a⁴(t) ∘ a⁵(t) + a⁶(t−1) = a⁴(t) ∘ a¹(t) + [1 − a⁴(t)] ∘ a⁶(t−1)   output",
            _READOUT,
        ]
    peep = bool(net.peephole)

    def gate(m: int, when: str, role: str) -> str:
        extra = f" + LW{sup(f'{m},5')} a⁵({when})" if peep else ""
        n = _n(m, f"LW{sup(f'{m},6')} a⁶(t−1)", extra)
        return f"a{sup(m)}(t) = logsig({n})   {role}"

    lines = [
        f"a¹(t) = tansig({_n(1, 'LW¹˒⁶ a⁶(t−1)')})   input layer",
        gate(2, "t−1", "input gate"),
    ]
    if net.forget_gate:
        lines.append(gate(3, "t−1", "feedback (forget) gate"))
        lines.append("a⁵(t) = a³(t) ∘ [LW⁵˒⁵ a⁵(t−1)] + a²(t) ∘ a¹(t)   CEC, LW⁵˒⁵ = I, purelin")
    else:
        lines.append(
            "a⁵(t) = LW⁵˒⁵ a⁵(t−1) + a²(t) ∘ a¹(t)   CEC, LW⁵˒⁵ = I, purelin "
            "(no forget gate: the original LSTM)"
        )
    lines += [
        gate(4, "t", "output gate"),
        "a⁶(t) = a⁴(t) ∘ tansig(a⁵(t))   gated output",
        _READOUT,
    ]
    if peep:
        lines.append("peepholes LW²˒⁵, LW³˒⁵, LW⁴˒⁵: diagonal, each neuron sees its own CEC")
    return lines


_DETAIL: dict[str, dict[int, str]] = {  # what each box says under its number
    "lstm": {
        1: "input, tansig",
        2: "input gate",
        3: "forget gate",
        4: "output gate",
        5: "CEC, purelin",
        6: "a⁴∘tansig(a⁵)",
    },
    "gru": {
        1: "candidate",
        2: "reset gate",
        3: "a²∘a⁶(t−1)",
        4: "update gate",
        5: "a¹ − a⁶(t−1)",
        6: "output",
    },
}


def _layer(kind: str, m: int, column: int, row: int) -> Node:
    return Node(f"a{m}", "layer", f"layer {m}", _DETAIL[kind][m], column, row)


def _weighted_inputs(m: int, source: int, named: bool = True) -> list[Edge]:
    """Layer m's two weighted inputs: :math:`p^1` through :math:`IW^{m,1}` and layer
    ``source``'s output through :math:`LW^{m,source}` (6: the delayed :math:`a^6(t-1)`, node
    "d6"). ``named=False`` leaves the LW edge unlabelled: the LSTM names its four
    :math:`LW^{m,6}` once, on the feedback arc."""
    node = "d6" if source == 6 else f"a{source}"
    lw = f"LW{sup(f'{m},{source}')}" if named else ""
    return [
        Edge("p1", f"a{m}", f"IW{sup(f'{m},1')}", "", False),
        Edge(node, f"a{m}", lw, "", False),
    ]


def book_diagram(net: BookLSTM | BookGRU) -> Diagram:
    """The network's layers and connections as a grid (see the module docstring)."""
    nodes = [
        Node("p1", "input", "p¹", f"R¹ = {net.R}", 0, 0),
        Node("d6", "input", "a⁶(t−1)", "D", 0, 2),
    ]

    def edge(source: str, target: str, name: str, delays: str = "", back: bool = False) -> Edge:
        return Edge(source, target, name, delays, back)

    if isinstance(net, BookGRU):
        nodes += [
            _layer("gru", 2, 1, 0),
            _layer("gru", 3, 2, 0),
            _layer("gru", 4, 2, 2),
            _layer("gru", 1, 3, 0),
            _layer("gru", 5, 4, 1),
            _layer("gru", 6, 5, 1),
        ]
        edges = [
            *_weighted_inputs(2, 6),
            edge("a2", "a3", "∘"),
            edge("d6", "a3", "∘"),
            *_weighted_inputs(1, 3),
            *_weighted_inputs(4, 6),
            edge("a1", "a5", "LW⁵˒¹ = I"),
            edge("d6", "a5", "LW⁵˒⁶ = −I"),
            edge("a5", "a6", "∘"),
            edge("a4", "a6", "∘"),
            edge("a6", "d6", "a⁶(t)", "D", True),
        ]
        return Diagram(tuple(nodes), tuple(edges), 6, 3)
    gates = (2, 3, 4) if net.forget_gate else (2, 4)
    nodes.append(_layer("lstm", 1, 1, 0))
    nodes += [_layer("lstm", m, 1, m - 1) for m in gates]
    nodes += [_layer("lstm", 5, 2, 1), _layer("lstm", 6, 3, 1)]
    edges = []
    for m in (1, *gates):
        edges += _weighted_inputs(m, 6, named=False)
    edges += [edge(f"a{m}", "a5", "∘") for m in (1, 2, 3) if m in (1, *gates)]
    edges += [
        edge("a5", "a6", "tansig"),
        edge("a4", "a6", "∘"),
        edge("a5", "a5", "LW⁵˒⁵ = I", "D", True),
        edge("a6", "d6", "LW¹˒⁶…LW⁴˒⁶", "D", True),
    ]
    for m in net.peephole:
        edges.append(edge("a5", f"a{m}", f"LW{sup(f'{m},5')}", "" if m == 4 else "D", True))
    return Diagram(tuple(nodes), tuple(edges), 4, 4)
