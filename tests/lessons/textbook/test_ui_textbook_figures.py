"""Hagan's figures 6.4-6.8 in the textbook seq2seq sub-lesson, built from the model
(pyplay.ui.lessons.textbook.book_figures, drawn by figure_plot on the dynamic lesson's diagram
engine), and the control that pins the attention weights one-hot (eq. 6.10-6.11), without a
browser. Test names cite the figure or equation."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("panel")

import panel as pn

from pyplay.models.textbook import TEXTBOOK_FORMS, textbook_seq2seq
from pyplay.models.textbook.trace import sup
from pyplay.ui.lessons.textbook.book_figures import (
    CAPTIONS,
    EDGE_STYLES,
    BookFigure,
    FigureEdge,
    FigureNode,
    book_figures,
)
from pyplay.ui.lessons.textbook.state import PIN_LABEL, TextbookSeq2SeqState
from pyplay.ui.lessons.textbook.view import TextbookSeq2SeqView

NUMBERS = {"context": ["6.4"], "dot": ["6.6", "6.5"], "general": ["6.6", "6.7"],
           "concat": ["6.6", "6.8"]}  # fmt: skip
CAPTION_TEXT = {  # as the chapter prints them
    "6.4": "Sequence to Sequence Network",
    "6.5": "Dot Product Attention",
    "6.6": "Sequence to Sequence Network With Attention",
    "6.7": "General Dot Product Attention",
    "6.8": "Concatenation Attention",
}


def _cached_values(model) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The model's caches after a forward pass, by class name."""
    src, L, tgt = np.array([[3, 4, 5, 6]]), np.array([4]), np.array([[1, 5, 4]])
    cache = model.forward(src, L, tgt)[2]
    found = {"BookCache": cache, "BookState": model.start(src, L)}
    if cache.attn[0] is not None:
        found["AttentionStepCache"] = cache.attn[0]
    return found


def _weight_name(key: str) -> str:
    """``"LW2,5"`` -> ``"LW²˒⁵"``, ``"L_a"`` -> ``"W_a"`` (drawn as the book's W_a)."""
    return "W_a" if key == "L_a" else f"{key[:2]}{sup(key[2:])}"


@pytest.mark.parametrize("form", TEXTBOOK_FORMS)
def test_hagan_fig_6_4_to_6_8_every_weight_drawn_is_a_parameter_and_vice_versa(form: str) -> None:
    """Figure 6.4 (context), 6.6 with 6.5 / 6.7 / 6.8 (dot, general, concatenation): every
    IW, LW and b drawn is a parameter of the model and every parameter is drawn; every other
    connection is a value the model caches (not None after a forward pass)."""
    model = textbook_seq2seq(9, 8, form, hidden_size=5, D=4, rng=2)
    figures = book_figures(model)
    assert [f.number for f in figures] == NUMBERS[form]
    assert CAPTIONS == CAPTION_TEXT
    for f in figures:
        assert f.title == f"Hagan, fig. {f.number}: {CAPTION_TEXT[f.number]}"
    drawn = [ref for f in figures for ref in f.refs()]
    assert {name for kind, name in drawn if kind == "param"} == set(model.params)
    caches = _cached_values(model)
    for f in figures:
        keys = {n.key for n in f.diagram.nodes}
        assert all(isinstance(n, FigureNode) for n in f.diagram.nodes)
        for e in f.diagram.edges:
            assert isinstance(e, FigureEdge) and e.style in EDGE_STYLES
            assert e.source in keys and e.target in keys, e
            kind, name = e.ref
            if kind == "param":
                assert name in model.params and e.name == _weight_name(name), e
            else:
                assert getattr(caches[kind], name) is not None, e
        for n in f.diagram.nodes:
            for kind, name in n.refs:
                if kind == "param":  # a bias, written in its layer's box
                    assert name in model.params and f"b{sup(name[1:])}" in n.detail
                else:
                    assert getattr(caches[kind], name) is not None, n


def test_hagan_fig_6_5_to_6_8_the_attention_multiplies_by_A1T_and_the_context_enters_layer_2() -> (
    None
):
    """The attention's multiplicative connections are the memory A^1(T) (a value, not a
    weight), and the context a^5 (dot, general) or a^6 (concat) enters layer 2 through the
    model's context weight LW^{2,5} / LW^{2,6} (Figure 6.6), a^1(T) through LW^{2,1} dotted
    (Figure 6.4)."""
    for form, weight in (("context", "LW2,1"), ("dot", "LW2,5"), ("concat", "LW2,6")):
        model = textbook_seq2seq(9, 8, form, hidden_size=5, D=4)
        network, *attention = book_figures(model)
        into2 = [e for e in network.diagram.edges if e.target == "a2" and e.ref[0] == "param"]
        ctx = next(e for e in into2 if e.ref == ("param", weight))
        assert ctx.style == ("fixed" if form == "context" else "plain")
        assert model.context_key == weight
        for f in attention:
            times = [e for e in f.diagram.edges if e.style == "multiplies"]
            names = {"concat": {"A¹(T)"}, "dot": {"[A¹(T)]ᵀ", "A¹(T)"}}[form]
            assert {e.name for e in times} == names
            assert {e.ref for e in times} == {("AttentionStepCache", "A")}


def test_hagan_figs_sizes_and_biases_are_read_from_the_model() -> None:
    model = textbook_seq2seq(11, 7, "concat", hidden_size=6, D=3)
    network, attention = book_figures(model)
    detail = {n.key: n.detail for n in network.diagram.nodes}
    assert detail["p"] == "one-hot, R = 11" and detail["a3"] == "S³ = 7, softmax, b³"
    assert detail["tdl"] == "D = 3, at T" and detail["a1"] == "S¹ = 6, tansig, b¹"
    detail = {n.key: n.detail for n in attention.diagram.nodes}
    assert detail["A"] == "S¹ × D = 6 × 3" and detail["a4"] == "S⁴ = 6, tansig, b⁴"
    del model.params["b2"]  # a model without b²: its box says so, the figure has no b²
    network, _ = book_figures(model)
    assert "b2" not in network.parameters()
    assert next(n.detail for n in network.diagram.nodes if n.key == "a2") == "S² = 6, tansig"
    model.params["LW7,1"] = np.zeros((6, 6))  # a weight the chapter's figures do not have
    with pytest.raises(ValueError, match=r"no place for the parameters \['LW7,1'\]"):
        book_figures(model)
    with pytest.raises(
        TypeError, match=r"model must be a pyplay\.models\.textbook\.TextbookSeq2Seq"
    ):
        book_figures(object())  # type: ignore[arg-type]


def _shown(view: TextbookSeq2SeqView) -> list[tuple[str, set[str], set[str]]]:
    """The visible figures' titles, the labels of their edges and of their boxes and
    circles."""
    out = []
    for pane, (fig, sources) in zip(view.figure_panes, view.figures, strict=True):
        if pane.visible:
            edges = set(sources.base.labels.data["text"]) | set(sources.labels.data["text"])
            nodes = set(sources.base.nodes.data["label"]) | set(sources.ops.data["label"])
            out.append((fig.title.text, edges, nodes))
    return out


@pytest.mark.slow  # builds a lesson's view: 1-2 s
def test_hagan_figs_follow_the_variant_and_build_headless() -> None:
    """Changing the score changes the figure (titles, weights); the page's Bokeh models build
    and hold the figures with their labels."""
    view = TextbookSeq2SeqView(TextbookSeq2SeqState(form="dot", hidden_size=6))
    root = view.panel()
    assert root.get_root() is not None  # the Bokeh models build, headless
    titles = [p.object.title.text for p in root.select(pn.pane.Bokeh)]
    assert "Hagan, fig. 6.6: Sequence to Sequence Network With Attention" in titles
    assert "Hagan, fig. 6.5: Dot Product Attention" in titles
    seen = {}
    for form in ("dot", "general", "concat", "context"):
        view.state.form = form
        seen[form] = _shown(view)
        assert [t for t, _, _ in seen[form]] == [
            f"Hagan, fig. {n}: {CAPTION_TEXT[n]}" for n in NUMBERS[form]
        ]
    (_, net, boxes), (_, dot, dot_boxes) = seen["dot"]
    assert {"IW¹˒¹", "LW¹˒¹ D", "LW²˒⁵", "LW²˒² D", "LW²˒³ D", "LW³˒²"} <= net
    assert {"p(t)", "layer 1", "TDL", "layers 4–5", "layer 2", "layer 3"} == boxes
    assert {"[A¹(T)]ᵀ", "a²(t−1)", "a⁴(t)", "a⁵(t)"} <= dot
    assert {"A¹(T)", "a²(t−1)", "T", "layer 4", "layer 5", "a⁵(t)"} == dot_boxes
    (_, general, _) = seen["general"][1]
    assert "W_a" in general and "a²(t−1)" not in general  # the query's edge is W_a now
    (_, net_c, _), (_, concat, concat_boxes) = seen["concat"]
    assert "LW²˒⁶" in net_c and "LW²˒⁵" not in net_c
    assert {"LW⁴˒²", "LW⁵˒⁴", "a⁵(t)", "a⁶(t)"} <= concat
    assert {"[ ; ]", "layer 4", "layer 5", "layer 6", "a⁶(t)"} <= concat_boxes
    [(_, plain, plain_boxes)] = seen["context"]
    assert {"LW²˒¹", "a¹(t)", "a²(T) = a¹(T)"} <= plain and "t = T" in plain_boxes
    assert "TDL" not in plain_boxes
    assert (
        not view.figure_panes[1].visible and "eq. 6.7 prints it linear" in view.figure_note.object
    )


_DIFF = re.compile(r"largest \|a[⁵⁶]\((\d+)\) − a¹\((\d+)\)\| = ([0-9.e+-]+) at this step")


def _difference(text: str) -> tuple[int, float]:
    match = _DIFF.search(text)
    assert match is not None, text
    return int(match.group(1)), float(match.group(3))


@pytest.mark.parametrize("form", ["dot", "general", "concat"])
def test_eq_6_10_the_pin_control_shows_the_plain_seq2seq_context_beside(form: str) -> None:
    """The checkbox pins the weights one-hot on a^1(T) (eq. 6.10-6.11): the context then
    equals the plain seq2seq's to float rounding (float64); unpinned it does not."""
    view = TextbookSeq2SeqView(TextbookSeq2SeqState(form=form, hidden_size=8))
    view.state.train(steps=3)
    [box] = [w for w in view.panel().select(pn.widgets.Checkbox) if w.name == PIN_LABEL]
    assert PIN_LABEL == "Pin the attention weights one-hot (eq. 6.10-6.11)"
    view.source_box.value = "abcd"
    view.explain()
    text = view.pin_text.object
    t, free = _difference(text)
    assert t == 5 and free > 1e-3 and "not pinned" in text  # T = 4: the first step is t = 5
    box.value = True  # as a click does
    assert view.state.pin_weights
    text = view.pin_text.object
    t, pinned = _difference(text)
    assert t == 5 and pinned < 1e-12 and "pinned one-hot on column 1 of A¹(4), a¹(4)" in text
    w = "a⁵" if form == "concat" else "a⁴"
    assert f"{w}(5) = [+1.000 +0.000 +0.000 +0.000 +0.000" in text
    assert "plain seq2seq (fig. 6.4): c(5) = a¹(4)" in text
    assert "code : plain_seq2seq(model).forward" in text
    e = view.explanation
    assert e is not None and e.pinned is not None and e.free is not None
    if e.pinned.weights.shape[0] >= 2:  # the next decoder step, t = 6
        view.step_slider.value = 2
        assert _difference(view.pin_text.object)[0] == 6
    assert e.pinned.logits_difference < 1e-12 and e.free.logits_difference > 1e-4


def test_eq_6_10_the_pin_control_on_the_plain_context_says_there_is_nothing_to_pin() -> None:
    view = TextbookSeq2SeqView(TextbookSeq2SeqState(form="context", hidden_size=8))
    view.state.pin_weights = True
    view.source_box.value = "abc"
    view.explain()
    assert view.pin_text.object.startswith("Context only: c(t) = a¹(3) at every step")
    view.state.form = "dot"  # a new model: the old explanation is gone
    assert view.pin_text.object == "" and view.explanation is None


def test_book_figure_refs_of_a_figure_are_its_edges_and_boxes() -> None:
    f = book_figures(textbook_seq2seq(9, 8, "general", hidden_size=5, D=4))[1]
    assert isinstance(f, BookFigure)
    assert f.parameters() == {"L_a"}  # the only parameter of fig. 6.7: W_a
    assert ("AttentionStepCache", "alpha") in f.refs() and ("BookCache", "ctx") in f.refs()
