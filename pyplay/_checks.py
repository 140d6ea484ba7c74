"""Argument checks shared by every public entry point.

Each check raises a ``TypeError`` or ``ValueError`` whose message names the argument, says what
was expected and what was given, so that a learner never sees a NumPy traceback from deep inside
a kernel.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "NonFiniteError",
    "all_finite",
    "as_generator",
    "check_array",
    "check_choice",
    "check_dtype",
    "check_float",
    "check_int",
    "check_lengths",
    "check_rows",
    "check_shape",
]

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class NonFiniteError(ValueError):
    """A value that must be finite is NaN or infinite.

    A ``ValueError`` like every other bad argument; its own class so that the training loop
    (:class:`pyplay.train.Trainer`) can tell a run that diverged inside a layer (a gradient
    that overflowed on its way back) from a mistake in a call, and end the run with its
    ``diverged`` record instead of an exception."""


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def as_generator(rng: np.random.Generator | int | None, name: str = "rng") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator, an integer seed or ``None``.

    ``None`` gives a fresh, unseeded Generator; the global NumPy RNG is never used.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"{name} must be a numpy.random.Generator, an integer seed or None, got {_describe(rng)}"
    )


def check_int(
    name: str, value: Any, *, min_value: int | None = None, max_value: int | None = None
) -> int:
    """Return ``value`` as an ``int`` after checking its type and range."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(value)}")
    return _in_range(name, int(value), min_value, max_value)


def _in_range(
    name: str,
    v: Any,
    min_value: float | None,
    max_value: float | None,
    min_inclusive: bool = True,
    max_inclusive: bool = True,
) -> Any:
    """``v`` if it lies within the bounds, else a ValueError naming ``name`` and the bound."""
    if min_value is not None and (v < min_value or (not min_inclusive and v == min_value)):
        op = ">=" if min_inclusive else ">"
        raise ValueError(f"{name} must be {op} {min_value}, got {v}")
    if max_value is not None and (v > max_value or (not max_inclusive and v == max_value)):
        op = "<=" if max_inclusive else "<"
        raise ValueError(f"{name} must be {op} {max_value}, got {v}")
    return v


def check_float(
    name: str,
    value: Any,
    *,
    min_value: float | None = None,
    max_value: float | None = None,
    min_inclusive: bool = True,
    max_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite ``float`` after checking its type and range."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {_describe(value)}")
    v = float(value)
    if not np.isfinite(v):
        raise NonFiniteError(f"{name} must be finite, got {v}")
    return float(_in_range(name, v, min_value, max_value, min_inclusive, max_inclusive))


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Check that ``value`` is one of the strings in ``choices``."""
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        listed = ", ".join(repr(c) for c in options)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def check_dtype(name: str, dtype: Any) -> np.dtype:
    """Accept float32 or float64 (as a NumPy dtype, type or string)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None  # not a dtype at all: the message repeats what was given
    if dt is not None and dt in _FLOAT_DTYPES:
        return dt
    got = repr(dtype) if dt is None else str(dt)
    raise TypeError(f"{name} must be numpy.float32 or numpy.float64, got {got}")


def all_finite(arr: np.ndarray) -> bool:
    """True when every element of the float array ``arr`` is finite.

    One sum decides almost always: a NaN or an infinity among the elements makes the sum NaN
    or infinite, so a finite sum proves every element finite. A sum that is not finite only
    says "maybe": finite elements can overflow it (float32 beyond about 3.4e38), and then the
    elements are tested one by one (:func:`numpy.isfinite`). The sum is one reduction; the
    elementwise test is a pass that writes a boolean array and a second that reads it, about
    twice the time in Pyodide's NumPy for the activations a training step checks.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()  # NaN or +-inf when an element is; +-inf also when it overflows
    return bool(np.isfinite(total)) or bool(np.isfinite(arr).all())


def check_array(
    name: str,
    x: Any,
    *,
    ndim: int | None = None,
    kind: str = "f",
    dtype: np.dtype | None = None,
    finite: bool = True,
    layout: str | None = None,
) -> np.ndarray:
    """Return ``x`` as an ndarray after checking rank, kind and finiteness.

    Parameters
    ----------
    name : str
        The argument's name, used in messages.
    ndim : int, optional
        Required number of dimensions.
    kind : {"f", "i"}
        "f": real numbers (ints are accepted and cast to ``dtype``); "i": integer indices
        (floats are refused even when whole, booleans too).
    dtype : numpy.dtype, optional
        For kind "f", the dtype to cast to; for kind "i", ignored (the result is int64).
    finite : bool
        For kind "f", refuse NaN and infinity.
    layout : str, optional
        Human-readable axis names for messages, e.g. "(B, T, F)".
    """
    if isinstance(x, str | bytes) or x is None:
        raise TypeError(f"{name} must be a numeric array, got {_describe(x)}")
    arr = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a numeric array, got {_describe(arr)}")
    if ndim is not None and arr.ndim != ndim:
        want = f"a {ndim}-D array" + (f" {layout}" if layout else "")
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    if kind == "i":
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integer indices, got dtype {arr.dtype}")
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold real numbers, got dtype bool")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    if finite and arr.size and not all_finite(arr):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise NonFiniteError(f"{name} must be finite, got {bad} NaN or infinite value(s)")
    return arr


def check_shape(name: str, x: np.ndarray, expected: Sequence[int | None], layout: str) -> None:
    """Check ``x.shape`` against ``expected`` (``None`` matches any size)."""
    ok = len(x.shape) == len(expected) and all(
        e is None or e == s for e, s in zip(expected, x.shape, strict=False)
    )
    if not ok:
        want = tuple("*" if e is None else e for e in expected)
        raise ValueError(f"{name} must have shape {layout} = {want}, got {x.shape}")


def check_indices(name: str, x: Any, size: int, ndim: int | None = None) -> np.ndarray:
    """``x`` as an int array of indices into ``size`` rows (``0..size-1``), of any shape or of
    ``ndim`` dimensions (token ids into an embedding table, say)."""
    idx = check_array(name, x, ndim=ndim, kind="i")
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise ValueError(f"{name} must hold indices in 0..{size - 1}, got {bad}")
    return idx


def check_rows(name: str, index: Any, size: int) -> np.ndarray:
    """``index`` (N',) as a 1-D int array of row numbers in ``0..size-1`` (the hypotheses a beam
    search keeps when it reorders a decoding state of ``size`` rows)."""
    idx = check_array(name, index, ndim=1, kind="i", layout="(N,)")
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise ValueError(
            f"{name} must hold row numbers in 0..{size - 1} (the state has {size} rows), got {bad}"
        )
    return idx


def check_lengths(
    lengths: Any,
    batch: int,
    steps: int,
    *,
    name: str = "lengths",
    min_value: int = 1,
    axis: str = "T",
) -> np.ndarray:
    """Validate per-sequence lengths for a padded batch of ``steps`` time steps.

    Returns an int64 array of shape (B,). Each length must lie in ``min_value..steps``;
    ``name`` and ``axis`` (the padded axis's letter) are how a message names them.
    """
    arr = check_array(name, lengths, ndim=1, kind="i", layout="(B,)")
    if arr.shape[0] != batch:
        raise ValueError(f"{name} must have one entry per sequence (B={batch}), got {arr.shape[0]}")
    if arr.size and (arr.min() < min_value or arr.max() > steps):
        raise ValueError(
            f"{name} must lie between {min_value} and {axis}={steps}, got min {int(arr.min())} "
            f"and max {int(arr.max())}"
        )
    return arr
