"""Recursive neural networks: one composition shared over the nodes of binary trees, trained by
backpropagation through structure (:mod:`.network`) and the trees and their batched form
(:mod:`.tree`); the objective that trains them is :mod:`pyplay.objectives.tree`."""

from pyplay.models.recursive.network import RecursiveCache, RecursiveNet, reference_forward
from pyplay.models.recursive.tree import Tree, TreeBatch, batch_trees, parse, parse_expression

__all__ = [
    "RecursiveCache",
    "RecursiveNet",
    "Tree",
    "TreeBatch",
    "batch_trees",
    "parse",
    "parse_expression",
    "reference_forward",
]
