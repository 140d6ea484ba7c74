"""Lexicon (prefix-tree) beam search for CTC: labellings made only of dictionary words.

The IDSIA lecture's recipe: build a prefix tree of all words (:class:`~pyplay.decode.lexicon.
PrefixTree`), start with a single hypothesis of probability 1.0 in the start node, propagate
every hypothesis frame by frame (time-synchronously) to its successor nodes, multiplying by the
softmax outputs :math:`y^t_k` of the frame; with CTC output a **blank** (or a repeat of the last
label) leads back to the same node. Keep the most probable hypotheses (the beam), and at the
end take the most probable hypothesis in a **final** node (a word end).

Here the hypotheses are the prefixes :math:`\\ell` of CTC's prefix beam search
(:func:`~pyplay.decode.ctc_decode.ctc_prefix_beam_search`, its :math:`p_b, p_{nb}` recursion
unchanged), and each prefix carries where it is in the tree. A label :math:`k` may extend
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

from pyplay._checks import check_int
from pyplay.decode.ctc_decode import ctc_prefix_beam_search
from pyplay.decode.lexicon import PrefixTree

__all__ = ["WordSequences", "ctc_lexicon_beam_search"]


class WordSequences:
    """Sequences of one or more words of ``tree``: the constraint state of a prefix is the
    frozenset :math:`S(\\ell)` of tree nodes it can be in (module docstring).

    Parameters
    ----------
    tree : PrefixTree
        The words, as label ids.
    num_classes : int, optional
        C: when given, every word label must be in ``0..C-1`` and differ from ``blank``.
    blank : int
    """

    def __init__(self, tree: PrefixTree, num_classes: int | None = None, blank: int = 0) -> None:
        if not isinstance(tree, PrefixTree):
            raise TypeError(f"tree must be a PrefixTree, got {type(tree).__name__}")
        self.tree = tree
        self.blank = check_int("blank", blank, min_value=0)
        if num_classes is not None:
            C = check_int("num_classes", num_classes, min_value=2)
            for word in tree.words():
                bad = [k for k in word if k >= C or k == self.blank]
                if bad:
                    raise ValueError(
                        f"lexicon words must use labels 0..{C - 1} other than the blank "
                        f"{self.blank}, got {bad[0]} in the word {list(word)}"
                    )

    @classmethod
    def from_words(
        cls, words: Iterable[Sequence[int]], num_classes: int | None = None, blank: int = 0
    ) -> WordSequences:
        return cls(PrefixTree.from_words(words), num_classes, blank)

    def initial(self) -> frozenset[int]:
        """:math:`S(\\varnothing) = \\{r\\}`, the start node."""
        return frozenset((self.tree.root,))

    def advance(self, state: frozenset[int], k: int) -> frozenset[int] | None:
        """:math:`S(\\ell k)` from :math:`S(\\ell)`, or ``None`` when it is empty."""
        tree = self.tree
        nodes = {tree.children(u)[k] for u in state if k in tree.children(u)}
        start = tree.children(tree.root)
        if k in start and any(tree.is_word(u) for u in state):
            nodes.add(start[k])  # the next word begins
        return frozenset(nodes) if nodes else None

    def is_final(self, state: frozenset[int]) -> bool:
        """Whether the prefix may end here: it is a whole sequence of words."""
        return any(self.tree.is_word(u) for u in state)

    def accepts(self, labels: Sequence[int]) -> bool:
        """Whether ``labels`` is one or more lexicon words, concatenated."""
        state: frozenset[int] | None = self.initial()
        for k in labels:
            state = self.advance(state, int(k)) if state is not None else None
        return state is not None and self.is_final(state)


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
