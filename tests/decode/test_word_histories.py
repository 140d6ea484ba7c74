"""Word histories through the prefix tree with a language model (the detail Wand's lecture
skips): probabilities are frames x language model, a node holds several histories, and one per
node loses DOG BITES MAN."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyplay.decode.word_histories import (
    FRAMES,
    LM,
    SYMBOLS,
    WordHistoryStep,
    history_search,
    words_of,
)


def text(tokens: tuple[int, ...]) -> str:
    return " ".join(words_of([SYMBOLS[k] for k in tokens]))


def by_hand(sentence: str) -> float:
    """The frames' product along the spelled sentence times the language model's words."""
    words = sentence.split()
    symbols = [*"␣".join(words), "<eos>"]
    p = math.prod(FRAMES[t][s] for t, s in enumerate(symbols))
    for m, w in enumerate(words):
        p *= LM[tuple(words[:m])][w]
    return p


@pytest.mark.parametrize("per_node", [None, 2])
def test_two_per_node_finds_dog_bites_man(per_node: int | None) -> None:
    search = history_search(4, per_node)
    best, second = search.run()[:2]
    assert text(best.tokens) == "DOG BITES MAN" and text(second.tokens) == "DOCK BUYS MAN"
    assert math.exp(best.log_prob) == pytest.approx(by_hand("DOG BITES MAN"))
    assert math.exp(second.log_prob) == pytest.approx(by_hand("DOCK BUYS MAN"))
    assert by_hand("DOG BITES MAN") == pytest.approx(0.9**8 * 0.4**6 * 0.5 * 0.6 * 0.9)


def test_one_per_node_drops_dog_bites_at_the_start_node() -> None:
    search = history_search(4, 1)
    (best,) = search.run()
    assert text(best.tokens) == "DOCK BUYS MAN"
    frame10 = search.history[9]
    (dropped,) = [h for h in frame10.pruned if h.status == "per_node"]
    assert text(dropped.tokens) == "DOG BITES"


def test_a_node_holds_several_histories() -> None:
    search = history_search(4)
    search.run()
    for rec in search.history[9:13]:  # frames 10-13: start, M, M A, M A N
        assert len(rec.live) == 2
        assert rec.live[0].tokens[-1] == rec.live[1].tokens[-1]
        assert {text(h.tokens).split()[0] for h in rec.live} == {"DOG", "DOCK"}


def test_the_language_model_enters_at_word_ends_only() -> None:
    step = WordHistoryStep(SYMBOLS, FRAMES, LM)
    ids = [step.ids[c] for c in "DOG"]
    lp, state = step(np.array([step.eos]), step.initial())
    for k in ids:
        lp, state = step(np.array([k]), state)
    row = lp[0]  # frame 4, after D O G
    assert math.exp(row[step.sep]) == pytest.approx(0.4 * LM[()]["DOG"])
    assert math.exp(row[step.ids["K"]]) == pytest.approx(0.5)  # no word end: the frame only


def test_words_of() -> None:
    assert words_of(["D", "O", "G", "␣", "B", "<eos>"]) == ["DOG", "B"]
    assert words_of([]) == []
