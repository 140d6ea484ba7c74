"""Looking at a trained embedding table: nearest neighbours, a 2-D PCA map, analogies.

For an embedding matrix :math:`E` (V, D) whose row :math:`e_w` belongs to word (or symbol)
:math:`w`:

- cosine similarity :math:`\\cos(u, v) = u^\\top v / (\\lVert u \\rVert \\lVert v \\rVert)`
  (a zero row is similar to nothing: similarity 0);
- nearest neighbours of :math:`w`: the rows of highest cosine similarity, :math:`w` excluded;
- analogy ":math:`a` is to :math:`b` as :math:`c` is to ?": the word nearest to
  :math:`e_a - e_b + e_c` (Mikolov et al. 2013; king - man + woman), the three query words
  excluded;
- PCA: the rows centred, projected on the two leading right singular vectors of the centred
  matrix, with the share of variance each explains.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int

__all__ = ["EmbeddingTable", "Projection2D"]


@dataclass(frozen=True)
class Projection2D:
    """PCA coordinates (V, 2) and the fraction of variance of each of the two axes."""

    xy: np.ndarray
    explained: tuple[float, float]


class EmbeddingTable:
    """A (V, D) table with a name for every row (``words``; special tokens may be skipped by
    passing ``rows``, the row indices to consider)."""

    def __init__(self, weight: Any, words: Sequence[str], rows: Sequence[int] | None = None):
        W = check_array("weight", weight, ndim=2, layout="(V, D)").astype(np.float64)
        if len(words) != W.shape[0]:
            raise ValueError(
                f"words must name every row of weight ({W.shape[0]}), got {len(words)}"
            )
        if len(set(words)) != len(words):
            raise ValueError("words must be distinct")
        self.rows = list(range(W.shape[0])) if rows is None else [int(r) for r in rows]
        if not self.rows or min(self.rows) < 0 or max(self.rows) >= W.shape[0]:
            raise ValueError(f"rows must be indices in 0..{W.shape[0] - 1}, got {self.rows}")
        self.weight = W
        self.words = list(words)
        self._index = {w: i for i, w in enumerate(self.words)}

    def index(self, word: str, name: str = "word") -> int:
        if word not in self._index or self._index[word] not in self.rows:
            raise ValueError(f"{name} {word!r} is not in the table")
        return self._index[word]

    def _unit(self) -> np.ndarray:
        W = self.weight[self.rows]  # (V', D)
        norms = np.linalg.norm(W, axis=1, keepdims=True)  # (V', 1)
        return np.divide(W, norms, out=np.zeros_like(W), where=norms > 0)

    def _ranked(self, query: np.ndarray, exclude: set[int], k: int) -> list[tuple[str, float]]:
        q = np.linalg.norm(query)
        sims = self._unit() @ (query / q) if q > 0 else np.zeros(len(self.rows))  # (V',)
        order = np.argsort(-sims, kind="stable")
        out = []
        for j in order:
            if self.rows[j] in exclude:
                continue
            out.append((self.words[self.rows[j]], float(sims[j])))
            if len(out) == k:
                break
        return out

    def nearest(self, word: str, k: int = 5) -> list[tuple[str, float]]:
        """The ``k`` rows most cosine-similar to ``word`` (itself excluded), best first."""
        k = check_int("k", k, min_value=1)
        i = self.index(word)
        return self._ranked(self.weight[i], {i}, k)

    def analogy(self, a: str, b: str, c: str, k: int = 1) -> list[tuple[str, float]]:
        """Words nearest to ``e_a - e_b + e_c`` (the three excluded): "a is to b as ? is to c"
        read as king - man + woman = queen."""
        k = check_int("k", k, min_value=1)
        ia, ib, ic = self.index(a, "a"), self.index(b, "b"), self.index(c, "c")
        query = self.weight[ia] - self.weight[ib] + self.weight[ic]  # (D,)
        return self._ranked(query, {ia, ib, ic}, k)

    def pca(self) -> Projection2D:
        """Coordinates of the considered rows on the two leading principal axes."""
        W = self.weight[self.rows]  # (V', D)
        X = W - W.mean(axis=0)  # (V', D)
        _, s, Vt = np.linalg.svd(X, full_matrices=False)  # Vt (r, D)
        comps = np.zeros((2, X.shape[1]))
        comps[: min(2, Vt.shape[0])] = Vt[:2]
        for j in range(2):  # deterministic sign: largest loading positive
            if comps[j].any() and comps[j][np.argmax(np.abs(comps[j]))] < 0:
                comps[j] = -comps[j]
        total = float((s**2).sum())
        var = [float(v) / total if total > 0 else 0.0 for v in (s**2)[:2]] + [0.0, 0.0]
        return Projection2D(X @ comps.T, (var[0], var[1]))  # (V', 2)
