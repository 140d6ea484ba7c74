"""CTC prefix beam search with and without a lexicon, exact against brute-force enumeration of
every path on small cases (T <= 5, C <= 4)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_ctc import all_labelling_probs  # p(l|x) of every labelling, all C^T paths

from pyplay.decode import (
    PrefixTree,
    WordSequences,
    ctc_lexicon_beam_search,
    ctc_prefix_beam_search,
)
from pyplay.losses import log_softmax


def is_word_sequence(labels: tuple[int, ...], words: list[tuple[int, ...]]) -> bool:
    """Brute force: can ``labels`` be cut into one or more ``words``?"""
    if not labels:
        return False
    ok = [True] + [False] * len(labels)  # ok[i]: labels[:i] is a (possibly empty) sequence
    for i in range(1, len(labels) + 1):
        ok[i] = any(i >= len(w) and ok[i - len(w)] and labels[i - len(w) : i] == w for w in words)
    return ok[-1]


CASES = [  # (T, C, blank, words): overlapping words, a word that starts another, repeats
    (5, 4, 0, [(1,), (1, 2), (2, 3, 3), (3, 1)]),
    (4, 3, 0, [(1, 1), (2,), (2, 1)]),
    (5, 3, 2, [(0, 1), (1, 0, 1), (0,)]),
    (3, 4, 3, [(2, 0), (1,)]),
]


@pytest.mark.parametrize(("seed", "case"), itertools.product(range(3), range(len(CASES))))
def test_wide_beam_is_exact_with_and_without_lexicon(seed: int, case: int) -> None:
    T, C, blank, words = CASES[case]
    lp = log_softmax(np.random.default_rng(seed).standard_normal((T, C)) * 2.0)  # (T, C)
    table = all_labelling_probs(np.exp(lp), blank)
    plain = ctc_prefix_beam_search(lp, beam_width=2000, blank=blank)
    assert {tuple(p): s for p, s in plain}.keys() == table.keys()
    for labels, score in plain:
        assert np.exp(score) == pytest.approx(table[tuple(labels)], rel=1e-10)
    allowed = {lab: p for lab, p in table.items() if is_word_sequence(lab, words)}
    found = ctc_lexicon_beam_search(lp, words, beam_width=2000, blank=blank)
    assert {tuple(p) for p, _ in found} == set(allowed)  # every lexicon labelling, no other
    for labels, score in found:
        assert np.exp(score) == pytest.approx(allowed[tuple(labels)], rel=1e-10)
    best = max(allowed, key=lambda lab: allowed[lab])
    assert tuple(found[0][0]) == best  # the most probable lexicon labelling comes first
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)


@pytest.mark.parametrize("seed", range(20))
def test_narrow_beams_return_only_lexicon_labellings(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    T, C = int(rng.integers(3, 9)), int(rng.integers(3, 6))
    words = {tuple(int(k) for k in rng.integers(1, C, size=rng.integers(1, 4))) for _ in range(3)}
    lexicon = WordSequences.from_words(sorted(words), num_classes=C)
    lp = log_softmax(rng.standard_normal((T, C)) * 3.0)
    for width in (1, 2, 5):
        found = ctc_lexicon_beam_search(lp, sorted(words), beam_width=width)
        assert len(found) <= width
        for labels, score in found:
            assert lexicon.accepts(labels) and is_word_sequence(tuple(labels), sorted(words))
            assert score <= 0.0


def test_lexicon_changes_the_answer_and_carries_tree_nodes() -> None:
    """Frames that read 'AC' best (A=1, B=2, C=3): with the words AB and C only, 'ABC' wins;
    with the words A, B and AB the prefix AB carries two tree nodes (the word AB, or A then B)."""
    p = np.array(
        [[0.1, 0.8, 0.05, 0.05], [0.5, 0.05, 0.4, 0.05], [0.1, 0.05, 0.05, 0.8]]
    )  # (T=3, C=4)
    lp = np.log(p)
    assert ctc_prefix_beam_search(lp, beam_width=50)[0][0] == [1, 3]
    found = ctc_lexicon_beam_search(lp, [(1, 2), (3,)], beam_width=50)
    assert found[0][0] == [1, 2, 3]
    assert found[0][1] == pytest.approx(np.log(0.8 * 0.4 * 0.8))
    lex = WordSequences(PrefixTree.from_words([(1,), (2,), (1, 2)]))
    a = lex.advance(lex.initial(), 1)
    assert a is not None and len(a) == 1 and lex.is_final(a)
    ab = lex.advance(a, 2)
    assert ab is not None and len(ab) == 2 and lex.is_final(ab)
    assert lex.advance(lex.initial(), 3) is None and not lex.accepts([])
    assert lex.accepts([1, 2, 1]) and not lex.accepts([3])


def test_batch_lengths_and_errors_name_the_argument() -> None:
    rng = np.random.default_rng(3)
    lp = log_softmax(rng.standard_normal((2, 5, 4)))
    words = [(1, 2), (3,)]
    batch = ctc_lexicon_beam_search(lp, words, input_lengths=[5, 3], beam_width=4)
    assert batch[1] == ctc_lexicon_beam_search(lp[1, :3], words, beam_width=4)
    with pytest.raises(ValueError, match=r"labels 0\.\.3 other than the blank"):
        ctc_lexicon_beam_search(lp, [(0, 1)])
    with pytest.raises(ValueError, match=r"lexicon words must use labels 0\.\.3"):
        ctc_lexicon_beam_search(lp, [(4,)])
    with pytest.raises(ValueError, match="words must hold at least one word"):
        ctc_lexicon_beam_search(lp, [])
    with pytest.raises(TypeError, match="lexicon must be a WordSequences, got list"):
        ctc_prefix_beam_search(lp, lexicon=[(1,)])
    with pytest.raises(TypeError, match="tree must be a PrefixTree"):
        WordSequences([(1,)])  # type: ignore[arg-type]
