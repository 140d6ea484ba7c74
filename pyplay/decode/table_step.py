"""A decoder given as a table: the probability of every next symbol after every history.

A lecture's search example gives the decoder's softmax outputs as numbers, not as a network:
"after A, R has probability 0.2". :class:`TableStep` turns such a table into a
:class:`~pyplay.decode.step.StepFunction`, so that :class:`~pyplay.decode.beam.BeamSearch` and
:func:`~pyplay.decode.greedy.greedy_decode` (with or without a lexicon constraint) search it
exactly as they search a trained model:

.. math::

    \\ell_{n,k} = \\log p(y_t = k \\mid y_{<t}^{(n)}) = \\log \\mathrm{table}[y_{<t}^{(n)}][k],

where the history :math:`y_{<t}` excludes BOS. A symbol a row does not name has probability 0
(log-probability :math:`-\\infty`, which the search records as "zero_probability"); every row
sums to one. The decoder state is the list of the hypotheses' histories (``None`` for the
empty start), reordered by :meth:`TableStep.reorder` as the beam keeps its best rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ROW_SUM_TOL", "TableStep"]

ROW_SUM_TOL = 1e-9  # |sum(row) - 1| allowed for a row of the table


class TableStep:
    """Next-symbol probabilities looked up by history.

    Parameters
    ----------
    symbols : sequence of str
        The vocabulary, in id order (V names, all different).
    rows : mapping of tuple of str to mapping of str to float
        ``rows[history][symbol]``: the probability of ``symbol`` after ``history`` (a tuple of
        symbol names, ``()`` for the first step). Each row sums to one; unnamed symbols are 0.
    default : mapping of str to float, optional
        The row of every history ``rows`` does not list; ``None``: such a history is an error.

    Examples
    --------
    >>> step = TableStep(["a", "b", "<eos>"], {(): {"a": 0.7, "b": 0.3}}, {"<eos>": 1.0})
    >>> lp, state = step(np.array([2]), step.initial())
    >>> np.exp(lp).round(2).tolist(), state
    ([[0.7, 0.3, 0.0]], [()])
    """

    def __init__(
        self,
        symbols: Sequence[str],
        rows: Mapping[tuple[str, ...], Mapping[str, float]],
        default: Mapping[str, float] | None = None,
    ) -> None:
        names = list(symbols)
        if not names or not all(isinstance(s, str) for s in names):
            raise TypeError(f"symbols must be a non-empty sequence of str, got {symbols!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"symbols must all differ, got {names}")
        self.symbols = tuple(names)
        self.ids = {s: i for i, s in enumerate(self.symbols)}
        self._rows: dict[tuple[int, ...], np.ndarray] = {}
        for history, row in rows.items():
            ids = self.encode(history, f"rows key {history!r}")
            self._rows[ids] = self._log_row(row, f"rows[{history!r}]")
        self._default = None if default is None else self._log_row(default, "default")

    @property
    def vocab_size(self) -> int:
        return len(self.symbols)

    def encode(self, names: Sequence[str], what: str = "names") -> tuple[int, ...]:
        """The ids of symbol ``names``."""
        unknown = [s for s in names if s not in self.ids]
        if unknown:
            raise ValueError(f"{what} must use the symbols {list(self.symbols)}, got {unknown}")
        return tuple(self.ids[s] for s in names)

    def decode(self, ids: Sequence[int]) -> tuple[str, ...]:
        """The names of symbol ``ids``."""
        return tuple(self.symbols[int(i)] for i in ids)

    def _log_row(self, row: Mapping[str, float], what: str) -> np.ndarray:
        probs = np.zeros(self.vocab_size)  # (V,)
        for name, p in row.items():
            (k,) = self.encode([name], what)
            if not isinstance(p, int | float) or not 0.0 <= float(p) <= 1.0:
                raise ValueError(f"{what}[{name!r}] must be a probability in [0, 1], got {p!r}")
            probs[k] = float(p)
        if abs(probs.sum() - 1.0) > ROW_SUM_TOL:
            raise ValueError(f"{what} must sum to 1, got {probs.sum():.12g}")
        with np.errstate(divide="ignore"):  # log(0) = -inf: a symbol the row rules out
            out = np.log(probs)
        out.flags.writeable = False
        return out

    def row(self, history: Sequence[int]) -> np.ndarray:
        """(V,) log-probabilities of the next symbol after ``history`` (ids, BOS excluded)."""
        key = tuple(int(k) for k in history)
        found = self._rows.get(key, self._default)
        if found is None:
            raise ValueError(
                f"history must be one the table lists (no default row), got {self.decode(key)}"
            )
        return found

    def given(self, history: Sequence[int]) -> bool:
        """Whether ``rows`` lists ``history`` (else its row is the default)."""
        return tuple(int(k) for k in history) in self._rows

    # ------------------------------------------------------------------ the step protocol
    def initial(self) -> list[tuple[int, ...] | None]:
        """The decoder state of one source: a single empty history."""
        return [None]

    def __call__(self, tokens: np.ndarray, state: Any, /) -> tuple[np.ndarray, Any]:
        """Log-probabilities (N, V) after each history extended by its token (the first call
        receives BOS, which is not part of the history), and the extended histories."""
        histories = [
            () if h is None else (*h, int(k)) for h, k in zip(state, tokens.tolist(), strict=True)
        ]
        lp = np.stack([self.row(h) for h in histories])  # (N, V)
        return lp, histories

    @staticmethod
    def reorder(state: Any, index: np.ndarray) -> list[tuple[int, ...] | None]:
        """The histories of the kept rows ``index``."""
        return [state[int(i)] for i in index]
