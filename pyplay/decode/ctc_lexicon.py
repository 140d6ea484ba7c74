"""Lexicon (prefix-tree) beam search for CTC: labellings made only of dictionary words.

Wand's IDSIA lecture's recipe: build a prefix tree of all words (:class:`~pyplay.decode.lexicon.
PrefixTree`), start with a single hypothesis of probability 1.0 in the start node, propagate
every hypothesis frame by frame (time-synchronously) to its successor nodes, multiplying by the
softmax outputs :math:`y^t_k` of the frame; with CTC output a **blank** (or a repeat of the last
label) leads back to the same node. Keep the most probable hypotheses (the beam), and at the
end take the most probable hypothesis in a **final** node (a word end).

Here the hypotheses are the prefixes :math:`\\ell` of CTC's prefix beam search
(:func:`~pyplay.decode.ctc_decode.ctc_prefix_beam_search`, its :math:`p_b, p_{nb}` recursion
unchanged), and each prefix carries where it is in the tree
(:class:`~pyplay.decode.lexicon.WordSequences`). A label :math:`k` may extend
:math:`\\ell` only along a tree edge; from a final node it may also start the next word at the
start node, so a labelling is a sequence of words :math:`w_1 w_2 \\cdots w_m` (:math:`m \\ge 1`,
no separator: the task's symbols are the only labels). As a concatenation can often be split
into words in more than one way (with words A and AB, the prefix A is the word A *and* the
start of AB), a prefix carries the *set* of tree nodes it can be in,

.. math::

    S(\\ell k) = \\{\\, u' : u \\xrightarrow{k} u',\\ u \\in S(\\ell) \\,\\} \\;\\cup\\;
        \\{\\, r' : r \\xrightarrow{k} r' \\text{ if some } u \\in S(\\ell) \\text{ is final}\\,\\},

:math:`S(\\varnothing) = \\{r\\}` (:math:`r` the start node); it is one node whenever the split
is unique. :math:`\\ell k` is dropped when :math:`S(\\ell k)` is empty, and a labelling is
returned only when :math:`S(\\ell)` holds a final node.

The model's probabilities are *masked*, not renormalised, so every hypothesis keeps its
probability under the model. Departure from the lecture: where several paths reach the same
hypothesis (blank + A and A + blank), the lecture keeps the maximum; here, as in CTC's
:math:`p(\\mathbf{l} \\mid \\mathbf{x})`, they are **added**, so with a beam wide enough that
nothing is pruned the scores are the exact labelling probabilities and the first result is the
most probable lexicon labelling.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pyplay.decode.ctc_decode import ctc_prefix_beam_search
from pyplay.decode.lexicon import PrefixTree, WordSequences

__all__ = ["ctc_lexicon_beam_search"]


def ctc_lexicon_beam_search(
    log_probs: Any,
    words: Iterable[Sequence[int]] | PrefixTree,
    input_lengths: Any = None,
    beam_width: int = 8,
    blank: int = 0,
) -> Any:
    """The ``beam_width`` most probable labellings made of ``words`` (CTC prefix beam search,
    each prefix carrying its prefix-tree nodes; module docstring).

    Parameters
    ----------
    log_probs : (T, C) or (B, T, C) array
        Per-frame log-probabilities (normalised).
    words : iterable of label sequences, or a PrefixTree
        The lexicon (labels in ``0..C-1`` other than ``blank``).
    input_lengths, beam_width, blank
        As for :func:`~pyplay.decode.ctc_decode.ctc_prefix_beam_search`.

    Returns
    -------
    As :func:`~pyplay.decode.ctc_decode.ctc_prefix_beam_search`: ``(labels, log_score)``
    pairs best first, only lexicon labellings (possibly none when the beam kept only
    unfinished words at the last frame).
    """
    tree = words if isinstance(words, PrefixTree) else PrefixTree.from_words(words)
    C = int(np.shape(log_probs)[-1]) if np.ndim(log_probs) >= 2 else None
    lexicon = WordSequences(tree, C, blank)
    return ctc_prefix_beam_search(log_probs, input_lengths, beam_width, blank, lexicon=lexicon)
