"""Word sequences through the prefix tree, with a language model: the detail Wand's lecture skips.

The lecture: to recognise a sequence of words, "you propagate from each final node to the start
node of the tree. You may have to incorporate linguistic probabilities, and you get several
hypotheses per node (with different word histories)". Here a hypothesis is a letter sequence
under a :class:`~pyplay.decode.lexicon.LexiconConstraint` with a word separator ``␣`` (the word
end): after a word's last letter, ``␣`` leads back to the start node and ``<eos>`` ends the
sentence. Its probability is the product of

* the acoustic model's output for its symbol at each frame, :math:`y^t_k` (one row per frame,
  as the outputs of a recogniser that reads the frames; the same row for every hypothesis), and
* at every word end (``␣`` or ``<eos>``), the language model's probability of the word given
  the words before it, :math:`P(w_m \\mid w_1 \\dots w_{m-1})`,

.. math::

    \\log p(y) = \\sum_t \\log y^t_{y_t} + \\sum_m \\log P(w_m \\mid w_{<m}).

Two hypotheses with different word histories can sit at the same node of the tree (after DOG
BITES and after DOCK BUYS, both at the start node and then in M, M A, M A N): the search keeps
both unless a count per node (:class:`~pyplay.decode.pruning.Pruning`) allows one only.

**The example** (every number the page's own; the lecture names DOCK BUYS MAN and DOG BITES MAN
but gives no probabilities): the frames favour DOCK BUYS a little, each of its six uncertain
frames 0.5 against 0.4; the language model makes MAN far likelier after DOG BITES (0.9) than
after DOCK BUYS (0.1). With two hypotheses per node the result is DOG BITES MAN; with one per
node, DOG BITES is dropped at the start node, before MAN is heard, and the result is DOCK BUYS
MAN: the lecture's warning that too narrow a search misses the better sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pyplay.decode.beam import BeamSearch
from pyplay.decode.lexicon import LexiconConstraint, PrefixTree
from pyplay.decode.pruning import Pruning

__all__ = [
    "EOS",
    "FRAMES",
    "LM",
    "OTHER",
    "SENTENCE_WORDS",
    "SEP",
    "SYMBOLS",
    "WordHistoryStep",
    "history_search",
    "words_of",
]

SEP, EOS, OTHER = "␣", "<eos>", "(other)"  # the word end (a visible space), EOS, the rest
SENTENCE_WORDS = ("DOG", "DOCK", "BITES", "BUYS", "MAN")
LETTERS = tuple(sorted({c for w in SENTENCE_WORDS for c in w}))
SYMBOLS = (*LETTERS, SEP, EOS, OTHER)


def _frame(**p: float) -> dict[str, float]:
    """A frame's row: the named symbols ("end" is ``␣``, "eos" ``<eos>``), the rest on
    OTHER."""
    row = {{"end": SEP, "eos": EOS}.get(k, k): v for k, v in p.items()}
    row[OTHER] = round(1.0 - sum(row.values()), 12)
    return row


FRAMES: tuple[dict[str, float], ...] = (  # y^t_k, t = 1..14 (the page's numbers)
    _frame(D=0.9), _frame(O=0.9),
    _frame(G=0.4, C=0.5), _frame(end=0.4, K=0.5),  # DOG | or DOCK
    _frame(B=0.4, end=0.5), _frame(I=0.4, B=0.5),  # B or |, I or B
    _frame(T=0.4, U=0.5), _frame(E=0.4, Y=0.5),  # BITES or BUYS
    _frame(S=0.9), _frame(end=0.9),
    _frame(M=0.9), _frame(A=0.9), _frame(N=0.9), _frame(eos=0.9),
)  # fmt: skip

LM: dict[tuple[str, ...], dict[str, float]] = {  # P(word | words before), the page's numbers
    (): {"DOG": 0.5, "DOCK": 0.5},
    ("DOG",): {"BITES": 0.6, "BUYS": 0.4},
    ("DOCK",): {"BUYS": 0.6, "BITES": 0.4},
    ("DOG", "BITES"): {"MAN": 0.9},
    ("DOCK", "BUYS"): {"MAN": 0.1},
}


class WordHistoryStep:
    """A step function: the frame's acoustic row plus, at a word end, the language model's
    log-probability of the word (module docstring). Rows do not sum to one (the search runs
    with ``check_normalised=False``)."""

    def __init__(
        self,
        symbols: Sequence[str],
        frames: Sequence[Mapping[str, float]],
        lm: Mapping[tuple[str, ...], Mapping[str, float]],
        sep: str = SEP,
        eos: str = EOS,
    ) -> None:
        self.symbols = tuple(symbols)
        self.ids = {s: i for i, s in enumerate(self.symbols)}
        V = len(self.symbols)
        with np.errstate(divide="ignore"):
            self.frames = np.log(
                np.array([[f.get(s, 0.0) for s in self.symbols] for f in frames])
            )  # (T, V)
        self.lm, self.sep, self.eos = lm, self.ids[sep], self.ids[eos]
        self.vocab_size = V

    def initial(self) -> list[tuple[int, ...] | None]:
        return [None]

    def lm_log_prob(self, history: Sequence[int]) -> float:
        """:math:`\\log P(w_m \\mid w_{<m})` of the word ``history`` ends with (-inf if none)."""
        words = words_of([self.symbols[k] for k in history])
        if not words:
            return -np.inf
        p = self.lm.get(tuple(words[:-1]), {}).get(words[-1], 0.0)
        return float(np.log(p)) if p > 0 else -np.inf

    def __call__(self, tokens: np.ndarray, state: Any, /) -> tuple[np.ndarray, Any]:
        histories = [
            () if h is None else (*h, int(k)) for h, k in zip(state, tokens.tolist(), strict=True)
        ]
        rows = []
        for h in histories:
            t = len(h)  # frames read so far; this step reads frame t + 1
            row = (
                self.frames[t].copy() if t < len(self.frames) else np.full(self.vocab_size, -np.inf)
            )
            row[[self.sep, self.eos]] += self.lm_log_prob(h)  # the word h ends with, if it ends
            rows.append(row)
        return np.stack(rows), histories  # (N, V)

    @staticmethod
    def reorder(state: Any, index: np.ndarray) -> list[tuple[int, ...] | None]:
        return [state[int(i)] for i in index]


def words_of(symbols: Sequence[str]) -> list[str]:
    """The words of a letter sequence: split at ``␣``, ``<eos>`` dropped, empty pieces kept
    out ("D O G ␣ B" -> ["DOG", "B"])."""
    text = "".join(s for s in symbols if s != EOS)
    return [w for w in text.split(SEP) if w]


def history_search(beam_width: int = 4, per_node: int | None = None) -> BeamSearch:
    """The DOG BITES MAN / DOCK BUYS MAN search over the prefix tree of
    :data:`SENTENCE_WORDS`, not yet stepped (``per_node``: most hypotheses per node)."""
    step = WordHistoryStep(SYMBOLS, FRAMES, LM)
    tree = PrefixTree.from_words([[step.ids[c] for c in w] for w in SENTENCE_WORDS])
    lexicon = LexiconConstraint(tree, step.vocab_size, step.eos, separator=step.sep)
    return BeamSearch(
        step, step.initial(), step.eos, step.eos, beam_width, len(FRAMES),
        reorder=step.reorder, constraint=lexicon, vocab_size=step.vocab_size,
        check_normalised=False, pruning=Pruning(per_node=per_node),
    )  # fmt: skip
