"""Cluttered glyphs: name the one small digit somewhere on a canvas strewn with pieces of others.

Each example is a ``1 x size x size`` canvas (zeros) holding one *target*, a 7 x 5 digit of
the built-in bitmap font :data:`FONT` at a random place, and ``clutter`` *fragments*: 3 x 3
windows cut from random digits, scattered at random places that do not touch the target's box
(so the label is never ambiguous). The target is the class. Nothing is downloaded: the font is
ten strings below.

The task is made for location-based attention (Solberg's TEK5040 lecture's "Image classification
with RNN and location-based attention"; Mnih et al. 2014's cluttered MNIST in miniature): the
digit covers a few percent of the canvas, a glimpse small enough to read it sees a fraction of
the canvas, and the fragments look like strokes of digits, so a model must find the digit
before it can name it. ``boxes`` say where the target is (for a metric of where glimpses land
and for drawing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyplay._checks import as_generator, check_int
from pyplay.limits import check_elements
from pyplay.tasks.base import MAX_BATCH

__all__ = ["FONT", "GLYPH_SHAPE", "ClutteredGlyphs", "ImageBatch", "glyphs"]

# the ten digits, 7 rows of 5 pixels each ("#" ink, "." paper), a classic 5 x 7 LCD font
FONT = (
    ".###. #...# #..## #.#.# ##..# #...# .###.",  # 0
    "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",  # 1
    ".###. #...# ....# ...#. ..#.. .#... #####",  # 2
    "##### ...#. ..#.. ...#. ....# #...# .###.",  # 3
    "...#. ..##. .#.#. #..#. ##### ...#. ...#.",  # 4
    "##### #.... ####. ....# ....# #...# .###.",  # 5
    "..##. .#... #.... ####. #...# #...# .###.",  # 6
    "##### ....# ...#. ..#.. .#... .#... .#...",  # 7
    ".###. #...# #...# .###. #...# #...# .###.",  # 8
    ".###. #...# #...# .#### ....# ...#. .##..",  # 9
)
GLYPH_SHAPE = (7, 5)  # rows, columns of a glyph
FRAGMENT = 3  # a fragment is a FRAGMENT x FRAGMENT window of a glyph
TRIES = 8  # places drawn per fragment; a fragment whose every place touches the target is left out


def glyphs() -> np.ndarray:
    """The font as an array (10, 7, 5) of 0.0 and 1.0."""
    rows = [[[c == "#" for c in row] for row in digit.split()] for digit in FONT]
    return np.array(rows, dtype=np.float64)  # (10, 7, 5)


@dataclass(frozen=True)
class ImageBatch:
    """``inputs`` (B, 1, size, size) float in [0, 1], ``targets`` (B,) int64 the digits and
    ``boxes`` (B, 4) int64 the targets' ``(top, left, height, width)`` in pixels."""

    inputs: np.ndarray
    targets: np.ndarray
    boxes: np.ndarray


class ClutteredGlyphs:
    """One digit on a cluttered canvas: name it (module docstring).

    Parameters
    ----------
    size : int
        The canvas's side in pixels (12..128).
    clutter : int
        Fragments per canvas (0..64).
    rng : numpy.random.Generator or int seed
        Every batch's draws (the global NumPy RNG is never used).
    """

    name = "cluttered"
    title = "Cluttered digits"
    input_kind = "image"
    output_kind = "image classes"
    num_classes = len(FONT)
    channels = 1

    def __init__(
        self, size: int = 28, clutter: int = 4, rng: np.random.Generator | int | None = 0
    ) -> None:
        self.size = check_int("size", size, min_value=12, max_value=128)
        self.clutter = check_int("clutter", clutter, min_value=0, max_value=64)
        self.rng = as_generator(rng)
        self.config = {"size": self.size, "clutter": self.clutter}
        self.font = glyphs()  # (10, 7, 5)

    def batch(self, batch_size: int) -> ImageBatch:
        """A fresh batch of ``batch_size`` canvases (see the module docstring)."""
        B = check_int("batch_size", batch_size, min_value=1, max_value=MAX_BATCH)
        S, (gh, gw), r = self.size, GLYPH_SHAPE, self.rng
        check_elements("a batch of canvases (B, 1, size, size)", (B, 1, S, S), np.float64)
        x = np.zeros((B, 1, S, S))  # (B, 1, S, S)
        targets = r.integers(self.num_classes, size=B)  # (B,)
        top = r.integers(S - gh + 1, size=B)  # (B,)
        left = r.integers(S - gw + 1, size=B)  # (B,)
        self._scatter(x, top, left)
        rows = np.arange(B)[:, None, None]
        ys = top[:, None, None] + np.arange(gh)[None, :, None]  # (B, 7, 1)
        xs = left[:, None, None] + np.arange(gw)[None, None, :]  # (B, 1, 5)
        x[rows, 0, ys, xs] = self.font[targets]  # the target over everything
        boxes = np.stack([top, left, np.full(B, gh), np.full(B, gw)], axis=1)  # (B, 4)
        return ImageBatch(x, targets.astype(np.int64), boxes.astype(np.int64))

    def _scatter(self, x: np.ndarray, top: np.ndarray, left: np.ndarray) -> None:
        """Draw ``clutter`` fragments per canvas into ``x`` (B, 1, S, S), clear of the targets'
        boxes by one pixel: of :data:`TRIES` places drawn per fragment the first clear one."""
        B, n, S, f, r = x.shape[0], self.clutter, self.size, FRAGMENT, self.rng
        if n == 0:
            return
        (gh, gw), K = GLYPH_SHAPE, self.num_classes
        which = r.integers(K, size=(B, n))  # (B, n) digits the fragments are cut from
        fy = r.integers(gh - f + 1, size=(B, n))  # (B, n) the window inside the digit
        fx = r.integers(gw - f + 1, size=(B, n))  # (B, n)
        py = r.integers(S - f + 1, size=(B, n, TRIES))  # (B, n, TRIES) candidate places
        px = r.integers(S - f + 1, size=(B, n, TRIES))  # (B, n, TRIES)
        t, lft = top[:, None, None], left[:, None, None]  # (B, 1, 1)
        clear = (py + f < t) | (py > t + gh) | (px + f < lft) | (px > lft + gw)  # (B, n, TRIES)
        first = clear.argmax(axis=2)  # (B, n) the first clear place (0 when none is)
        keep = np.any(clear, axis=2, keepdims=True)[:, :, :, None]  # (B, n, 1, 1)
        py = np.take_along_axis(py, first[:, :, None], axis=2)[:, :, 0]  # (B, n)
        px = np.take_along_axis(px, first[:, :, None], axis=2)[:, :, 0]  # (B, n)
        d = np.arange(f)
        pieces = self.font[
            which[:, :, None, None], fy[:, :, None, None] + d[:, None], fx[:, :, None, None] + d
        ]  # (B, n, f, f)
        pieces *= keep
        b = np.arange(B)[:, None, None, None]  # (B, 1, 1, 1)
        ys = py[:, :, None, None] + d[:, None]  # (B, n, f, 1)
        xs = px[:, :, None, None] + d  # (B, n, 1, f)
        np.maximum.at(x[:, 0], (b, ys, xs), pieces)  # overlapping fragments stay 0/1

    def baseline_loss(self) -> float:
        """Cross-entropy of the uniform guess, ln 10."""
        return math.log(self.num_classes)

    def describe(self) -> str:
        return (
            f"A {self.size} x {self.size} canvas with one 7 x 5 digit at a random place and "
            f"{self.clutter} fragments of other digits around it: name the digit. A glimpse "
            "small enough to read the digit sees only part of the canvas, so the model must "
            "find it first."
        )
