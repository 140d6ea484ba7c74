r"""Position information for attention models, which otherwise see a set, not a sequence.

Three choices, one interface (``forward(x, offset=0) -> (out, cache)``, ``backward(dout, cache)
-> (dx, grads)``, ``params``), added to the token embeddings :math:`x_t` (B, T, D):

``"sinusoidal"`` (Vaswani et al. 2017), no parameters:

.. math::

    P_{t, 2k} = \sin\!\big(t / 10000^{2k/D}\big), \qquad
    P_{t, 2k+1} = \cos\!\big(t / 10000^{2k/D}\big), \qquad y_t = x_t + P_t .

Each pair of dimensions is a rotation at its own frequency, so :math:`P_{t+\Delta}` is a linear
function of :math:`P_t` and :math:`P_t^\top P_{t'}` depends only on :math:`t - t'`.

``"learned"`` (GPT-2): a table ``weight`` (max_len, D), :math:`y_t = x_t + W_t`, trained like an
embedding (initialised N(0, 0.02^2)).

``"none"``: :math:`y_t = x_t`; self-attention is then permutation-equivariant, which the
transformer lesson uses to show why positions are needed.

``offset`` is the position of the first row of ``x`` (incremental decoding feeds one position
at a time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_dtype, check_int
from pyplay.limits import check_elements
from pyplay.nn import init

__all__ = [
    "POSITIONAL",
    "LearnedPositionalEmbedding",
    "NoPositionalEncoding",
    "SinusoidalPositionalEncoding",
    "make_positional",
    "sinusoidal_table",
]

POSITIONAL = ("sinusoidal", "learned", "none")


def sinusoidal_table(max_len: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The (max_len, d_model) float64 table :math:`P` of the module docstring (an odd
    ``d_model`` drops the last cosine column)."""
    T = check_int("max_len", max_len, min_value=1)
    D = check_int("d_model", d_model, min_value=1)
    check_elements("positional table (max_len, d_model)", (T, D), np.float64)
    t = np.arange(T, dtype=np.float64)[:, None]  # (T, 1)
    inv_freq = base ** (-np.arange(0, D, 2, dtype=np.float64) / D)  # (ceil(D/2),)
    angles = t * inv_freq  # (T, ceil(D/2))
    P = np.empty((T, D))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles[:, : D // 2])
    return P


class _Positional:
    """Shared argument checks: ``x`` (B, T, D) with ``offset + T <= max_len``."""

    kind = ""

    def __init__(self, max_len: int, d_model: int, dtype: Any) -> None:
        self.max_len = check_int("max_len", max_len, min_value=1)
        self.d_model = check_int("d_model", d_model, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        self.params: dict[str, np.ndarray] = {}

    def _check(self, x: Any, offset: Any) -> tuple[np.ndarray, int]:
        X = check_array("x", x, ndim=3, dtype=self.dtype, layout="(B, T, D)")
        if X.shape[2] != self.d_model:
            raise ValueError(f"x must have d_model={self.d_model} features, got shape {X.shape}")
        off = check_int("offset", offset, min_value=0)
        if off + X.shape[1] > self.max_len:
            raise ValueError(
                f"positions {off}..{off + X.shape[1] - 1} exceed max_len={self.max_len}: "
                f"sequences (offset + T) must be at most {self.max_len} long"
            )
        return X, off

    def table(self) -> np.ndarray:
        """The (max_len, D) vectors added at each position."""
        raise NotImplementedError

    def forward(self, x: Any, offset: int = 0) -> tuple[np.ndarray, tuple[int, int]]:
        """``(x + P[offset : offset + T], cache)`` for ``x`` (B, T, D)."""
        X, off = self._check(x, offset)
        T = X.shape[1]
        return X + self.table()[off : off + T], (off, T)  # (B, T, D)

    def backward(self, dout: Any, cache: tuple[int, int]) -> tuple[np.ndarray, dict[str, Any]]:
        """``(dx, grads)``: the gradient passes through unchanged."""
        dY = check_array("dout", dout, ndim=3, dtype=self.dtype, layout="(B, T, D)")
        if dY.shape[1:] != (cache[1], self.d_model):
            raise ValueError(
                f"dout must have shape (B, {cache[1]}, {self.d_model}) like the forward's x, "
                f"got {dY.shape}"
            )
        return dY, {}


class SinusoidalPositionalEncoding(_Positional):
    """Fixed sin/cos encodings (no parameters)."""

    kind = "sinusoidal"

    def __init__(self, max_len: int, d_model: int, dtype: Any = np.float32) -> None:
        super().__init__(max_len, d_model, dtype)
        self._P = sinusoidal_table(self.max_len, self.d_model).astype(self.dtype)

    def table(self) -> np.ndarray:
        return self._P


class LearnedPositionalEmbedding(_Positional):
    """A trained vector per position, parameter ``weight`` (max_len, D)."""

    kind = "learned"

    def __init__(
        self,
        max_len: int,
        d_model: int,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        super().__init__(max_len, d_model, dtype)
        gen = as_generator(rng)
        shape = (self.max_len, self.d_model)
        what = "learned positional weight (max_len, d_model)"
        self.params["weight"] = init.normal(gen, shape, self.dtype, what, scale=0.02)  # (T, D)

    def table(self) -> np.ndarray:
        return self.params["weight"]

    def backward(self, dout: Any, cache: tuple[int, int]) -> tuple[np.ndarray, dict[str, Any]]:
        """``(dx, {"weight": dW})``, :math:`\\partial L / \\partial W_t = \\sum_b \\delta y_{bt}`
        at the positions used (zero elsewhere)."""
        dY, _ = super().backward(dout, cache)
        off, T = cache
        dW = np.zeros_like(self.params["weight"])  # (max_len, D)
        dW[off : off + T] = dY.sum(axis=0)
        return dY, {"weight": dW}


class NoPositionalEncoding(_Positional):
    """No position information (the identity)."""

    kind = "none"

    def __init__(self, max_len: int, d_model: int, dtype: Any = np.float32) -> None:
        super().__init__(max_len, d_model, dtype)
        shape = check_elements("positional table (max_len, d_model)", (self.max_len, self.d_model))
        self._P = np.zeros(shape, dtype=self.dtype)

    def table(self) -> np.ndarray:
        return self._P


def make_positional(
    kind: str,
    max_len: int,
    d_model: int,
    dtype: Any = np.float32,
    rng: np.random.Generator | int | None = 0,
) -> _Positional:
    """The positional module named ``kind`` (one of ``POSITIONAL``)."""
    kind = check_choice("positional", kind, POSITIONAL)
    if kind == "sinusoidal":
        return SinusoidalPositionalEncoding(max_len, d_model, dtype)
    if kind == "learned":
        return LearnedPositionalEmbedding(max_len, d_model, dtype, rng)
    return NoPositionalEncoding(max_len, d_model, dtype)
