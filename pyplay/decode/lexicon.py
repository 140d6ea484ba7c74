"""Lexicon-constrained decoding: a prefix tree (trie) of allowed words as a search constraint.

As in speech recognition with a closed vocabulary, the output must be a sequence of lexicon
words, :math:`w_1\\,\\sqcup\\,w_2\\,\\sqcup \\cdots w_m\\,\\langle\\mathrm{eos}\\rangle` with
:math:`\\sqcup` a word boundary token (a space or separator id). Each hypothesis carries the trie
node of its current, unfinished word; from node :math:`u` the allowed next tokens are

.. math::

    A(u) = \\{k : u \\xrightarrow{k} u' \\text{ in the trie}\\}
        \\;\\cup\\; \\{\\sqcup, \\langle\\mathrm{eos}\\rangle \\text{ if } u
        \\text{ ends a word}\\},

and after :math:`\\sqcup` the search returns to the root. Without a separator the output is a
single word. The model's probabilities are *masked*, not renormalised: a hypothesis keeps its
log-probability under the model, so a wide enough beam returns the most probable lexicon-valid
outputs. :class:`LexiconConstraint` implements the :class:`~pyplay.decode.step.Constraint`
protocol, so :class:`~pyplay.decode.beam.BeamSearch` (``constraint=``) and
:func:`~pyplay.decode.greedy.greedy_decode` use it unchanged, with the same step records.

:class:`WordSequences` is the same trie as the constraint of CTC's prefix beam search, whose
labellings are words written one after another with no separator
(:mod:`pyplay.decode.ctc_lexicon`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_int

__all__ = ["LexiconConstraint", "PrefixTree", "WordSequences"]


class PrefixTree:
    """A trie over token sequences: node 0 is the root, edges are tokens.

    Build it with :meth:`from_words`. ``children(u)`` maps tokens to child nodes and
    ``is_word(u)`` tells whether the path from the root to ``u`` is a word.
    """

    root = 0

    def __init__(self) -> None:
        self._children: list[dict[int, int]] = [{}]
        self._word_end: list[bool] = [False]
        self._n_words = 0

    @classmethod
    def from_words(cls, words: Iterable[Sequence[int]]) -> PrefixTree:
        """The trie of ``words`` (each a non-empty sequence of token ids >= 0; repeats are
        counted once)."""
        tree = cls()
        for i, word in enumerate(words):
            if len(word) == 0:
                raise ValueError(f"words[{i}] must be a non-empty token sequence, got {word!r}")
            ids = check_array(f"words[{i}]", list(word), ndim=1, kind="i", layout="(L,)")
            if ids.min() < 0:
                raise ValueError(f"words[{i}] must hold token ids >= 0, got {ids.tolist()}")
            node = tree.root
            for k in ids.tolist():
                nxt = tree._children[node].get(k)
                if nxt is None:
                    nxt = len(tree._children)
                    tree._children[node][k] = nxt
                    tree._children.append({})
                    tree._word_end.append(False)
                node = nxt
            if not tree._word_end[node]:
                tree._word_end[node] = True
                tree._n_words += 1
        if tree._n_words == 0:
            raise ValueError("words must hold at least one word, got none")
        return tree

    def __len__(self) -> int:
        """The number of distinct words."""
        return self._n_words

    @property
    def n_nodes(self) -> int:
        return len(self._children)

    def children(self, node: int) -> Mapping[int, int]:
        """Token -> child node, read-only."""
        return MappingProxyType(self._children[node])

    def is_word(self, node: int) -> bool:
        return self._word_end[node]

    def find(self, tokens: Sequence[int]) -> int | None:
        """The node reached from the root by ``tokens``, or ``None``."""
        node = self.root
        for k in tokens:
            nxt = self._children[node].get(int(k))
            if nxt is None:
                return None
            node = nxt
        return node

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, Sequence | np.ndarray):
            return False
        node = self.find(list(word))
        return node is not None and self._word_end[node]

    def words(self) -> list[tuple[int, ...]]:
        """Every word, in lexicographic token order."""
        found: list[tuple[int, ...]] = []
        stack: list[tuple[int, tuple[int, ...]]] = [(self.root, ())]
        while stack:
            node, prefix = stack.pop()
            if self._word_end[node]:
                found.append(prefix)
            for k in sorted(self._children[node], reverse=True):
                stack.append((self._children[node][k], (*prefix, k)))
        return found


class LexiconConstraint:
    """Outputs made of ``tree``'s words, separated by ``separator`` and ended by ``eos``.

    The constraint state of a hypothesis is the trie node of its current word (an int).

    Parameters
    ----------
    tree : PrefixTree
    vocab_size : int
        V of the decoder; every word token must be below it.
    eos : int
        May only follow a complete word.
    separator : int, optional
        The word boundary token; it may only follow a complete word and leads back to the
        root. ``None``: the output is one word.
    """

    def __init__(
        self, tree: PrefixTree, vocab_size: int, eos: int, separator: int | None = None
    ) -> None:
        if not isinstance(tree, PrefixTree):
            raise TypeError(f"tree must be a PrefixTree, got {type(tree).__name__}")
        V = check_int("vocab_size", vocab_size, min_value=1)
        self.tree, self.vocab_size = tree, V
        self.eos = check_int("eos", eos, min_value=0, max_value=V - 1)
        self.separator = (
            None if separator is None else check_int("separator", separator, min_value=0)
        )
        if self.separator is not None and self.separator >= V:
            raise ValueError(f"separator must be <= {V - 1} (V={V}), got {self.separator}")
        if self.separator == self.eos:
            raise ValueError(f"separator must differ from eos={self.eos}, got {self.separator}")
        ends = [self.eos] if self.separator is None else [self.eos, self.separator]
        masks = np.zeros((tree.n_nodes, V), dtype=bool)  # (nodes, V)
        for node in range(tree.n_nodes):
            for k in tree.children(node):
                if k >= V or k in ends:
                    raise ValueError(
                        f"tree's words must use tokens below vocab_size={V} other than "
                        f"eos={self.eos} and separator={self.separator}, got token {k}"
                    )
                masks[node, k] = True
            if tree.is_word(node):
                masks[node, ends] = True
        masks.flags.writeable = False
        self._masks = masks

    def initial(self) -> int:
        """The root: no word started."""
        return self.tree.root

    def mask(self, state: Any) -> np.ndarray:
        """(V,) bool: the children of the node, plus separator and EOS at a word end."""
        return self._masks[state]

    def advance(self, state: Any, token: int) -> int:
        """The node after ``token``; the root after the separator or EOS."""
        token = int(token)
        if not (0 <= token < self.vocab_size and self._masks[state, token]):
            allowed = np.flatnonzero(self._masks[state]).tolist()
            raise ValueError(f"token must be one of {allowed} at trie node {state}, got {token}")
        if token == self.eos or token == self.separator:
            return self.tree.root
        return self.tree.children(state)[token]

    def can_end(self, state: Any) -> bool:
        """A hypothesis may stop without EOS only after a complete word."""
        return self.tree.is_word(state)

    def split(self, tokens: Sequence[int]) -> list[tuple[int, ...]]:
        """The pieces of ``tokens`` between separators (a final EOS dropped)."""
        ids = [int(k) for k in tokens]
        if ids and ids[-1] == self.eos:
            ids = ids[:-1]
        words: list[tuple[int, ...]] = [()]
        for k in ids:
            if k == self.separator:
                words.append(())
            else:
                words[-1] = (*words[-1], k)
        return words

    def accepts(self, tokens: Sequence[int]) -> bool:
        """Whether ``tokens`` is a valid output: lexicon words joined by single separators,
        optionally ended by EOS (and no EOS elsewhere)."""
        ids = [int(k) for k in tokens]
        if self.eos in ids[:-1]:
            return False
        return all(word in self.tree for word in self.split(ids))


class WordSequences:
    """Sequences of one or more words of ``tree``, without separator or EOS: the lexicon of
    CTC's prefix beam search (``lexicon=`` of
    :func:`~pyplay.decode.ctc_decode.ctc_prefix_beam_search`). The constraint state of a
    prefix is the frozenset :math:`S(\\ell)` of tree nodes it can be in, as the recipe in
    :mod:`pyplay.decode.ctc_lexicon` derives it.

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
