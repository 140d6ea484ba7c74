"""The "Soft and hard attention" lesson in the browser: train both models, the attention over the
example changes while training runs (no click in between), the variance plot gets its
measurements, the baseline switch and the example slider answer, and the console stays free of
warnings and errors."""

from __future__ import annotations

import re

import pytest
from test_lesson_rnn_variants import set_checkbox  # Bokeh's checkbox, seen in the address

from browserkit import FINGERPRINT, visible_button, wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

SOURCE = """(name) => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== name || m.data == null) continue;
    const d = m.data;
    const get = (c) => Array.from(d instanceof Map ? d.get(c) : d[c]);
    return Object.fromEntries((d instanceof Map ? [...d.keys()] : Object.keys(d))
      .map((c) => [c, get(c)]));
  }
  return null;
}"""
VARIANCE_STEPS = """() => {
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const has = (c) => (d instanceof Map ? d.has(c) : c in d);
    if (has("plain") && has("baseline")) {
      return Array.from(d instanceof Map ? d.get("step") : d["step"]);
    }
  }
  return null;
}"""


def status(page) -> tuple[int, str]:
    text = page.locator(".pyplay-glimpse-status pre").inner_text()
    return int(re.search(r"Step (\d+)", text).group(1)), text


def answer(page) -> str:
    return page.locator(".pyplay-glimpse-answer pre").inner_text()


def test_train_both_and_watch_where_they_look(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    page.get_by_text("Soft and hard attention", exact=True).first.click()
    page.locator(".pyplay-glimpse-status pre").wait_for(timeout=60_000)
    assert answer(page).startswith("input        : ") and "hard drew" in answer(page)
    weights = page.evaluate(SOURCE, "glimpse-attention")
    assert weights is not None and len(weights["weight"]) == 20  # 2 models x 10 positions
    marked = page.evaluate(SOURCE, "glimpse-marked")
    assert marked is not None and len(marked["x"]) == 1
    visible_button(page, "Train").click()
    wait_for(page, lambda: status(page)[0] >= 2, "two training steps")
    first = page.evaluate(FINGERPRINT, ["weight"])
    at = status(page)[0]
    wait_for(page, lambda: status(page)[0] >= at + 3, "three more steps")
    wait_for(
        page,
        lambda: page.evaluate(FINGERPRINT, ["weight"]) != first,
        "the attention over the example changing while training",
        30,
    )
    wait_for(page, lambda: status(page)[0] >= 45, "45 steps", 200)
    visible_button(page, "Pause").click()
    _, text = status(page)
    assert "hard loss" in text and "soft loss" in text and "accuracy" in text
    wait_for(page, lambda: (page.evaluate(VARIANCE_STEPS) or [])[:3] == [0, 20, 40],
             "the variance measured every 20 steps", 30)  # fmt: skip
    set_checkbox(page, "Baseline: hard attention subtracts b", False, "baseline=false")
    page.get_by_text(re.compile("From the next step the hard model uses b = 0")).wait_for(
        timeout=30_000
    )
    assert status(page)[0] >= 45  # the same model trains on
    assert page_log.errors == [] and warnings == [], warnings[:5]
