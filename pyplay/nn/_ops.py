"""Small numerical kernels shared by the layers: matrix products and stable gate activations.

Matrix products
    Natively NumPy's ``@`` calls an optimised BLAS and is by far the fastest. Inside Pyodide NumPy
    has no optimised BLAS, and ``np.einsum("ij,jk->ik", a, b)`` is measured 2-3x faster than
    ``@`` for the small matrices of this library, so :func:`matmul` picks the path per platform.
    In Pyodide the memory layout matters too: for ``(M, K) @ (K, N)`` einsum's inner loop runs
    along the rows of ``b`` (length ``N``) when they are contiguous, and along the contraction
    (length ``K``) when ``a``'s rows and ``b``'s columns are. The longer inner loop wins, by
    10-40 % at this library's shapes (measured in Pyodide 0.27.7 under Node: the LSTM's backward
    recurrent product (32, 256) @ (256, 64) 0.46 -> 0.34 ms, the input gradient (1024, 256) @
    (256, 32) 8.7 -> 5.5 ms), so :func:`matmul` lays the operands out that way when the copy
    costs little next to the product (``M`` of at least ``_RELAYOUT_MIN_ROWS``). A loop that
    multiplies by the same ``b`` every step passes it already laid out (see :func:`for_matmul`).

Gate activations
    A gated cell applies the logistic function to several gates and ``tanh`` to one, every time
    step. Transcendental functions dominate the cost of a NumPy recurrent step, so the gates of a
    step are kept side by side in one ``(B, G)`` slab (sigmoid gates first) and activated with as
    few calls as possible. The constant factor each mode needs is folded into the weights once
    per forward pass (:func:`gate_scale`), so :func:`activate_gates` sees *scaled*
    pre-activations:

    - ``"tanh"`` mode, ``sigma(a) = (1 + tanh(a / 2)) / 2``: the slab holds ``a / 2`` for
      sigmoid gates and ``a`` for tanh gates; one ``tanh`` over the whole slab, then an affine
      map of the sigmoid part. Fewest calls: best for small slabs (B = 1).
    - ``"exp"`` mode, ``sigma(a) = 1 / (1 + exp(-a))`` and ``tanh(a) = 2 sigma(2a) - 1``: the
      slab holds ``-a`` and ``-2a``, clipped so that ``exp`` never overflows; one ``exp`` over
      the whole slab (NumPy's ``exp`` costs half its ``tanh`` per element), then cheap
      arithmetic. Best for big slabs (B = 32).

    Both are exact formulas (no approximation) and never overflow; :func:`gate_mode` chooses.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

__all__ = [
    "IN_PYODIDE",
    "activate_gates",
    "for_matmul",
    "gate_mode",
    "gate_scale",
    "matmul",
    "scatter_rows",
    "scatter_rows_reference",
    "scatter_rows_sorted",
    "sigmoid",
]

IN_PYODIDE = sys.platform == "emscripten"

# slabs with at least this many elements per step use the "exp" mode (measured natively with
# H=64: "tanh" wins at B=8, they tie at B=16, "exp" is 20 % faster at B=32)
_EXP_MODE_MIN_SIZE = 4096
# largest exponent passed to exp: exp(80) < float32 max, exp(700) < float64 max
_EXP_CLIP = {np.dtype(np.float32): 80.0, np.dtype(np.float64): 700.0}
# in Pyodide, products whose ``a`` has at least this many rows get their operands laid out for
# the longer inner loop (a copy of ``b`` then costs at most 1/16 of the product)
_RELAYOUT_MIN_ROWS = 16


def _keep_freed_memory_in_process() -> None:
    """Stop glibc from handing freed blocks of a few MB back to the OS after every step.

    A training step allocates and frees several arrays of 0.1-1 MB. glibc's ``malloc`` serves
    blocks above its *mmap threshold* with fresh ``mmap`` pages and trims the heap when more than
    twice that threshold is free, so every step page-faults its memory in again (about 1000
    faults per LSTM step at B=32, measured to cost 30 % of the step natively). Freeing one
    block of 16 MB raises glibc's dynamic thresholds (mmap 16 MB, trim 32 MB), exactly what
    glibc does by itself after any program frees such a block; afterwards the step reuses its
    memory. Untouched pages cost nothing; other allocators ignore this.
    """
    np.empty(16 << 20, dtype=np.uint8)


if sys.platform == "linux":
    _keep_freed_memory_in_process()


def _matmul_blas(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.matmul(a, b, out=out)


def _matmul_einsum(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    if a.shape[0] >= _RELAYOUT_MIN_ROWS:
        if b.shape[1] < b.shape[0]:  # N < K: inner loop along the contraction
            a = np.ascontiguousarray(a)
            b = np.asfortranarray(b)
        else:  # inner loop along b's rows
            b = np.ascontiguousarray(b)
    if out is None:
        return np.einsum("ij,jk->ik", a, b)
    return np.einsum("ij,jk->ik", a, b, out=out)


def for_matmul(b: np.ndarray) -> np.ndarray:
    """``b`` (K, N) laid out for many products ``a @ b`` with few rows in ``a``, such as one
    recurrent step's: in Pyodide, column-major when ``N < K`` and row-major otherwise (see the
    module docstring); natively ``b`` itself, since BLAS reads either layout at the same speed.
    """
    if not IN_PYODIDE:
        return b
    return np.asfortranarray(b) if b.shape[1] < b.shape[0] else np.ascontiguousarray(b)


matmul = _matmul_einsum if IN_PYODIDE else _matmul_blas
matmul.__doc__ = (
    """``a @ b`` for 2-D arrays, optionally into ``out``: BLAS natively, einsum in Pyodide."""
)


# one-hot products natively up to this many elements in the (n_rows, N) one-hot matrix
_ONEHOT_MAX = 1 << 22


def scatter_rows_reference(values: np.ndarray, index: np.ndarray, n_rows: int) -> np.ndarray:
    """``out[v] = sum of values[n] over n with index[n] == v``, (N, K) -> (n_rows, K), the
    plain way (:func:`numpy.add.at`); :func:`scatter_rows` is the fast version."""
    out = np.zeros((n_rows, values.shape[1]), dtype=values.dtype)  # (n_rows, K)
    np.add.at(out, index, values)
    return out


def scatter_rows(values: np.ndarray, index: np.ndarray, n_rows: int) -> np.ndarray:
    """The rows of ``values`` (N, K) summed by ``index`` (N,) into (n_rows, K), as
    :func:`scatter_rows_reference` but faster: natively one BLAS product with the one-hot
    matrix of ``index`` (when it is small); in Pyodide, where that product is a scalar loop, a
    sort of ``index`` and one :func:`numpy.add.reduceat` (measured under Node for (1024, 256)
    into 32 rows: ``add.at`` 7.6 ms, one-hot product 7.1 ms, sort and reduceat 1.6 ms)."""
    if IN_PYODIDE:
        return scatter_rows_sorted(values, index, n_rows)
    if index.shape[0] * n_rows > _ONEHOT_MAX:
        return scatter_rows_reference(values, index, n_rows)
    onehot = np.equal.outer(np.arange(n_rows), index).astype(values.dtype)  # (n_rows, N)
    return matmul(onehot, values)  # (n_rows, K)


def scatter_rows_sorted(values: np.ndarray, index: np.ndarray, n_rows: int) -> np.ndarray:
    """:func:`scatter_rows` by a sort of ``index`` and one sum per run of equal indices (its
    path in Pyodide)."""
    out = np.zeros((n_rows, values.shape[1]), dtype=values.dtype)  # (n_rows, K)
    if index.shape[0] == 0:
        return out
    order = np.argsort(index, kind="stable")  # (N,)
    sorted_index = index[order]  # (N,)
    starts = np.flatnonzero(np.r_[True, sorted_index[1:] != sorted_index[:-1]])  # (U,)
    out[sorted_index[starts]] = np.add.reduceat(values[order], starts, axis=0)  # (U, K)
    return out


def sigmoid(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Logistic function without overflow: ``sigma(x) = (1 + tanh(x / 2)) / 2``."""
    y = np.multiply(x, 0.5, out=out)
    np.tanh(y, out=y)
    y *= 0.5
    y += 0.5
    return y


def gate_mode(slab_size: int) -> str:
    """The activation mode for a per-step gate slab of ``slab_size`` elements (B * G)."""
    return "exp" if slab_size >= _EXP_MODE_MIN_SIZE else "tanh"


@functools.lru_cache(maxsize=64)
def gate_scale(
    n_sigmoid: int, n_tanh: int, mode: str, dtype: np.dtype, n_plain: int = 0
) -> np.ndarray:
    """Per-column factor folded into the weights, (n_sigmoid + n_tanh + n_plain,), read-only.

    ``"tanh"`` mode: 1/2 for sigmoid columns, 1 for tanh columns; ``"exp"`` mode: -1 and -2.
    The last ``n_plain`` columns (not activated by :func:`activate_gates`) keep factor 1.
    """
    sig, tan = (0.5, 1.0) if mode == "tanh" else (-1.0, -2.0)
    parts = [np.full(n_sigmoid, sig), np.full(n_tanh, tan), np.ones(n_plain)]
    s = np.concatenate(parts).astype(dtype)
    s.flags.writeable = False  # shared between calls
    return s


def activate_gates(z: np.ndarray, n_sigmoid: int, mode: str) -> None:
    """In place: scaled pre-activations ``z`` (B, G) -> ``[sigma(a) ..., tanh(a) ...]``.

    The first ``n_sigmoid`` columns become logistic gates, the rest tanh gates (see the module
    docstring for the scaling each ``mode`` expects).
    """
    if mode == "tanh":
        np.tanh(z, out=z)  # tanh(a/2) | tanh(a)
        s = z[:, :n_sigmoid]
        s *= 0.5
        s += 0.5  # sigma(a) = (1 + tanh(a/2)) / 2
        return
    np.minimum(z, _EXP_CLIP[z.dtype], out=z)  # exp never overflows; sigma(-80) is ~2e-35
    np.exp(z, out=z)  # exp(-a) | exp(-2a)
    z += 1.0
    np.divide(1.0, z, out=z)  # sigma(a) | sigma(2a)
    if n_sigmoid < z.shape[1]:
        t = z[:, n_sigmoid:]
        t *= 2.0
        t -= 1.0  # tanh(a) = 2 sigma(2a) - 1
