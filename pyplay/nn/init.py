r"""Initial weights, made in their target dtype after their size is checked.

Every layer of pyplay draws its initial weights here, so that

- the size is checked against :data:`pyplay.limits.MAX_ELEMENTS` *before* anything is
  allocated (a ``ValueError`` naming the array instead of NumPy's ``MemoryError``);
- the array is allocated once, in its own dtype, and filled in chunks of :data:`CHUNK`
  numbers drawn in float64 and cast: the peak is the model plus one chunk, not twice the model
  (``gen.uniform(...).astype(float32)`` first made a float64 copy of the whole array);
- the values are exactly those of the one-shot expressions the layers used before,
  ``gen.uniform(low, high, size).astype(dtype)`` and
  ``(scale * gen.standard_normal(size) / divisor).astype(dtype)``: a Generator fills an array
  sequentially, so drawing it in consecutive chunks reads the same stream and leaves the
  Generator in the same state.

.. math::

    W_{ij} \sim \mathcal{U}(a, b) \qquad\text{or}\qquad
    W_{ij} = \frac{s\, z_{ij}}{d},\; z_{ij} \sim \mathcal{N}(0, 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyplay.limits import check_elements

__all__ = ["CHUNK", "normal", "uniform"]

CHUNK = 1 << 16  # numbers drawn (in float64) at a time


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def _fill(shape: Any, dtype: Any, what: str, draw: Callable[[int], np.ndarray]) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` filled by ``draw(n)`` (n float64 numbers) in order."""
    dims = check_elements(what, _shape(shape), dtype)
    out = np.empty(dims, dtype=dtype)
    flat = out.reshape(-1)  # a view: (n,)
    for start in range(0, flat.size, CHUNK):
        stop = min(start + CHUNK, flat.size)
        flat[start:stop] = draw(stop - start)  # float64 -> dtype, as .astype did
    return out


def uniform(
    gen: np.random.Generator, low: float, high: float, shape: Any, dtype: Any, what: str
) -> np.ndarray:
    """``gen.uniform(low, high, shape).astype(dtype)``, checked and made in ``dtype``.

    Parameters
    ----------
    gen : numpy.random.Generator
    low, high : float
        The bounds of :math:`\\mathcal{U}(a, b)`.
    shape : int or tuple of int
    dtype : numpy dtype
    what : str
        Names the array for the size check's message (``"Linear weight"``).
    """
    return _fill(shape, dtype, what, lambda n: gen.uniform(low, high, n))


def normal(
    gen: np.random.Generator,
    shape: Any,
    dtype: Any,
    what: str,
    *,
    scale: float = 1.0,
    divisor: float = 1.0,
) -> np.ndarray:
    """``(scale * gen.standard_normal(shape) / divisor).astype(dtype)``, checked and made in
    ``dtype`` (the standard deviation is ``scale / divisor``, computed in that order so that
    the values do not move by a rounding)."""
    return _fill(shape, dtype, what, lambda n: scale * gen.standard_normal(n) / divisor)
