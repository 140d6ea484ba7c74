"""The convex hull task: Andrew's monotone chain against a brute-force check, the batch a pointer
network trains on, clear errors, and a pointer network that learns the hull of a few points."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pyplay.models.pointer import PointerNetwork
from pyplay.tasks.hull import ConvexHull, convex_hull, cross
from pyplay.tasks.pairs import PointerBatch
from pyplay.train import Trainer


def inside_or_on(p: np.ndarray, polygon: np.ndarray) -> bool:
    """Whether ``p`` is inside or on the counter-clockwise convex ``polygon`` (k, 2)."""
    k = len(polygon)
    return all(cross(polygon[i], polygon[(i + 1) % k], p) >= -1e-12 for i in range(k))


def in_triangle_or_segment(p: np.ndarray, others: np.ndarray) -> bool:
    """Whether ``p`` lies in a triangle or on a segment of points of ``others`` (brute force:
    then it is no extreme point of the set)."""
    for a, b in itertools.combinations(others, 2):
        on_line = abs(cross(a, b, p)) < 1e-12
        if on_line and min(a[0], b[0]) <= p[0] <= max(a[0], b[0]) and \
                min(a[1], b[1]) <= p[1] <= max(a[1], b[1]):  # fmt: skip
            return True
    for a, b, c in itertools.combinations(others, 3):
        signs = [cross(a, b, p), cross(b, c, p), cross(c, a, p)]
        if all(s >= 0 for s in signs) or all(s <= 0 for s in signs):
            return True
    return False


def extreme_points(points: np.ndarray) -> set[int]:
    """The indices of the points that are no convex combination of the others."""
    return {
        i
        for i in range(len(points))
        if not in_triangle_or_segment(points[i], np.delete(points, i, axis=0))
    }


@pytest.mark.parametrize("seed", range(60))
def test_the_hull_holds_every_point_and_its_vertices_are_the_extreme_points(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 10))
    points = rng.random((n, 2))
    if seed % 3 == 0:  # a grid: collinear points on the edges and repeated coordinates
        points = rng.integers(0, 3, size=(n, 2)).astype(float)
        points = np.unique(points, axis=0)
        rng.shuffle(points)
    hull = convex_hull(points)
    assert len(set(hull)) == len(hull) and hull[0] == min(hull)
    polygon = points[hull]
    if len(hull) >= 3:
        area2 = sum(cross(polygon[0], polygon[i], polygon[i + 1]) for i in range(1, len(hull) - 1))
        assert area2 > 0  # counter-clockwise
        assert all(inside_or_on(p, polygon) for p in points)
    assert set(hull) == extreme_points(points)


def test_small_cases_by_hand() -> None:
    square = [[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.5, 0]]
    assert convex_hull(square) == [0, 1, 2, 3]  # the centre and the edge's middle are not
    assert convex_hull([[1, 1], [0, 0], [1, 0]]) == [0, 1, 2]  # from index 0, counter-clockwise
    assert convex_hull([[1, 1], [1, 0], [0, 0]]) == [0, 2, 1]
    assert convex_hull([[0, 0]]) == [0]
    assert convex_hull([[0, 0], [2, 2], [1, 1]]) == [0, 1]  # on a line: its two ends
    assert convex_hull([[3, 3], [3, 3]]) == [0]


def test_the_batch_is_the_points_then_end_and_the_hull_then_the_end_pointer() -> None:
    task = ConvexHull(min_points=4, max_points=7, rng=3)
    b = task.batch(16)
    assert isinstance(b, PointerBatch)
    n = b.end
    assert b.src.shape == (16, int(n.max()) + 1, 3) and (4 <= n).all() and (n <= 7).all()
    assert (b.src_lengths == n + 1).all()
    for k in range(16):
        m = int(n[k])
        points = b.src[k, :m, :2]
        assert (b.src[k, :m, 2] == 0).all() and b.src[k, m].tolist() == [0, 0, 1]
        assert (b.src[k, m + 1 :] == 0).all()  # padding
        steps = int(b.mask[k].sum())
        assert b.mask[k, :steps].all() and not b.mask[k, steps:].any()
        assert b.targets[k, :steps].tolist() == [*convex_hull(points), m]
    again = ConvexHull(min_points=4, max_points=7, rng=3).batch(16)
    assert np.array_equal(again.src, b.src)  # seeded
    assert ConvexHull(rng=np.random.default_rng(0)).batch(2).src.shape[2] == 3
    assert 1.0 < task.baseline_loss() < np.log(8)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="min_points must be >= 3, got 2"):
        ConvexHull(min_points=2)
    with pytest.raises(ValueError, match="max_points must be >= 6, got 5"):
        ConvexHull(min_points=6, max_points=5)
    with pytest.raises(ValueError, match="max_points must be <= 50"):
        ConvexHull(max_points=51)
    with pytest.raises(TypeError, match="min_points must be an int"):
        ConvexHull(min_points=4.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        ConvexHull().batch(0)
    with pytest.raises(ValueError, match=r"points must have shape \(n, 2\)"):
        convex_hull(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="points must"):
        convex_hull([[0.0, np.nan]])
    with pytest.raises(TypeError, match="rng"):
        ConvexHull(rng="seed")  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_pointer_network_learns_the_hull_of_a_few_points() -> None:
    task = ConvexHull(min_points=4, max_points=6, rng=0)
    model = PointerNetwork(None, input_size=3, embedding_dim=16, hidden_size=32, rng=0)
    trainer = Trainer(model, task, lr=0.01, batch_size=32, clip=5.0)
    records = list(trainer.run(1200))
    assert all(r.status == "ok" for r in records)
    accuracy = np.mean([r.metrics["accuracy"] for r in records[-100:]])
    test = ConvexHull(min_points=4, max_points=6, rng=99).batch(500)
    predicted = model.greedy(test.src, test.src_lengths, test.end)
    exact = np.mean(
        [p == test.targets[k, : test.mask[k].sum()].tolist() for k, p in enumerate(predicted)]
    )
    print(f"\n[hull] pointer accuracy (teacher forced) {accuracy:.3f}, exact {exact:.3f}")
    assert accuracy >= 0.85  # measured 0.89
    assert exact >= 0.5  # measured 0.56
