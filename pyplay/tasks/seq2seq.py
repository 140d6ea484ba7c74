"""Built-in sequence-to-sequence tasks (seeded, small enough to train in a browser).

- :class:`Reversal`: write the source backwards (attention's classic win on long inputs);
- :class:`VariableCopy`: copy a source of random length;
- :class:`Sorting`: sort digits, as values or as the source positions in sorted order (the
  pointer network's output);
- :class:`DateFormat`: "3 March 1999", "March 3, 1999", "03/03/1999" -> "1999-03-03";
- :class:`Translation`: English -> French on a bundled corpus of short phrases.
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from importlib import resources

import numpy as np

from pyplay._checks import check_choice, check_int
from pyplay.tasks.pairs import PairTask, Vocab, parse_pairs

__all__ = ["PAIR_TASKS", "DateFormat", "Reversal", "Sorting", "Translation", "VariableCopy"]

LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")
DIGITS = tuple("0123456789")
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


class _Symbols(PairTask):
    """Shared by the tasks over random strings of ``n_symbols`` letters (their constructor)."""

    def __init__(
        self,
        n_symbols: int = 8,
        min_len: int = 4,
        max_len: int = 12,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        n_symbols = check_int("n_symbols", n_symbols, min_value=2, max_value=len(LETTERS))
        min_len = check_int("min_len", min_len, min_value=1, max_value=200)
        max_len = check_int("max_len", max_len, min_value=min_len, max_value=200)
        super().__init__(rng, n_symbols=n_symbols, min_len=min_len, max_len=max_len)
        self.n_symbols, self.min_len, self.max_len = n_symbols, min_len, max_len
        self.src_vocab = self.tgt_vocab = Vocab(LETTERS[:n_symbols])

    def _pair(self) -> tuple[list[str], list[str]]:
        return self._pair_of_length(int(self.rng.integers(self.min_len, self.max_len + 1)))

    def _letters(self, n: int) -> list[str]:
        return [LETTERS[i] for i in self.rng.integers(0, self.n_symbols, size=n)]


class Reversal(_Symbols):
    """Reverse a random string: ``abcd -> dcba``. Without attention the encoder must squeeze the
    whole string into one state; with it the decoder looks up the mirrored position."""

    name = "reversal"

    def _pair_of_length(self, length: int) -> tuple[list[str], list[str]]:
        s = self._letters(length)
        return s, s[::-1]

    def describe(self) -> str:
        return (
            f"Reversal: read {self.min_len}-{self.max_len} letters (of {self.n_symbols}) "
            "and write them backwards."
        )


class VariableCopy(_Symbols):
    """Copy a random string of random length: ``abcd -> abcd``."""

    name = "copy_var"

    def _pair_of_length(self, length: int) -> tuple[list[str], list[str]]:
        s = self._letters(length)
        return s, list(s)

    def describe(self) -> str:
        return f"Copy: read {self.min_len}-{self.max_len} letters and write them again."


class Sorting(PairTask):
    """Sort random digits. ``output="values"``: ``3 1 2 -> 1 2 3``; ``output="positions"``:
    the source positions (0-based) in sorted order, ``3 1 2 -> 1 2 0``: what a pointer network
    outputs (ties keep source order)."""

    name = "sorting"

    def __init__(
        self,
        min_len: int = 3,
        max_len: int = 8,
        output: str = "positions",
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        min_len = check_int("min_len", min_len, min_value=1, max_value=100)
        max_len = check_int("max_len", max_len, min_value=min_len, max_value=100)
        output = check_choice("output", output, ("values", "positions"))
        super().__init__(rng, min_len=min_len, max_len=max_len, output=output)
        self.min_len, self.max_len, self.output = min_len, max_len, output
        self.src_vocab = Vocab(DIGITS, sep=" ")
        positions = tuple(str(k) for k in range(max_len))
        self.tgt_vocab = Vocab(DIGITS if output == "values" else positions, sep=" ")

    def _pair(self) -> tuple[list[str], list[str]]:
        return self._pair_of_length(int(self.rng.integers(self.min_len, self.max_len + 1)))

    def _pair_of_length(self, length: int) -> tuple[list[str], list[str]]:
        if self.output == "positions" and length > self.max_len:
            raise ValueError(
                f"length must be at most max_len ({self.max_len}) when output='positions' "
                f"(the target vocabulary holds positions 0-{self.max_len - 1}), got {length}"
            )
        values = self.rng.integers(0, 10, size=length)  # (n,)
        order = np.argsort(values, kind="stable")  # (n,)
        target = values[order] if self.output == "values" else order
        return [str(v) for v in values], [str(v) for v in target]

    def baseline_loss(self) -> float:
        """The loss of a uniform guess per counted step: over the n source positions
        (``"positions"``, a pointer network's: E[n log n] / E[n] for n uniform in
        min_len..max_len), or over the target vocabulary (``"values"``)."""
        if self.output == "values":
            return float(np.log(len(self.tgt_vocab)))
        n = np.arange(self.min_len, self.max_len + 1)  # (lengths,)
        return float((n * np.log(n)).sum() / n.sum())

    def describe(self) -> str:
        what = "the digits in order" if self.output == "values" else "where each sorted digit is"
        return f"Sorting: read {self.min_len}-{self.max_len} digits and output {what}."


class DateFormat(PairTask):
    """Normalise a date written in one of several human formats to ISO 8601 (character level).

    Formats: ``3 March 1999``, ``March 3, 1999``, ``03/03/1999`` (day first), ``3 Mar 1999``;
    years 1900-2099.
    """

    name = "dates"
    FORMATS = ("{d} {month} {y}", "{month} {d}, {y}", "{dd}/{mm}/{y}", "{d} {mon} {y}")

    def __init__(self, rng: np.random.Generator | int | None = 0) -> None:
        super().__init__(rng)
        chars = sorted({c for m in MONTHS for c in m} | set(DIGITS) | set(" ,/"))
        self.src_vocab = Vocab(tuple(chars))
        self.tgt_vocab = Vocab((*DIGITS, "-"))

    def _pair(self) -> tuple[list[str], list[str]]:
        start = datetime.date(1900, 1, 1).toordinal()
        end = datetime.date(2099, 12, 31).toordinal()
        date = datetime.date.fromordinal(int(self.rng.integers(start, end + 1)))
        fmt = self.FORMATS[int(self.rng.integers(len(self.FORMATS)))]
        month = MONTHS[date.month - 1]
        text = fmt.format(
            d=date.day,
            dd=f"{date.day:02d}",
            mm=f"{date.month:02d}",
            y=date.year,
            month=month,
            mon=month[:3],
        )
        return list(text), list(date.isoformat())

    def describe(self) -> str:
        return "Dates: rewrite '3 March 1999', 'March 3, 1999' or '03/03/1999' as 1999-03-03."


@lru_cache(maxsize=1)
def _phrases() -> tuple[tuple[str, str], ...]:
    text = resources.files("pyplay.tasks").joinpath("data/phrases_en_fr.tsv").read_text("utf-8")
    return tuple(parse_pairs(text))


class Translation(PairTask):
    """English -> French on a bundled corpus of 192 short phrases (word level): six subjects,
    four verbs conjugated in the present, eight objects (``she sees a cat -> elle voit un
    chat``). Small enough to learn in a minute, regular enough to see attention align words.
    ``held_out`` phrases (chosen by the seed) are kept for testing, never drawn by ``batch``.
    """

    name = "translation"

    def __init__(self, held_out: int = 24, rng: np.random.Generator | int | None = 0) -> None:
        pairs = _phrases()
        held_out = check_int("held_out", held_out, min_value=0, max_value=len(pairs) - 1)
        super().__init__(rng, held_out=held_out)
        order = np.random.default_rng(12345).permutation(len(pairs))  # fixed split
        self.test_pairs = [pairs[i] for i in order[:held_out]]
        self.train_pairs = [pairs[i] for i in order[held_out:]]
        self.src_vocab = Vocab(tuple(sorted({w for s, _ in pairs for w in s.split()})), sep=" ")
        self.tgt_vocab = Vocab(tuple(sorted({w for _, t in pairs for w in t.split()})), sep=" ")

    def _pair(self) -> tuple[list[str], list[str]]:
        s, t = self.train_pairs[int(self.rng.integers(len(self.train_pairs)))]
        return s.split(), t.split()

    def describe(self) -> str:
        return (
            f"Translation: English to French on {len(self.train_pairs)} short phrases "
            f"({len(self.test_pairs)} more held out for testing)."
        )


PAIR_TASKS: dict[str, type[PairTask]] = {
    "reversal": Reversal,
    "copy_var": VariableCopy,
    "sorting": Sorting,
    "dates": DateFormat,
    "translation": Translation,
}
