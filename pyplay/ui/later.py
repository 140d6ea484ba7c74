"""Work the page does after its first render, one job at a time.

The page becomes interactive with the first lesson only (:func:`pyplay.ui.app.create_app`
with ``defer=True``); the rest (the saved-work machinery, the other lessons) is queued here.
The page's worker (``web/site/worker.js`` through ``web/site/boot.py``) runs one job per turn
of its event loop after the page has rendered, so a click or a slider move waiting in the
worker's queue is handled between two jobs instead of after all of them. Natively (``panel
serve``) nothing is deferred.
"""

from __future__ import annotations

import sys
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["defer", "pending", "run_next"]

_JOBS: deque[tuple[str, Callable[[], Any]]] = deque()


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
