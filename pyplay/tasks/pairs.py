"""Sequence-to-sequence tasks: source/target pairs, their vocabularies and padded batches.

Every pair task draws ``(source, target)`` token sequences from its own seeded Generator and
turns them into a :class:`PairBatch` for an encoder-decoder:

- ``src`` (B, S): source ids padded with ``PAD``, and ``src_lengths`` (B,);
- ``tgt_in`` (B, U): ``BOS y_1 ... y_n`` (teacher forcing: the decoder reads the previous
  target), ``tgt_out`` (B, U): ``y_1 ... y_n EOS`` (what it must predict), and ``tgt_mask``
  (B, U), the positions that count (``n + 1`` per row).

Ids 0, 1, 2 are ``PAD``, ``BOS`` and ``EOS`` in every :class:`Vocab`. :func:`parse_pairs` reads a
learner's own tab-separated pairs with clear messages when they do not fit.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_int

__all__ = [
    "BOS",
    "EOS",
    "MAX_PAIRS",
    "MAX_PAIRS_TEXT",
    "MAX_PAIR_CHARS",
    "PAD",
    "PairBatch",
    "PairTask",
    "PointerBatch",
    "UserPairs",
    "Vocab",
    "exact_match",
    "output_scores",
    "parse_pairs",
    "reverse_sources",
    "trace_ids",
]

PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")
MAX_PAIRS = 20_000
MAX_PAIR_CHARS = 200
MAX_PAIRS_TEXT = MAX_PAIRS * (2 * MAX_PAIR_CHARS + 2)  # characters of the most pairs allowed


@dataclass(frozen=True)
class Vocab:
    """Symbols after the three specials: id ``k + 3`` is ``symbols[k]``.

    ``sep`` joins decoded symbols ("" for characters, " " for words).
    """

    symbols: tuple[str, ...]
    sep: str = ""

    def __post_init__(self) -> None:
        if len(set(self.symbols)) != len(self.symbols):
            raise ValueError("symbols must be distinct")
        object.__setattr__(self, "_index", {s: k + 3 for k, s in enumerate(self.symbols)})

    def __len__(self) -> int:
        return len(self.symbols) + 3

    def encode(self, tokens: Iterable[str], name: str = "tokens") -> list[int]:
        """Ids of ``tokens``; an unknown token is refused with a ValueError naming it."""
        index: dict[str, int] = self._index  # type: ignore[attr-defined]
        ids = []
        for tok in tokens:
            if tok not in index:
                shown = "".join(self.symbols[:40]) if not self.sep else " ".join(self.symbols[:20])
                raise ValueError(
                    f"{name} contains {tok!r}, which is not in the vocabulary ({shown})"
                )
            ids.append(index[tok])
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` up to the first ``EOS``, skipping ``PAD`` and ``BOS``."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS:
                break
            if i >= 3:
                out.append(self.symbols[i - 3])
        return self.sep.join(out)

    def split(self, text: str) -> list[str]:
        """``text`` as tokens: characters, or words when ``sep`` is a space."""
        return text.split() if self.sep == " " else list(text)


@dataclass(frozen=True)
class PairBatch:
    """A padded batch of pairs (see the module docstring for the layout)."""

    src: np.ndarray  # (B, S) int64
    src_lengths: np.ndarray  # (B,) int64
    tgt_in: np.ndarray  # (B, U) int64
    tgt_out: np.ndarray  # (B, U) int64
    tgt_mask: np.ndarray  # (B, U) bool

    @staticmethod
    def of(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> PairBatch:
        """Pad ``(source ids, target ids)`` pairs (ids without BOS/EOS)."""
        B = len(pairs)
        S = max(len(s) for s, _ in pairs)
        U = max(len(t) for _, t in pairs) + 1
        src = np.full((B, S), PAD, dtype=np.int64)
        tgt_in = np.full((B, U), PAD, dtype=np.int64)
        tgt_out = np.full((B, U), PAD, dtype=np.int64)
        for b, (s, t) in enumerate(pairs):
            src[b, : len(s)] = s
            tgt_in[b, : len(t) + 1] = [BOS, *t]
            tgt_out[b, : len(t) + 1] = [*t, EOS]
        src_lengths = np.array([len(s) for s, _ in pairs], dtype=np.int64)  # (B,)
        tgt_mask = np.arange(U)[None, :] <= np.array([len(t) for _, t in pairs])[:, None]
        return PairBatch(src, src_lengths, tgt_in, tgt_out, tgt_mask)


def reverse_sources(src: np.ndarray, src_lengths: np.ndarray) -> np.ndarray:
    """Each row's first ``src_lengths[b]`` ids of ``src`` (B, S) reversed, the padding left in
    place (Sutskever et al. 2014: a model may read its sources backwards)."""
    S = src.shape[1]
    t = np.arange(S)[None, :]  # (1, S)
    n = np.asarray(src_lengths)[:, None]  # (B, 1)
    idx = np.where(t < n, n - 1 - t, t)  # (B, S)
    return np.take_along_axis(src, idx, axis=1)


@dataclass(frozen=True)
class PointerBatch:
    """A padded batch for a pointer network whose targets are positions of its source
    (:class:`~pyplay.tasks.hull.ConvexHull`): ``targets`` (B, U) the positions to point at in
    order (0 past a row's end), ``mask`` (B, U) the steps that count, ``end`` (B,) each row's
    end position (pointing at it ends the output; None when every row points at all its
    positions)."""

    src: np.ndarray  # (B, S) int64 ids, or (B, S, F) float
    src_lengths: np.ndarray  # (B,) int64
    targets: np.ndarray  # (B, U) int64
    mask: np.ndarray  # (B, U) bool
    end: np.ndarray | None = None  # (B,) int64


def exact_match(predicted: Sequence[Sequence[int]], batch: PairBatch) -> float:
    """Fraction of rows whose predicted ids (up to EOS) equal the target exactly."""
    return output_scores(predicted, batch)[0]


def output_scores(predicted: Sequence[Sequence[int]], batch: PairBatch) -> tuple[float, float]:
    """Exact match and per-token accuracy of decoded ids (each row up to its first EOS):
    the fraction of rows equal to their target, and the mean over rows of the fraction of the
    target's tokens written at their place (a missing token is wrong; tokens after the
    target's end cost nothing here, only in exact match)."""
    if len(predicted) != batch.tgt_out.shape[0]:
        raise ValueError(
            "predicted must hold one output per row of the batch "
            f"({batch.tgt_out.shape[0]}), got {len(predicted)}"
        )
    exact = token = 0.0
    for b, pred in enumerate(predicted):
        n = int(batch.tgt_mask[b].sum()) - 1  # target length without EOS
        want = batch.tgt_out[b, :n]  # (n,)
        got = [int(i) for i in pred]
        if EOS in got:
            got = got[: got.index(EOS)]
        exact += got == want.tolist()
        m = min(len(got), n)
        token += float((np.asarray(got[:m]) == want[:m]).sum()) / max(n, 1)
    rows = max(len(predicted), 1)
    return exact / rows, token / rows


class PairTask(abc.ABC):
    """Base of the sequence-to-sequence tasks: subclasses set ``src_vocab``/``tgt_vocab`` and
    implement ``_pair`` (one example as token lists) and ``describe``."""

    name: str = ""
    src_vocab: Vocab
    tgt_vocab: Vocab

    def __init__(self, rng: np.random.Generator | int | None, **config: Any) -> None:
        self.rng = as_generator(rng)
        self.config: dict[str, Any] = config

    @abc.abstractmethod
    def _pair(self) -> tuple[list[str], list[str]]:
        """One ``(source tokens, target tokens)`` example drawn from ``self.rng``."""

    @abc.abstractmethod
    def describe(self) -> str:
        """A paragraph for the playground's help text."""

    def example(self) -> tuple[str, str]:
        """One example as text."""
        s, t = self._pair()
        return self.src_vocab.sep.join(s), self.tgt_vocab.sep.join(t)

    def encode_pair(
        self, source: Sequence[str], target: Sequence[str]
    ) -> tuple[list[int], list[int]]:
        return self.src_vocab.encode(source, "source"), self.tgt_vocab.encode(target, "target")

    def batch(self, batch_size: int) -> PairBatch:
        """A fresh padded batch of ``batch_size`` pairs."""
        B = check_int("batch_size", batch_size, min_value=1, max_value=65536)
        return PairBatch.of([self.encode_pair(*self._pair()) for _ in range(B)])

    def _pair_of_length(self, length: int) -> tuple[list[str], list[str]]:
        """One example whose source has exactly ``length`` tokens (tasks whose sources are
        random strings of a random length; the others refuse)."""
        raise TypeError(
            f"the {self.name or type(self).__name__} task cannot draw sources of a chosen "
            "length (reversal, copy and sorting can)"
        )

    def pairs_of_length(self, count: int, length: int) -> list[tuple[list[int], list[int]]]:
        """``count`` fresh pairs of ids (without BOS/EOS) whose sources all have exactly
        ``length`` tokens, in or outside the task's own range of lengths."""
        count = check_int("count", count, min_value=1, max_value=65536)
        n = check_int("length", length, min_value=1, max_value=MAX_PAIR_CHARS)
        return [self.encode_pair(*self._pair_of_length(n)) for _ in range(count)]


def parse_pairs(text: str, max_pairs: int = MAX_PAIRS) -> list[tuple[str, str]]:
    """Read ``source<TAB>target`` lines; blank lines are skipped.

    Raises ValueError naming the first line that has no tab, an empty side, or more than
    ``MAX_PAIR_CHARS`` characters on a side, and when there are no pairs or too many.
    """
    if not isinstance(text, str):
        raise TypeError(f"pairs must be text (str), got {type(text).__name__}")
    pairs = []
    # lines end at \n, \r\n or \r only: str.splitlines would also split at U+2028 and other
    # separators inside a line, and the message would then name the wrong line
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        tabs = line.count("\t")
        if tabs != 1:
            got = "no tab" if tabs == 0 else f"{tabs} tabs"
            raise ValueError(
                f"line {n} must be 'source<TAB>target' with one tab, got {got} in {line[:40]!r}"
            )
        src, tgt = (part.strip() for part in line.split("\t"))
        if not src or not tgt:
            raise ValueError(f"line {n} must have text on both sides of the tab, got {line[:40]!r}")
        if max(len(src), len(tgt)) > MAX_PAIR_CHARS:
            raise ValueError(
                f"line {n} must have at most {MAX_PAIR_CHARS} characters per side, "
                f"got {max(len(src), len(tgt))}"
            )
        pairs.append((src, tgt))
    if not pairs:
        raise ValueError("pairs must hold at least one 'source<TAB>target' line, got none")
    if len(pairs) > max_pairs:
        raise ValueError(f"pairs must be at most {max_pairs} lines, got {len(pairs)}")
    return pairs


class UserPairs(PairTask):
    """The learner's own pairs (character level), drawn uniformly with replacement."""

    name = "pairs"

    def __init__(self, text: str, rng: np.random.Generator | int | None = 0) -> None:
        pairs = parse_pairs(text)
        super().__init__(rng, text=text)
        self.pairs = pairs
        self.src_vocab = Vocab(tuple(sorted({c for s, _ in pairs for c in s})))
        self.tgt_vocab = Vocab(tuple(sorted({c for _, t in pairs for c in t})))

    def _pair(self) -> tuple[list[str], list[str]]:
        s, t = self.pairs[int(self.rng.integers(len(self.pairs)))]
        return list(s), list(t)

    def describe(self) -> str:
        return (
            f"Your own {len(self.pairs)} pairs, read character by character "
            f"({len(self.src_vocab) - 3} source and {len(self.tgt_vocab) - 3} target symbols)."
        )


def trace_ids(name: str, ids: Any, vocab_size: int, source: bool) -> np.ndarray:
    """One pair's ids for a step-by-step trace: a source holds symbol ids 3..V-1, at least
    one; a target any ids but EOS (may be empty: the trace adds EOS's step itself)."""
    if isinstance(ids, list | tuple) and not ids:
        ids = np.zeros(0, dtype=np.int64)  # (0,) an empty list is float to NumPy
    arr = check_array(name, ids, ndim=1, kind="i", layout="(n,) token ids")
    if arr.size == 0 and source:
        raise ValueError(f"{name} must hold at least one token id, got none")
    low, what = (3, "symbol ids") if source else (0, "ids")
    if arr.size and (arr.min() < low or arr.max() >= vocab_size):
        raise ValueError(
            f"{name} must hold {what} {low}..{vocab_size - 1}, got min {int(arr.min())} and "
            f"max {int(arr.max())}"
        )
    if not source and np.any(arr == EOS):
        raise ValueError(f"{name} must not hold EOS ({EOS}): the trace adds its step itself")
    return arr
