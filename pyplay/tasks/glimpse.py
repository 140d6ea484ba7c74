"""A task where one glimpse is enough: the class of the marked position of a sequence.

Each example is ``seq_len`` positions, each a one-hot symbol of ``n_symbols`` plus one marker
feature, set at exactly one position; the target is the symbol at the marked position. A model
that looks at the marked position alone (soft or hard attention,
:class:`~pyplay.models.glimpse.GlimpseNet`) can answer; averaging over all positions cannot
(the guess of the average is right about ``1 / n_symbols`` of the time beyond chance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyplay._checks import as_generator, check_int
from pyplay.tasks.base import MAX_BATCH

__all__ = ["GlimpseBatch", "MarkedSymbol"]


@dataclass(frozen=True)
class GlimpseBatch:
    """``inputs`` (B, T, n_symbols + 1) float, ``targets`` (B,) int64 and ``marked`` (B,),
    the position that holds the answer."""

    inputs: np.ndarray
    targets: np.ndarray
    marked: np.ndarray


class MarkedSymbol:
    """The symbol at the marked position (module docstring).

    Parameters
    ----------
    n_symbols : int
        Classes (2..100).
    seq_len : int
        Positions per example (1..1000).
    rng : numpy.random.Generator or int seed
    """

    name = "marked"
    input_kind = "real"
    output_kind = "glimpse classes"

    def __init__(
        self, n_symbols: int = 8, seq_len: int = 10, rng: np.random.Generator | int | None = 0
    ) -> None:
        self.n_symbols = check_int("n_symbols", n_symbols, min_value=2, max_value=100)
        self.seq_len = check_int("seq_len", seq_len, min_value=1, max_value=1000)
        self.rng = as_generator(rng)
        self.config = {"n_symbols": self.n_symbols, "seq_len": self.seq_len}
        self.input_size, self.num_classes = self.n_symbols + 1, self.n_symbols

    def batch(self, batch_size: int) -> GlimpseBatch:
        B = check_int("batch_size", batch_size, min_value=1, max_value=MAX_BATCH)
        T, K = self.seq_len, self.n_symbols
        symbols = self.rng.integers(K, size=(B, T))  # (B, T)
        marked = self.rng.integers(T, size=B)  # (B,)
        x = np.zeros((B, T, K + 1))  # (B, T, K + 1)
        x[np.arange(B)[:, None], np.arange(T)[None, :], symbols] = 1
        x[np.arange(B), marked, K] = 1
        return GlimpseBatch(x, symbols[np.arange(B), marked], marked)

    def baseline_loss(self) -> float:
        """Cross-entropy of the uniform guess, ln n_symbols."""
        return math.log(self.n_symbols)

    def describe(self) -> str:
        return (
            f"{self.seq_len} positions of {self.n_symbols} symbols, one of them marked: name "
            "the marked symbol. One glimpse at the right place is enough."
        )
