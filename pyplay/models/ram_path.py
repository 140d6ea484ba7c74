r"""Where a recurrent attention model looked (:meth:`RecurrentAttention.glimpse_path
<pyplay.models.ram.RecurrentAttention.glimpse_path>`), in the image's pixels, for a page to
draw: the glimpse centres :math:`l^0 \dots l^{\tau-1}` (the lecture's loop looks at
:math:`l^{t-1}` at step :math:`t` and classifies at :math:`t = \tau`, so no glimpse is taken
at a :math:`l^\tau`) and the square each of the :math:`k` patches covered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyplay.models.ram_sensor import corners

__all__ = ["GlimpsePath", "path_of"]


@dataclass(frozen=True)
class GlimpsePath:
    """Where each example looked: ``locations`` (B, tau, 2) :math:`l^0 \\dots l^{\\tau-1}` in
    [-1, 1] (row, column) as looked at (clipped), ``centres`` (B, tau, 2) the same in pixels,
    ``sizes`` the patches' sides in pixels (smallest first), ``corners`` (B, tau, k, 2) each
    patch's top-left pixel (may lie outside the image) and ``predicted`` (B,) the classes."""

    locations: np.ndarray
    centres: np.ndarray
    sizes: tuple[int, ...]
    corners: np.ndarray
    predicted: np.ndarray


def path_of(
    l: np.ndarray, shape: tuple[int, int], sizes: tuple[int, ...], predicted: np.ndarray
) -> GlimpsePath:
    """The path of the locations ``l`` (tau, B, 2) (time-major, as in the model's cache) on
    images of ``shape`` (H, W), with patches of sides ``sizes``."""
    H, W = shape
    by_example = l.transpose(1, 0, 2).astype(np.float64)  # (B, tau, 2)
    centres = (by_example + 1.0) * np.array([H, W]) / 2.0  # (B, tau, 2)
    flat = by_example.reshape(-1, 2)  # (B * tau, 2)
    tl = np.stack([corners(flat, shape, n) for n in sizes], axis=1)  # (B * tau, k, 2)
    tl = tl.reshape(*by_example.shape[:2], len(sizes), 2)  # (B, tau, k, 2)
    return GlimpsePath(by_example, centres, sizes, tl, predicted)
