"""Work that survives a reload: train in the recurrent lesson, pause, reload the page, take the
offer to restore, then rename and delete the snapshot in the "Saved work" tab."""

from __future__ import annotations

import re

import pytest

from browserkit import open_lesson, settled_step, step_count, wait_ready, wait_step

pytestmark = pytest.mark.browser

OFFER = re.compile(r"Restore your work from \d\d:\d\d: LSTM on adding, ([\d,]+) steps")


def open_saved_work(page) -> None:
    page.get_by_text("Saved work", exact=True).first.click()


def test_training_survives_a_reload(page, page_log, site_url):
    page.goto(site_url)
    wait_ready(page)
    open_lesson(page)
    page.get_by_role("button", name="Train", exact=True).click()
    wait_step(page, 20)
    page.get_by_role("button", name="Pause", exact=True).click()
    paused_at = settled_step(page)  # the last slice ends
    assert paused_at >= 20
    open_saved_work(page)  # the pause saved the model: it is listed
    entry = page.locator(".pyplay-saved-entry")
    entry.get_by_text(f"Recurrent networks · {paused_at:,} steps", exact=False).wait_for(
        timeout=60_000
    )
    assert page.locator(".pyplay-saved-name pre").inner_text() == "LSTM on adding"

    page.reload()
    wait_ready(page)
    offer = page.get_by_text(OFFER)
    offer.wait_for(timeout=60_000)
    assert int(OFFER.search(offer.inner_text()).group(1).replace(",", "")) == paused_at
    open_lesson(page)
    assert step_count(page) == 0  # a fresh page until the user says otherwise
    page.get_by_role("button", name="Restore", exact=True).click()
    page.get_by_text(f"Restored 'LSTM on adding' ({paused_at:,} steps).").first.wait_for(
        timeout=60_000
    )
    page.get_by_text(re.compile(rf"^Step {paused_at}\b")).wait_for(timeout=30_000)
    assert step_count(page) == paused_at
    assert not offer.is_visible()

    open_saved_work(page)
    box = page.get_by_role("textbox", name="New name")
    box.fill("<b>my</b> first LSTM")
    box.press("Enter")
    page.get_by_role("button", name="Rename", exact=True).click()
    name = page.locator(".pyplay-saved-name pre")
    page.get_by_text("Renamed to '<b>my</b> first LSTM'.").first.wait_for(timeout=30_000)
    name.filter(has_text="first LSTM").wait_for(timeout=30_000)  # the list is redrawn after
    assert name.inner_text() == "<b>my</b> first LSTM"  # the name as text, not as HTML
    assert page.locator(".pyplay-saved-entry b").count() == 0
    page.get_by_role("button", name="Delete", exact=True).click()
    page.get_by_text("Deleted '<b>my</b> first LSTM'.").first.wait_for(timeout=30_000)
    name.first.wait_for(state="detached", timeout=30_000)  # gone from the list

    page.reload()
    wait_ready(page)
    open_saved_work(page)
    page.get_by_text("Nothing saved yet.", exact=True).wait_for(timeout=60_000)  # looked
    assert page.get_by_text(OFFER).count() == 0
    assert not page.get_by_role("button", name="Restore", exact=True).is_visible()
    assert page_log.errors == [] and page_log.external(site_url) == []
