"""Work the page does after its first render, one job at a time.

The page becomes interactive with the first lesson only (:func:`pyplay.ui.app.create_app`
with ``defer=True``); the rest (the saved-work machinery, the other lessons) is queued here.
The page's worker (``web/site/worker.js`` through ``web/site/boot.py``) runs one job at a time
after the page has rendered: the first (saved work) at once, each later one only when no patch
went either way for a moment, so a click or a slider move waiting in the worker's queue is
handled between two jobs instead of after all of them, and a model the learner has just
started training does not share the worker with the other lessons' builds. Natively (``panel
serve``) nothing is deferred.

Once the queue is done and the page has settled, the worker calls :func:`draw_next` to
draw what was built into the page ahead of need (each lesson into its hidden tab, so that
opening the tab only shows it), one item at a time: the next only when the page has applied
the previous one and is idle, and nothing is patched either way for a moment (no click,
no typing, no training).
"""

from __future__ import annotations

import sys
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["defer", "draw_ahead_with", "draw_next", "pending", "run_next"]

_JOBS: deque[tuple[str, Callable[[], Any]]] = deque()
_DRAW: list[Callable[[], str | None]] = []  # the app's drawer (draw_ahead_with)


def defer(label: str, job: Callable[[], Any]) -> None:
    """Queue ``job`` (no arguments) to run after the first render; ``label`` names it in
    logs."""
    _JOBS.append((label, job))


def pending() -> int:
    """How many jobs are still queued."""
    return len(_JOBS)


def run_next() -> str | None:
    """Run the next queued job; returns its label (None when there was none). A job that
    fails is reported on stderr (the browser's console) and the queue goes on: one lesson
    that cannot be built must not keep the others or saved work away."""
    if not _JOBS:
        return None
    label, job = _JOBS.popleft()
    try:
        job()
    except Exception:
        print(f"pyplay: {label} failed after the first render", file=sys.stderr)
        traceback.print_exc()
    return label


def draw_ahead_with(draw: Callable[[], str | None]) -> None:
    """Make ``draw`` the drawer :func:`draw_next` calls (it replaces an earlier app's):
    each call puts one more built item into the page and returns its label, or None when
    nothing is left."""
    _DRAW[:] = [draw]


def draw_next() -> str | None:
    """Draw the next item ahead of need; returns its label (None when there is nothing
    left). A drawer that fails is reported on stderr and dropped: the tabs it did not draw
    are drawn when opened, as without drawing ahead."""
    if not _DRAW:
        return None
    try:
        label = _DRAW[0]()
    except Exception:
        print("pyplay: drawing ahead failed", file=sys.stderr)
        traceback.print_exc()
        label = None
    if label is None:
        _DRAW.clear()
    return label
