"""Parity of a bit stream (the XOR problem stretched over time; Minsky & Papert)."""

from __future__ import annotations

import numpy as np

from pyplay._checks import check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["Parity"]


class Parity(Task):
    """Output whether an odd number of ones has been seen so far.

    Inputs are random bits (tokens 0 and 1); with ``running=True`` the target at every step is
    the parity of the prefix, with ``running=False`` only the parity of the whole sequence at
    the last step counts (much harder: no intermediate signal).

    Trivial baseline: guessing 50/50, cross-entropy log 2.
    """

    name = "parity"
    title = "Parity"
    input_size = 2
    output_size = 2

    def __init__(
        self, seq_len: int = 16, running: bool = True, rng: np.random.Generator | int | None = 0
    ) -> None:
        seq_len = check_int("seq_len", seq_len, min_value=1, max_value=10_000)
        if not isinstance(running, bool):
            raise TypeError(f"running must be True or False, got {running!r}")
        super().__init__(rng, seq_len=seq_len, running=running)
        self.seq_len, self.running = seq_len, running

    def _batch(self, batch_size: int) -> Batch:
        bits = self.rng.integers(0, 2, size=(batch_size, self.seq_len))  # (B, T)
        targets = np.cumsum(bits, axis=1) % 2  # (B, T)
        mask = np.ones_like(bits, dtype=bool)
        if not self.running:
            mask[:, :-1] = False
        return Batch(bits.astype(np.int64), targets.astype(np.int64), mask)

    def baseline_loss(self) -> float:
        return float(np.log(2.0))

    def describe(self) -> str:
        which = "after every bit" if self.running else "at the end"
        return (
            f"Parity: {self.seq_len} random bits; say {which} whether the number of ones so "
            "far is odd. One bit anywhere flips the answer, so nothing can be ignored. "
            "Guessing gives log 2 = 0.693."
        )
