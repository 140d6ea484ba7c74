"""The shared argument checks: :func:`pyplay._checks.all_finite`, the fast finiteness test
every array argument passes through, and the message :func:`check_array` gives when it fails."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay._checks import NonFiniteError, all_finite, check_array


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [0, 7, -1])
def test_one_non_finite_element_is_found(dtype: type, bad: float, where: int) -> None:
    x = np.linspace(-3.0, 3.0, 60, dtype=dtype).reshape(3, 4, 5)
    x.flat[where] = bad
    assert not all_finite(x)
    assert all_finite(np.delete(x.ravel(), where))  # the rest is finite


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_infinities_of_both_signs_that_cancel_in_the_sum_are_found(dtype: type) -> None:
    x = np.zeros(10, dtype=dtype)
    x[2], x[5] = np.inf, -np.inf  # the sum is NaN, not finite: the elementwise test decides
    assert not all_finite(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_finite_elements_whose_sum_overflows_are_finite(dtype: type) -> None:
    big = np.finfo(dtype).max
    x = np.full(4, big, dtype=dtype)  # every element finite, the sum +inf
    with np.errstate(over="ignore"):
        assert not np.isfinite(x.sum())
    assert all_finite(x)
    assert all_finite(-x)
    assert all_finite(np.concatenate([x, -x]))  # the sum overflows before it cancels


def test_strided_views_and_finite_arrays() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert all_finite(x)
    assert all_finite(x.T)
    x[1, 3] = np.nan
    assert all_finite(x[:, ::2])  # the view skips column 3
    assert not all_finite(x[:, 1::2])
    assert not all_finite(x.T)


def test_check_array_counts_the_non_finite_values_in_its_message() -> None:
    x = np.ones((2, 3))
    x[0, 1], x[1, 2] = np.nan, np.inf
    with pytest.raises(NonFiniteError, match=r"^dout must be finite, got 2 NaN or infinite"):
        check_array("dout", x)
    big = np.full((2, 3), np.finfo(np.float32).max, dtype=np.float32)
    assert check_array("dout", big) is big  # finite, though its sum overflows
    assert check_array("dout", x, finite=False) is x
