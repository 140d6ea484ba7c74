"""The cluttered-digits task of the TEK5040 lecture's "Image classification with RNN and
location-based attention" (lecture 004): one 7 x 5 digit somewhere on a canvas with fragments
of others around it, clear of its box; seeded, refused arguments named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyplay.tasks.cluttered import FONT, GLYPH_SHAPE, ClutteredGlyphs, glyphs


def test_tek5040_location_based_attention_the_font_has_ten_distinct_digits() -> None:
    font = glyphs()
    assert font.shape == (10, *GLYPH_SHAPE) and len(FONT) == 10
    flat = font.reshape(10, -1)
    assert len({row.tobytes() for row in flat}) == 10
    assert set(np.unique(font)) == {0.0, 1.0} and (flat.sum(axis=1) >= 10).all()


def test_tek5040_location_based_attention_the_target_sits_in_its_box_and_clutter_keeps_clear() -> (
    None
):
    task = ClutteredGlyphs(28, 12, rng=3)
    batch = task.batch(64)
    assert batch.inputs.shape == (64, 1, 28, 28) and batch.targets.dtype == np.int64
    font = glyphs()
    for x, y, (top, left, h, w) in zip(batch.inputs[:, 0], batch.targets, batch.boxes, strict=True):
        np.testing.assert_array_equal(x[top : top + h, left : left + w], font[y])
        ring = x[max(top - 1, 0) : top + h + 1, max(left - 1, 0) : left + w + 1].copy()
        ring[top - max(top - 1, 0) : top - max(top - 1, 0) + h,
             left - max(left - 1, 0) : left - max(left - 1, 0) + w] = 0  # fmt: skip
        assert not ring.any()  # nothing touches the target's box
        outside = x.sum() - font[y].sum()
        assert outside > 0  # clutter is there
    assert set(np.unique(batch.inputs)) <= {0.0, 1.0}


def test_tek5040_location_based_attention_the_digit_is_a_small_part_of_the_canvas() -> None:
    task = ClutteredGlyphs(28, 8, rng=0)
    batch = task.batch(200)
    area = np.prod(GLYPH_SHAPE) / 28**2
    assert area < 0.05
    classes = np.bincount(batch.targets, minlength=10)
    assert (classes > 5).all()  # every digit drawn
    positions = batch.boxes[:, :2]
    assert positions.min() == 0 and positions[:, 0].max() > 18 and positions[:, 1].max() > 20
    assert task.baseline_loss() == pytest.approx(math.log(10))
    assert "28 x 28" in task.describe() and task.config == {"size": 28, "clutter": 8}


def test_tek5040_location_based_attention_batches_are_seeded_by_the_tasks_generator() -> None:
    a, b = ClutteredGlyphs(20, 4, rng=7).batch(5), ClutteredGlyphs(20, 4, rng=7).batch(5)
    np.testing.assert_array_equal(a.inputs, b.inputs)
    gen = np.random.default_rng(7)
    c = ClutteredGlyphs(20, 4, rng=gen).batch(5)
    np.testing.assert_array_equal(a.inputs, c.inputs)
    empty = ClutteredGlyphs(12, 0, rng=0).batch(4)
    assert empty.inputs.sum() == sum(glyphs()[y].sum() for y in empty.targets)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"size": 11}, ValueError, "size must be >= 12, got 11"),
        ({"size": 200}, ValueError, "size must be <= 128, got 200"),
        ({"size": 28.0}, TypeError, "size must be an integer, got 28.0"),
        ({"clutter": -1}, ValueError, "clutter must be >= 0, got -1"),
        ({"rng": "seed"}, TypeError, "rng must be a numpy.random.Generator"),
    ],
)
def test_tek5040_location_based_attention_bad_task_arguments_are_named(
    kwargs: dict, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        ClutteredGlyphs(**kwargs)


def test_tek5040_location_based_attention_a_bad_batch_size_is_named() -> None:
    task = ClutteredGlyphs(rng=0)
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        task.batch(0)
    with pytest.raises(TypeError, match="batch_size must be an integer"):
        task.batch(2.5)  # type: ignore[arg-type]
