"""Issue 17, "watch it learn", in the browser: the look-inside views follow the model while it
trains (no click needed), a head picked while training is answered by itself, between two
training slices, without a new forward pass over every head (that a tour of every lesson
leaves the console free of warnings and errors is checked on the tour of ``test_tour.py``), and
the plots' stylesheets are written only when their text changes while a lesson trains.

No assertion here is about time: the first compares the data of two moments of a run, the
second the order in which the page receives what the worker sends (times are measured by
``python web/measure.py`` and given in the issue's note).
"""

from __future__ import annotations

import re

import pytest

from browserkit import FINGERPRINT, lessons, visible_button, wait_for
from lesson_cases import gather
from pyplay.ui.lessons import SPECS

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's shared page, with new lessons for this module (conftest.py)

TABS = lessons()
LIVE = {  # tab: (status line's class, look-inside columns), from tests/lessons/<key>/cases.py
    SPECS[key].title: (TABS[SPECS[key].title], columns) for key, columns in gather("LIVE").items()
}


def steps(page, css: str) -> int:
    text = page.locator(f".{css} pre").first.inner_text()
    found = re.search(r"Step (\d+)", text)
    return int(found.group(1)) if found else 0


def open_lesson(page, tab: str, css: str) -> None:
    page.get_by_text(tab, exact=True).first.click()
    page.locator(f".{css} pre").first.wait_for(timeout=60_000)


@pytest.mark.parametrize("tab", list(LIVE))
def test_look_inside_follows_the_model_while_it_trains(ready_page, page_log, tab):
    page = ready_page
    css, columns = LIVE[tab]
    open_lesson(page, tab, css)
    visible_button(page, "Train").click()
    wait_for(page, lambda: steps(page, css) >= 2, "two training steps")
    first = page.evaluate(FINGERPRINT, columns)
    at = steps(page, css)
    wait_for(page, lambda: steps(page, css) >= at + 3, "three more steps")
    wait_for(
        page,
        lambda: page.evaluate(FINGERPRINT, columns) != first,
        "a look-inside view changing while training",
        30,
    )
    assert steps(page, css) > at  # it was still the same training run: no click in between
    visible_button(page, "Pause").click()
    assert page_log.errors == []


# every change the page receives: (kind, model id, what it says)
EVENTS = """() => {
  window.pyplayEvents = [];
  window.pyplay.document.on_change((e) => {
    const m = e.model || e.column_source;
    const id = m ? m.id : "";
    const d = m && m.data;
    const cols = d instanceof Map ? [...d.keys()] : (d ? Object.keys(d) : []);
    const text = ((e.attr === "text" || e.attr === "value") && typeof e.value === "string")
      ? e.value : "";
    window.pyplayEvents.push([e.attr || "data", id, cols.join(","), text]);
  }, false);
}"""


def test_a_head_picked_while_training_shows_before_the_next_slice(ready_page, page_log):
    page = ready_page
    css = "pyplay-transformer-status"
    open_lesson(page, "Transformers", css)
    visible_button(page, "Train").click()
    wait_for(page, lambda: steps(page, css) >= 3, "three training steps")
    page.evaluate(EVENTS)
    page.get_by_role("combobox", name="Head").select_option("2")
    page.locator(".pyplay-head-title pre", has_text="Layer 1, head 2").wait_for(timeout=60_000)
    events = page.evaluate("window.pyplayEvents")
    visible_button(page, "Pause").click()
    shown = next(k for k, e in enumerate(events) if "Layer 1, head 2" in e[3])
    # the click itself: the Head select's new value (a slice may end between the start of
    # the recording and the click; only what comes after the click is counted)
    clicked = next(k for k, e in enumerate(events) if e[0] == "value" and e[3] == "2")
    assert clicked < shown, events[: shown + 1]

    def is_slice(e) -> bool:  # what a training slice ends with: its status, its losses
        return "Step " in e[3] or "loss" in e[2].split(",")

    # at most the slice under way when the click came in was received before the answer
    assert sum(1 for e in events[clicked:shown] if "Step " in e[3]) <= 1, events[clicked:shown]
    last_slice = max((k for k in range(shown) if is_slice(events[k])), default=-1)
    answer = events[last_slice + 1 : shown + 1]
    cols = [e[2].split(",") for e in answer]
    assert any("src" in c and "weight" in c for c in cols), answer  # the head's own map
    # answered from the last forward pass: the grid of every head is not sent again
    assert not any("head" in c and "layer" in c for c in cols), answer
    assert page_log.errors == []


PACE = "from pyplay.ui.session import TrainingSession\nTrainingSession.pace"
# the page's main thread held up 300 ms of every 400 ms, for 4 s (a slow or busy machine)
HOG = """() => {
  const end = performance.now() + 4000;
  const hog = () => {
    const t = performance.now();
    while (performance.now() - t < 300) {}
    if (performance.now() < end) setTimeout(hog, 100);
  };
  setTimeout(hog, 0);
}"""


def test_a_busy_page_slows_the_pace_of_training_and_a_free_one_restores_it(ready_page, page_log):
    """The page reports its load once a second (web/site/client.js watchLoad) and the worker's
    sessions space their slices and live redraws by it (pyplay.ui.session.page_load)."""
    page = ready_page

    def pace() -> float:
        return float(page.evaluate("c => window.pyplay.runPython(c)", PACE))

    wait_for(page, lambda: pace() == 1.0, "the default pace on a page at rest", 90)
    page.evaluate(HOG)
    wait_for(page, lambda: pace() > 2.0, "the pace slowing on a busy page", 60)
    wait_for(page, lambda: pace() == 1.0, "the pace back to the default once the page is free", 90)
    assert page_log.errors == []


# every write of a <style> element's text, counted as the same text again or a new one; taken
# off again by the test (the page is shared)
STYLE_WRITES = """() => {
  const node = Object.getOwnPropertyDescriptor(Node.prototype, "textContent");
  window.pyplayStyleWrites = {same: 0, changed: 0};
  Object.defineProperty(HTMLStyleElement.prototype, "textContent", {
    configurable: true,
    get() { return node.get.call(this); },
    set(text) {
      window.pyplayStyleWrites[node.get.call(this) === text ? "same" : "changed"] += 1;
      node.set.call(this, text);
    },
  });
}"""
UNHOOK = "() => { delete HTMLStyleElement.prototype.textContent; }"


def test_a_training_lesson_writes_a_plot_stylesheet_only_when_it_changes(ready_page, page_log):
    """BokehJS sets every renderer's position stylesheet at each paint; the site's BokehJS
    (``bokehjs-stylesheet-unchanged`` in web/tools/sitebuild/patches.py) leaves a stylesheet
    whose text is unchanged alone, since a rewrite restyled the whole page. A new layout (the
    window resized) still moves the renderers: their stylesheets are written then."""
    page = ready_page
    tab = SPECS["rnn"].title
    css = TABS[tab]
    open_lesson(page, tab, css)
    visible_button(page, "Train").click()
    wait_for(page, lambda: steps(page, css) >= 2, "two training steps")
    page.evaluate(STYLE_WRITES)
    try:
        at = steps(page, css)
        wait_for(page, lambda: steps(page, css) >= at + 50, "fifty more steps")
        while_training = page.evaluate("window.pyplayStyleWrites")
        size = page.viewport_size
        page.set_viewport_size({"width": size["width"] - 120, "height": size["height"]})
        wait_for(
            page,
            lambda: page.evaluate("window.pyplayStyleWrites.changed") > 0,
            "a plot's stylesheet written after the window was resized",
            60,
        )
        page.set_viewport_size(size)
        after_resize = page.evaluate("window.pyplayStyleWrites")
    finally:
        page.evaluate(UNHOOK)
        visible_button(page, "Pause").click()
    # the plots were painted (the loss and the live views), with no stylesheet written again
    assert steps(page, css) > at + 50
    assert while_training["same"] == 0, while_training
    assert after_resize["same"] == 0, after_resize
    assert page_log.errors == []
