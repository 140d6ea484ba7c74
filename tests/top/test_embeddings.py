"""Looking at embeddings: neighbours, analogies and PCA on tables with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.embeddings import EmbeddingTable


def royal_table() -> EmbeddingTable:
    # axes: royalty, gender (+ male), and a nuisance direction
    words = ["king", "queen", "man", "woman", "apple", "<pad>"]
    W = np.array(
        [[1.0, 1.0, 0.1], [1.0, -1.0, 0.1], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0],
         [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    )  # fmt: skip
    return EmbeddingTable(W, words, rows=range(5))


def test_analogy_king_man_woman() -> None:
    (best, sim), *_ = royal_table().analogy("king", "man", "woman", k=2)
    assert best == "queen" and sim > 0.99


def test_nearest_excludes_the_word_and_ranks_by_cosine() -> None:
    table = royal_table()
    near = table.nearest("king", k=4)
    assert near[0][0] == "man"  # cos 0.70; queen differs in gender: cos 0.005
    assert "king" not in [w for w, _ in near] and "<pad>" not in [w for w, _ in near]
    sims = [s for _, s in near]
    assert sims == sorted(sims, reverse=True)
    W = table.weight
    cos = W[0] @ W[2] / np.linalg.norm(W[0]) / np.linalg.norm(W[2])
    assert dict(near)["man"] == pytest.approx(cos)


def test_pca_matches_svd_of_the_centred_table() -> None:
    rng = np.random.default_rng(0)
    W = rng.normal(size=(12, 5)) * np.array([5.0, 2.0, 0.5, 0.1, 0.1])
    proj = EmbeddingTable(W, [f"w{i}" for i in range(12)]).pca()
    X = W - W.mean(axis=0)
    _, s, Vt = np.linalg.svd(X)
    for j in range(2):
        ref = X @ Vt[j]
        assert np.allclose(proj.xy[:, j], ref) or np.allclose(proj.xy[:, j], -ref)
    assert proj.explained == pytest.approx(tuple(s[:2] ** 2 / (s**2).sum()))
    assert proj.explained[0] >= proj.explained[1] > 0


def test_errors() -> None:
    table = royal_table()
    with pytest.raises(ValueError, match="word 'prince' is not in the table"):
        table.nearest("prince")
    with pytest.raises(ValueError, match="word '<pad>' is not in the table"):
        table.nearest("<pad>")  # excluded row
    with pytest.raises(ValueError, match="words must name every row"):
        EmbeddingTable(np.zeros((2, 3)), ["a"])
    with pytest.raises(ValueError, match="weight must be a 2-D array"):
        EmbeddingTable(np.zeros(3), ["a", "b", "c"])
    with pytest.raises(ValueError, match="k must be"):
        table.nearest("king", k=0)
