"""Issue 36 in the browser: the page is usable with a screen reader and with the keyboard alone.

- axe-core (the engine of Lighthouse's accessibility audit; the PyPI package
  ``axe-playwright-python`` carries it and injects it through Playwright, so the page still
  requests nothing outside its origin) finds no critical or serious violation of WCAG 2.1 AA in
  the embedded widgets of the example course page (every tab of the playground, each lesson with
  its sections opened, the tablist and the controls' labels: on the tour of ``test_tour.py``);
- with key presses only, from a cold open: reach Train, start training, see the loss fall,
  pause, and move to the next tab with the arrow keys;
- the plots' text alternatives (:mod:`pyplay.ui.plot_text`) say the newest values and are
  not drawn.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from browserkit import (
    START_TIMEOUT_MS,
    blocking_violations,
    settled,
    step_count,
    wait_for,
    wait_ready,
)

pytestmark = pytest.mark.browser
AHEAD = True  # the learner's page: every lesson built and drawn ahead (conftest.py)

# the element that has the keyboard's focus, through the shadow roots Panel renders into
FOCUSED = """() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a ? {tag: a.tagName, text: (a.textContent || '').trim(), role: a.getAttribute('role'),
              selected: a.getAttribute('aria-selected')} : null;
}"""


def test_the_embedded_widgets_have_no_critical_or_serious_violation(site_url, page):
    page.goto(site_url + "course.html")
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplayEmbedReady === 'true'",
        timeout=START_TIMEOUT_MS,
    )
    page.get_by_role("button", name="Train").first.wait_for(timeout=60_000)
    page.wait_for_timeout(2000)
    assert blocking_violations(page) == {}
    page.goto(site_url + "index.html?embed=gates&task=adding")  # the iframe form, on its own
    wait_ready(page)
    page.get_by_role("button", name="Train").first.wait_for(timeout=60_000)
    assert blocking_violations(page) == {}


def test_a_lesson_is_trained_with_the_keyboard_alone(ready_page):
    page = ready_page
    page.mouse.click(1, 1)  # nothing focused: the keyboard starts at the top of the page

    def tab_to(check: Any, key: str = "Tab", limit: int = 150) -> dict[str, Any]:
        for _ in range(limit):
            page.keyboard.press(key)
            focused = page.evaluate(FOCUSED)
            if focused and check(focused):
                return focused
        raise AssertionError(f"{limit} presses of {key} did not reach it")

    is_tab = lambda f: f["role"] == "tab"  # noqa: E731
    first = tab_to(is_tab)  # the tabs come first; only the shown one is a Tab stop
    assert first["text"] == "Recurrent networks" and first["selected"] == "true"
    tab_to(lambda f: f["tag"] == "BUTTON" and f["text"] == "Train")
    page.keyboard.press("Enter")
    wait_for(page, lambda: step_count(page) >= 1, "the first step", timeout_s=60)
    first_loss = _loss(page)
    wait_for(page, lambda: _loss(page) < 0.7 * first_loss, "the loss falling", timeout_s=120)
    tab_to(lambda f: f["tag"] == "BUTTON" and f["text"] == "Pause", limit=3)
    page.keyboard.press("Enter")
    reached = settled(lambda: step_count(page))  # the slice under way at the keypress ends
    page.wait_for_timeout(1500)
    assert step_count(page) == reached  # paused
    # the plots' text alternative (visually hidden, read where the plots stand) says the
    # loss at the step the status line shows, and what the gate maps hold
    described = page.locator(".pyplay-plot-text pre").first
    wait_for(page, lambda: f"at step {reached}." in described.inner_text(), "plot text")
    text = described.inner_text()
    assert text.startswith("Training loss: training loss: ") and "input gate i_t: a map" in text
    box = page.locator(".pyplay-plot-text").first.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1, box  # not drawn
    back = tab_to(is_tab, key="Shift+Tab")
    assert back["text"] == "Recurrent networks"
    page.keyboard.press("ArrowRight")
    now = page.evaluate(FOCUSED)
    assert now["role"] == "tab" and now["text"] == "Time series"  # the focus moved to it
    page.get_by_role("tab", name="Time series", selected=True).wait_for(timeout=10_000)
    page.keyboard.press("ArrowLeft")
    page.get_by_role("tab", name="Recurrent networks", selected=True).wait_for(timeout=10_000)


def _loss(page: Any) -> float:
    """The loss the recurrent lesson's status line shows ("Step N: loss 0.1234, ...")."""
    found = re.search(r"loss ([0-9.]+)", page.locator(".pyplay-status pre").inner_text())
    return float(found.group(1)) if found else float("inf")
