"""Helpers shared by the browser tests and fixtures: page logs and readiness."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

READY = "document.documentElement.dataset.pyplayReady === 'true'"
FAILED = "document.documentElement.dataset.pyplayError === 'true'"
START_TIMEOUT_MS = 240_000


class PageLog:
    """What a page did: requested URLs, failed responses, console errors."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.failures: list[str] = []
        self.errors: list[str] = []

    def attach(self, page: Any) -> None:
        page.on("request", lambda r: self.requests.append(r.url))
        page.on(
            "response", lambda r: r.status >= 400 and self.failures.append(f"{r.status} {r.url}")
        )
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def external(self, origin: str) -> list[str]:
        return [u for u in self.requests if not u.startswith((origin, "blob:", "data:"))]


def wait_ready(page: Any) -> None:
    page.wait_for_function(f"() => {READY} || {FAILED}", timeout=START_TIMEOUT_MS)
    if page.evaluate(FAILED):
        message = page.evaluate("document.getElementById('pyplay-loader-msg').textContent")
        pytest.fail(f"the playground did not start: {message}")


def step_count(page: Any) -> int:
    """The step the lesson's status line shows ("Step N: ...")."""
    text = page.locator(".pyplay-status pre").inner_text()
    found = re.search(r"Step (\d+)", text)
    return int(found.group(1)) if found else 0


def wait_step(page: Any, at_least: int, timeout_s: float = 150) -> int:
    """Poll the status line until it shows step ``at_least`` or later; fail after
    ``timeout_s``."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        step = step_count(page)
        if step >= at_least:
            return step
        time.sleep(0.5)
    pytest.fail(f"training did not reach step {at_least} in {timeout_s} s")


def wait_for(page: Any, condition: Any, what: str, timeout_s: float = 150) -> None:
    """Poll ``condition()`` every half second; fail naming ``what`` after ``timeout_s``."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail(f"{what} did not happen in {timeout_s} s")
