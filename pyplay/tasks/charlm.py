"""Character-level language model on a small public-domain text, or on the user's own text."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources

import numpy as np

from pyplay._checks import check_int
from pyplay.tasks.base import Batch, Task

__all__ = ["MAX_TEXT_CHARS", "MAX_VOCAB", "CharLM", "bundled_text"]

MAX_TEXT_CHARS = 1_000_000
MAX_VOCAB = 256


def bundled_text() -> str:
    """The opening chapter of Lewis Carroll's *Alice's Adventures in Wonderland* (1865)."""
    return resources.files("pyplay.tasks").joinpath("data/alice.txt").read_text("utf-8")


class CharLM(Task):
    """Predict the next character of a text, at every position.

    The vocabulary is the sorted set of distinct characters. :meth:`batch` draws random windows
    (inputs ``x[k:k+T]``, targets ``x[k+1:k+T+1]``); :meth:`stream` walks the text in
    consecutive chunks, one cursor per batch row, for truncated backpropagation through time.

    Trivial baseline: the unigram model (each character's frequency, ignoring context), whose
    cross-entropy is the entropy of the character distribution.
    """

    name = "charlm"
    title = "Character model"
    predicts_next_input = True

    def __init__(
        self, text: str | None = None, seq_len: int = 32, rng: np.random.Generator | int | None = 0
    ) -> None:
        seq_len = check_int("seq_len", seq_len, min_value=1, max_value=10_000)
        if text is not None:
            if not isinstance(text, str):
                raise TypeError(f"text must be a str, got {type(text).__name__}")
            if len(text) > MAX_TEXT_CHARS:
                raise ValueError(
                    f"text must have at most {MAX_TEXT_CHARS:,} characters, got {len(text):,}"
                )
            if len(text) < seq_len + 2:
                raise ValueError(
                    f"text must have at least seq_len + 2 = {seq_len + 2} "
                    f"characters, got {len(text)}"
                )
        super().__init__(rng, text=text, seq_len=seq_len)
        self.text = bundled_text() if text is None else text
        self.seq_len = seq_len
        self.vocab = sorted(set(self.text))
        if len(self.vocab) > MAX_VOCAB:
            raise ValueError(
                f"text must use at most {MAX_VOCAB} distinct characters, got {len(self.vocab)}"
            )
        if len(self.vocab) < 2:
            raise ValueError(f"text must use at least 2 distinct characters, got {len(self.vocab)}")
        self._index = {ch: k for k, ch in enumerate(self.vocab)}
        self.input_size = self.output_size = len(self.vocab)
        self.ids = self.encode(self.text)  # (N,)

    def encode(self, text: str) -> np.ndarray:
        """Character ids of ``text``; an unknown character raises a ValueError naming it."""
        try:
            return np.fromiter((self._index[ch] for ch in text), dtype=np.int64, count=len(text))
        except KeyError as err:
            raise ValueError(
                f"text contains the character {err.args[0]!r}, which is not in "
                "the model's vocabulary"
            ) from None

    def decode(self, ids: np.ndarray) -> str:
        """The text of a sequence of character ids."""
        return "".join(self.vocab[int(k)] for k in np.asarray(ids).reshape(-1))

    def _batch(self, batch_size: int) -> Batch:
        T = self.seq_len
        starts = self.rng.integers(0, len(self.ids) - T - 1, size=batch_size)  # (B,)
        idx = starts[:, None] + np.arange(T + 1)[None, :]  # (B, T+1)
        window = self.ids[idx]  # (B, T+1)
        return Batch(window[:, :-1], window[:, 1:], np.ones((batch_size, T), dtype=bool))

    def stream(self, batch_size: int) -> Iterator[Batch]:
        """Endless consecutive chunks: row b continues where it stopped in the previous batch.

        The rows start evenly spread over the text and wrap around at its end.
        """
        B = check_int("batch_size", batch_size, min_value=1)
        T, N = self.seq_len, len(self.ids)
        cursors = (np.arange(B) * (N // B)) % (N - T - 1)  # (B,)
        while True:
            idx = cursors[:, None] + np.arange(T + 1)[None, :]  # (B, T+1)
            window = self.ids[idx % N]  # (B, T+1)
            yield Batch(window[:, :-1], window[:, 1:], np.ones((B, T), dtype=bool))
            cursors = (cursors + T) % N

    def baseline_loss(self) -> float:
        counts = np.bincount(self.ids.astype(np.intp), minlength=len(self.vocab))  # wasm32: intp
        p = counts / len(self.ids)
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    def describe(self) -> str:
        source = (
            "the opening of Alice's Adventures in Wonderland"
            if self.config["text"] is None
            else "your text"
        )
        return (
            f"Character model: read {source} ({len(self.text):,} characters, "
            f"{len(self.vocab)} distinct) and predict each next character. Counting "
            f"character frequencies alone scores {self.baseline_loss():.3f}."
        )
