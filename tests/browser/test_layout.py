"""The page fits the window, guides a first visit and says things where they belong:
every button of every lesson fully visible at four window sizes and every control (button,
slider, input) inside the controls column it stands in, nothing wider than the window
(generated text wraps, the textbook heatmap stays inside after Explain), "Start here"
opens lessons, "Try this" sets up what it says, Generate's message sits under Generate.

Screenshots of every tab at 1440x900 are written to ``web/screenshots/`` (gitignored, named
in the README) for a reviewer to look at."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from browserkit import BUTTON_PROBLEMS, CANVASES, laid_out, show_tab, wait_for, wait_ready
from pyplay.ui.lessons.dynamic.view import SUBTABS

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's learner's page, as the tour left it (conftest.py)
AHEAD = True  # the learner's page: every lesson built and drawn ahead (conftest.py)

SIZES = ((1280, 800), (1440, 900), (1920, 1080), (768, 1024))  # the last: a tablet
SHOTS = Path(__file__).resolve().parents[2] / "web" / "screenshots"
SHOT_SIZE = (1440, 900)


# Every visible control of a lesson's controls column (a button, a slider's track, an input, a
# select) that reaches past the column's right edge, and by how much: under the plots beside
# it (BokehJS draws a slider told no width 300 px wide, 4-16 px past a 300 px column).
CONTROLS_PAST = """() => {
  const out = [], columns = [];
  const walk = (root, found) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot, found);
      found(el);
    }
  };
  walk(document, (el) => {
    if (el.classList.contains('pyplay-bench-controls') && el.checkVisibility()) columns.push(el);
  });
  for (const column of columns) {
    const edge = column.getBoundingClientRect().right;
    walk(column.shadowRoot || column, (el) => {
      const control = ['BUTTON', 'INPUT', 'SELECT'].includes(el.tagName)
        || el.classList.contains('noUi-target');
      if (!control || !el.checkVisibility()) return;
      const r = el.getBoundingClientRect();
      const label = (el.innerText || el.value || el.className).trim().slice(0, 40);
      if (r.width > 0 && r.right > edge + 0.5)
        out.push(`${label}: ${(r.right - edge).toFixed(0)} px past its controls column`);
    });
  }
  return [...new Set(out)];
}"""


def problems(page: Any) -> list[str]:
    """Button problems over the whole page, scrolled a window at a time (in the page, in one
    call: a round trip per window took 0.4-1.4 s per tab on a 6,000 px page with every section
    open, one call 0.1-0.3 s); the page no wider than the window anywhere; then the controls
    past their column (:data:`CONTROLS_PAST`)."""
    result = page.evaluate(BUTTON_PROBLEMS, True)
    assert result["wide"] == [], result
    return list(result["problems"]) + list(page.evaluate(CONTROLS_PAST))


def settle(page: Any) -> None:
    """Let the tab just opened build and lay out, its sections opened (a lesson is built when
    first opened, a section's body when first opened): :func:`browserkit.laid_out`."""
    laid_out(page, opened=True)


def test_every_button_of_every_lesson_fits_at_four_sizes(ready_page, page_log):
    page = ready_page
    titles = page.locator(".bk-tab").all_inner_texts()
    lessons = [t for t in titles if t not in ("Start here", "About", "Saved work")]
    for title in lessons:  # build every lesson once, at the first size
        show_tab(page, title)
        page.get_by_role("button", name="Reset", exact=True).first.wait_for(timeout=60_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for k, title in enumerate(titles):
            show_tab(page, title)
            settle(page)
            failures += [f"{width}x{height} {title}: {p}" for p in problems(page)]
            if (width, height) == SHOT_SIZE:
                name = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
                page.screenshot(path=str(SHOTS / f"{k:02d}-{name}-{width}x{height}.png"))
        show_tab(page, "Dynamic networks")
        for sub in SUBTABS[1:]:  # every sub-tab after "Build and run"
            page.get_by_text(sub, exact=True).first.click()
            settle(page)
            failures += [f"{width}x{height} {sub}: {p}" for p in problems(page)]
        page.get_by_text("Build and run", exact=True).first.click()
    assert failures == []
    assert page_log.errors == []


def test_long_text_wraps_and_the_textbook_heatmap_stays_inside(ready_page, page_log):
    page = ready_page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.locator("select:visible").first.select_option(label="Character model")
    wait_for(
        page,
        lambda: (
            "character" in page.locator(".pyplay-status pre").inner_text().lower()
            or page.get_by_text(re.compile("New LSTM")).count() > 0
        ),
        "the character model",
    )
    page.get_by_role("button", name="Generate", exact=True).click()
    out = page.locator("pre").filter(has_text=re.compile(r"^Alice .{150,}", re.S))
    out.first.wait_for(timeout=60_000)
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1]
    show_tab(page, "Dynamic networks")
    page.get_by_text("Textbook seq2seq", exact=True).first.click()
    page.get_by_role("button", name="General", exact=True).click()  # as the lesson's own test
    page.get_by_role("button", name="Step", exact=True).click()  # Explain needs one step
    stepped = re.compile(r"Step [1-9]")  # (the tour, on the same page, may have stepped it)
    wait_for(
        page,
        lambda: bool(stepped.search(page.locator(".pyplay-textbook-status pre").inner_text())),
        "one step",
    )
    page.get_by_role("textbox", name="Source").fill("abcd")
    page.get_by_role("button", name="Explain", exact=True).click()
    wait_for(
        page,
        lambda: "largest difference" in page.locator(".pyplay-textbook-steps pre").inner_text(),
        "the explanation",
    )
    time.sleep(1.0)
    inner = page.evaluate("window.innerWidth")
    for left, right in page.evaluate(CANVASES):
        assert left >= -0.5 and right <= inner + 0.5, (left, right, inner)
    assert page.evaluate("document.documentElement.scrollWidth") <= inner
    assert page_log.errors == []


def test_generate_without_a_character_model_says_so_under_the_button(ready_page, page_log):
    page = ready_page
    # the adding problem: no character model (the module's tests share one page)
    page.locator("select:visible").first.select_option(label="Adding problem")
    # (the worker takes the page's events in order: the task changes before Generate's click)
    page.get_by_role("button", name="Generate", exact=True).click()
    notes = page.locator(".pyplay-local-note pre >> visible=true")  # (every lesson's is drawn)
    wait_for(
        page,
        lambda: any("Sampling needs the character model" in t for t in notes.all_inner_texts()),
        "the note under Generate",
        30,
    )
    assert page.locator(".alert", has_text="Sampling needs").count() == 0  # not the banner
    assert page_log.errors == []


def test_start_here_opens_a_lesson_and_try_this_sets_it_up(page, site_url, page_log):
    page.goto(site_url)
    wait_ready(page)
    assert page.locator(".bk-tab.bk-active").inner_text() == "Recurrent networks"
    page.locator(".bk-tab", has_text="Start here").first.click()
    page.get_by_role("button", name="Open Recurrent networks").click()
    page.get_by_role("button", name="Train", exact=True).wait_for(timeout=150_000)
    page.get_by_role("button", name="Plain RNN, adding problem, T=40").click()
    note = page.locator(".pyplay-try-this").get_by_text(re.compile("Set up: Plain RNN"))
    note.wait_for(timeout=30_000)
    assert "Sequence length: 40" in page.get_by_text("Sequence length:").first.inner_text()
    active = page.locator(".bk-btn-group .bk-active:visible").all_inner_texts()
    assert "RNN" in active
    page.get_by_text(re.compile(r"New RNN with [\d,]+ parameters")).first.wait_for(timeout=60_000)
    assert page_log.errors == []
