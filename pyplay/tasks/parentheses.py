"""Balanced parentheses: recognising a context-free language (Dyck words) with a recurrent net."""

from __future__ import annotations

import numpy as np

from pyplay._checks import check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["BalancedParentheses", "is_balanced"]

PAD, OPEN, CLOSE = 0, 1, 2


def is_balanced(tokens: np.ndarray) -> bool:
    """Reference checker: every prefix has at least as many OPEN as CLOSE, and totals match."""
    depth = 0
    for tok in tokens:
        depth += 1 if tok == OPEN else -1 if tok == CLOSE else 0
        if depth < 0:
            return False
    return depth == 0


class BalancedParentheses(Task):
    """Classify strings over "(" and ")" as balanced or not, at each string's last character.

    Strings have even lengths between 2 and ``max_len`` (a ragged batch: ``lengths`` is set,
    padding token 0). Half are balanced (random Dyck words); the other half have exactly as
    many "(" as ")" but some prefix closes too much, so counting alone cannot decide: the
    network has to track the nesting depth over the whole string.

    Tokens: 0 pad, 1 "(", 2 ")". Classes: 0 unbalanced, 1 balanced.
    Trivial baseline: guessing 50/50, cross-entropy log 2.
    """

    name = "parentheses"
    title = "Balanced parentheses"
    input_size = 3
    output_size = 2

    def __init__(self, max_len: int = 20, rng: np.random.Generator | int | None = 0) -> None:
        max_len = check_int("max_len", max_len, min_value=4, max_value=10_000)
        super().__init__(rng, max_len=max_len)
        self.max_len = max_len - max_len % 2

    def _dyck(self, n: int) -> np.ndarray:
        """A random balanced string of length ``n`` (even), as a random walk kept >= 0."""
        out = np.empty(n, dtype=np.int64)
        depth = 0
        for k in range(n):
            remaining = n - k
            if depth == 0:
                up = True
            elif depth == remaining:
                up = False
            else:
                up = bool(self.rng.random() < 0.5)
            out[k] = OPEN if up else CLOSE
            depth += 1 if up else -1
        return out

    def _unbalanced(self, n: int) -> np.ndarray:
        """Equal numbers of "(" and ")" in an order that is not balanced."""
        while True:
            s = self.rng.permutation(np.repeat([OPEN, CLOSE], n // 2))
            if not is_balanced(s):
                return s.astype(np.int64)

    def _batch(self, batch_size: int) -> Batch:
        B, T = batch_size, self.max_len
        lengths = 2 * self.rng.integers(1, T // 2 + 1, size=B)  # (B,) even lengths
        labels = self.rng.random(B) < 0.5  # (B,) balanced or not
        inputs = np.full((B, T), PAD, dtype=np.int64)
        for b in range(B):
            n = int(lengths[b])
            if n == 2 and not labels[b]:
                inputs[b, :2] = (CLOSE, OPEN)
            else:
                inputs[b, :n] = self._dyck(n) if labels[b] else self._unbalanced(n)
        targets = np.zeros((B, T), dtype=np.int64)
        mask = np.zeros((B, T), dtype=bool)
        rows = np.arange(B)
        targets[rows, lengths - 1] = labels.astype(np.int64)
        mask[rows, lengths - 1] = True
        return Batch(inputs, targets, mask, lengths.astype(np.int64))

    def baseline_loss(self) -> float:
        return float(np.log(2.0))

    def describe(self) -> str:
        return (
            f"Balanced parentheses: strings of up to {self.max_len} brackets with as many '(' "
            "as ')'; at the last character say whether they are properly nested. Counting is "
            "not enough: the network has to track the depth. Guessing gives log 2 = 0.693."
        )
