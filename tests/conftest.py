"""Strictness for every test: floating-point errors raise, warnings are errors (pyproject)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    try:
        yield
    finally:
        np.seterr(**old)
