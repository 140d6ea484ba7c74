"""The encoder's sentence embedding: the final state the encoder hands the decoder, for a set of
source sentences, mapped in 2-D and ranked by similarity (no Panel here).

Wand's lecture: the entire source "must be encoded in a fixed-size vector (the state of the
underlying LSTM at the EOS)", and "the encoder part of an encoder-decoder network computes an
embedding of the input sentence". :func:`sentence_vectors` takes, for each source, the top
layer's :math:`h` of the decoder's initial state (after the bridge of a bidirectional
encoder), :math:`\\mathbf{e}(x) \\in \\mathbb{R}^H`; :func:`sentence_map` puts them in an
:class:`~pyplay.embeddings.EmbeddingTable`, whose PCA gives the map and whose cosine ranking
the nearest sentences,

.. math::

    \\cos(x, x') = \\frac{\\mathbf{e}(x) \\cdot \\mathbf{e}(x')}{\\lVert \\mathbf{e}(x)
        \\rVert\\, \\lVert \\mathbf{e}(x') \\rVert}.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay.embeddings import EmbeddingTable, Projection2D
from pyplay.objectives import reverse_sources
from pyplay.tasks.pairs import PAD

__all__ = ["MAP_SENTENCES", "SentenceMap", "sample_sources", "sentence_map", "sentence_vectors"]

MAP_SENTENCES = 24  # sources drawn for the map
NEIGHBOURS = 5  # nearest sentences listed


def sample_sources(task: Any, n: int = MAP_SENTENCES, seed: int = 0) -> list[str]:
    """Up to ``n`` distinct sources drawn from a copy of ``task`` (its own generator is left
    alone, so training draws the same batches)."""
    draw = copy.deepcopy(task)
    draw.rng = np.random.default_rng(seed)
    found: dict[str, None] = {}
    for _ in range(10 * n):
        found.setdefault(draw.example()[0], None)
        if len(found) == n:
            break
    return list(found)


def sentence_vectors(model: Any, vocab: Any, sources: list[str], reverse: bool) -> np.ndarray:
    """(N, H) the encoder's final top-layer state for each source (read reversed when
    ``reverse``, as the lesson's model reads it)."""
    ids = [vocab.encode(vocab.split(s), "the source") for s in sources]
    lengths = np.array([len(i) for i in ids])  # (N,)
    src = np.full((len(ids), int(lengths.max())), PAD, dtype=np.int64)  # (N, S)
    for row, i in enumerate(ids):
        src[row, : len(i)] = i
    if reverse:
        src = reverse_sources(src, lengths)
    state = model.encode(src, lengths)[0]
    h = state[0] if isinstance(state, tuple) else state  # (L, N, H)
    return np.asarray(h[-1], dtype=np.float64)  # (N, H)


@dataclass(frozen=True)
class SentenceMap:
    """The sentences (``sources``), their vectors' table, its 2-D PCA, and the neighbours of
    ``query`` (best first, cosine)."""

    sources: list[str]
    table: EmbeddingTable
    pca: Projection2D
    query: str
    neighbours: list[tuple[str, float]]


def sentence_map(
    model: Any, task: Any, query: str, reverse: bool = False, n: int = MAP_SENTENCES
) -> SentenceMap:
    """The map of ``n`` sources drawn from ``task`` and ``query`` (added when missing), and the
    sources nearest to ``query``. A ValueError when ``query`` does not fit the vocabulary."""
    sources = sample_sources(task, n)
    query = query.strip()
    if query and query not in sources:
        sources.append(query)
    vectors = sentence_vectors(model, task.src_vocab, sources, reverse)  # (N, H)
    table = EmbeddingTable(vectors, sources)
    near = table.nearest(query, NEIGHBOURS) if query else []
    return SentenceMap(sources, table, table.pca(), query, near)
