"""Tasks over binary trees, for recursive networks, read as trees or as token chains.

:class:`ExpressionTrees`
    Random arithmetic expressions over the digits 0-9 (``(3 + (4 * 2))``); every node's class
    is the value of its sub-expression modulo ``modulus``. The tree tells the network which
    operation applies to what; a chain RNN reading the same expression left to right (with its
    brackets) must find that out itself.
:class:`SentimentTrees`
    Short phrases with their parse trees, generated from a small grammar the project ships
    (``((not (very good)) movie)``, ``((bad plot) (but ((very fine) acting)))``); every phrase
    is negative (0), neutral (1) or positive (2) by rules a reader can check: an adjective
    carries its polarity, *very* keeps it, *not* turns it around, a noun takes its adjective's,
    *X but Y* is *Y*, *X and Y* is their polarity when they agree and neutral when not. The
    sentiment treebank in miniature (Socher et al. 2013), labels on every phrase.

``form="tree"`` (the default) yields :class:`~pyplay.tasks.binary_tree.TreeBatch` for a
:class:`~pyplay.models.recursive.network.RecursiveNet`; ``form="chain"`` yields the same kind of
examples as a :class:`~pyplay.tasks.base.Batch` of token ids of the bracketed text with the
root's class as the target of its last step, for a chain :class:`~pyplay.models.SequenceModel`.
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_choice, check_int
from pyplay.tasks.base import MAX_BATCH, Batch
from pyplay.tasks.binary_tree import Tree, batch_trees

__all__ = ["ExpressionTrees", "SentimentTrees", "TreeTask"]

FORMS = ("tree", "chain")
NEG, NEUTRAL, POS = 0, 1, 2
POSITIVE = ("good", "great", "fine", "nice", "superb")
NEGATIVE = ("bad", "awful", "poor", "dull", "boring")
NOUNS = ("movie", "plot", "acting", "cast", "music")


class TreeTask(abc.ABC):
    """What the tree tasks share: a token vocabulary (``vocab``: token -> id, brackets
    included for the chain form), ``num_classes``, and batches in either form."""

    name = ""
    input_kind = "tokens"
    tokens: tuple[str, ...] = ()
    num_classes = 2

    def __init__(self, rng: Any, form: str, supervise: str, **config: Any) -> None:
        self.rng = as_generator(rng)
        self.form = check_choice("form", form, FORMS)
        self.supervise = check_choice("supervise", supervise, ("all", "root"))
        self.config: dict[str, Any] = {**config, "form": self.form, "supervise": self.supervise}
        self.vocab = {tok: i for i, tok in enumerate(("(", ")", *self.tokens))}
        self.input_size = len(self.vocab)
        self.output_size = self.num_classes
        self.output_kind = "tree classes" if self.form == "tree" else "classes"

    @abc.abstractmethod
    def sample(self) -> Tree:
        """One random labelled tree, drawn from ``self.rng``."""

    @abc.abstractmethod
    def describe(self) -> str:
        """A paragraph for the playground's help text."""

    def trees(self, n: int) -> list[Tree]:
        """``n`` random labelled trees."""
        return [self.sample() for _ in range(check_int("n", n, min_value=0, max_value=MAX_BATCH))]

    def batch(self, batch_size: int) -> Any:
        """A fresh batch: a TreeBatch (form "tree") or a Batch of token chains ("chain")."""
        trees = self.trees(check_int("batch_size", batch_size, min_value=1, max_value=MAX_BATCH))
        return (
            batch_trees(trees, self.vocab, self.supervise)
            if self.form == "tree"
            else (self.chains(trees))
        )

    def chains(self, trees: list[Tree]) -> Batch:
        """The trees' bracketed texts as token ids (B, T), padded with ")" after the end; the
        target is the root's class at each text's last token (mask), 0 elsewhere."""
        texts = [[self.vocab[t] for t in tree.tokens()] for tree in trees]
        T = max(len(t) for t in texts)
        inputs = np.full((len(texts), T), self.vocab[")"], dtype=np.int64)  # (B, T)
        targets = np.zeros((len(texts), T), dtype=np.int64)  # (B, T)
        mask = np.zeros((len(texts), T), dtype=bool)  # (B, T)
        for b, (ids, tree) in enumerate(zip(texts, trees, strict=True)):
            inputs[b, : len(ids)] = ids
            targets[b, len(ids) - 1] = int(tree.label or 0)
            mask[b, len(ids) - 1] = True
        lengths = np.array([len(t) for t in texts], dtype=np.int64)  # (B,)
        return Batch(inputs, targets, mask, lengths)

    def baseline_loss(self) -> float:
        """Cross-entropy of the uniform guess over the classes, ln C."""
        return math.log(self.num_classes)

    def metric(self, outputs: np.ndarray, batch: Batch) -> dict[str, float]:
        """Accuracy of the chain form's counted steps (the roots)."""
        return {"accuracy": float((outputs.argmax(axis=-1) == batch.targets)[batch.mask].mean())}


class ExpressionTrees(TreeTask):
    """Arithmetic expression trees (module docstring).

    Parameters
    ----------
    max_depth : int
        The deepest a tree grows (a leaf is depth 0); the root is always an operation.
    operators : str
        Some of ``"+-*"``.
    modulus : int
        The classes: values modulo ``modulus`` (2..10).
    form, supervise : as :class:`TreeTask` ("tree" or "chain"; "all" or "root").
    rng : numpy.random.Generator or int seed
    """

    name = "expressions"
    tokens = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "+", "-", "*")

    def __init__(
        self,
        max_depth: int = 3,
        operators: str = "+*",
        modulus: int = 10,
        form: str = "tree",
        supervise: str = "all",
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        max_depth = check_int("max_depth", max_depth, min_value=1, max_value=10)
        if not isinstance(operators, str) or not operators or set(operators) - set("+-*"):
            raise ValueError(f"operators must be some of '+-*', got {operators!r}")
        modulus = check_int("modulus", modulus, min_value=2, max_value=10)
        self.num_classes = modulus
        super().__init__(
            rng, form, supervise, max_depth=max_depth, operators=operators, modulus=modulus
        )
        self.max_depth, self.operators, self.modulus = max_depth, operators, modulus

    def evaluate_tree(self, tree: Tree) -> int:
        """The value of ``tree`` modulo ``modulus`` (a digit's own value at a leaf)."""
        if tree.is_leaf:
            return int(str(tree.token)) % self.modulus
        left, right = (self.evaluate_tree(c) for c in tree.children)
        ops = {"+": left + right, "-": left - right, "*": left * right}
        return ops[str(tree.token)] % self.modulus

    def label(self, tree: Tree) -> Tree:
        """``tree`` with every node labelled by its value (a typed expression, say)."""
        children = tuple(self.label(c) for c in tree.children)
        return Tree(tree.token, children, self.evaluate_tree(tree))

    def sample(self) -> Tree:
        def grow(depth: int) -> Tree:
            if depth > 0 and (depth == self.max_depth or self.rng.random() < 0.6):
                op = self.operators[int(self.rng.integers(len(self.operators)))]
                return Tree(op, (grow(depth - 1), grow(depth - 1)))
            return Tree(str(int(self.rng.integers(10))))

        return self.label(grow(self.max_depth))

    def describe(self) -> str:
        return (
            f"Expressions of digits with {' '.join(self.operators)}, up to {self.max_depth} "
            f"levels deep; every node's class is its value modulo {self.modulus}."
        )


class SentimentTrees(TreeTask):
    """Parsed phrases with a sentiment on every node (module docstring).

    Parameters
    ----------
    max_modifiers : int
        At most this many *very* / *not* in front of an adjective.
    form, supervise : as :class:`TreeTask`.
    rng : numpy.random.Generator or int seed
    """

    name = "sentiment"
    tokens = (*POSITIVE, *NEGATIVE, *NOUNS, "very", "not", "but", "and")
    num_classes = 3

    def __init__(
        self,
        max_modifiers: int = 2,
        form: str = "tree",
        supervise: str = "all",
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.max_modifiers = check_int("max_modifiers", max_modifiers, min_value=0, max_value=6)
        super().__init__(rng, form, supervise, max_modifiers=self.max_modifiers)

    def _pick(self, words: tuple[str, ...]) -> str:
        return words[int(self.rng.integers(len(words)))]

    def sample(self) -> Tree:
        def adjective() -> Tree:
            tree = Tree(self._pick(POSITIVE if self.rng.random() < 0.5 else NEGATIVE))
            for _ in range(int(self.rng.integers(self.max_modifiers + 1))):
                tree = Tree(None, (Tree("not" if self.rng.random() < 0.5 else "very"), tree))
            return tree

        def phrase() -> Tree:
            return Tree(None, (adjective(), Tree(self._pick(NOUNS))))

        first, kind = phrase(), self.rng.random()
        if kind < 0.4:
            return self.label(first)
        joined = Tree(None, (Tree("but" if kind < 0.7 else "and"), phrase()))
        return self.label(Tree(None, (first, joined)))

    @staticmethod
    def label(tree: Tree) -> Tree:
        """``tree`` with every node labelled by the rules (module docstring): a leaf by its
        word; *not Y* the opposite of Y; *very Y*, *but Y*, *and Y* and *Y noun* as Y;
        *X (but Y)* as Y; *X (and Y)*, and any other pair, as what they agree on, the one
        that is not neutral, or neutral."""
        if tree.is_leaf:
            word = tree.token
            return Tree(word, (), POS if word in POSITIVE else NEG if word in NEGATIVE else NEUTRAL)
        left, right = (SentimentTrees.label(c) for c in tree.children)
        a, b = int(left.label or 0), int(right.label or 0)
        if left.token == "not":
            label = 2 - b  # 0 <-> 2, neutral stays
        elif left.token in ("very", "but", "and") or (right.is_leaf and right.token in NOUNS):
            label = b if left.token in ("very", "but", "and") else a
        elif right.children and right.children[0].token == "but":
            label = b
        else:  # agreement, else the one that is not neutral, else neutral
            label = a if a == b else (b if a == NEUTRAL else a if b == NEUTRAL else NEUTRAL)
        return Tree(tree.token, (left, right), label)

    def describe(self) -> str:
        return (
            "Short phrases such as ((not (very good)) movie): every phrase is negative, neutral "
            "or positive; 'not' turns an adjective around, 'X but Y' is Y, 'X and Y' is neutral "
            "when the two disagree."
        )
