"""Recursive neural networks: one composition shared over the nodes of binary trees, trained by
backpropagation through structure (:mod:`.network`). The trees and their batched form are data,
in :mod:`pyplay.tasks.binary_tree`; the objective that trains the networks is
:mod:`pyplay.objectives.tree`."""

from pyplay.models.recursive.network import RecursiveCache, RecursiveNet, reference_forward

__all__ = ["RecursiveCache", "RecursiveNet", "reference_forward"]
