"""The matrix product of ``pyplay.nn._ops``: the Pyodide path (einsum, with operands laid out
for the longer inner loop) gives ``a @ b`` for every layout, shape and dtype, into ``out`` or
not; ``for_matmul`` lays a weight out for a loop of products without changing it.

These tests also run inside Pyodide (tests/pyodide), where ``matmul`` *is* the einsum path.
"""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.nn import _ops
from pyplay.nn._ops import _matmul_einsum, for_matmul, matmul

# (M, K, N): few and many rows of a; N < K (contraction inner loop) and N >= K (row inner loop)
SHAPES = [(1, 64, 256), (1, 256, 64), (3, 5, 4), (32, 64, 256), (32, 256, 64), (40, 7, 7)]


def _layouts(x: np.ndarray) -> list[np.ndarray]:
    """The same matrix as C-ordered, F-ordered, a transposed view and a strided slice."""
    wide = np.zeros((x.shape[0], 2 * x.shape[1]), dtype=x.dtype)
    wide[:, ::2] = x
    return [x, np.asfortranarray(x), np.ascontiguousarray(x.T).T, wide[:, ::2]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("M", "K", "N"), SHAPES)
def test_einsum_path_equals_matmul_for_every_layout(M, K, N, dtype):
    rng = np.random.default_rng(M + K + N)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for a_l in _layouts(a):
        for b_l in _layouts(b):
            got = _matmul_einsum(a_l, b_l)
            assert got.shape == (M, N) and got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(K))
            out = np.full((M, N), np.nan, dtype=dtype)
            assert _matmul_einsum(a_l, b_l, out=out) is out
            np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.sqrt(K))
    assert np.array_equal(a, _layouts(a)[3]) and np.array_equal(b, _layouts(b)[3])  # unchanged


@pytest.mark.parametrize(("K", "N"), [(256, 64), (64, 256), (8, 8)])
def test_for_matmul_keeps_the_values_and_lays_out_by_shape(monkeypatch, K, N):
    b = np.random.default_rng(0).standard_normal((K, N))
    assert for_matmul(b) is b or _ops.IN_PYODIDE  # natively BLAS reads any layout: no copy
    monkeypatch.setattr(_ops, "IN_PYODIDE", True)
    laid = for_matmul(b)
    assert np.array_equal(laid, b)
    # N < K: column-major (einsum's inner loop along the contraction); else row-major
    assert laid.flags.f_contiguous if N < K else laid.flags.c_contiguous
    a = np.random.default_rng(1).standard_normal((32, K))
    np.testing.assert_allclose(matmul(a, laid), a @ b, rtol=1e-12, atol=1e-12)
