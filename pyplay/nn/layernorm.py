r"""Layer normalisation (Ba et al. 2016), ``torch.nn.LayerNorm``'s layout and names.

Over the last axes (``normalized_shape``, :math:`N` elements), for each leading index:

.. math::

    \mu = \frac1N \sum_k x_k, \quad \sigma^2 = \frac1N \sum_k (x_k - \mu)^2, \quad
    \hat x = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}, \quad y = \gamma \odot \hat x + \beta,

with :math:`\gamma` = ``weight`` and :math:`\beta` = ``bias`` (the biased variance, as torch).
Backward, with :math:`r = 1/\sqrt{\sigma^2 + \epsilon}` and
:math:`\delta\hat x = \gamma \odot \delta y`:

.. math::

    \delta x = r \Big(\delta\hat x - \overline{\delta\hat x}
        - \hat x\, \overline{\delta\hat x \odot \hat x}\Big), \quad
    \delta\gamma = \sum \delta y \odot \hat x, \quad \delta\beta = \sum \delta y,

where the bars are means over the normalised axes and the sums run over the leading axes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from pyplay._checks import check_array, check_dtype, check_float, check_int

__all__ = ["LayerNorm", "LayerNormCache"]


@dataclass(frozen=True)
class LayerNormCache:
    xhat: np.ndarray  # (..., *normalized_shape) the normalised input
    rstd: np.ndarray  # (..., 1, ..., 1) 1 / sqrt(var + eps)


class LayerNorm:
    """``torch.nn.LayerNorm`` in NumPy.

    Parameters
    ----------
    normalized_shape : int or tuple of int
        The trailing axes normalised together, e.g. ``d_model``.
    eps : float
        Added to the variance, > 0.
    elementwise_affine : bool
        Learn ``weight`` (ones at start) and, with ``bias=True``, ``bias`` (zeros).
    bias : bool
        With ``elementwise_affine``, also learn ``bias``.
    dtype : numpy.float32 or numpy.float64

    Attributes
    ----------
    params : dict of str to ndarray
        ``weight`` and ``bias``, each of shape ``normalized_shape`` (torch's names).
    """

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        dtype: Any = np.float32,
    ) -> None:
        if isinstance(normalized_shape, Integral) and not isinstance(normalized_shape, bool):
            shape: tuple[int, ...] = (check_int("normalized_shape", normalized_shape, min_value=1),)
        elif isinstance(normalized_shape, tuple | list) and normalized_shape:
            shape = tuple(check_int("normalized_shape", n, min_value=1) for n in normalized_shape)
        else:
            raise TypeError(
                "normalized_shape must be a positive integer or a non-empty tuple of them, "
                f"got {normalized_shape!r}"
            )
        self.normalized_shape = shape
        self.eps = check_float("eps", eps, min_value=0.0, min_inclusive=False)
        for name, flag in (("elementwise_affine", elementwise_affine), ("bias", bias)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        self.elementwise_affine = elementwise_affine
        self.dtype = check_dtype("dtype", dtype)
        self.params: dict[str, np.ndarray] = {}
        if elementwise_affine:
            self.params["weight"] = np.ones(shape, dtype=self.dtype)
            if bias:
                self.params["bias"] = np.zeros(shape, dtype=self.dtype)

    @property
    def _axes(self) -> tuple[int, ...]:
        return tuple(range(-len(self.normalized_shape), 0))

    @property
    def _size(self) -> int:
        """N, the number of elements normalised together."""
        return math.prod(self.normalized_shape)

    def forward(self, x: Any) -> tuple[np.ndarray, LayerNormCache]:
        """``y`` (..., *normalized_shape) like ``x``, and the cache for :meth:`backward`."""
        x = check_array("x", x, dtype=self.dtype)
        k = len(self.normalized_shape)
        if x.ndim < k or x.shape[x.ndim - k :] != self.normalized_shape:
            raise ValueError(
                f"x must end with normalized_shape={self.normalized_shape}, got shape {x.shape}"
            )
        axes, n = self._axes, self._size
        mu = np.add.reduce(x, axis=axes, keepdims=True)  # (..., 1, ..., 1)
        mu /= n  # the mean, as x.mean() (without its Python-level overhead)
        xc = x - mu  # (..., *S)
        var = np.add.reduce(xc * xc, axis=axes, keepdims=True)  # (..., 1, ..., 1)
        var /= n
        rstd = 1.0 / np.sqrt(var + self.eps)
        xhat = xc * rstd  # (..., *S)
        y = xhat
        if "weight" in self.params:
            y = xhat * self.params["weight"]
        if "bias" in self.params:
            y = y + self.params["bias"]
        return y.astype(self.dtype, copy=False), LayerNormCache(xhat, rstd)

    def backward(self, dy: Any, cache: LayerNormCache) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(dx, grads)`` from d(loss)/d(y); ``grads`` has the keys of :attr:`params`."""
        xhat, rstd = cache.xhat, cache.rstd
        dy = check_array("dy", dy, dtype=self.dtype)
        if dy.shape != xhat.shape:
            raise ValueError(f"dy must have shape {xhat.shape}, got {dy.shape}")
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))  # the leading axes
        grads: dict[str, np.ndarray] = {}
        dxhat = dy
        if "weight" in self.params:
            grads["weight"] = (dy * xhat).sum(axis=lead)  # (*S,)
            dxhat = dy * self.params["weight"]  # (..., *S)
        if "bias" in self.params:
            grads["bias"] = dy.sum(axis=lead)  # (*S,)
        axes, n = self._axes, self._size
        mean_d = np.add.reduce(dxhat, axis=axes, keepdims=True)  # (..., 1, ..., 1)
        mean_d /= n
        mean_dx = np.add.reduce(dxhat * xhat, axis=axes, keepdims=True)  # (..., 1, ..., 1)
        mean_dx /= n
        dx = rstd * (dxhat - mean_d - xhat * mean_dx)  # (..., *S)
        return dx.astype(self.dtype, copy=False), grads
