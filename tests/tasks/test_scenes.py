"""Captioned scenes (pyplay.tasks.scenes): every word of a caption is grounded in the pixels of
the shape it names (the IDSIA lecture's "Image Captioning with Visual Attention": attention has
something to find), the batches are seeded, the baseline is the loss its docstring names, and
bad arguments are refused by name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyplay.tasks.pairs import BOS, EOS, PAD
from pyplay.tasks.scenes import (
    COLOURS,
    COLUMNS,
    ROWS,
    SHAPES,
    CaptionedScenes,
    regions_on_grid,
    shape_mask,
)


def test_idsia_image_captioning_every_word_names_the_colour_kind_and_place_of_its_shape():
    task = CaptionedScenes(rng=0)
    batch = task.batch(64)
    S, cell = task.image_size, task.image_size // 3
    words = task.vocab.symbols
    assert batch.images.shape == (64, 3, S, S) and batch.regions.shape == (64, 3, S, S)
    for b in range(64):
        ids = batch.tgt_out[b][batch.tgt_mask[b]]
        assert ids[-1] == EOS and list(batch.tgt_in[b, : len(ids)]) == [BOS, *ids[:-1]]
        text = task.caption(batch.tgt_out[b]).split()
        n = (len(text) + 1) // 5  # colour shape row column [and] per shape
        assert len(text) == 5 * n - 1 and all(text[5 * k + 4] == "and" for k in range(n - 1))
        places = []
        for k in range(n):
            colour, shape, row, column = text[5 * k : 5 * k + 4]
            assert list(batch.objects[b, 5 * k : 5 * k + 4]) == [k] * 4
            pixels = batch.regions[b, k]  # (S, S)
            assert colour in COLOURS and shape in SHAPES
            np.testing.assert_array_equal(batch.images[b][:, pixels].T[0], COLOURS[colour])
            assert pixels.sum() == shape_mask(shape, task.shape_size).sum()
            ys, xs = np.nonzero(pixels)
            assert ys.min() // cell == ys.max() // cell == ROWS.index(row)
            assert xs.min() // cell == xs.max() // cell == COLUMNS.index(column)
            places.append((ROWS.index(row), COLUMNS.index(column)))
        assert places == sorted(set(places))  # distinct cells, in reading order
        assert not batch.regions[b, n:].any()
        background = ~batch.regions[b].any(axis=0)
        assert not batch.images[b][:, background].any()
        assert all(words[i - 3] == "and" for i in batch.tgt_out[b][batch.objects[b] < 0] if i > 2)


def test_the_shapes_differ_and_fill_their_patch() -> None:
    masks = {s: shape_mask(s, 6) for s in SHAPES}
    assert masks["square"].all() and masks["circle"].sum() == 32
    assert masks["triangle"][0].sum() < masks["triangle"][-1].sum()  # apex up
    assert masks["cross"][0].sum() == masks["cross"][:, 0].sum() == 2
    flat = [m.tobytes() for m in masks.values()]
    assert len(set(flat)) == 4
    with pytest.raises(ValueError, match="shape must be one of square, circle"):
        shape_mask("star", 6)


def test_regions_on_grid_marks_the_cells_a_shape_touches() -> None:
    region = np.zeros((24, 24), dtype=bool)
    region[3:9, 16:22] = True  # rows 3-8, columns 16-21
    on = regions_on_grid(region, 6, 6)  # cells of 4 pixels
    expected = np.zeros((6, 6), dtype=bool)
    expected[0:3, 4:6] = True
    np.testing.assert_array_equal(on, expected)
    assert regions_on_grid(np.zeros((2, 3, 24, 24), dtype=bool), 6, 6).shape == (2, 3, 6, 6)


def test_batches_are_seeded_and_never_touch_the_global_rng() -> None:
    state = np.random.get_state()[1].copy()  # noqa: NPY002 (checking it stays untouched)
    a, b = CaptionedScenes(rng=5).batch(8), CaptionedScenes(rng=np.random.default_rng(5)).batch(8)
    for name in ("images", "tgt_in", "tgt_out", "tgt_mask", "objects", "regions"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(CaptionedScenes(rng=6).batch(8).images, a.images)
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # noqa: NPY002
    one = CaptionedScenes(min_shapes=2, max_shapes=2, rng=0).batch(5)
    assert (
        one.tgt_mask.sum(axis=1).tolist() == [10] * 5 and (one.tgt_out[one.tgt_mask] != PAD).all()
    )


@pytest.mark.parametrize(("lo", "hi"), [(1, 1), (1, 3), (2, 3)])
def test_the_baseline_is_the_loss_of_the_blind_grammatical_guess(lo: int, hi: int) -> None:
    """Measured on a batch: uniform over the slot's words, 'and' / EOS with the true hazard."""
    task = CaptionedScenes(min_shapes=lo, max_shapes=hi, rng=1)
    batch = task.batch(500)
    n = batch.tgt_mask.sum(axis=1) // 5  # shapes per caption
    kinds = (len(COLOURS), len(SHAPES), len(ROWS), len(COLUMNS))
    total = n.sum() * math.log(math.prod(kinds))
    for count in n:
        for k in range(lo, count + 1):
            stop = 1 / (hi - k + 1)
            total -= math.log(stop) if k == count else math.log(1 - stop)
    measured = total / batch.tgt_mask.sum()
    assert abs(measured - task.baseline_loss()) < 0.01 * task.baseline_loss()
    one = CaptionedScenes(min_shapes=1, max_shapes=1).baseline_loss()
    assert one == pytest.approx(math.log(144) / 5)  # 4 colours x 4 shapes x 3 rows x 3 columns


def test_noise_has_the_asked_spread_and_the_description_names_the_range() -> None:
    clean = CaptionedScenes(noise=0.0, rng=3).batch(1).images  # the same scene, drawn first
    noisy = CaptionedScenes(noise=0.1, rng=3).batch(1).images
    assert abs(float((noisy - clean).std()) - 0.1) < 0.01
    text = CaptionedScenes(min_shapes=2, max_shapes=3).describe()
    assert "2-3 coloured shapes" in text and "24x24" in text


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"image_size": 25}, ValueError, "image_size must be a multiple of 3"),
        ({"image_size": 9}, ValueError, "image_size must be >= 12, got 9"),
        ({"min_shapes": 0}, ValueError, "min_shapes must be >= 1, got 0"),
        ({"min_shapes": 3, "max_shapes": 2}, ValueError, "max_shapes must be >= 3, got 2"),
        ({"max_shapes": 10}, ValueError, "max_shapes must be <= 9, got 10"),
        ({"noise": 0.6}, ValueError, "noise must be <= 0.5, got 0.6"),
        ({"noise": "a"}, TypeError, "noise must be a real number"),
        ({"rng": "seed"}, TypeError, "rng must be a numpy.random.Generator, an integer seed"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        CaptionedScenes(**kwargs)


def test_a_bad_batch_size_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        CaptionedScenes().batch(0)
