"""Beam search's limits beside the width (Wand's lecture: a fixed number per node, adaptive
criteria): a count per node and a score threshold relative to the step's best."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyplay.decode import BeamSearch, LexiconConstraint, PrefixTree, Pruning


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


V, EOS = 6, 0
TABLE = log_softmax(np.random.default_rng(3).normal(size=(V, V)) * 1.5)  # (V, V)


def step(tokens: np.ndarray, state: object) -> tuple[np.ndarray, object]:
    return TABLE[tokens], state


def search(width: int = 4, **kwargs: object) -> BeamSearch:
    s = BeamSearch(step, None, EOS, EOS, width, 6, vocab_size=V, **kwargs)  # type: ignore[arg-type]
    s.run()
    return s


def test_no_limit_is_the_plain_search() -> None:
    plain, limited = search(), search(pruning=Pruning())
    assert [h.tokens for h in plain.results()] == [h.tokens for h in limited.results()]
    for a, b in zip(plain.history, limited.history, strict=True):
        assert np.array_equal(a.candidates.fate, b.candidates.fate)


def test_threshold_keeps_only_scores_near_the_best() -> None:
    d = 1.0
    s = search(width=8, pruning=Pruning(threshold=d))
    below_seen = False
    for rec in s.history:
        best = float(np.max(rec.candidates.score))
        for h in (*rec.live, *rec.finished):
            assert h.score >= best - d
        for h in rec.pruned:
            if h.status == "below_threshold":
                below_seen = True
                assert h.score < best - d
    assert below_seen
    wide = search(width=8, pruning=Pruning(threshold=1e9))
    assert [h.tokens for h in wide.results()] == [h.tokens for h in search(width=8).results()]


def test_threshold_narrows_the_beam_where_one_stands_out() -> None:
    s = search(width=8, pruning=Pruning(threshold=3.0))  # step 1: EOS 0.86 stands out
    live = [len(rec.live) for rec in s.history]
    assert 1 <= live[0] < len(search(width=8).history[0].live)


def test_per_node_without_lexicon_is_per_last_token() -> None:
    s = search(width=5, pruning=Pruning(per_node=1))
    for rec in s.history:
        last = [h.tokens[-1] for h in rec.live]
        assert len(last) == len(set(last))  # one live hypothesis per token (node)
        # each pruned one ranks after a live one ending in the same token
        for h in rec.pruned:
            if h.status == "per_node":
                same = [g for g in rec.live if g.tokens[-1] == h.tokens[-1]]
                assert same and same[0].rank < h.rank
    assert any(h.status == "per_node" for rec in s.history for h in rec.pruned)


def test_per_node_under_a_lexicon_counts_tree_nodes() -> None:
    # words over tokens 1..4, separator 5: after a word every hypothesis is back at the root,
    # whatever its word history
    tree = PrefixTree.from_words([[1], [2], [1, 3], [2, 4]])
    lexicon = LexiconConstraint(tree, V, EOS, separator=5)
    for n in (1, 2):
        s = search(width=6, constraint=lexicon, pruning=Pruning(per_node=n))
        for rec in s.history:
            nodes: dict[int, int] = {}
            for h in rec.live:
                node = 0
                for k in h.tokens:
                    node = lexicon.advance(node, k)
                nodes[node] = nodes.get(node, 0) + 1
            assert max(nodes.values(), default=0) <= n


def test_both_limits_together() -> None:
    s = search(width=6, pruning=Pruning(per_node=1, threshold=2.0))
    assert s.results()
    statuses = {h.status for rec in s.history for h in rec.pruned}
    assert "per_node" in statuses or "below_threshold" in statuses


def test_back_restores_after_pruned_steps() -> None:
    s = BeamSearch(step, None, EOS, EOS, 4, 6, vocab_size=V, pruning=Pruning(per_node=1))
    first = s.advance()
    s.advance()
    s.back()
    assert s.live == first.live


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"per_node": 0}, "per_node"), ({"threshold": -1.0}, "threshold")],
)
def test_bad_limits_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Pruning(**kwargs)


def test_pruning_must_be_a_pruning() -> None:
    with pytest.raises(TypeError, match="pruning"):
        BeamSearch(step, None, EOS, EOS, pruning=3)  # type: ignore[arg-type]


def test_cut_and_describe() -> None:
    assert Pruning().cut(-1.0) == -math.inf and Pruning().describe() == ""
    assert Pruning(threshold=2.0).cut(-1.0) == -3.0
    assert Pruning(per_node=2, threshold=1.5).describe() == (
        "at most 2 per node, scores within 1.5 of the best"
    )
