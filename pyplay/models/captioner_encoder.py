r"""The captioner's eyes: a small convolutional net whose last feature map is a grid of
annotation vectors :math:`a_1 \dots a_L`, the lecture's 14 x 14 x 512 grid in miniature.

Xu et al. (2015) take the 14 x 14 x 512 feature map of a VGG net's fourth convolutional stage:
:math:`L = 196` vectors of :math:`D = 512`, each describing one region of the image. Here two
layers do it for a small picture (:class:`~pyplay.nn.Conv2d`, PyTorch's layout):

.. math::

    F^{(1)} = \mathrm{ReLU}(\mathrm{conv}_{3\times3,\,s=2,\,p=1}(x)), \qquad
    F^{(2)} = \mathrm{ReLU}(\mathrm{conv}_{4\times4,\,s=2,\,p=1}(F^{(1)})),

so a 24 x 24 image gives a 12 x 12 map, then a 6 x 6 grid (:math:`L = 36`), each cell seeing
9 x 9 pixels, a window every 4. A convolution is the same at every place, so the vector of a
cell says *what* is there but hardly *where*; each :math:`a_i` gets its cell's coordinates
appended, :math:`a_i = [F^{(2)}_i;\, p(i)]` with
:math:`p(i) = (2m/(g_h - 1) - 1,\; 2n/(g_w - 1) - 1)` for cell :math:`(m, n)`: the positional
encoding :math:`x^i_{pos} = (x^i, p(i))` of Solberg's TEK5040 lecture's self-attention slides, which
lets a caption say *top left*. Cells are numbered row by row, :math:`i = m g_w + n`, so an
attention vector :math:`\alpha_t` (L,) reshapes to the grid (g_h, g_w).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyplay._checks import check_array
from pyplay.nn import Conv2d
from pyplay.nn.conv2d import Conv2dCache

__all__ = ["COORDS", "ConvEncoder", "EncoderCache"]

COORDS = 2  # the (row, column) coordinates appended to every annotation vector


@dataclass(frozen=True)
class EncoderCache:
    """What :meth:`ConvEncoder.backward` needs: both layers' caches and pre-activations."""

    conv1: Conv2dCache
    y1: np.ndarray  # (B, C1, S, S) before the ReLU
    conv2: Conv2dCache
    y2: np.ndarray  # (B, F, g_h, g_w) before the ReLU


class ConvEncoder:
    """Images (B, 3, S, S) -> annotation vectors ``a`` (B, L, F + 2) (module docstring).

    Parameters
    ----------
    image_size : int
        S (at least 8).
    channels, feature_size : int
        C1 of the first layer, F of the second.
    dtype, rng
        As every layer's.
    """

    def __init__(
        self,
        image_size: int,
        channels: int,
        feature_size: int,
        dtype: Any,
        rng: np.random.Generator,
    ) -> None:
        self.image_size = image_size
        self.conv1 = Conv2d(3, channels, 3, stride=2, padding=1, dtype=dtype, rng=rng)
        self.conv2 = Conv2d(channels, feature_size, 4, stride=2, padding=1, dtype=dtype, rng=rng)
        self.grid = self.conv2.output_shape(*self.conv1.output_shape(image_size, image_size))
        gh, gw = self.grid
        m, n = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")  # (g_h, g_w) each
        scale = np.array([max(gh - 1, 1), max(gw - 1, 1)], dtype=np.float64)
        p = 2 * np.stack([m.ravel(), n.ravel()], axis=1) / scale - 1  # (L, 2) in [-1, 1]
        self.coords = p.astype(dtype)  # (L, 2)
        self.feature_size = feature_size
        self.annotation_size = feature_size + COORDS  # D
        self.params = {
            **{f"conv1.{k}": v for k, v in self.conv1.params.items()},
            **{f"conv2.{k}": v for k, v in self.conv2.params.items()},
        }

    def forward(self, images: Any) -> tuple[np.ndarray, EncoderCache]:
        """Annotation vectors ``a`` (B, L, D) and the cache."""
        S = self.image_size
        x = check_array("images", images, ndim=4, dtype=self.coords.dtype, layout="(B, 3, S, S)")
        if x.shape[1:] != (3, S, S):
            raise ValueError(f"images must have shape (B, 3, {S}, {S}), got {x.shape}")
        y1, c1 = self.conv1.forward(x)  # (B, C1, S, S)
        y2, c2 = self.conv2.forward(np.maximum(y1, 0))  # (B, F, g_h, g_w)
        B, F = y2.shape[:2]
        feats = np.maximum(y2, 0).reshape(B, F, -1).transpose(0, 2, 1)  # (B, L, F)
        coords = np.broadcast_to(self.coords, (B, *self.coords.shape))  # (B, L, 2)
        a = np.concatenate([feats, coords], axis=2)  # (B, L, F + 2)
        return a, EncoderCache(c1, y1, c2, y2)

    def backward(self, da: np.ndarray, cache: EncoderCache) -> dict[str, np.ndarray]:
        """The layers' gradients (``conv1.weight``, ...) from d(loss)/d(a) (B, L, D); the
        coordinates are constants and take none."""
        y1, y2 = cache.y1, cache.y2
        F = y2.shape[1]
        dF = da[:, :, :F].transpose(0, 2, 1).reshape(y2.shape)  # (B, F, g_h, g_w)
        dr1, g2 = self.conv2.backward(dF * (y2 > 0), cache.conv2)  # (B, C1, S, S)
        _, g1 = self.conv1.backward(dr1 * (y1 > 0), cache.conv1)
        return {
            **{f"conv1.{k}": v for k, v in g1.items()},
            **{f"conv2.{k}": v for k, v in g2.items()},
        }
