"""The IDSIA lecture's beam-search slides, reproduced by pyplay's lexicon beam search: the
prefix tree's accumulated probabilities (the slide's numbers exactly), EOS once at a final
node, the best final node as the result, and DOCK BUYS MAN against DOG BITES MAN."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pyplay.decode import BeamSearch, greedy_decode
from pyplay.decode.lecture_examples import (
    EOS,
    PHONE_FRAMES,
    PHONE_TABLE,
    PHONE_WORDS,
    SENTENCE_FRAMES,
    WORDS,
    node_values,
    phone_search,
    sentence_search,
)
from pyplay.decode.table_step import TableStep
from pyplay.ui.lessons.seq2seq.prefix_tree import PrefixTreeStepper, sentence_listing

SLIDE_FRAME_1 = {"A": 0.4, "AE": 0.06, "B": 0.34}  # the slide's first table
SLIDE_FRAME_2 = {"A R": 0.4 * 0.2, "A N": 0.4 * 0.4, "AE N": 0.06 * 0.5}  # second, accumulated


def shown(stepper: PrefixTreeStepper) -> dict[str, float]:
    """Node name -> accumulated probability, as the view's stepper holds them."""
    values = node_values(stepper.search, stepper.eos)
    return {stepper.label(prefix): v.p for prefix, v in values.items()}


def test_slide_prefix_tree_step_probabilities():
    stepper = PrefixTreeStepper()
    stepper.step()
    assert shown(stepper) == pytest.approx(SLIDE_FRAME_1, rel=1e-12)
    assert {"A 0.4", "AE 0.06", "B 0.34"} <= set(lines(stepper))
    stepper.step()
    after_2 = {k: v for k, v in shown(stepper).items() if len(k.split()) == 2}
    assert after_2 == pytest.approx(SLIDE_FRAME_2, rel=1e-12)
    assert {"A R 0.08", "A N 0.16", "AE N 0.03"} <= set(lines(stepper))
    assert shown(stepper)["A"] == pytest.approx(0.4)  # accumulated along the tree: kept
    stepper.back()  # Back is exactly frame 1 again
    assert shown(stepper) == pytest.approx(SLIDE_FRAME_1, rel=1e-12)


def lines(stepper: PrefixTreeStepper) -> list[str]:
    """The listing's "node probability" pairs, as the page shows them."""
    out = []
    for line in stepper.listing().splitlines()[1:]:
        parts = line.split("  ")
        parts = [p.strip() for p in parts if p.strip()]
        if len(parts) >= 2:
            out.append(f"{parts[0]} {parts[1]}")
    return out


def test_slide_prefix_tree_words_are_the_final_nodes():
    _, table, lexicon = phone_search()
    words = {" ".join(table.decode(w)) for w in lexicon.tree.words()}
    slide = {"A R E", "A R T", "A R T I S T", "A N T", "A N", "A N D"}
    assert slide <= words and words - slide == {"AE N", "B"}  # the page's two completions
    assert {" ".join(w) for w, src in PHONE_WORDS if src == "slide"} == slide
    given = {(g.history, g.symbol): g.p for g in PHONE_TABLE if g.source == "slide"}
    assert given == {
        ((), "A"): 0.4, ((), "AE"): 0.06, ((), "B"): 0.34,
        (("A",), "R"): 0.2, (("A",), "N"): 0.4, (("AE",), "N"): 0.5,
    }  # fmt: skip
    stepper = PrefixTreeStepper()
    nodes, _ = stepper.figure_data()
    ends = {n for n, f in zip(nodes["node"], nodes["final"], strict=True) if f == "word end"}
    assert ends == words  # the green nodes


def enumerate_words(table: TableStep, words: list[tuple[int, ...]], eos: int) -> dict:
    """p(word EOS) of every word that ends within the frames, by multiplying the table."""
    out = {}
    for w in words:
        if len(w) + 1 > PHONE_FRAMES:
            continue
        p = 1.0
        for t, k in enumerate((*w, eos)):
            p *= math.exp(table.row(w[:t])[k])
        out[w] = p
    return out


def test_slide_result_is_the_best_final_node_with_eos_once():
    search, table, lexicon = phone_search()
    eos = table.ids[EOS]
    results = search.run()
    expected = enumerate_words(table, lexicon.tree.words(), eos)
    got = {h.tokens[:-1]: math.exp(h.log_prob) for h in results}
    assert all(h.tokens[-1] == eos and h.tokens.count(eos) == 1 for h in results)
    assert got == pytest.approx(expected, rel=1e-12)
    best = max(expected, key=expected.__getitem__)
    assert results[0].tokens[:-1] == best and table.decode(best) == ("A", "N", "D")
    assert math.exp(results[0].log_prob) == pytest.approx(0.4 * 0.4 * 0.6 * 0.9, rel=1e-12)
    values = node_values(search, eos)
    assert values[table.encode(["A", "N"])].ended == pytest.approx(0.16 * 0.1)
    assert values[table.encode(["A", "R", "T", "I"])].status == "incomplete"  # frames ran out
    stepper = PrefixTreeStepper()
    stepper.run()
    assert stepper.listing().splitlines()[-1].endswith("A N D, p = 0.0864")


@pytest.mark.parametrize("width", [1, 2, 3])
def test_slide_beam_width_limits_the_hypotheses(width):
    search = phone_search(width)[0]
    search.run()
    assert all(len(rec.live) <= width for rec in search.history)
    assert max(len(rec.live) for rec in search.history) == width
    wide, _, _ = phone_search(8)
    assert search.results()[0].tokens == wide.run()[0].tokens  # here the narrow beam is lucky


def test_slide_dock_buys_man_greedy_loses_and_a_wider_beam_wins():
    greedy, table = sentence_search(1)
    assert table.decode(greedy.results()[0].tokens) == ("DOCK", "BUYS", "MAN", EOS)
    assert math.exp(greedy.results()[0].log_prob) == pytest.approx(0.6 * 0.7 * 0.4)
    eos = table.ids[EOS]
    (plain,) = greedy_decode(table, table.initial(), eos, eos, SENTENCE_FRAMES)
    assert plain.tokens == greedy.results()[0].tokens  # width 1 is greedy decoding
    # the optimum, by enumerating every sentence of three words
    words = [k for k in range(len(WORDS)) if k != eos]
    every = {}
    for s in itertools.product(words, repeat=3):
        tokens = (*s, eos)
        every[tokens] = math.exp(sum(table.row(tokens[:t])[k] for t, k in enumerate(tokens)))
    optimum = max(every, key=every.__getitem__)
    assert table.decode(optimum) == ("DOG", "BITES", "MAN", EOS)
    assert every[optimum] == pytest.approx(0.4 * 0.8 * 0.9)
    assert math.exp(greedy.results()[0].log_prob) < every[optimum]
    for width in (2, 3, 4):
        search, _ = sentence_search(width)
        assert search.results()[0].tokens == optimum
        assert math.exp(search.results()[0].log_prob) == pytest.approx(every[optimum], rel=1e-12)
    text = sentence_listing(2)
    assert "result: DOCK BUYS MAN  p = 0.168" in text and "result: DOG BITES MAN  p = 0.288" in text


def test_table_step_rows_and_histories():
    step = TableStep(["a", "b", EOS], {(): {"a": 0.7, "b": 0.3}, ("a",): {EOS: 1.0}})
    search = BeamSearch(step, step.initial(), 2, 2, 1, 3, reorder=step.reorder)  # width 1
    results = search.run()
    assert [step.decode(h.tokens) for h in results] == [("a", EOS)]
    assert search.history[1].candidates.count("zero_probability") == 2
    assert step.given((0,)) and not step.given((1,))
    with pytest.raises(ValueError, match=r"history must be one the table lists .* got \('b',\)"):
        step.row((1,))


@pytest.mark.parametrize(
    "symbols, rows, exc, match",
    [
        ([], {}, TypeError, "symbols must be a non-empty sequence of str"),
        (["a", "a"], {}, ValueError, r"symbols must all differ, got \['a', 'a'\]"),
        (["a"], {("z",): {"a": 1.0}}, ValueError, r"rows key \('z',\) must use the symbols"),
        (["a", "b"], {(): {"a": 0.5}}, ValueError, r"rows\[\(\)\] must sum to 1, got 0.5"),
        (["a", "b"], {(): {"a": 1.5}}, ValueError, r"must be a probability in \[0, 1\], got 1.5"),
        (["a", "b"], {(): {"c": 1.0}}, ValueError, r"must use the symbols \['a', 'b'\], got"),
    ],
)
def test_table_step_bad_input(symbols, rows, exc, match):
    with pytest.raises(exc, match=match):
        TableStep(symbols, rows)


def test_table_rows_sum_to_one():
    table = phone_search()[1]
    for history in {g.history for g in PHONE_TABLE}:
        row = np.exp(table.row(table.encode(history)))
        assert row.sum() == pytest.approx(1.0, abs=1e-12)
