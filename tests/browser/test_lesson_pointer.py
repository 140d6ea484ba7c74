"""The Pointer networks lesson in the browser: train on sorting and watch the pointing weights'
heatmap change by itself while it trains; the convex hull draws its points, both polygons and
its pointing weights (a row per output step, END included);
the console stays free of warnings."""

from __future__ import annotations

import re
import time

import pytest

from browserkit import wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

WEIGHTS = """() => {
  for (const m of window.pyplay.document.all_models) {
    if (m.name !== "pointer-weights") continue;
    const d = m.data;
    const col = d instanceof Map ? d.get("weight") : d["weight"];
    return Array.from(col);
  }
  return null;
}"""
HULL = """() => {
  const out = {};
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const label = d instanceof Map ? d.get("label") : d["label"];
    if (label !== undefined) out.points = Array.from(label).length;
  }
  return out;
}"""


def status(page) -> tuple[int, str]:
    text = page.locator(".pyplay-pointer-status pre").inner_text()
    return int(re.search(r"Step (\d+)", text).group(1)), text


def test_train_and_watch_the_pointing_weights_change(ready_page, page_log):
    page = ready_page
    warnings: list[str] = []
    page.on("console", lambda m: m.type in ("warning", "error") and warnings.append(m.text))
    page.get_by_text("Pointer networks", exact=True).first.click()
    page.locator(".pyplay-pointer-status pre").wait_for(timeout=60_000)
    wait_for(page, lambda: page.evaluate(WEIGHTS), "the pointing weights", 60)
    heatmap = page.locator(".pyplay-pointer-map").first
    heatmap.scroll_into_view_if_needed()
    before_data, before_pixels = page.evaluate(WEIGHTS), heatmap.screenshot()
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(page, lambda: status(page)[0] >= 5, "five training steps", 120)
    at = status(page)[0]
    time.sleep(2.0)  # room for a live redraw (at most every 0.7 s)
    wait_for(page, lambda: page.evaluate(WEIGHTS) != before_data, "the weights changing", 60)
    wait_for(page, lambda: heatmap.screenshot() != before_pixels, "the heatmap redrawn", 30)
    assert status(page)[0] > at  # the same run: no click in between
    page.get_by_role("button", name="Pause", exact=True).click()
    _, text = status(page)
    assert "pointer accuracy (teacher forced)" in text
    score = page.locator(".pyplay-pointer-score pre").inner_text()
    assert re.search(r"exact match\s+[01]\.\d\d", score) and "pointer accuracy" in score
    assert page.locator(".pyplay-pointer-answer pre").inner_text().startswith("input    : ")
    sorting = page.evaluate(WEIGHTS)
    page.get_by_role("button", name="Convex hull", exact=True).click()
    answer = page.locator(".pyplay-pointer-answer pre")
    wait_for(page, lambda: "\ntarget   : " in answer.inner_text(), "the hull example", 60)
    wait_for(page, lambda: (page.evaluate(HULL).get("points") or 0) >= 3, "the points", 30)
    # the hull's pointing weights: a row per output step over the points and END, each row
    # summing to one (the sorting map had no END column: other cells)
    wait_for(page, lambda: page.evaluate(WEIGHTS) != sorting, "the hull's pointing weights", 60)
    hull = page.evaluate(WEIGHTS)
    rows = round(sum(hull))
    assert all(0.0 <= w <= 1.0 for w in hull) and abs(sum(hull) - rows) < 1e-3
    assert rows >= 1 and len(hull) % rows == 0 and len(hull) // rows >= 4  # 3 points and END
    assert warnings == [], warnings[:5]
    assert page_log.errors == []
