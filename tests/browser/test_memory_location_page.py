"""The Memory lesson's addressing choice in the browser: the copy task and location addressing
from the address, the stages of location addressing drawn for a step, and the address and the
stages following the Content/Location switch."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from browserkit import follow_link, wait_for

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

IMAGE_SHAPES = """() => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const col = d instanceof Map ? d.get("image") : d["image"];
    if (col !== undefined && col[0].shape !== undefined) out.push(Array.from(col[0].shape));
  }
  return out;
}"""


TITLES = """() => Array.from(window.pyplay.document.all_models)
  .map((m) => m.text).filter((t) => typeof t === "string")"""


def _address(page) -> dict[str, str]:
    return dict(parse_qsl(page.evaluate("window.location.search").lstrip("?")))


def test_location_addressing_on_the_copy_task(ready_page, page_log, site_url):
    page = ready_page
    follow_link(page, "?lesson=memory&task=copy&addressing=location&seq_len=6&seed=3")
    heading = page.get_by_text("Location addressing at the step above, stage by stage")
    heading.wait_for(timeout=60_000)
    page.get_by_text("Delayed recall: read 6 random symbols").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Step", exact=True).click()
    wait_for(page, lambda: "Step 1" in page.locator(".pyplay-memory-status pre").inner_text(),
             "the first step")  # fmt: skip
    answer = page.locator(".pyplay-memory-answer pre").inner_text()
    assert "→" in answer and "target" in answer, answer  # the copy task's recall marker
    # read and write heads' stages: 16 cells by 4 stages (content, gated, shifted, sharpened)
    assert page.evaluate(IMAGE_SHAPES).count([16, 4]) == 2
    titles = page.evaluate(TITLES)
    assert any(t.startswith("Read head 1, step 1 (") for t in titles), titles
    page.get_by_role("button", name="Content", exact=True).click()
    page.wait_for_function("() => window.location.search.includes('addressing=content')",
                           timeout=60_000)  # fmt: skip
    heading.wait_for(state="hidden", timeout=30_000)
    assert _address(page)["task"] == "copy"
    page.get_by_role("button", name="Location", exact=True).click()
    heading.wait_for(timeout=30_000)
    assert _address(page)["addressing"] == "location"
    assert page_log.errors == [] and page_log.external(site_url) == []
