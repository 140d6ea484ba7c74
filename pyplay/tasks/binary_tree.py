r"""Binary trees for recursive networks, and their batched (flattened) form.

A :class:`Tree` is a leaf (a word or a digit) or an internal node with two children and,
optionally, a token of its own (the operator of an arithmetic expression; a phrase of a parsed
sentence has none). Every node may carry a class ``label`` (the value of a sub-expression, the
sentiment of a phrase).

Written as text, a tree is bracketed: a leaf is a token, an internal node is ``(left right)``
or, with its own token in the middle, ``(left op right)``::

    parse("((2 + 3) * 4)")          # the expression tree of (2 + 3) * 4
    parse("(not (very good))")      # a parsed phrase

:func:`parse_expression` reads an arithmetic expression the usual way (``2+3*4``: ``*`` binds
before ``+``, both are left-associative, parentheses group) into such a tree.

:class:`TreeBatch` lays out ``B`` trees as arrays of their ``N`` nodes, children before
parents, so a recursive network runs level by level: all nodes of height 1 at once, then
height 2, and so on (:mod:`pyplay.models.recursive.network`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_NODES", "Tree", "TreeBatch", "batch_trees", "parse", "parse_expression"]

MAX_NODES = 4_096  # nodes of one typed or parsed tree
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class Tree:
    """A leaf (``children == ()``, ``token`` its word) or an internal node with two children
    and an optional ``token`` of its own; ``label`` its class, or None when it has none."""

    token: str | None
    children: tuple[Tree, ...] = ()
    label: int | None = None

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def nodes(self) -> Iterator[Tree]:
        """Every node, children before parents (post-order), the root last."""
        for child in self.children:
            yield from child.nodes()
        yield self

    def __len__(self) -> int:
        return sum(1 for _ in self.nodes())

    def height(self) -> int:
        """0 for a leaf, else 1 + the larger child's height."""
        return 0 if self.is_leaf else 1 + max(c.height() for c in self.children)

    def leaves(self) -> list[str]:
        """The leaves' tokens, left to right (the sentence, the digits)."""
        return [n.token for n in self.nodes() if n.is_leaf and n.token is not None]

    def text(self) -> str:
        """The bracketed form, which :func:`parse` reads back."""
        if self.is_leaf:
            return str(self.token)
        left, right = (c.text() for c in self.children)
        middle = f" {self.token} " if self.token is not None else " "
        return f"({left}{middle}{right})"

    def tokens(self) -> list[str]:
        """The bracketed form as a token list (what a chain RNN reads left to right)."""
        return _TOKEN.findall(self.text())


def _tokens(text: str) -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    tokens = _TOKEN.findall(text)
    if not tokens:
        raise ValueError("text must hold a tree, got an empty string")
    if len(tokens) > 3 * MAX_NODES:
        raise ValueError(f"text must hold at most {MAX_NODES:,} nodes, got {len(tokens):,} tokens")
    return tokens


def parse(text: str) -> Tree:
    """The tree written in bracketed form (module docstring); ValueError naming what is wrong
    and where (the token's position, counted from 1)."""
    tokens = _tokens(text)
    stack: list[list[Tree | str]] = []
    root: Tree | None = None
    for k, tok in enumerate(tokens, start=1):
        if root is not None:
            raise ValueError(f"text must hold one tree; token {k} {tok!r} comes after its end")
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if not stack:
                raise ValueError(f"token {k} ')' closes a bracket that was never opened")
            node = _node(stack.pop(), k)
            if stack:
                stack[-1].append(node)
            else:
                root = node
        elif stack:
            stack[-1].append(tok)
        else:
            root = Tree(tok)
    if stack:
        raise ValueError(f"text has {len(stack)} bracket(s) left open at its end")
    assert root is not None
    return root


def _node(items: list[Tree | str], k: int) -> Tree:
    parts = [Tree(i) if isinstance(i, str) else i for i in items]
    if len(items) == 2:
        return Tree(None, (parts[0], parts[1]))
    if len(items) == 3 and isinstance(items[1], str):
        return Tree(items[1], (parts[0], parts[2]))
    raise ValueError(
        f"the bracket closed at token {k} must hold two trees, or two around a token "
        f"(left op right), got {len(items)} items"
    )


def parse_expression(text: str, operators: Sequence[str] = ("+", "-", "*")) -> Tree:
    """An arithmetic expression of single digits, ``operators`` and parentheses, as a tree:
    ``*`` before ``+`` and ``-``, left to right otherwise (``8-3-1`` is ``(8-3)-1``).
    ValueError naming the first character that does not fit."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    chars = [(i, c) for i, c in enumerate(text, start=1) if not c.isspace()]
    if not chars:
        raise ValueError("text must hold an expression, got an empty string")
    if len(chars) > MAX_NODES:
        raise ValueError(f"text must be at most {MAX_NODES:,} characters, got {len(chars):,}")
    ops = set(operators)
    pos = 0

    def fail(what: str) -> ValueError:
        where = f"character {chars[pos][0]} {chars[pos][1]!r}" if pos < len(chars) else "the end"
        return ValueError(f"expected {what} at {where} of {text!r}")

    def atom() -> Tree:
        nonlocal pos
        if pos < len(chars) and chars[pos][1].isdigit() and chars[pos][1].isascii():
            pos += 1
            return Tree(chars[pos - 1][1])
        if pos < len(chars) and chars[pos][1] == "(":
            pos += 1
            inner = sums()
            if pos >= len(chars) or chars[pos][1] != ")":
                raise fail("')'")
            pos += 1
            return inner
        raise fail("a digit or '('")

    def level(below: object, these: set[str]) -> Tree:
        nonlocal pos
        left = below()  # type: ignore[operator]
        while pos < len(chars) and chars[pos][1] in these:
            op = chars[pos][1]
            pos += 1
            left = Tree(op, (left, below()))  # type: ignore[operator]
        return left

    def products() -> Tree:
        return level(atom, {"*"} & ops)

    def sums() -> Tree:
        return level(products, {"+", "-"} & ops)

    tree = sums()
    if pos < len(chars):
        raise fail("an operator")
    return tree


@dataclass(frozen=True)
class TreeBatch:
    """``B`` trees as arrays over their ``N`` nodes, children before parents.

    token : (N,) int64, the node's token id, -1 for an internal node without one
    left, right : (N,) int64, the children's node indices, -1 at a leaf
    height : (N,) int64, 0 at a leaf
    tree : (N,) int64, the example each node belongs to
    roots : (B,) int64, each tree's root node
    targets : (N,) int64, each node's class (0 where it has none)
    mask : (N,) bool, the nodes whose class counts in the loss
    """

    token: np.ndarray
    left: np.ndarray
    right: np.ndarray
    height: np.ndarray
    tree: np.ndarray
    roots: np.ndarray
    targets: np.ndarray
    mask: np.ndarray

    def __len__(self) -> int:
        return int(self.roots.shape[0])


def batch_trees(
    trees: Sequence[Tree], vocab: Mapping[str, int], supervise: str = "all"
) -> TreeBatch:
    """Lay ``trees`` out as a :class:`TreeBatch` with token ids from ``vocab``; the mask
    counts every labelled node (``supervise="all"``) or the labelled roots only ("root")."""
    if supervise not in ("all", "root"):
        raise ValueError(f"supervise must be 'all' or 'root', got {supervise!r}")
    if not trees:
        raise ValueError("trees must hold at least one tree, got none")
    rows: list[tuple[int, int, int, int, int, int, bool]] = []
    roots = []
    for b, tree in enumerate(trees):
        if not isinstance(tree, Tree):
            raise TypeError(f"trees[{b}] must be a Tree, got {type(tree).__name__}")
        index: dict[int, int] = {}  # id(node) -> row
        height: dict[int, int] = {}
        for node in tree.nodes():
            if node.token is not None and node.token not in vocab:
                raise ValueError(f"trees[{b}] has the token {node.token!r}, which vocab lacks")
            tok = -1 if node.token is None else vocab[node.token]
            l, r = (index[id(c)] for c in node.children) if node.children else (-1, -1)
            h = 0 if node.is_leaf else 1 + max(height[id(c)] for c in node.children)
            index[id(node)], height[id(node)] = len(rows), h
            label = -1 if node.label is None else int(node.label)
            counted = label >= 0 and (supervise == "all" or node is tree)
            rows.append((tok, l, r, h, b, max(label, 0), counted))
        roots.append(len(rows) - 1)
    cols = list(zip(*rows, strict=True))
    as_int = [np.array(c, dtype=np.int64) for c in cols[:6]]  # (N,) each
    return TreeBatch(
        token=as_int[0],
        left=as_int[1],
        right=as_int[2],
        height=as_int[3],
        tree=as_int[4],
        roots=np.array(roots, dtype=np.int64),  # (B,)
        targets=as_int[5],
        mask=np.array(cols[6], dtype=bool),  # (N,)
    )
