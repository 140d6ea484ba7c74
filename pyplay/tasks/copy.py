"""Delayed recall, the copy task (Hochreiter & Schmidhuber 1997; Arjovsky et al. 2016)."""

from __future__ import annotations

import numpy as np

from pyplay._checks import check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["DelayedRecall"]


class DelayedRecall(Task):
    """Read ``seq_len`` random symbols, wait ``delay`` steps, then write them back in order.

    Tokens: 0 is the blank, 1..n_symbols the symbols, n_symbols + 1 the recall marker that
    ends the waiting period. The input is ``symbols, blanks, marker, blanks`` and the targets
    count only at the ``seq_len`` positions after the marker, where they are the symbols.
    Length T = 2 * seq_len + delay.

    Trivial baseline: guessing uniformly among the symbols, cross-entropy log(n_symbols).
    """

    name = "copy"
    title = "Delayed recall (copy)"

    def __init__(
        self,
        n_symbols: int = 8,
        seq_len: int = 10,
        delay: int = 5,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        n_symbols = check_int("n_symbols", n_symbols, min_value=2, max_value=1000)
        seq_len = check_int("seq_len", seq_len, min_value=1, max_value=1000)
        delay = check_int("delay", delay, min_value=1, max_value=10_000)
        super().__init__(rng, n_symbols=n_symbols, seq_len=seq_len, delay=delay)
        self.n_symbols, self.seq_len, self.delay = n_symbols, seq_len, delay
        self.input_size = self.output_size = n_symbols + 2

    def _batch(self, batch_size: int) -> Batch:
        B, L, D = batch_size, self.seq_len, self.delay
        T = 2 * L + D
        symbols = self.rng.integers(1, self.n_symbols + 1, size=(B, L))  # (B, L)
        inputs = np.zeros((B, T), dtype=np.int64)
        inputs[:, :L] = symbols
        inputs[:, L + D - 1] = self.n_symbols + 1  # the recall marker
        targets = np.zeros((B, T), dtype=np.int64)
        targets[:, L + D :] = symbols
        mask = np.zeros((B, T), dtype=bool)
        mask[:, L + D :] = True
        return Batch(inputs, targets, mask)

    def baseline_loss(self) -> float:
        return float(np.log(self.n_symbols))

    def describe(self) -> str:
        return (
            f"Delayed recall: read {self.seq_len} random symbols (of {self.n_symbols}), wait "
            f"{self.delay} steps until the recall marker, then output the symbols in order. "
            f"Guessing gives a loss of log({self.n_symbols}) = {self.baseline_loss():.3f}."
        )
