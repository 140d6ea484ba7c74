"""Strictness for every test: floating-point errors raise, warnings are errors (pyproject);
property tests are derandomized."""

from __future__ import annotations

import numpy as np
import pytest

try:  # not inside Pyodide, where the core's tests run without it
    from hypothesis import settings
except ImportError:
    pass
else:  # property tests draw the same examples every run: CI is reproducible
    settings.register_profile("pyplay", derandomize=True)
    settings.load_profile("pyplay")


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    try:
        yield
    finally:
        np.seterr(**old)
