"""Next-value prediction on a column of numbers supplied by the user."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["MAX_VALUES", "NumberSeries", "parse_numbers"]

MAX_VALUES = 100_000


def parse_numbers(text: str) -> np.ndarray:
    """Numbers from text: one per line (or separated by commas / whitespace); blank lines and a
    non-numeric first line (a header) are skipped. Raises ValueError naming the bad line."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    values: list[float] = []
    for k, line in enumerate(text.splitlines(), start=1):
        for token in line.replace(",", " ").replace(";", " ").split():
            try:
                values.append(float(token))
            except ValueError:
                if k == 1 and not values:
                    break  # a header line
                raise ValueError(f"line {k}: {token!r} is not a number") from None
    return np.asarray(values, dtype=np.float64)


class NumberSeries(Task):
    """Predict the next value of a user's series from the values so far.

    The series is standardised (mean 0, standard deviation 1; ``mean`` and ``std`` are kept to
    map predictions back); batches are random windows of ``seq_len`` steps with targets shifted
    by one.

    Trivial baseline: predicting the mean, whose mean squared error on the standardised
    series is its variance, 1.
    """

    name = "series"
    title = "Your numbers"
    predicts_next_input = True
    input_kind = "real"
    output_kind = "real"
    input_size = 1
    output_size = 1

    def __init__(
        self, values: Any = None, seq_len: int = 20, rng: np.random.Generator | int | None = 0
    ) -> None:
        seq_len = check_int("seq_len", seq_len, min_value=1, max_value=10_000)
        if values is None:
            raise ValueError(
                f"values must be given: a column of numbers (at least {seq_len + 2}), got None"
            )
        x = check_array("values", values, ndim=1, layout="(N,)").astype(np.float64)
        if not seq_len + 2 <= x.size <= MAX_VALUES:
            raise ValueError(
                f"values must hold between seq_len + 2 = {seq_len + 2} and "
                f"{MAX_VALUES:,} numbers, got {x.size}"
            )
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
            mean, std = float(x.mean()), float(x.std())
        if not (np.isfinite(mean) and np.isfinite(std)):
            big = float(np.abs(x).max())
            raise ValueError(
                f"values must be numbers whose mean and spread a float64 can hold; these "
                f"overflow (largest magnitude {big:.3g}): scale them down, e.g. to thousands"
            )
        if std == 0.0:
            raise ValueError("values must not all be equal (nothing to predict)")
        super().__init__(rng, values=x.tolist(), seq_len=seq_len)
        self.seq_len, self.mean, self.std = seq_len, mean, std
        self.series = (x - self.mean) / std  # (N,)

    def _batch(self, batch_size: int) -> Batch:
        T = self.seq_len
        starts = self.rng.integers(0, self.series.size - T, size=batch_size)  # (B,)
        window = self.series[starts[:, None] + np.arange(T + 1)[None, :]]  # (B, T+1)
        return Batch(
            window[:, :-1, None], window[:, 1:, None], np.ones((batch_size, T), dtype=bool)
        )

    def baseline_loss(self) -> float:
        return 1.0

    def describe(self) -> str:
        return (
            f"Your series: {self.series.size} numbers (mean {self.mean:.4g}, standard "
            f"deviation {self.std:.4g}), standardised; predict each next value from the "
            "previous ones. Predicting the mean scores 1.0."
        )
