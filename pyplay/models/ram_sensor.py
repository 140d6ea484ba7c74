r"""The glimpse sensor :math:`\rho(x, l)` of the recurrent attention model (Mnih et al. 2014).

Solberg's TEK5040 lecture defines a *glimpse* as a crop of the image and adds that one "usually
extract[s] some lower resolution crops as well". The sensor crops :math:`k` square patches
centred on the location :math:`l`, of sides :math:`g, s g, s^2 g, \dots, s^{k-1} g` pixels
(``size`` g, ``factor`` s), and averages each larger one down to :math:`g \times g` (blocks of
:math:`s^i \times s^i` pixels): the centre sharp, the surroundings ever coarser, every patch
the same number of numbers.

A location is :math:`l = (l_1, l_2) \in [-1, 1]^2`, the row then the column: :math:`(-1, -1)`
the top-left corner of the image, :math:`(0, 0)` its centre, :math:`(1, 1)` the bottom-right
corner. On an :math:`H \times W` image the centre lies at pixel coordinates
:math:`c = ((l_1 + 1) H / 2, (l_2 + 1) W / 2)` (pixel :math:`j` covering :math:`[j, j + 1)`),
and a patch of side :math:`n` starts at row :math:`\lfloor c_1 - n/2 + 1/2 \rfloor` (columns
alike). Where a patch reaches past the image it reads zeros. The crop is not differentiable
in :math:`l` (whole pixels), which is why the model learns where to look by REINFORCE.

Two paths compute the same glimpses: :func:`sense` crops each patch and averages its blocks,
the readable definition; :func:`pyramid` and :func:`look`, what the model runs, average every
:math:`s^i \times s^i` block of the padded image once per batch (from its integral image)
and then only gather the :math:`g \times g` block means a patch needs at each step. The tests
hold them equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Pyramid", "corners", "look", "patch_sizes", "pyramid", "sense"]


def patch_sizes(size: int, scales: int, factor: int) -> tuple[int, ...]:
    """The sides :math:`g, s g, \\dots, s^{k-1} g` of the ``scales`` patches."""
    return tuple(size * factor**i for i in range(scales))


def corners(l: np.ndarray, shape: tuple[int, int], side: int) -> np.ndarray:
    """Top-left pixels (B, 2) of the patches of side ``side`` centred on ``l`` (B, 2) in an
    image of ``shape`` (H, W); may lie outside the image."""
    H, W = shape
    c = (np.clip(l, -1.0, 1.0) + 1.0) * np.array([H, W]) / 2.0  # (B, 2) pixel coordinates
    return np.floor(c - side / 2.0 + 0.5).astype(np.int64)  # (B, 2)


def sense(images: np.ndarray, l: np.ndarray, size: int, scales: int, factor: int) -> np.ndarray:
    r""":math:`\rho(x, l)`: the ``scales`` patches of ``images`` (B, C, H, W) around ``l``
    (B, 2), each averaged down to ``size`` x ``size``: (B, scales, C, size, size)."""
    B, C, H, W = images.shape
    sides = patch_sizes(size, scales, factor)
    pad = sides[-1] // 2 + 1  # the largest patch around a corner stays inside the padding
    padded = np.zeros((B, C, H + 2 * pad, W + 2 * pad), dtype=images.dtype)  # zeros outside
    padded[:, :, pad : pad + H, pad : pad + W] = images
    out = np.empty((B, scales, C, size, size), dtype=images.dtype)
    b = np.arange(B)[:, None, None, None]  # (B, 1, 1, 1)
    ch = np.arange(C)[None, :, None, None]  # (1, C, 1, 1)
    for i, n in enumerate(sides):
        top_left = corners(l, (H, W), n) + pad  # (B, 2) in the padded image
        rows = top_left[:, 0, None] + np.arange(n)  # (B, n)
        cols = top_left[:, 1, None] + np.arange(n)  # (B, n)
        patch = padded[b, ch, rows[:, None, :, None], cols[:, None, None, :]]  # (B, C, n, n)
        f = n // size
        out[:, i] = patch.reshape(B, C, size, f, size, f).mean(axis=(3, 5))  # (B, C, g, g)
    return out


@dataclass(frozen=True)
class Pyramid:
    """The block means of a batch of padded images, what :func:`look` gathers from."""

    means: tuple[np.ndarray, ...]  # per scale i: (B, C, Hp - f + 1, Wp - f + 1), f = factor**i
    pad: int  # zeros around the images
    shape: tuple[int, int]  # (H, W) of the images
    size: int  # g
    factor: int  # s


def pyramid(images: np.ndarray, size: int, scales: int, factor: int) -> Pyramid:
    """For each scale :math:`i` the mean of the :math:`f \times f` block (:math:`f = s^i`)
    starting at every pixel of ``images`` (B, C, H, W) padded with zeros: the block sums of
    scale :math:`i` are :math:`s \times s` sums of those of scale :math:`i - 1`, :math:`f / s`
    pixels apart."""
    B, C, H, W = images.shape
    pad = patch_sizes(size, scales, factor)[-1] // 2 + 1
    padded = np.zeros((B, C, H + 2 * pad, W + 2 * pad), dtype=images.dtype)  # (B, C, Hp, Wp)
    padded[:, :, pad : pad + H, pad : pad + W] = images
    means, sums, step = [padded], padded, 1
    for _ in range(1, scales):
        n = sums.shape[2] - (factor - 1) * step  # block starts left along the rows
        rows = sums[:, :, :n].copy()  # (B, C, n, .)
        for j in range(1, factor):
            rows += sums[:, :, j * step : j * step + n]
        m = rows.shape[3] - (factor - 1) * step  # and along the columns
        sums = rows[:, :, :, :m].copy()  # (B, C, n, m)
        for j in range(1, factor):
            sums += rows[:, :, :, j * step : j * step + m]
        step *= factor
        means.append(sums / (step * step))  # (B, C, Hp - f + 1, Wp - f + 1), f = step
    return Pyramid(tuple(means), pad, (H, W), size, factor)


def look(pyr: Pyramid, l: np.ndarray) -> np.ndarray:
    """:math:`\rho(x, l)` (B, scales, C, size, size) as :func:`sense`, gathered from ``pyr``."""
    first = pyr.means[0]
    B, C, g = first.shape[0], first.shape[1], pyr.size
    out = np.empty((B, len(pyr.means), C, g, g), dtype=first.dtype)
    b = np.arange(B)[:, None, None, None]  # (B, 1, 1, 1)
    ch = np.arange(C)[None, :, None, None]  # (1, C, 1, 1)
    for i, means in enumerate(pyr.means):
        f = pyr.factor**i
        top_left = corners(l, pyr.shape, f * g) + pyr.pad  # (B, 2) in the padded image
        rows = top_left[:, 0, None] + f * np.arange(g)  # (B, g) each block's first row
        cols = top_left[:, 1, None] + f * np.arange(g)  # (B, g)
        out[:, i] = means[b, ch, rows[:, None, :, None], cols[:, None, None, :]]  # (B, C, g, g)
    return out
