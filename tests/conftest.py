"""Strictness for every test: floating-point errors raise, warnings are errors (pyproject);
property tests are derandomized."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings

# property tests draw the same examples on every run: CI is reproducible (a new seed is a
# deliberate change, e.g. ``--hypothesis-seed`` by hand)
settings.register_profile("pyplay", derandomize=True)
settings.load_profile("pyplay")


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    try:
        yield
    finally:
        np.seterr(**old)
