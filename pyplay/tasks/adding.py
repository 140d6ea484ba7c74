"""The adding problem (Hochreiter & Schmidhuber 1997; Le, Jaitly & Hinton 2015)."""

from __future__ import annotations

import numpy as np

from pyplay._checks import check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["AddingProblem"]


class AddingProblem(Task):
    """Add the two marked numbers of a long sequence; answer at the last step.

    Each step carries two inputs: a value uniform in [0, 1) and a marker that is 1 at exactly
    two steps, one in each half of the sequence. The target, read at the last step only, is
    the sum of the two marked values. The network must keep the first marked value for up to
    ``seq_len`` steps, which is what a plain tanh RNN cannot learn for long sequences.

    Trivial baseline: always answering 1.0 (the mean of the sum) gives a mean squared error of
    Var(X1 + X2) = 2/12 = 1/6.
    """

    name = "adding"
    title = "Adding problem"
    input_kind = "real"
    output_kind = "real"
    input_size = 2
    output_size = 1

    def __init__(self, seq_len: int = 50, rng: np.random.Generator | int | None = 0) -> None:
        seq_len = check_int("seq_len", seq_len, min_value=2, max_value=10_000)
        super().__init__(rng, seq_len=seq_len)
        self.seq_len = seq_len

    def _batch(self, batch_size: int) -> Batch:
        B, T = batch_size, self.seq_len
        values = self.rng.random((B, T))  # (B, T)
        half = T // 2
        first = self.rng.integers(0, half, size=B)  # (B,)
        second = self.rng.integers(half, T, size=B)  # (B,)
        marks = np.zeros((B, T))
        rows = np.arange(B)
        marks[rows, first] = 1.0
        marks[rows, second] = 1.0
        inputs = np.stack([values, marks], axis=-1)  # (B, T, 2)
        targets = np.zeros((B, T, 1))
        targets[:, -1, 0] = values[rows, first] + values[rows, second]
        mask = np.zeros((B, T), dtype=bool)
        mask[:, -1] = True
        return Batch(inputs, targets, mask)

    def baseline_loss(self) -> float:
        return 1.0 / 6.0

    def describe(self) -> str:
        return (
            f"Adding problem (Hochreiter & Schmidhuber 1997): {self.seq_len} steps of random "
            "numbers with two of them marked; at the last step output their sum. The first "
            "mark can be far back, so the network has to hold a number for many steps. "
            "Always answering 1.0 scores a mean squared error of 1/6 = 0.167."
        )
