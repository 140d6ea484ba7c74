"""Associative recall: see key -> value pairs, then a key; answer its value."""

from __future__ import annotations

import numpy as np

from pyplay._checks import check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["AssociativeRecall"]

KEY_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class AssociativeRecall(Task):
    """Read ``n_pairs`` key -> value pairs, one pair per step, then a query key; at the query
    step output the value stored with that key.

    Keys are distinct within an example (drawn without replacement from ``n_keys``), values are
    drawn with replacement from ``n_values``. Real inputs (B, T, F), T = n_pairs + 1, F =
    n_keys + n_values + 1: a pair step is the key's one-hot followed by the value's one-hot
    (and a 0), the query step the key's one-hot, zeros for the value and a 1 (the query flag).
    The target counts only at the query step (``mask``), a value class 0..n_values - 1.

    A net must keep every pair until the query comes, addressed by its key: exactly what a
    content-addressed memory does, and a growing burden for a fixed-size state.

    Trivial baseline: guessing uniformly among the values, cross-entropy log(n_values).
    """

    name = "recall"
    title = "Associative recall"
    input_kind = "real"
    output_kind = "classes"

    def __init__(
        self,
        n_pairs: int = 6,
        n_keys: int = 8,
        n_values: int = 8,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        n_keys = check_int("n_keys", n_keys, min_value=1, max_value=len(KEY_NAMES))
        n_pairs = check_int("n_pairs", n_pairs, min_value=1, max_value=1000)
        if n_pairs > n_keys:
            raise ValueError(
                f"n_pairs must be <= n_keys={n_keys} (keys are distinct), got {n_pairs}"
            )
        n_values = check_int("n_values", n_values, min_value=2, max_value=1000)
        super().__init__(rng, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
        self.n_pairs, self.n_keys, self.n_values = n_pairs, n_keys, n_values
        self.input_size = n_keys + n_values + 1
        self.output_size = n_values

    def draw(self, batch_size: int) -> tuple[Batch, np.ndarray, np.ndarray, np.ndarray]:
        """A batch and what it was made of: keys (B, P), values (B, P), the queried pair (B,)."""
        B, P, K, V = batch_size, self.n_pairs, self.n_keys, self.n_values
        keys = np.argsort(self.rng.random((B, K)), axis=1)[:, :P]  # (B, P) distinct keys
        values = self.rng.integers(0, V, size=(B, P))  # (B, P)
        which = self.rng.integers(0, P, size=B)  # (B,)
        rows = np.arange(B)
        x = np.zeros((B, P + 1, K + V + 1))  # (B, T, F)
        steps = np.arange(P)[None, :]  # (1, P)
        x[rows[:, None], steps, keys] = 1.0
        x[rows[:, None], steps, K + values] = 1.0
        x[rows, P, keys[rows, which]] = 1.0
        x[:, P, K + V] = 1.0  # the query flag
        targets = np.zeros((B, P + 1), dtype=np.int64)
        targets[:, P] = values[rows, which]
        mask = np.zeros((B, P + 1), dtype=bool)
        mask[:, P] = True
        return Batch(x, targets, mask), keys, values, which

    def _batch(self, batch_size: int) -> Batch:
        return self.draw(batch_size)[0]

    def labels(self, inputs: np.ndarray) -> list[str]:
        """Readable steps of one example's inputs (T, F): ``"A:3"`` for a pair, ``"A?"`` for
        the query (keys are letters, values numbers)."""
        K = self.n_keys
        out = []
        for row in np.asarray(inputs):
            key = KEY_NAMES[int(row[:K].argmax())]
            if row[-1] > 0.5:
                out.append(f"{key}?")
            else:
                out.append(f"{key}:{int(row[K : K + self.n_values].argmax())}")
        return out

    def baseline_loss(self) -> float:
        return float(np.log(self.n_values))

    def describe(self) -> str:
        return (
            f"Associative recall: {self.n_pairs} pairs key:value (keys A.. of {self.n_keys}, "
            f"values 0..{self.n_values - 1}), one per step, then a key with '?': answer its "
            f"value. Guessing gives a loss of log({self.n_values}) = {self.baseline_loss():.3f}."
        )
