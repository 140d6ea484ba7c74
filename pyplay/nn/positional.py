r"""Position information for attention models, which otherwise see a set, not a sequence.

Seven choices, one interface (``forward(x, offset=0) -> (out, cache)``, ``backward(dout, cache)
-> (dx, grads)``, ``params``), added to (or, ``"concat"``, joined to) the token embeddings
:math:`x_t` (B, T, D):

``"sinusoidal"`` (Vaswani et al. 2017), no parameters:

.. math::

    P_{t, 2k} = \sin\!\big(t / 10000^{2k/D}\big), \qquad
    P_{t, 2k+1} = \cos\!\big(t / 10000^{2k/D}\big), \qquad y_t = x_t + P_t .

Each pair of dimensions is a rotation at its own frequency, so :math:`P_{t+\Delta}` is a linear
function of :math:`P_t` and :math:`P_t^\top P_{t'}` depends only on :math:`t - t'`.

``"learned"`` (GPT-2): a table ``weight`` (max_len, D), :math:`y_t = x_t + W_t`, trained like an
embedding (initialised N(0, 0.02^2)).

Wand's IDSIA lecture's steps towards the sinusoids, fixed tables added to :math:`x_t` (positions
counted from 1 as on the slide, :math:`i = t + 1`):

- ``"count"``: :math:`P_{t,0} = i`, the count as one component (0 elsewhere): "bad
  normalization, does not generalize well".
- ``"normalised"``: :math:`P_{t,0} = i / N` with :math:`N` = ``max_len`` (1, 2, 3, 4 ->
  0.25, 0.5, 0.75, 1.0 for :math:`N = 4`). The slide divides by the maximum of the sequence
  at hand, so a position's code changes with the length ("does not work well for different
  sequence lengths"); here :math:`N` is the longest sequence the model takes, so that a
  decoder fed one position at a time sees the same codes as a whole sequence.
- ``"binary"``: position :math:`t` counted in binary over :math:`\lceil \log_2 N \rceil`
  components, each bit mapped to -1 or +1 (the slide's "-1 to 1 can be arranged"):
  :math:`P_{t,j} = 2\,\mathrm{bit}_j(t) - 1`, bit 0 the lowest; not continuous, positions
  cannot be interpolated.

``"concat"``: the position code is not added but **concatenated**, given components of its
own. The lecture builds every code as components of the input vector ("add these values as a
component to the input"; binary: "we add multiple components to the input vector") and names
the standard approach, :math:`D` the input dimensionality and the code *added*; here instead

.. math::

    y_t = \begin{bmatrix} x_t \\ P_t \end{bmatrix}, \qquad
    x_t \in \mathbb{R}^{D - D_p}, \; P_t \in \mathbb{R}^{D_p},

with :math:`P` the sinusoidal table of width :math:`D_p` (``d_pos``, default
:func:`concat_width` = ``max(1, D // 4)``). The model's width stays :math:`D`: its token
embedding (or input layer) is :math:`D - D_p` wide (:attr:`in_features` of the module), so
tokens and positions never mix in a component; the gradient flows back to :math:`x_t` only.

``"none"``: :math:`y_t = x_t`; self-attention is then permutation-equivariant, which the
transformer lesson uses to show why positions are needed.

``offset`` is the position of the first row of ``x`` (incremental decoding feeds one position
at a time). ``in_features`` is the width ``x`` must have (``d_model`` except for ``"concat"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_dtype, check_int
from pyplay.limits import check_elements
from pyplay.nn import init

__all__ = [
    "FIXED",
    "POSITIONAL",
    "ConcatPositionalEncoding",
    "FixedPositionalEncoding",
    "LearnedPositionalEmbedding",
    "concat_width",
    "fixed_table",
    "input_width",
    "make_positional",
    "sinusoidal_table",
]

POSITIONAL = ("sinusoidal", "learned", "count", "normalised", "binary", "concat", "none")
FIXED = ("sinusoidal", "count", "normalised", "binary", "none")  # tables without parameters


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


def fixed_table(kind: str, max_len: int, d_model: int) -> np.ndarray:
    """The (max_len, d_model) float64 table of a parameter-free ``kind`` (one of ``FIXED``;
    the module docstring gives each). ``"binary"`` needs d_model >= ceil(log2(max_len)).

    ``"normalised"`` is :math:`P_{t,0} = (t + 1) / N` with :math:`N` = ``max_len`` for every
    sequence, where Wand's IDSIA lecture divides by the length of the sequence at hand
    (a sequence of 4: 0.25, 0.5, 0.75, 1.0; here with ``max_len=8``: 0.125 ... 0.5)."""
    kind = check_choice("positional", kind, FIXED)
    if kind == "sinusoidal":
        return sinusoidal_table(max_len, d_model)
    T = check_int("max_len", max_len, min_value=1)
    D = check_int("d_model", d_model, min_value=1)
    check_elements("positional table (max_len, d_model)", (T, D), np.float64)
    P = np.zeros((T, D))  # (T, D)
    i = np.arange(1, T + 1, dtype=np.float64)  # (T,) positions counted from 1
    if kind == "count":
        P[:, 0] = i
    elif kind == "normalised":
        P[:, 0] = i / T
    elif kind == "binary":
        bits = max(1, int(np.ceil(np.log2(T))))
        if bits > D:
            raise ValueError(
                f"d_model must be at least {bits} for binary positions up to max_len={T}, "
                f"got d_model={D}"
            )
        t = np.arange(T)[:, None]  # (T, 1) counted from 0: position 0 is all -1
        P[:, :bits] = 2.0 * ((t >> np.arange(bits)) & 1) - 1.0  # (T, bits)
    return P


class _Positional:
    """Shared argument checks: ``x`` (B, T, D) with ``offset + T <= max_len``."""

    kind = ""

    def __init__(self, max_len: int, d_model: int, dtype: Any) -> None:
        self.max_len = check_int("max_len", max_len, min_value=1)
        self.d_model = check_int("d_model", d_model, min_value=1)
        self.in_features = self.d_model  # the width of x (narrower when concatenated)
        self.dtype = check_dtype("dtype", dtype)
        self.params: dict[str, np.ndarray] = {}

    def _check(self, x: Any, offset: Any) -> tuple[np.ndarray, int]:
        X = check_array("x", x, ndim=3, dtype=self.dtype, layout="(B, T, D)")
        if X.shape[2] != self.in_features:
            what = "d_model" if self.in_features == self.d_model else "d_model - d_pos"
            raise ValueError(f"x must have {what}={self.in_features} features, got shape {X.shape}")
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


class FixedPositionalEncoding(_Positional):
    """A fixed table added to the inputs (no parameters): ``kind`` one of ``FIXED``."""

    def __init__(self, kind: str, max_len: int, d_model: int, dtype: Any = np.float32) -> None:
        super().__init__(max_len, d_model, dtype)
        self.kind = check_choice("positional", kind, FIXED)
        self._P = fixed_table(self.kind, self.max_len, self.d_model).astype(self.dtype)

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


def concat_width(d_model: int) -> int:
    """:math:`D_p`, the components a concatenated position code takes by default out of
    ``d_model``: ``max(1, d_model // 4)``."""
    return max(1, check_int("d_model", d_model, min_value=2) // 4)


def input_width(kind: str, d_model: int) -> int:
    """The width the token embedding must have under positional ``kind``: ``d_model``, or
    ``d_model - concat_width(d_model)`` for ``"concat"`` (so a model sizes its embedding
    before it builds the positional module)."""
    kind = check_choice("positional", kind, POSITIONAL)
    return d_model - concat_width(d_model) if kind == "concat" else d_model


class ConcatPositionalEncoding(_Positional):
    """The sinusoidal code of width ``d_pos`` concatenated after ``x`` (B, T, d_model - d_pos),
    giving (B, T, d_model); no parameters (module docstring, ``"concat"``)."""

    kind = "concat"

    def __init__(
        self, max_len: int, d_model: int, d_pos: int | None = None, dtype: Any = np.float32
    ) -> None:
        super().__init__(max_len, d_model, dtype)
        D = self.d_model
        Dp = concat_width(D) if d_pos is None else check_int("d_pos", d_pos, min_value=1)
        if Dp >= D:
            raise ValueError(
                f"d_pos must be below d_model={D} (the tokens keep d_model - d_pos components), "
                f"got d_pos={Dp}"
            )
        self.d_pos, self.in_features = Dp, D - Dp
        self._P = sinusoidal_table(self.max_len, Dp).astype(self.dtype)  # (max_len, Dp)

    def table(self) -> np.ndarray:
        """The (max_len, d_pos) codes appended at each position."""
        return self._P

    def forward(self, x: Any, offset: int = 0) -> tuple[np.ndarray, tuple[int, int]]:
        """``([x, P[offset : offset + T]], cache)``: (B, T, d_model - d_pos) -> (B, T, d_model)."""
        X, off = self._check(x, offset)
        B, T = X.shape[:2]
        P = np.broadcast_to(self._P[off : off + T], (B, T, self.d_pos))  # (B, T, Dp)
        return np.concatenate([X, P], axis=-1), (off, T)  # (B, T, D)

    def backward(self, dout: Any, cache: tuple[int, int]) -> tuple[np.ndarray, dict[str, Any]]:
        """``(dx, {})``: :math:`\\partial L / \\partial x_t` is the first
        ``d_model - d_pos`` components of ``dout`` (the code's own get no parameter)."""
        dY, _ = super().backward(dout, cache)
        return np.ascontiguousarray(dY[..., : self.in_features]), {}  # (B, T, D - Dp)


def make_positional(
    kind: str,
    max_len: int,
    d_model: int,
    dtype: Any = np.float32,
    rng: np.random.Generator | int | None = 0,
) -> _Positional:
    """The positional module named ``kind`` (one of ``POSITIONAL``)."""
    kind = check_choice("positional", kind, POSITIONAL)
    if kind == "learned":
        return LearnedPositionalEmbedding(max_len, d_model, dtype, rng)
    if kind == "concat":
        return ConcatPositionalEncoding(max_len, d_model, dtype=dtype)
    return FixedPositionalEncoding(kind, max_len, d_model, dtype)
