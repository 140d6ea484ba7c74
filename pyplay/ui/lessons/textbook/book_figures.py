r"""Hagan's figures 6.4-6.8 of the book's seq2seq as plain data, built from a model.

:func:`book_figures` returns the figures of a
:class:`~pyplay.models.textbook.seq2seq.TextbookSeq2Seq`'s form: "context" Figure 6.4 (the
sequence-to-sequence network), the attention forms Figure 6.6 (the network with attention, the
attention as one box) and the attention network itself, Figure 6.5 (dot product), 6.7 (general
dot product) or 6.8 (concatenation). Every weight edge is made from a parameter of the model
(its key parsed as :math:`IW^{m,l}` / :math:`LW^{m,l}`: the layers it joins), every bias shown
in a box is a parameter, layer sizes are read from the parameters' shapes; a parameter the
figures have no place for raises, so no weight is left out. Each edge and box names what it
stands for (:data:`Ref`): a parameter, or a value the model caches (``BookCache.a1``,
``BookState.A``, ``AttentionStepCache.alpha``, ...), so a test can check the drawing against the
model.

What :class:`~pyplay.ui.lddn_notation.Diagram` (the dynamic lesson's layout, drawn by
:mod:`~pyplay.ui.lessons.dynamic.diagram_plot`) cannot say is added here and drawn by
:mod:`.figure_plot`: operation nodes (``kind="op"``: the transpose "T", the sampler "t = T",
the TDL_hstack, the vertical stacking) and edge styles (:data:`EDGE_STYLES`): a signal used as
a weight (the attention's multiplicative connection, :math:`[A^1(T)]^T` and :math:`A^1(T)`), a
value fixed while the decoder runs (the sampled :math:`a^1(T)`, the book's dotted line) and the
initial condition :math:`a^2(T) = a^1(T)`. Plain data: no plotting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyplay.models.textbook.seq2seq import CONTEXT_LAYER, TextbookSeq2Seq
from pyplay.ui.lddn_notation import Diagram, Edge, Node, sup
from pyplay.ui.lectures import lecture_label

__all__ = ["ATTENTION_FIGURE", "CAPTIONS", "EDGE_STYLES", "BookFigure", "book_figures"]

CAPTIONS = {  # the chapter's own captions
    "6.4": "Sequence to Sequence Network",
    "6.5": "Dot Product Attention",
    "6.6": "Sequence to Sequence Network With Attention",
    "6.7": "General Dot Product Attention",
    "6.8": "Concatenation Attention",
}
ATTENTION_FIGURE = {"dot": "6.5", "general": "6.7", "concat": "6.8"}
EDGE_STYLES = ("plain", "multiplies", "fixed", "initial")
Ref = tuple[str, str]  # ("param", "IW1,1") or (cache class, attribute): ("BookState", "A")

_A: Ref = ("AttentionStepCache", "A")
_Q: Ref = ("AttentionStepCache", "q")
_ALPHA: Ref = ("AttentionStepCache", "alpha")
_CTX: Ref = ("BookCache", "ctx")
_WEIGHT = re.compile(r"(IW|LW)(\d+),(\d+)")


@dataclass(frozen=True)
class FigureNode(Node):
    """A box (``kind`` "input" or "layer") or an operation (``"op"``, a circle) with what it
    holds: ``refs``, its bias parameter and the value it outputs."""

    refs: tuple[Ref, ...] = ()


@dataclass(frozen=True)
class FigureEdge(Edge):
    """A connection with what it stands for (``ref``) and how it is drawn (``style``, one of
    :data:`EDGE_STYLES`)."""

    ref: Ref = ("", "")
    style: str = "plain"


@dataclass(frozen=True)
class BookFigure:
    """One figure: its ``number`` ("6.5"), the chapter's ``caption``, the ``diagram`` (nodes
    :class:`FigureNode`, edges :class:`FigureEdge`) and a ``note`` where the drawing departs
    from the book ("" if nowhere)."""

    number: str
    caption: str
    diagram: Diagram
    note: str

    @property
    def title(self) -> str:
        """``"Hagan, fig. 6.5: Dot Product Attention"``: the lecture's label, number, caption."""
        return f"{lecture_label('hagan')}, fig. {self.number}: {self.caption}"

    def refs(self) -> set[Ref]:
        """Everything the figure draws: every edge's and every box's ref."""
        found = {e.ref for e in self.diagram.edges if isinstance(e, FigureEdge)}
        for n in self.diagram.nodes:
            found |= set(n.refs) if isinstance(n, FigureNode) else set()
        return found

    def parameters(self) -> set[str]:
        """The model parameters drawn (keys of ``model.params``)."""
        return {name for kind, name in self.refs() if kind == "param"}


def _layer(m: int, column: int, row: int, detail: str, params: dict, out: Ref | None) -> FigureNode:
    """Layer ``m``'s box; its bias :math:`b^m` is named (and drawn) when the model has one."""
    bias = f"b{m}" in params
    refs = ((("param", f"b{m}"),) if bias else ()) + ((out,) if out else ())
    return FigureNode(
        f"a{m}", "layer", f"layer {m}", detail + (f", b{sup(m)}" if bias else ""), column, row, refs
    )


def _weights(params: dict, routes: dict[tuple[str, int, int], tuple]) -> list[FigureEdge]:
    """An edge per weight parameter that ``routes`` places: (kind, m, l) -> (source node,
    target node, delays, feedback, style, name)."""
    edges = []
    for key in params:
        match = _WEIGHT.fullmatch(key)
        if match is None:
            continue
        kind, m, l = match.group(1), int(match.group(2)), int(match.group(3))
        if (kind, m, l) in routes:
            source, target, delays, back, style = routes[kind, m, l]
            name = f"{kind}{sup(f'{m},{l}')}"
            edges.append(FigureEdge(source, target, name, delays, back, ("param", key), style))
    return edges


def _network(model: TextbookSeq2Seq) -> BookFigure:
    """Figure 6.4 ("context") or 6.6 (the attention forms, the attention as one box)."""
    p, form = model.params, model.form
    H, Vs, Vt = p["LW1,1"].shape[0], p["IW1,1"].shape[1], p["LW3,2"].shape[0]
    attn, c = form != "context", CONTEXT_LAYER[form]
    col = {1: 1, 2: 4, 3: 5} if attn else {1: 1, 2: 3, 3: 4}
    nodes = [
        FigureNode("p", "input", "p(t)", f"one-hot, R = {Vs}", 0, 0, (("BookCache", "src"),)),
        _layer(1, col[1], 0, f"S¹ = {H}, tansig", p, ("BookCache", "a1")),
        _layer(2, col[2], 0, f"S² = {H}, tansig", p, ("BookCache", "a2")),
        _layer(3, col[3], 0, f"S³ = {Vt}, softmax", p, None),
    ]
    routes: dict[tuple[str, int, int], tuple] = {
        ("IW", 1, 1): ("p", "a1", "", False, "plain"),
        ("LW", 1, 1): ("a1", "a1", "D", True, "plain"),
        ("LW", 2, 2): ("a2", "a2", "D", True, "plain"),
        ("LW", 2, 3): ("a3", "a2", "D", True, "plain"),
        ("LW", 3, 2): ("a2", "a3", "", False, "plain"),
        ("LW", 2, c): ("att", "a2", "", False, "plain")
        if attn
        else ("T", "a2", "", False, "fixed"),
    }
    edges = _weights(p, routes)
    if attn:
        nodes += [
            FigureNode("tdl", "op", "TDL", f"D = {model.D}, at T", 2, 0, (("BookState", "A"),)),
            FigureNode(
                "att", "layer", f"layers 4–{c}", f"fig. {ATTENTION_FIGURE[form]}", 3, 0, (_CTX,)
            ),
        ]
        edges += [
            FigureEdge("a1", "tdl", "a¹(t)", "", False, ("BookCache", "a1")),
            FigureEdge("tdl", "att", "A¹(T)", "", False, ("BookState", "A")),
            FigureEdge("a2", "att", "a²(t−1)", "D", True, _Q),
            FigureEdge(
                "a1", "a2", "t = T: a²(T) = a¹(T)", "", False, ("BookState", "aT"), "initial"
            ),
        ]
    else:
        nodes.append(FigureNode("T", "op", "t = T", "sampler", 2, 0, (("BookState", "aT"),)))
        edges += [
            FigureEdge("a1", "T", "a¹(t)", "", False, ("BookCache", "a1")),
            FigureEdge("T", "a2", "a²(T) = a¹(T)", "", False, ("BookState", "aT"), "initial"),
        ]
    fixed = "A¹(T), the TDL read at t = T, is" if attn else "the dotted a¹(T), sampled at t = T, is"
    note = (
        "Layer 3 is drawn with the softmax that gives the word probabilities (eq. 6.7 prints it "
        f"linear); {fixed} fixed while the decoder runs."
    )
    if form in ("general", "concat"):
        note += (
            " The book's fig. 6.6 has dot attention in the box (a⁵(t) into LW²˒⁵); here the box "
            f"is this model's {form} attention, fig. {ATTENTION_FIGURE[form]}"
            + (", whose context a⁶(t) enters through LW²˒⁶." if form == "concat" else ".")
        )
    number = "6.6" if attn else "6.4"
    return BookFigure(
        number, CAPTIONS[number], Diagram(tuple(nodes), tuple(edges), col[3] + 1, 1), note
    )


def _attention(model: TextbookSeq2Seq) -> BookFigure:
    """Figure 6.5 (dot), 6.7 (general) or 6.8 (concatenation): the attention network."""
    p, form, D = model.params, model.form, model.D
    H = p["LW1,1"].shape[0]
    c = CONTEXT_LAYER[form]
    A = FigureNode("A", "input", "A¹(T)", f"S¹ × D = {H} × {D}", 0, 0, (_A,))
    q = FigureNode("q", "input", "a²(t−1)", f"S² = {H}", 0, 1, (_Q,))
    ctx = f"a{sup(c)}(t)"
    if form == "concat":
        S4 = p["LW4,2"].shape[0]
        nodes = [
            A,
            q,
            FigureNode("stack", "op", "[ ; ]", "Ā¹˒²(t)", 1, 0, (("AttentionStepCache", "Abar"),)),
            _layer(4, 2, 0, f"S⁴ = {S4}, tansig", p, ("AttentionStepCache", "Z")),
            _layer(5, 3, 0, "S⁵ = 1, softmax", p, _ALPHA),
            FigureNode("A2", "input", "A¹(T)", "as a weight", 4, 0, (_A,)),
            _layer(6, 4, 1, f"S⁶ = {H}, purelin", p, _CTX),
            FigureNode("out", "input", ctx, "to LW²˒⁶", 5, 1, (_CTX,)),
        ]
        routes = {
            ("LW", 4, 2): ("stack", "a4", "", False, "plain"),
            ("LW", 5, 4): ("a4", "a5", "", False, "plain"),
        }
        edges = [
            *_weights(p, routes),
            FigureEdge("A", "stack", "A¹(T)", "", False, _A),
            FigureEdge("q", "stack", "a²(t−1) … a²(t−1)", "", False, _Q),
            FigureEdge("a5", "a6", "a⁵(t)", "", False, _ALPHA),
            FigureEdge("A2", "a6", "A¹(T)", "", False, _A, "multiplies"),
            FigureEdge("a6", "out", ctx, "", False, _CTX),
        ]
        note = (
            "a²(t−1) is repeated under every column of A¹(T) (eq. 6.13, NumPy broadcasting); layer "
            "5's softmax is taken over [N⁵(t)]ᵀ, the D scores (eq. 6.17); b⁵ adds the same number "
            "to every score, which the softmax cancels."
        )
        columns = 6
    else:
        nodes = [
            A,
            q,
            FigureNode("T", "op", "T", "transpose", 1, 0, (_A,)),
            _layer(4, 1, 1, f"S⁴ = D = {D}, softmax", p, _ALPHA),
            FigureNode("A2", "input", "A¹(T)", "as a weight", 2, 0, (_A,)),
            _layer(5, 2, 1, f"S⁵ = {H}, purelin", p, _CTX),
            FigureNode("out", "input", ctx, "to LW²˒⁵", 3, 1, (_CTX,)),
        ]
        if "L_a" in p:  # general: the query goes through W_a
            into4 = FigureEdge("q", "a4", "W_a", "", False, ("param", "L_a"))
        else:
            into4 = FigureEdge("q", "a4", "a²(t−1)", "", False, _Q)
        edges = [
            FigureEdge("A", "T", "", "", False, _A),
            FigureEdge("T", "a4", "[A¹(T)]ᵀ", "", False, _A, "multiplies"),
            into4,
            FigureEdge("a4", "a5", "a⁴(t)", "", False, _ALPHA),
            FigureEdge("A2", "a5", "A¹(T)", "", False, _A, "multiplies"),
            FigureEdge("a5", "out", ctx, "", False, _CTX),
        ]
        note = (
            "W_a is drawn as one weight; the model keeps it positive definite as "
            "W_a = L_a L_aᵀ + εI, its parameter L_a (eq. 6.12 asks for a positive definite W_a)."
            if "L_a" in p
            else ""
        )
        columns = 4
    number = ATTENTION_FIGURE[form]
    return BookFigure(
        number, CAPTIONS[number], Diagram(tuple(nodes), tuple(edges), columns, 2), note
    )


def book_figures(model: TextbookSeq2Seq) -> tuple[BookFigure, ...]:
    """The figures of ``model``'s form: (fig. 6.4,) for "context", (fig. 6.6, fig. 6.5 / 6.7 /
    6.8) for dot / general / concatenation attention."""
    if not isinstance(model, TextbookSeq2Seq):
        raise TypeError(
            f"model must be a pyplay.models.textbook.TextbookSeq2Seq, got {type(model).__name__}"
        )
    figures = (
        (_network(model),) if model.form == "context" else (_network(model), _attention(model))
    )
    drawn = set().union(*(f.parameters() for f in figures))
    missing = [k for k in model.params if k not in drawn]
    if missing:
        raise ValueError(f"the book's figures have no place for the parameters {missing}")
    return figures
