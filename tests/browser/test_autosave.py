"""Work that survives a reload: train in the recurrent lesson, pause, reload the page, take the
offer to restore, then rename and delete the snapshot in the "Saved work" tab; and two tabs
training at once, each keeping its own saved work."""

from __future__ import annotations

import re
import time

import pytest

from browserkit import (
    open_lesson,
    settled,
    settled_step,
    step_count,
    wait_for,
    wait_ready,
    wait_step,
)
from pyplay.ui.autosave import INTERVAL_S

# The page's autosaver (one per page: pyplay.ui.saved_work), set to save every EVERY_S seconds
# of training instead of INTERVAL_S (15 s), so that a test sees several autosaves in seconds.
EVERY_S = INTERVAL_S / 5
# The page's Python: the page's autosavers (one), found among the live objects
SAVERS = """
import gc
from pyplay.ui.autosave import Autosaver
savers = [o for o in gc.get_objects() if isinstance(o, Autosaver)]
"""
AUTOSAVE_EVERY = (
    SAVERS
    + f"""
for saver in savers:
    saver.interval_s = {EVERY_S}
len(savers)
"""
)

pytestmark = pytest.mark.browser

# The page's Python: ten more steps of the recurrent lesson, then a save of it asked of the
# autosaver, as its interval would (the lesson need not be on screen); the lesson's steps.
TRAIN_AND_SAVE = (
    SAVERS
    + """
saver = savers[0]
state = saver.tracked["rnn"].state
state.train(steps=10)
saver.request("rnn")
int(state.trainer.step_count)
"""
)

OFFER = re.compile(r"Restore your work from \d\d:\d\d: LSTM on adding, ([\d,]+) steps")


def open_saved_work(page) -> None:
    page.get_by_text("Saved work", exact=True).first.click()


def autosave_often(page) -> None:
    """Set the page's autosaver to :data:`EVERY_S` seconds (the 15 s default is tested natively:
    tests/ui/test_saved_work.py). The page builds it just after the first render (saved work
    is deferred work: ``pyplay.ui.later``), so a tab that has just become ready may not have it
    yet: wait for exactly one."""
    wait_for(
        page,
        lambda: page.evaluate("c => window.pyplay.runPython(c)", AUTOSAVE_EVERY) == "1",
        "the page's one autosaver (built just after the first render)",
        timeout_s=60,
    )


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


def test_two_tabs_training_at_once_keep_each_others_saved_work(page, page_log, site_url):
    """Two tabs of the page (one browser profile, one store) train at once: each lesson's
    model is its own entry (a random id per model, never a shared key), so neither tab's
    autosave (every ``interval_s`` of training) overwrites the other's, and a fresh tab lists
    both. (When the store is full, the oldest automatic entries go first, whichever tab wrote
    them: the newest saves win.)"""
    other = page.context.new_page()
    for tab in (page, other):
        tab.bring_to_front()  # a tab in the background draws nothing: clicks would wait
        tab.goto(site_url)
        wait_ready(tab)
        open_lesson(tab)
        autosave_often(tab)
    other.get_by_text("GRU", exact=True).first.click()  # a different model in the second tab
    other.get_by_text(re.compile(r"New GRU with [\d,]+ parameters")).first.wait_for(timeout=60_000)
    for tab in (page, other):
        tab.bring_to_front()
        tab.get_by_role("button", name="Train", exact=True).click()
    started = time.monotonic()
    for tab in (page, other):  # both train at once, each past its first autosave
        wait_step(tab, 20)
    time.sleep(max(0.0, EVERY_S + 10 - (time.monotonic() - started)))
    other.close()
    page.goto(site_url)  # a fresh tab: what the store holds
    wait_ready(page)
    open_saved_work(page)
    entries = page.locator(".pyplay-saved-entry")
    for model in ("LSTM", "GRU"):
        entries.filter(has_text=f"{model} on adding").first.wait_for(timeout=60_000)
    assert entries.count() == 2
    assert page_log.errors == [] and page_log.external(site_url) == []


def test_autosaves_leave_nothing_behind_in_the_page(page, site_url):
    """Every autosave of a lesson rewrites its Saved work entry, which the list shows while its
    tab is open. The entry is updated in place: made anew each time, it left the page's views
    of the old one behind (their DOM nodes and event listeners, never freed: +8 nodes a
    second). Opening the tab pauses the lesson (leaving a lesson pauses it), so the page's
    Python trains it on and asks for each save (:data:`TRAIN_AND_SAVE`) while the list is
    shown; the listeners are counted through the DevTools protocol after a full garbage
    collection, over three saves, each counted once its entry shows the new step."""
    page.goto(site_url)
    wait_ready(page)
    open_lesson(page)
    cdp = page.context.new_cdp_session(page)

    def live() -> tuple[int, int]:  # DOM nodes and event listeners a garbage collection keeps
        cdp.send("HeapProfiler.collectGarbage")
        counters = cdp.send("Memory.getDOMCounters")
        return counters["nodes"], counters["jsEventListeners"]

    entry = page.locator(".pyplay-saved-entry")

    def train_and_save() -> int:  # the entry shows the new step count: saved and redrawn
        steps = int(page.evaluate("c => window.pyplay.runPython(c)", TRAIN_AND_SAVE))
        entry.get_by_text(f"Recurrent networks · {steps:,} steps").wait_for(timeout=60_000)
        settled(lambda: entry.inner_text(), quiet_s=1.0, timeout_s=30)
        return steps

    page.get_by_role("button", name="Train", exact=True).click()
    wait_step(page, 20)
    open_saved_work(page)  # the lesson pauses, and the pause saves it: its entry
    first = settled_step(page)
    entry.get_by_text(f"Recurrent networks · {first:,} steps").wait_for(timeout=120_000)
    train_and_save()  # one rewrite before counting: the views of a rewritten entry exist
    nodes, listeners = live()
    steps = [train_and_save() for _ in range(3)]
    nodes_after, listeners_after = live()
    assert steps[0] < steps[1] < steps[2] and entry.count() == 1  # one entry, rewritten
    # the old list: +116 listeners here. (Live nodes are not asserted: under load a patch
    # the page is applying holds a few hundred of them at any moment.)
    # (Fewer is no leak: the tab just opened may still hold a few of its first drawing's.)
    assert listeners_after <= listeners, (listeners, listeners_after, nodes, nodes_after)
