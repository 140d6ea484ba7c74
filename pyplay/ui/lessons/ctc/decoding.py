"""The CTC lesson's three decoders on the example on screen: best path, prefix beam search and
lexicon (prefix-tree) beam search, each with its top hypotheses and log-probabilities. No
Panel here: :mod:`pyplay.ui.lessons.ctc.decoding_view` draws it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pyplay.decode.ctc_decode import ctc_best_path, ctc_prefix_beam_search
from pyplay.decode.ctc_lexicon import ctc_lexicon_beam_search

__all__ = ["MAX_WORDS", "MAX_WORD_LEN", "SHOWN", "Decodings", "decode_all", "parse_lexicon"]

MAX_WORDS = 40  # words a typed lexicon may hold
MAX_WORD_LEN = 12  # symbols per word
SHOWN = 5  # hypotheses listed per decoder


def parse_lexicon(text: str, symbols: str) -> list[tuple[int, ...]]:
    """The words of ``text`` (separated by spaces or commas, case ignored) as label ids
    (symbol ``symbols[i]`` is label ``i + 1``; 0 is the blank).

    Raises ValueError naming the lexicon, what was expected and what was given.
    """
    if not isinstance(text, str):
        raise TypeError(f"the lexicon must be text, got {type(text).__name__}")
    words = [w for w in re.split(r"[\s,]+", text.strip().upper()) if w]
    if not words:
        raise ValueError(f"the lexicon needs at least one word over {', '.join(symbols)}")
    if len(words) > MAX_WORDS:
        raise ValueError(f"the lexicon may hold at most {MAX_WORDS} words, got {len(words)}")
    out = []
    for word in words:
        bad = sorted({c for c in word if c not in symbols})
        if bad:
            raise ValueError(
                f"the word {word!r} uses {', '.join(bad)}: words are made of the task's "
                f"symbols {', '.join(symbols)}"
            )
        if len(word) > MAX_WORD_LEN:
            raise ValueError(
                f"words may be at most {MAX_WORD_LEN} symbols long, got {word!r} ({len(word)})"
            )
        out.append(tuple(symbols.index(c) + 1 for c in word))
    return out


@dataclass(frozen=True)
class Decodings:
    """Each decoder's hypotheses as ``(text, log-probability)``, best first: ``best_path``
    holds the collapsed best path with the log-probability of that one path; the beams hold
    labellings with :math:`\\log p(\\mathbf{l} \\mid \\mathbf{x})` summed over the paths they
    kept. ``lexicon_error`` explains a lexicon that cannot be used (``lexicon`` is then
    empty)."""

    best_path: tuple[str, float]
    beam: list[tuple[str, float]]
    lexicon: list[tuple[str, float]]
    lexicon_error: str


def decode_all(probs: np.ndarray, names: list[str], beam_width: int, lexicon: str) -> Decodings:
    """The three decodings of one example's (T, C) probabilities (class 0 the blank, named
    ``names``), the beams ``beam_width`` wide, the lexicon typed as ``lexicon``."""
    lp = np.log(np.maximum(probs, 1e-300))  # (T, C)
    path, collapsed = ctc_best_path(lp[None])
    path_lp = float(lp[np.arange(lp.shape[0]), path[0]].sum())

    def text(labels: list[int]) -> str:
        return "".join(names[k] for k in labels) or "(empty)"

    beam = ctc_prefix_beam_search(lp, beam_width=beam_width)
    try:
        words = parse_lexicon(lexicon, "".join(names[1:]))
        found = ctc_lexicon_beam_search(lp, words, beam_width=beam_width)
        error = "" if found else "no lexicon labelling survived the beam: widen it"
    except (ValueError, TypeError) as err:
        found, error = [], str(err)
    return Decodings(
        (text(collapsed[0]), path_lp),
        [(text(p), s) for p, s in beam[:SHOWN]],
        [(text(p), s) for p, s in found[:SHOWN]],
        error,
    )
