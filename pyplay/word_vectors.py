"""A small embedding table the project makes itself: word vectors from a generated corpus by
positive pointwise mutual information and a truncated SVD (Levy & Goldberg 2014: what
word2vec factorises, in closed form).

The corpus (:func:`royal_corpus`) is written by a grammar: eight person words that differ in
three independent ways (sex, rank, age), each sentence showing one of them through its context
words (pronouns, places, verbs). Real text needs millions of words before king - man + woman
lands near queen; here the contexts are built so that it can with a few thousand short
sentences, which the page says.

For a co-occurrence count :math:`C_{wc}` (context word :math:`c` within ``window`` words of
:math:`w`) with total :math:`N = \\sum_{wc} C_{wc}`:

.. math::

    \\mathrm{PPMI}_{wc} = \\max\\Big(0, \\log \\frac{C_{wc} N}{C_{w\\cdot} C_{\\cdot c}}\\Big),
    \\qquad
    \\mathrm{PPMI} = U \\Sigma V^\\top, \\qquad E = U_{:, :d} \\Sigma_{:d}^{1/2}

(the symmetric split of the singular values, each column's sign fixed so that its largest
entry is positive).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int
from pyplay.embeddings import EmbeddingTable

__all__ = ["PEOPLE", "bundled_table", "cooccurrence", "ppmi", "royal_corpus", "svd_vectors"]

# person word: (sex, rank, age)
PEOPLE = {
    "king": ("m", "royal", "adult"),
    "queen": ("f", "royal", "adult"),
    "prince": ("m", "royal", "young"),
    "princess": ("f", "royal", "young"),
    "man": ("m", "common", "adult"),
    "woman": ("f", "common", "adult"),
    "boy": ("m", "common", "young"),
    "girl": ("f", "common", "young"),
}
PRONOUNS = {"m": ("he", "his", "him"), "f": ("she", "her", "hers")}
PLACES = {
    "royal": ("palace", "throne", "crown", "castle"),
    "common": ("house", "village", "field", "market"),
}
VERBS = {"adult": ("works", "rules", "speaks"), "young": ("plays", "learns", "runs")}
WINDOW, DIM, SENTENCES = 3, 10, 4000  # the bundled table's settings


def royal_corpus(n_sentences: int = SENTENCES, rng: Any = 0) -> list[list[str]]:
    """``n_sentences`` sentences of the grammar: "the W lives in the PLACE", "the W said that
    PRONOUN VERB", "the W VERB and PRONOUN is happy", W drawn uniformly from :data:`PEOPLE`.
    ``rng`` is a ``numpy.random.Generator`` or a seed."""
    n = check_int("n_sentences", n_sentences, min_value=1)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    words = list(PEOPLE)
    out = []
    for _ in range(n):
        w = words[int(gen.integers(len(words)))]
        sex, rank, age = PEOPLE[w]
        pronoun = PRONOUNS[sex][int(gen.integers(3))]
        kind = int(gen.integers(3))
        if kind == 0:
            place = PLACES[rank][int(gen.integers(4))]
            out.append(["the", w, "lives", "in", "the", place])
        elif kind == 1:
            out.append(["the", w, "said", "that", pronoun, VERBS[age][int(gen.integers(3))]])
        else:
            out.append(["the", w, VERBS[age][int(gen.integers(3))], "and", pronoun, "is", "happy"])
    return out


def cooccurrence(
    sentences: Sequence[Sequence[str]], window: int = WINDOW
) -> tuple[list[str], np.ndarray]:
    """The sorted vocabulary and :math:`C` (V, V): how often word ``c`` stands within ``window``
    words of word ``w`` in the same sentence (symmetric)."""
    window = check_int("window", window, min_value=1)
    vocab = sorted({t for s in sentences for t in s})
    if not vocab:
        raise ValueError("sentences must hold at least one word, got none")
    ix = {w: i for i, w in enumerate(vocab)}
    C = np.zeros((len(vocab), len(vocab)))  # (V, V)
    for s in sentences:
        ids = [ix[t] for t in s]
        for i, a in enumerate(ids):
            for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                if j != i:
                    C[a, ids[j]] += 1
    return vocab, C


def ppmi(C: Any) -> np.ndarray:
    """Positive pointwise mutual information of a count matrix ``C`` (V, V); 0 where a count
    is 0."""
    C = check_array("C", C, ndim=2, layout="(V, V)")
    if (C < 0).any():
        raise ValueError("C must hold counts (no negative entries)")
    N = C.sum()
    row = C.sum(axis=1, keepdims=True)  # (V, 1)
    col = C.sum(axis=0, keepdims=True)  # (1, V)
    expected = row * col  # (V, V) C_w. C_.c
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(C * N / expected)  # (V, V)
    return np.where(C > 0, np.maximum(pmi, 0.0), 0.0)


def svd_vectors(P: Any, dim: int = DIM) -> np.ndarray:
    """:math:`E = U_{:, :d} \\Sigma_{:d}^{1/2}` (V, d) from ``P`` (V, V), signs fixed."""
    P = check_array("P", P, ndim=2, layout="(V, V)")
    dim = check_int("dim", dim, min_value=1)
    if dim > min(P.shape):
        raise ValueError(f"dim must be at most {min(P.shape)} (the table's size), got {dim}")
    U, S, _ = np.linalg.svd(P)  # U (V, V), S (V,)
    E = U[:, :dim] * np.sqrt(S[:dim])  # (V, d)
    flip = E[np.argmax(np.abs(E), axis=0), np.arange(dim)] < 0  # (d,)
    E[:, flip] *= -1
    return E


@lru_cache(maxsize=1)
def bundled_table() -> EmbeddingTable:
    """The table the page offers without training: :func:`royal_corpus` (seed 0), PPMI, SVD
    to :data:`DIM` dimensions; its rows are the corpus's words."""
    vocab, C = cooccurrence(royal_corpus())
    return EmbeddingTable(svd_vectors(ppmi(C)), vocab)
