"""The IDSIA sequence-modelling lecture's two beam-search examples, searched by pyplay's own code.

**The prefix tree.** Words are phone sequences in a prefix tree (the slide names ARE, ART,
ARTIST, ANT, AN, AND; its green nodes are the word ends). A hypothesis starts at the root with
probability 1.0; at every frame each one moves to the successor nodes, its probability
multiplied by the decoder's softmax output for that phone given its history, so that each
node holds the accumulated probability of its prefix. A hypothesis in a final node may move
to itself once with the probability of EOS, after which it is finished; when the frames are
exhausted the result is the best hypothesis of all final nodes. This is
:class:`~pyplay.decode.beam.BeamSearch` under a
:class:`~pyplay.decode.lexicon.LexiconConstraint` (no separator: one word), its decoder a
:class:`~pyplay.decode.table_step.TableStep` holding the slide's numbers.

The slide gives frame 1 (A 0.4, AE 0.06, B 0.34) and frame 2 (after A: R 0.2, N 0.4; after
AE: N 0.5). Everything else is this module's completion, marked ``source="page"`` in
:data:`PHONE_TABLE`: the smallest tree that holds the slide's nodes (AE N and B are words, as
every leaf of a prefix tree ends a word), the rest of each row on one symbol outside the tree
(``OTHER``, which the lexicon never lets in), and frames 3 and 4 so that the words can end.

**DOCK BUYS MAN.** A word-level decoder (every number the page's own: the slide gives none)
whose first words favour DOCK BUYS, while only the last word makes DOG BITES MAN the more
probable sentence: greedy decoding (beam width 1) keeps DOCK BUYS and ends with the worse
sentence, a beam of width 2 or more finds the better one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from pyplay.decode.beam import BeamSearch
from pyplay.decode.lexicon import LexiconConstraint, PrefixTree
from pyplay.decode.table_step import TableStep

__all__ = [
    "EOS",
    "OTHER",
    "PHONES",
    "PHONE_FRAMES",
    "PHONE_TABLE",
    "PHONE_WORDS",
    "SENTENCE_DEFAULT",
    "SENTENCE_FRAMES",
    "SENTENCE_TABLE",
    "WORDS",
    "Given",
    "NodeValue",
    "node_values",
    "phone_search",
    "sentence_search",
]

EOS = "<eos>"
OTHER = "(other)"  # every phone a row gives no number for, lumped: never a tree edge
PHONES = ("A", "AE", "B", "R", "N", "E", "T", "I", "S", "D", EOS, OTHER)
PHONE_FRAMES = 4  # softmax frames searched: enough for the three-phone words and their EOS


@dataclass(frozen=True)
class Given:
    """One number of an example's table: ``p(symbol | history)`` and who gave it (``"slide"``
    or ``"page"``)."""

    history: tuple[str, ...]
    symbol: str
    p: float
    source: str


def _word(text: str) -> tuple[str, ...]:
    return tuple(text.split())


PHONE_WORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    *((_word(w), "slide") for w in ("A R E", "A R T", "A R T I S T", "A N T", "A N", "A N D")),
    (_word("AE N"), "page"),  # AE -> N is on the slide; the smallest tree ends a word there
    (_word("B"), "page"),  # B is on the slide with no successor: a one-phone word
)


def _givens(rows: list[tuple[str, str, float, str]], rest: str | None) -> tuple[Given, ...]:
    """Rows of (history, symbol, p, source), plus each history's rest on ``rest`` ("page")."""
    out = [Given(_word(h), s, p, src) for h, s, p, src in rows]
    if rest is not None:
        total: dict[tuple[str, ...], float] = defaultdict(float)
        for g in out:
            total[g.history] += g.p
        out += [Given(h, rest, round(1.0 - t, 12), "page") for h, t in total.items() if t < 1.0]
    return tuple(out)


PHONE_TABLE = _givens(
    [
        ("", "A", 0.4, "slide"), ("", "AE", 0.06, "slide"), ("", "B", 0.34, "slide"),
        ("A", "R", 0.2, "slide"), ("A", "N", 0.4, "slide"), ("AE", "N", 0.5, "slide"),
        ("B", EOS, 0.1, "page"),
        ("A R", "E", 0.3, "page"), ("A R", "T", 0.5, "page"),
        ("A N", EOS, 0.1, "page"), ("A N", "T", 0.2, "page"), ("A N", "D", 0.6, "page"),
        ("AE N", EOS, 0.7, "page"),
        ("A R E", EOS, 0.8, "page"), ("A R T", EOS, 0.6, "page"), ("A R T", "I", 0.3, "page"),
        ("A N T", EOS, 0.9, "page"), ("A N D", EOS, 0.9, "page"),
    ],
    rest=OTHER,
)  # fmt: skip

WORDS = ("DOCK", "DOG", "BUYS", "BITES", "MAN", EOS)
SENTENCE_FRAMES = 4  # three words and EOS


def _man_after(history: str, p: float) -> list[tuple[str, str, float, str]]:
    """MAN with probability ``p`` after ``history``, the rest evenly on the other words."""
    others = [w for w in WORDS if w not in ("MAN", EOS)]
    rest = round((1.0 - p) / len(others), 12)
    return [(history, "MAN", p, "page"), *((history, w, rest, "page") for w in others)]


SENTENCE_TABLE = _givens(
    [
        ("", "DOCK", 0.6, "page"), ("", "DOG", 0.4, "page"),
        ("DOCK", "BUYS", 0.7, "page"), ("DOCK", "BITES", 0.3, "page"),
        ("DOG", "BITES", 0.8, "page"), ("DOG", "BUYS", 0.2, "page"),
        *_man_after("DOCK BUYS", 0.4), *_man_after("DOG BITES", 0.9),
        *_man_after("DOCK BITES", 0.8), *_man_after("DOG BUYS", 0.5),
    ],
    rest=None,
)  # fmt: skip
SENTENCE_DEFAULT = {EOS: 1.0}  # after any three words the sentence ends


def _table(symbols: tuple[str, ...], givens: tuple[Given, ...], default: dict | None) -> TableStep:
    rows: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    for g in givens:
        rows[g.history][g.symbol] = g.p
    return TableStep(symbols, rows, default)


def phone_search(beam_width: int = 8) -> tuple[BeamSearch, TableStep, LexiconConstraint]:
    """The prefix-tree search of the slide, not yet stepped: the search, its table decoder and
    the lexicon (the tree) it runs under."""
    table = _table(PHONES, PHONE_TABLE, None)
    tree = PrefixTree.from_words(table.encode(w) for w, _ in PHONE_WORDS)
    eos = table.ids[EOS]
    lexicon = LexiconConstraint(tree, table.vocab_size, eos)
    search = BeamSearch(
        table, table.initial(), eos, eos, beam_width, PHONE_FRAMES,
        reorder=table.reorder, constraint=lexicon, vocab_size=table.vocab_size,
    )  # fmt: skip
    return search, table, lexicon


def sentence_search(beam_width: int) -> tuple[BeamSearch, TableStep]:
    """The DOCK BUYS MAN / DOG BITES MAN decoder searched with ``beam_width`` (1: greedy), run
    to the end."""
    table = _table(WORDS, SENTENCE_TABLE, SENTENCE_DEFAULT)
    eos = table.ids[EOS]
    search = BeamSearch(
        table, table.initial(), eos, eos, beam_width, SENTENCE_FRAMES,
        reorder=table.reorder, vocab_size=table.vocab_size,
    )  # fmt: skip
    search.run()
    return search, table


@dataclass(frozen=True)
class NodeValue:
    """What a tree node holds after the steps taken: the accumulated probability of the
    hypothesis that reached it (``p``, at frame ``step``, with the search's fate of it:
    "live", "outside_beam", "incomplete", ...), and, once it moved to itself with EOS, the
    finished probability ``ended`` (at frame ``ended_step``)."""

    p: float
    step: int
    status: str
    ended: float | None = None
    ended_step: int | None = None


def node_values(search: BeamSearch, eos: int) -> dict[tuple[int, ...], NodeValue]:
    """Every node reached so far (keyed by its prefix of symbol ids) with its
    :class:`NodeValue`, from the search's records. Candidates the decoder or the tree rule out
    (probability 0, "disallowed") reach no node."""
    out: dict[tuple[int, ...], NodeValue] = {}
    for record in search.history:
        for rank in range(len(record.candidates)):
            h = record.hypothesis(rank)
            if h.status in ("disallowed", "zero_probability"):
                continue
            p = math.exp(h.log_prob)
            if h.token == eos:
                if h.status == "eos":  # finished: the node moved to itself with EOS
                    before = out[h.tokens[:-1]]
                    out[h.tokens[:-1]] = NodeValue(
                        before.p, before.step, before.status, p, record.step
                    )
            else:
                out[h.tokens] = NodeValue(p, record.step, h.status)
    return out
