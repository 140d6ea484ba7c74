"""The recurrent lesson's padding/packing view in the browser: typed lengths redraw the batch and
its counts, the comparison follows the model while it trains, and a bad entry is reported beside
the box with the batch kept."""

from __future__ import annotations

import re

import pytest

from browserkit import wait_for

SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

pytestmark = pytest.mark.browser

HEADING = ".pyplay-packing-title pre"
SUMMARY = ".pyplay-packing-summary pre"


def test_typed_lengths_redraw_the_batch_and_a_bad_entry_stays_beside_the_box(ready_page, page_log):
    page = ready_page
    page.locator(HEADING).first.wait_for(timeout=60_000)
    assert "B·T = 5·6 = 30 steps, 17 real" in page.locator(HEADING).inner_text()
    box = page.get_by_role("textbox", name="Lengths")
    box.fill("3, 5, 1")
    box.press("Enter")
    page.locator(HEADING, has_text="B·T = 3·5 = 15 steps, 9 real").wait_for(timeout=30_000)
    assert "b_t = [3, 2, 2, 1, 1]" in page.locator(HEADING).inner_text()
    assert re.search(
        r"padded 15, packed 9 \(40% of the padded work", page.locator(SUMMARY).inner_text()
    )
    # the identical result with packing: the final states differ by rounding only
    gap = re.search(r"max \|difference\| (\S+) \(the same", page.locator(SUMMARY).inner_text())
    assert gap is not None and float(gap.group(1)) < 1e-5
    # the labels drawn in the cells: each valid step's packed row, none on padding
    labels = page.evaluate(
        """() => [...window.pyplay.document.all_models]
        .map((m) => m.data).filter((d) => d != null && typeof d === "object")
        .map((d) => (d instanceof Map ? d.get("label") : d.label)).filter((c) => c !== undefined)"""
    )
    assert any(sorted(x for x in col if x) == sorted(str(k) for k in range(9)) for col in labels)

    before = page.locator(SUMMARY).inner_text()
    page.get_by_role("button", name="Train", exact=True).click()
    wait_for(
        page,
        lambda: page.locator(SUMMARY).inner_text() != before,
        "the comparison to follow training",
        60,
    )
    page.get_by_role("button", name="Pause", exact=True).click()

    box.fill("3, 0")
    box.press("Enter")
    page.get_by_text("Lengths must each lie between 1 and 24, got 0 to 3").wait_for(timeout=30_000)
    assert "B·T = 3·5 = 15 steps" in page.locator(HEADING).inner_text()  # the batch stays
    assert box.input_value() == "3, 0"  # what was typed stays too
    assert page_log.errors == []
