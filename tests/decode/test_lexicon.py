"""Lexicon-constrained search: the prefix tree, the constraint's masks, outputs made only of
lexicon words, and equality with enumeration over lexicon-valid outputs."""

from __future__ import annotations

import numpy as np
import pytest
from test_beam import START, assert_same, check_records, enumerate_all, markov_step, prefix_step

from pyplay.decode import BeamSearch, greedy_decode
from pyplay.decode.lexicon import LexiconConstraint, PrefixTree

V, SEP, EOS, BOS = 7, 4, 5, 6  # letters 0..3
WORDS = [[0], [0, 1], [1, 2, 3], [2], [3, 3], [0, 1]]  # "0" prefixes "0 1"; "1 2" ends nowhere


def lexicon(separator: int | None = SEP) -> LexiconConstraint:
    return LexiconConstraint(PrefixTree.from_words(WORDS), V, EOS, separator)


def is_valid_prefix(lex: LexiconConstraint, tokens: tuple[int, ...]) -> bool:
    *done, current = lex.split(tokens)
    return all(w in lex.tree for w in done) and lex.tree.find(current) is not None


def test_prefix_tree():
    tree = PrefixTree.from_words(WORDS)
    assert len(tree) == 5 and tree.n_nodes == 9
    assert tree.words() == [(0,), (0, 1), (1, 2, 3), (2,), (3, 3)]
    assert (0, 1) in tree and [1, 2, 3] in tree and (1, 2) not in tree and (3,) not in tree
    assert tree.find((1, 2)) is not None and tree.find((2, 2)) is None
    assert tree.find(()) == tree.root and not tree.is_word(tree.root)
    assert sorted(tree.children(tree.root)) == [0, 1, 2, 3]
    with pytest.raises(TypeError):
        tree.children(tree.root)[9] = 1  # type: ignore[index]


def test_masks_and_advance():
    lex = lexicon()
    root = lex.initial()
    assert np.flatnonzero(lex.mask(root)).tolist() == [0, 1, 2, 3]  # no EOS or SEP at the root
    zero = lex.advance(root, 0)  # "0" is a word and prefixes "0 1"
    assert np.flatnonzero(lex.mask(zero)).tolist() == [1, SEP, EOS] and lex.can_end(zero)
    one_two = lex.advance(lex.advance(root, 1), 2)
    assert np.flatnonzero(lex.mask(one_two)).tolist() == [3] and not lex.can_end(one_two)
    assert lex.advance(zero, SEP) == root and lex.advance(zero, EOS) == root
    with pytest.raises(ValueError, match=r"token must be one of \[3\] at trie node \d+, got 1"):
        lex.advance(one_two, 1)
    with pytest.raises(ValueError, match="got 4"):
        lex.advance(root, SEP)
    assert not lex.mask(root).flags.writeable


@pytest.mark.parametrize(
    "tokens, ok",
    [
        ((0, SEP, 1, 2, 3, EOS), True),
        ((0, 1, SEP, 3, 3), True),
        ((2,), True),
        ((0, SEP, EOS), False),  # trailing separator
        ((0, SEP, SEP, 2), False),  # empty word
        ((1, 2, EOS), False),  # not a word
        ((EOS,), False),  # no word at all
        ((0, EOS, 2), False),  # EOS inside
        ((SEP, 0), False),
    ],
)
def test_accepts(tokens, ok):
    assert lexicon().accepts(tokens) is ok


@pytest.mark.parametrize("alpha", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_wide_beam_equals_enumeration_over_lexicon_outputs(seed, alpha):
    lex, L = lexicon(), 5
    step = prefix_step(seed, V, scale=1.0)
    expected = [e for e in enumerate_all(step, START, BOS, EOS, V, L, alpha) if lex.accepts(e[0])]
    assert len(expected) > 20
    width = V**L
    every = BeamSearch(step, START, BOS, EOS, width, L, alpha, n_best=width, constraint=lex)
    assert_same(every.run(), expected)
    for n in (1, 4):
        bs = BeamSearch(step, START, BOS, EOS, width, L, alpha, n_best=n, constraint=lex)
        assert_same(bs.run(), expected[:n])


def test_only_lexicon_words_come_out():
    counts = {"disallowed": 0, "incomplete": 0}
    for seed in range(12):
        lex, L = lexicon(), 3 + seed % 5
        bs = BeamSearch(markov_step(seed, V), None, BOS, EOS, 3, L, 0.5, constraint=lex)
        res = bs.run()
        check_records(bs, V)
        assert res and all(lex.accepts(h.tokens) for h in res)
        for rec in bs.history:
            assert all(is_valid_prefix(lex, h.tokens) for h in rec.live)
            blocked = sum(int((~lex.mask(node)).sum()) for node in nodes(lex, rec.parents))
            assert rec.candidates.count("disallowed") == blocked
            for status in counts:
                counts[status] += rec.candidates.count(status)
    assert counts["disallowed"] > 0 and counts["incomplete"] > 0


def nodes(lex: LexiconConstraint, hyps) -> list[int]:
    """The trie node of each hypothesis, replayed from its tokens."""
    out = []
    for h in hyps:
        node = lex.initial()
        for k in h.tokens:
            node = lex.advance(node, k)
        out.append(node)
    return out


def test_beam_width_one_is_constrained_greedy():
    lex, dead = lexicon(), 0
    for seed in range(40):
        L = 1 + seed % 7
        step = markov_step(seed, V, scale=2.5)
        g = greedy_decode(step, None, BOS, EOS, L, constraint=lex)[0]
        res = BeamSearch(step, None, BOS, EOS, 1, L, constraint=lex).run()
        if g.status == "dead_end":  # e.g. "1 2" at the last step: no word can end there
            dead += 1
            assert res == []
            continue
        assert lex.accepts(g.tokens)
        assert res[0].tokens == g.tokens
        assert res[0].log_prob == pytest.approx(g.log_prob, abs=1e-12)
    assert dead < 40


def test_single_word_without_separator():
    lex = lexicon(separator=None)
    for seed in range(6):
        step = prefix_step(seed, V, scale=1.0)
        res = BeamSearch(step, START, BOS, EOS, 8, 4, constraint=lex).run()
        assert res and all(lex.accepts(h.tokens) and SEP not in h.tokens for h in res)
        assert all(tuple(t for t in h.tokens if t != EOS) in lex.tree for h in res)


@pytest.mark.parametrize(
    "build, exc, match",
    [
        (lambda: PrefixTree.from_words([[0], []]), ValueError, r"words\[1\] must be a non-empty"),
        (lambda: PrefixTree.from_words([[0, -1]]), ValueError, r"words\[0\] must hold token ids"),
        (lambda: PrefixTree.from_words([[0.5]]), TypeError, r"words\[0\] must hold integer"),
        (lambda: PrefixTree.from_words([]), ValueError, "at least one word"),
        (lambda: LexiconConstraint([[0]], V, EOS), TypeError, "tree must be a PrefixTree"),  # type: ignore[arg-type]
        (lambda: LexiconConstraint(PrefixTree.from_words([[9]]), V, EOS), ValueError, "token 9"),
        (lambda: LexiconConstraint(PrefixTree.from_words([[0, SEP]]), V, EOS, SEP), ValueError,
         "separator=4, got token 4"),
        (lambda: LexiconConstraint(PrefixTree.from_words([[0]]), V, EOS, EOS), ValueError,
         "separator must differ"),
        (lambda: LexiconConstraint(PrefixTree.from_words([[0]]), V, V), ValueError, "eos"),
        (lambda: LexiconConstraint(PrefixTree.from_words([[0]]), V, EOS, V), ValueError,
         "separator must be <= 6"),
    ],
)  # fmt: skip
def test_bad_input(build, exc, match):
    with pytest.raises(exc, match=match) as info:
        build()
    assert "got" in str(info.value)


def test_constraint_mask_shape_is_checked():
    class Short(LexiconConstraint):
        def mask(self, state):
            return super().mask(state)[:-1]

    short = Short(PrefixTree.from_words(WORDS), V, EOS, SEP)
    with pytest.raises(ValueError, match=r"constraint.mask must return .* \(V,\) = \(7,\)"):
        BeamSearch(markov_step(0, V), None, BOS, EOS, constraint=short).advance()
