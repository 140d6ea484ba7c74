"""Affine layer ``y = x W^T + b`` over the last axis, PyTorch's layout (``weight (out, in)``).

.. math::

    y = x W^\\top + b, \\qquad
    \\frac{\\partial L}{\\partial x} = \\delta y\\, W, \\qquad
    \\frac{\\partial L}{\\partial W} = \\delta y^\\top x, \\qquad
    \\frac{\\partial L}{\\partial b} = \\textstyle\\sum \\delta y .
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_dtype, check_int
from pyplay.nn import init
from pyplay.nn._ops import matmul

__all__ = ["Linear"]


class Linear:
    """``torch.nn.Linear`` in NumPy: any leading axes, features last.

    Parameters
    ----------
    in_features, out_features : int
    bias : bool
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, as torch's default.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.in_features = check_int("in_features", in_features, min_value=1)
        self.out_features = check_int("out_features", out_features, min_value=1)
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be True or False, got {bias!r}")
        self.dtype = check_dtype("dtype", dtype)
        gen = as_generator(rng)
        k = 1.0 / np.sqrt(self.in_features)
        shape = (self.out_features, self.in_features)
        self.params: dict[str, np.ndarray] = {
            "weight": init.uniform(
                gen, -k, k, shape, self.dtype, "Linear weight (out_features, in_features)"
            )
        }
        if bias:
            self.params["bias"] = init.uniform(
                gen, -k, k, self.out_features, self.dtype, "Linear bias (out_features,)"
            )

    def forward(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """``y = x W^T + b`` for ``x`` (..., in_features); the cache is ``x``."""
        x = check_array("x", x, dtype=self.dtype)
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(
                f"x must have in_features={self.in_features} in its last axis, got shape {x.shape}"
            )
        flat = x.reshape(-1, self.in_features)  # (N, in)
        y = matmul(flat, self.params["weight"].T)  # (N, out)
        if "bias" in self.params:
            y += self.params["bias"]
        return y.reshape(*x.shape[:-1], self.out_features), x  # (..., out)

    def backward(self, dy: Any, cache: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Returns ``dx`` (..., in_features) and the gradients of ``weight`` and ``bias``."""
        x = cache
        dy = check_array("dy", dy, dtype=self.dtype)
        if dy.shape != (*x.shape[:-1], self.out_features):
            raise ValueError(
                f"dy must have shape {(*x.shape[:-1], self.out_features)}, got {dy.shape}"
            )
        dflat = dy.reshape(-1, self.out_features)  # (N, out)
        grads = {"weight": matmul(dflat.T, x.reshape(-1, self.in_features))}  # (out, in)
        if "bias" in self.params:
            grads["bias"] = dflat.sum(axis=0)  # (out,)
        dx = matmul(dflat, self.params["weight"]).reshape(x.shape)  # (..., in)
        return dx, grads
