"""The planar convex hull as a pointer network learns it (Vinyals et al. 2015).

An example is ``n`` points drawn uniformly in the unit square (``n`` between ``min_points``
and ``max_points``); the answer is the indices of the points on the hull, each vertex once,
counter-clockwise starting from the lowest index, then a pointer at the **end** marker: the
output's vocabulary is the input itself, and how many vertices the hull has depends on the
points.

The source of a pointer network (:class:`~pyplay.models.pointer.PointerNetwork` with
``input_size=3``) is (B, S, 3): point ``i`` at position ``i`` as ``(x, y, 0)``, and the end
marker ``(0, 0, 1)`` at position ``n`` right after the points (``src_lengths`` = n + 1), as a
:class:`~pyplay.tasks.pairs.PointerBatch` whose ``end`` is n.

The hull is computed exactly by Andrew's monotone chain (:func:`convex_hull`): sort the
points by (x, y), build the lower and the upper chain, dropping a point whenever the last
turn is not strictly to the left (:math:`(b - a) \\times (c - a) \\le 0`), so points on an
edge are not vertices.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_int
from pyplay.tasks.pairs import PointerBatch

__all__ = ["MAX_POINTS", "ConvexHull", "convex_hull", "cross"]

MAX_POINTS = 50  # the most points one example may have


def cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The z component of (a - o) x (b - o): positive when o -> a -> b turns left."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def convex_hull(points: Any) -> list[int]:
    """The indices of the hull's vertices of ``points`` (n, 2), counter-clockwise from the
    lowest index, each once; points on an edge (or repeating a vertex) are not vertices.
    One point: ``[0]``; all on a line: its two ends, lowest index first."""
    pts = check_array("points", points, ndim=2, dtype=np.dtype(np.float64), layout="(n, 2)")
    if pts.shape[1] != 2 or len(pts) == 0:
        raise ValueError(f"points must have shape (n, 2) with n >= 1, got {pts.shape}")
    order = sorted(range(len(pts)), key=lambda i: (pts[i, 0], pts[i, 1], i))  # by x, then y

    def chain(indices: list[int]) -> list[int]:
        out: list[int] = []
        for i in indices:
            while len(out) >= 2 and cross(pts[out[-2]], pts[out[-1]], pts[i]) <= 0:
                out.pop()
            if out and (pts[out[-1]] == pts[i]).all():
                continue  # the same point again
            out.append(i)
        return out

    lower, upper = chain(order), chain(order[::-1])
    hull = lower[:-1] + upper[:-1] or lower[:1]  # counter-clockwise from the leftmost
    start = hull.index(min(hull))
    return hull[start:] + hull[:start]


@lru_cache(maxsize=32)
def _baseline(min_points: int, max_points: int) -> float:
    """The mean loss of pointing uniformly at the n + 1 positions, per counted step
    (hull vertices and the end), over 2,000 examples from a fixed seed."""
    task = ConvexHull(min_points, max_points, rng=12345)
    b = task.batch(2000)
    steps = b.mask.sum(axis=1)  # (B,)
    return float((steps * np.log(b.src_lengths)).sum() / steps.sum())


class ConvexHull:
    """Points uniform in the unit square; point at the hull's vertices, then at the end.

    Parameters
    ----------
    min_points, max_points : int
        Each example has n points, n drawn uniformly from ``min_points..max_points``
        (3 <= min_points <= max_points <= :data:`MAX_POINTS`).
    rng : numpy.random.Generator or int seed
    """

    name = "convex_hull"
    output = "positions"  # what the pointer network's objective checks
    input_kind = "real"
    input_size = 3  # x, y and the end marker's flag

    def __init__(
        self, min_points: int = 5, max_points: int = 10, rng: np.random.Generator | int | None = 0
    ) -> None:
        self.min_points = check_int("min_points", min_points, min_value=3, max_value=MAX_POINTS)
        self.max_points = check_int(
            "max_points", max_points, min_value=self.min_points, max_value=MAX_POINTS
        )
        self.rng = as_generator(rng)
        self.config: dict[str, Any] = {"min_points": self.min_points, "max_points": self.max_points}

    def points(self) -> np.ndarray:
        """One example's points (n, 2), drawn from the task's generator."""
        n = int(self.rng.integers(self.min_points, self.max_points + 1))
        return self.rng.random((n, 2))

    @staticmethod
    def encode(sets: list[np.ndarray]) -> PointerBatch:
        """A batch of the given point sets (each (n, 2)), with their hulls as targets."""
        B = len(sets)
        hulls = [convex_hull(p) for p in sets]
        n = np.array([len(p) for p in sets], dtype=np.int64)  # (B,)
        S, U = int(n.max()) + 1, max(len(h) for h in hulls) + 1
        src = np.zeros((B, S, 3))  # (B, S, 3)
        targets = np.zeros((B, U), dtype=np.int64)  # (B, U)
        mask = np.zeros((B, U), dtype=bool)  # (B, U)
        for b, (p, h) in enumerate(zip(sets, hulls, strict=True)):
            src[b, : len(p), :2] = p
            src[b, len(p), 2] = 1.0  # the end marker
            targets[b, : len(h) + 1] = [*h, len(p)]
            mask[b, : len(h) + 1] = True
        return PointerBatch(src, n + 1, targets, mask, end=n)

    def batch(self, batch_size: int) -> PointerBatch:
        """A fresh batch of ``batch_size`` examples."""
        B = check_int("batch_size", batch_size, min_value=1, max_value=65536)
        return self.encode([self.points() for _ in range(B)])

    def baseline_loss(self) -> float:
        """The loss of pointing uniformly at the n + 1 positions (estimated once per range)."""
        return _baseline(self.min_points, self.max_points)

    def describe(self) -> str:
        return (
            f"Convex hull: {self.min_points}-{self.max_points} points in the unit square; "
            "point at the hull's corners counter-clockwise from the lowest index, then at END."
        )
