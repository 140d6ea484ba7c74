"""Strictness for every test: floating-point errors raise, warnings are errors (pyproject);
property tests are derandomized."""

from __future__ import annotations

import sys

import numpy as np
import pytest

try:  # not inside Pyodide, where the core's tests run without it
    from hypothesis import settings
except ImportError:
    pass
else:  # property tests draw the same examples every run: CI is reproducible; no deadline
    # per example (a timed assertion: it fails on a busy machine, and tests/ci.sh runs these
    # tests at the lowest CPU priority beside the browser tests)
    settings.register_profile("pyplay", derandomize=True, deadline=None)
    settings.load_profile("pyplay")


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    try:
        yield
    finally:
        np.seterr(**old)


@pytest.fixture(autouse=True)
def _no_wall_clock_step_limit(monkeypatch: pytest.MonkeyPatch):
    """A lesson that trains on (``running``) stops when one step takes longer than
    ``SLOW_STEP_S`` of wall time: a rule about the machine's speed, not the code's. tests/ci.sh
    runs these tests at the lowest CPU priority beside the browser tests, where a starved
    process once took over 1.5 s for one small LSTM step (a saved-work test trained 2 steps of
    3). Off for every test; the guard's own test sets it (tests/ui/test_ui_training_loop.py)."""
    module = sys.modules.get("pyplay.ui.trainer_lesson")  # not in Pyodide's core tests
    if module is not None:
        monkeypatch.setattr(module, "SLOW_STEP_S", float("inf"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that drive the browser run last, whatever order the paths were given in.

    Playwright's sync API keeps its event loop marked as running in the main thread for as
    long as the session-scoped browser lives, so ``asyncio.run`` in any test after the first
    browser test would raise "cannot be called from a running event loop". The sort is stable:
    the order within each group is unchanged.
    """
    items.sort(key=lambda item: "browser" in getattr(item, "fixturenames", ()))


def pytest_collection_finish(session: pytest.Session) -> None:
    """PyTorch computes the parity tests' references on one thread, as ``pyplay.bench`` does.

    Its default pool (a thread per core) spins against the test process itself: on two cores
    the parity tests ran up to ten times slower, or not, depending on whether a benchmark test
    had already set one thread. Torch is imported by the collected modules, or not at all.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
