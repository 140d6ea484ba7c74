r"""A recursive neural network over binary trees, with backpropagation through structure.

One composition, shared by every internal node, builds a parent's vector from its two
children's (Pollack 1990; Socher et al. 2011; Goodfellow et al., *Deep Learning* 10.6):

.. math::

    h_v &= E_{w(v)} \quad\text{at a leaf } v \text{ with word } w(v) \\
    a_v &= W [h_{l(v)}; h_{r(v)}] + b \;(+\, E_{o(v)} \text{ when } v \text{ has a token } o(v)) \\
    h_v &= \tanh(a_v) \\
    y_v &= U h_v + c \quad\text{(class scores of every node)}

with :math:`E` the embedding table (V, H), :math:`W` (H, 2H), :math:`b` (H,), :math:`U` (C, H),
:math:`c` (C,). An internal node's own token (the operator of an expression) enters as one more
input to the composition, through the same table :math:`E`.

Backpropagation through structure runs the same recursion backwards, parents before children:

.. math::

    \delta_v &= \frac{\partial L}{\partial h_v} = U^\top \frac{\partial L}{\partial y_v}
        + [W^\top \delta^a_{p(v)}]_{\text{its half}}, \qquad
    \delta^a_v = \delta_v \odot (1 - h_v^2) \\
    \frac{\partial L}{\partial W} &= \sum_v \delta^a_v [h_{l(v)}; h_{r(v)}]^\top, \quad
    \frac{\partial L}{\partial b} = \sum_v \delta^a_v, \quad
    \frac{\partial L}{\partial E_w} = \sum_{\text{leaves } v:\, w(v) = w} \delta_v
        + \sum_{\text{nodes } v:\, o(v) = w} \delta^a_v

The kernel (:meth:`RecursiveNet.forward`, :meth:`RecursiveNet.backward`) runs a
:class:`~pyplay.tasks.binary_tree.TreeBatch` level by level (every node of one height at
once); :func:`reference_forward` is the same recursion written node by node, which the tests
compare the kernel against.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_dtype, check_int
from pyplay.models.contract import Backward, ModelBase, check_model_size, config_int
from pyplay.nn import init
from pyplay.tasks.binary_tree import Tree, TreeBatch

__all__ = ["RecursiveCache", "RecursiveNet", "reference_forward"]


@dataclass(frozen=True)
class RecursiveCache:
    """What :meth:`RecursiveNet.backward` needs: the batch and every node's vector."""

    batch: TreeBatch
    h: np.ndarray  # (N, H)


class RecursiveNet(ModelBase):
    """One shared composition over binary trees (module docstring), class scores at every node.

    Parameters
    ----------
    vocab_size : int
        V, the tokens of leaves and of internal nodes (operators).
    num_classes : int
        C, the classes of a node (an expression's value, a phrase's sentiment).
    hidden_size : int
        H, the width of every node's vector.
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed

    Attributes
    ----------
    params : dict of str to ndarray
        ``embedding.weight`` (V, H) ~ N(0, 1/H), ``compose.weight`` (H, 2H) and
        ``compose.bias`` (H,) ~ U(+-1/sqrt(2H)), ``head.weight`` (C, H) and ``head.bias`` (C,)
        ~ U(+-1/sqrt(H)).
    """

    objective = "tree"

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        hidden_size: int = 32,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.vocab_size = check_int("vocab_size", vocab_size, min_value=1)
        self.num_classes = check_int("num_classes", num_classes, min_value=2)
        self.hidden_size = H = check_int("hidden_size", hidden_size, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        check_model_size(type(self), locals())  # before anything is built
        gen = as_generator(rng)
        V, C = self.vocab_size, self.num_classes
        what = "RecursiveNet embedding.weight (V, H)"
        emb = init.normal(gen, (V, H), self.dtype, what, divisor=float(np.sqrt(H)))
        self.params: dict[str, np.ndarray] = {"embedding.weight": emb}
        for name, shape, fan_in in (
            ("compose.weight", (H, 2 * H), 2 * H),
            ("compose.bias", (H,), 2 * H),
            ("head.weight", (C, H), H),
            ("head.bias", (C,), H),
        ):
            k = 1 / np.sqrt(fan_in)
            what = f"RecursiveNet {name} {shape}"
            self.params[name] = init.uniform(gen, -k, k, shape, self.dtype, what)

    @classmethod
    def estimate_parameters(cls, config: Mapping[str, Any]) -> int:
        """An upper estimate of the parameter count ``config`` describes (without building)."""
        V, C = config_int(config, "vocab_size", 1), config_int(config, "num_classes", 2)
        H = config_int(config, "hidden_size", 32)
        return V * H + H * (2 * H + 1) + C * (H + 1)

    def _check(self, batch: Any) -> TreeBatch:
        if not isinstance(batch, TreeBatch):
            raise TypeError(f"batch must be a TreeBatch, got {type(batch).__name__}")
        tok = batch.token
        if tok.size and tok.max() >= self.vocab_size:
            raise ValueError(
                f"batch has token id {int(tok.max())}, but vocab_size is {self.vocab_size}"
            )
        leaves = batch.left < 0
        if (tok[leaves] < 0).any():
            raise ValueError("batch has a leaf without a token (every leaf needs a word)")
        return batch

    def forward(self, batch: Any) -> tuple[np.ndarray, RecursiveCache]:
        """Class scores of every node (N, C) and the cache; the roots' are
        ``scores[batch.roots]``."""
        b = self._check(batch)
        p = self.params
        E, W, bias = p["embedding.weight"], p["compose.weight"], p["compose.bias"]
        N, H = b.token.shape[0], self.hidden_size
        h = np.zeros((N, H), dtype=self.dtype)  # (N, H)
        leaves = np.flatnonzero(b.height == 0)
        h[leaves] = E[b.token[leaves]]  # (n0, H)
        for level in range(1, int(b.height.max(initial=0)) + 1):
            v = np.flatnonzero(b.height == level)
            children = np.concatenate([h[b.left[v]], h[b.right[v]]], axis=1)  # (n, 2H)
            a = children @ W.T + bias  # (n, H)
            own = b.token[v] >= 0
            a[own] += E[b.token[v][own]]
            h[v] = np.tanh(a)
        scores = h @ p["head.weight"].T + p["head.bias"]  # (N, C)
        return scores, RecursiveCache(b, h)

    def backward(self, dscores: Any, cache: RecursiveCache) -> Backward:
        """Backpropagation through structure from d(loss)/d(scores) (N, C)."""
        b, h, p = cache.batch, cache.h, self.params
        dy = np.asarray(dscores, dtype=self.dtype)
        if dy.shape != (h.shape[0], self.num_classes):
            raise ValueError(
                f"dscores must have shape (N, num_classes) = {(h.shape[0], self.num_classes)}, "
                f"got {dy.shape}"
            )
        W, H = p["compose.weight"], self.hidden_size
        g = {name: np.zeros_like(value) for name, value in p.items()}
        g["head.weight"] = dy.T @ h  # (C, H)
        g["head.bias"] = dy.sum(axis=0)  # (C,)
        dh = dy @ p["head.weight"]  # (N, H)
        for level in range(int(b.height.max(initial=0)), 0, -1):  # parents first
            v = np.flatnonzero(b.height == level)
            da = dh[v] * (1 - h[v] ** 2)  # (n, H)
            children = np.concatenate([h[b.left[v]], h[b.right[v]]], axis=1)  # (n, 2H)
            g["compose.weight"] += da.T @ children  # (H, 2H)
            g["compose.bias"] += da.sum(axis=0)
            own = b.token[v] >= 0
            np.add.at(g["embedding.weight"], b.token[v][own], da[own])
            dchildren = da @ W  # (n, 2H)
            np.add.at(dh, b.left[v], dchildren[:, :H])
            np.add.at(dh, b.right[v], dchildren[:, H:])
        leaves = np.flatnonzero(b.height == 0)
        np.add.at(g["embedding.weight"], b.token[leaves], dh[leaves])
        return Backward(g, record={"node_grad": dh})

    def vectors(self, batch: Any) -> np.ndarray:
        """Every node's vector h (N, H), for looking inside."""
        _, cache = self.forward(batch)
        return cache.h


def reference_forward(
    params: Mapping[str, np.ndarray], tree: Tree, vocab: Mapping[str, int]
) -> dict[int, np.ndarray]:
    """The module's equations node by node, by plain recursion: ``id(node) -> h_v`` for every
    node of ``tree`` (the kernel's oracle in the tests; no batching, no levels)."""
    E, W, b = params["embedding.weight"], params["compose.weight"], params["compose.bias"]
    out: dict[int, np.ndarray] = {}

    def visit(node: Tree) -> np.ndarray:
        if node.is_leaf:
            h = E[vocab[str(node.token)]]
        else:
            left, right = (visit(c) for c in node.children)
            a = W @ np.concatenate([left, right]) + b
            if node.token is not None:
                a = a + E[vocab[node.token]]
            h = np.tanh(a)
        out[id(node)] = h
        return h

    visit(tree)
    return out
