r"""Captioned scenes: small RGB images of coloured shapes and a sentence that names each shape.

The image captioning of Xu et al. (2015, *Show, Attend and Tell*; Wand's IDSIA lecture's "Image
Captioning with Visual Attention", Solberg's TEK5040 lecture's "image captioning with RNN and
content-based attention") in miniature, drawn on the spot, nothing downloaded. An image of
``image_size`` x ``image_size`` pixels (black background) is a 3 x 3 layout of cells; one to
three shapes (``min_shapes``..``max_shapes``) sit in distinct cells, each a

- colour: ``red``, ``green``, ``blue`` or ``yellow``;
- shape: ``square``, ``circle``, ``triangle`` or ``cross``, of ``image_size // 3 - 2`` pixels,
  shifted by up to 2 pixels inside its cell.

The caption names the shapes in reading order (cells row by row), each by its colour, shape,
row (``top``, ``middle``, ``bottom``) and column (``left``, ``center``, ``right``), joined by
``and``::

    red circle top left and blue square bottom center

Every word is grounded in one shape's pixels (:attr:`SceneBatch.objects`, :attr:`SceneBatch.
regions`), so a model that attends while it writes has something to find: the attention for
``red`` should sit on the red circle. Ids 0, 1, 2 are PAD, BOS, EOS
(:class:`~pyplay.tasks.pairs.Vocab`); batches are laid out like
:class:`~pyplay.tasks.pairs.PairBatch`'s targets (``tgt_in`` = BOS + words, ``tgt_out`` =
words + EOS, ``tgt_mask``). ``noise`` adds Gaussian pixel noise of that standard deviation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyplay._checks import as_generator, check_float, check_int
from pyplay.tasks.base import MAX_BATCH
from pyplay.tasks.pairs import BOS, EOS, PAD, Vocab

__all__ = [
    "COLOURS",
    "COLUMNS",
    "ROWS",
    "SHAPES",
    "CaptionedScenes",
    "SceneBatch",
    "regions_on_grid",
    "shape_mask",
]

COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (1.0, 0.0, 0.0),
    "green": (0.0, 1.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
}
SHAPES = ("square", "circle", "triangle", "cross")
ROWS = ("top", "middle", "bottom")
COLUMNS = ("left", "center", "right")
JITTER = 2  # pixels a shape may move inside its cell, each way down and right
WORDS_PER_SHAPE = 4  # colour, shape, row, column


def shape_mask(shape: str, size: int) -> np.ndarray:
    """The pixels of ``shape`` in a ``size`` x ``size`` patch (bool): a full square, the disc
    through the patch's edges, a triangle with its apex up, a plus of thickness ``size // 3``."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")
    y, x = np.mgrid[0:size, 0:size] + 0.5  # pixel centres, (size, size) each
    c = size / 2
    if shape == "square":
        return np.ones((size, size), dtype=bool)
    if shape == "circle":
        return (y - c) ** 2 + (x - c) ** 2 <= c * c
    if shape == "triangle":
        return np.abs(x - c) <= y / 2 + 0.25  # widens from the apex (top) to the base
    half = max(size // 3, 1) / 2
    return (np.abs(x - c) <= half) | (np.abs(y - c) <= half)  # cross


def regions_on_grid(regions: np.ndarray, grid_h: int, grid_w: int) -> np.ndarray:
    """Which cells of a ``grid_h`` x ``grid_w`` grid over the image each region touches:
    ``regions`` (..., S, S) bool -> (..., grid_h, grid_w) bool, cell ``(m, n)`` covering the
    pixel rows ``floor(m S / grid_h)`` to ``floor((m + 1) S / grid_h) - 1`` (and so for
    columns). The cells a word's shape touches are where its attention should go."""
    S_h, S_w = regions.shape[-2:]
    rows = np.floor(np.arange(S_h) * grid_h / S_h).astype(np.int64)  # (S,) cell of each row
    cols = np.floor(np.arange(S_w) * grid_w / S_w).astype(np.int64)  # (S,)
    r1 = np.equal.outer(rows, np.arange(grid_h)).astype(np.float64)  # (S, gh)
    c1 = np.equal.outer(cols, np.arange(grid_w)).astype(np.float64)  # (S, gw)
    counts = np.einsum("...yx,ym,xn->...mn", regions.astype(np.float64), r1, c1)
    return counts > 0  # (..., gh, gw)


@dataclass(frozen=True)
class SceneBatch:
    """A batch of captioned scenes (module docstring).

    images : (B, 3, S, S) float64 in [0, 1] (plus noise)
    tgt_in, tgt_out : (B, U) int64, BOS + caption, caption + EOS, padded with PAD
    tgt_mask : (B, U) bool, the positions that count
    objects : (B, U) int64, which shape ``tgt_out[b, u]`` names (its index in ``regions``),
        -1 for ``and``, EOS and PAD
    regions : (B, K, S, S) bool, the pixels of shape k (K = max_shapes; empty when absent)
    """

    images: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray
    tgt_mask: np.ndarray
    objects: np.ndarray
    regions: np.ndarray


class CaptionedScenes:
    """Images of one to three coloured shapes and their captions (module docstring).

    Parameters
    ----------
    image_size : int
        S, a multiple of 3 from 12 to 96 (the 3 x 3 layout's cells are S / 3 pixels).
    min_shapes, max_shapes : int
        How many shapes an image holds, drawn uniformly in this range (1..9).
    noise : float
        Standard deviation of Gaussian pixel noise, 0 to 0.5.
    rng : numpy.random.Generator or int seed
    """

    name = "scenes"
    title = "Captioned scenes"
    input_kind = "image"
    output_kind = "caption"

    def __init__(
        self,
        image_size: int = 24,
        min_shapes: int = 1,
        max_shapes: int = 3,
        noise: float = 0.0,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        S = self.image_size = check_int("image_size", image_size, min_value=12, max_value=96)
        if S % 3:
            raise ValueError(f"image_size must be a multiple of 3 (a 3 x 3 layout), got {S}")
        self.min_shapes = check_int("min_shapes", min_shapes, min_value=1, max_value=9)
        self.max_shapes = check_int(
            "max_shapes", max_shapes, min_value=self.min_shapes, max_value=9
        )
        self.noise = check_float("noise", noise, min_value=0.0, max_value=0.5)
        self.rng = as_generator(rng)
        self.config = {
            "image_size": S,
            "min_shapes": self.min_shapes,
            "max_shapes": self.max_shapes,
            "noise": self.noise,
        }
        self.vocab = Vocab((*COLOURS, *SHAPES, *ROWS, *COLUMNS, "and"), sep=" ")
        self.shape_size = S // 3 - JITTER
        self._masks = {s: shape_mask(s, self.shape_size) for s in SHAPES}
        self.image_shape = (3, S, S)
        self.vocab_size = len(self.vocab)
        self.max_len = (WORDS_PER_SHAPE + 1) * self.max_shapes  # words, ands and EOS

    def _scene(self) -> tuple[np.ndarray, list[str], list[int], np.ndarray]:
        """One image (3, S, S), its caption's words, the shape each names, the regions."""
        S, K, cell, size = self.image_size, self.max_shapes, self.image_size // 3, self.shape_size
        n = int(self.rng.integers(self.min_shapes, self.max_shapes + 1))
        cells = np.sort(self.rng.choice(9, size=n, replace=False))  # reading order
        image = np.zeros((3, S, S))  # (3, S, S)
        regions = np.zeros((K, S, S), dtype=bool)  # (K, S, S)
        words: list[str] = []
        objects: list[int] = []
        for k, cell_id in enumerate(cells):
            colour = list(COLOURS)[int(self.rng.integers(len(COLOURS)))]
            shape = SHAPES[int(self.rng.integers(len(SHAPES)))]
            row, col = divmod(int(cell_id), 3)
            dy, dx = self.rng.integers(0, JITTER + 1, size=2)
            top, left = row * cell + int(dy), col * cell + int(dx)  # inside the cell
            mask = self._masks[shape]  # (size, size)
            regions[k, top : top + size, left : left + size] = mask
            image[:, regions[k]] = np.array(COLOURS[colour])[:, None]
            if k:
                words.append("and")
                objects.append(-1)
            words += [colour, shape, ROWS[row], COLUMNS[col]]
            objects += [k] * WORDS_PER_SHAPE
        if self.noise:
            image += self.noise * self.rng.standard_normal(image.shape)
        return image, words, objects, regions

    def batch(self, batch_size: int) -> SceneBatch:
        """A fresh batch of ``batch_size`` scenes, padded to its longest caption."""
        B = check_int("batch_size", batch_size, min_value=1, max_value=MAX_BATCH)
        scenes = [self._scene() for _ in range(B)]
        U = max(len(w) for _, w, _, _ in scenes) + 1
        tgt_in = np.full((B, U), PAD, dtype=np.int64)
        tgt_out = np.full((B, U), PAD, dtype=np.int64)
        objects = np.full((B, U), -1, dtype=np.int64)
        for b, (_, words, obj, _) in enumerate(scenes):
            ids = self.vocab.encode(words, "caption")
            tgt_in[b, : len(ids) + 1] = [BOS, *ids]
            tgt_out[b, : len(ids) + 1] = [*ids, EOS]
            objects[b, : len(obj)] = obj
        lengths = np.array([len(w) for _, w, _, _ in scenes])  # (B,)
        tgt_mask = np.arange(U)[None, :] <= lengths[:, None]  # (B, U)
        images = np.stack([s[0] for s in scenes])  # (B, 3, S, S)
        regions = np.stack([s[3] for s in scenes])  # (B, K, S, S)
        return SceneBatch(images, tgt_in, tgt_out, tgt_mask, objects, regions)

    def caption(self, ids: np.ndarray) -> str:
        """The words of ``ids`` up to the first EOS."""
        return self.vocab.decode(ids)

    def baseline_loss(self) -> float:
        r"""Mean cross-entropy per counted word of a predictor that knows the grammar but not
        the image: uniform over the colours, shapes, rows and columns in their slots, and after
        the k-th shape ``and`` or EOS with the true chance that the caption ends there,
        :math:`1 / (n_{max} - k + 1)` for :math:`k \ge n_{min}` (else surely ``and``). Per
        caption of n shapes it pays :math:`n \ln(|C| |S| |R| |K|)` for the shapes' words; the
        mean is :math:`E[\text{loss}] / E[\text{words}]`, with :math:`5 n` words and EOS."""
        per_shape = math.log(len(COLOURS) * len(SHAPES) * len(ROWS) * len(COLUMNS))
        lo, hi = self.min_shapes, self.max_shapes
        total = words = 0.0
        for n in range(lo, hi + 1):
            loss = n * per_shape
            for k in range(lo, n + 1):  # the stop slot after shape k: 'and' (k < n) or EOS
                stop = 1.0 / (hi - k + 1)
                loss -= math.log(stop) if k == n else math.log(1.0 - stop)
            total += loss
            words += 5 * n
        return total / words

    def describe(self) -> str:
        S, lo, hi = self.image_size, self.min_shapes, self.max_shapes
        many = f"{lo}" if lo == hi else f"{lo}-{hi}"
        return (
            f"{S}x{S} pictures of {many} coloured shapes (red, green, blue, yellow; square, "
            "circle, triangle, cross) in a 3x3 layout; write the caption that names each shape "
            "in reading order by colour, shape, row and column, such as 'red circle top left "
            "and blue square bottom center'. Every word belongs to one shape's pixels, so "
            "attention has something to find."
        )
