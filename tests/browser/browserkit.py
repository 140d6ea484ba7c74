"""Helpers shared by the browser tests and fixtures: page logs and readiness."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from lesson_cases import gather
from pyplay.ui.lessons import LESSONS

READY = "document.documentElement.dataset.pyplayReady === 'true'"
FAILED = "document.documentElement.dataset.pyplayError === 'true'"
START_TIMEOUT_MS = 240_000


class PageLog:
    """What a page did: requested URLs, failed responses, console errors."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.failures: list[str] = []
        self.errors: list[str] = []

    def attach(self, page: Any) -> Callable[[], None]:
        """Record what ``page`` does from now on; returns the function that stops it."""
        handlers: list[tuple[str, Callable[[Any], Any]]] = [
            ("request", lambda r: self.requests.append(r.url)),
            (
                "response",
                lambda r: r.status >= 400 and self.failures.append(f"{r.status} {r.url}"),
            ),
            ("console", lambda m: m.type == "error" and self.errors.append(m.text)),
            ("pageerror", lambda e: self.errors.append(str(e))),
        ]
        for event, handler in handlers:
            page.on(event, handler)

        def detach() -> None:
            for event, handler in handlers:
                page.remove_listener(event, handler)

        return detach

    def copy(self) -> PageLog:
        """A new log that starts with what this one recorded so far."""
        log = PageLog()
        log.requests, log.failures, log.errors = (
            list(self.requests),
            list(self.failures),
            list(self.errors),
        )
        return log

    def external(self, origin: str) -> list[str]:
        return [u for u in self.requests if not u.startswith((origin, "blob:", "data:"))]


POLL_S = 0.25  # how often wait_for and wait_step look again


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
    """Poll the status line every :data:`POLL_S` until it shows step ``at_least`` or later;
    fail after ``timeout_s``."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        step = step_count(page)
        if step >= at_least:
            return step
        time.sleep(POLL_S)
    pytest.fail(f"training did not reach step {at_least} in {timeout_s} s")


def settled(
    read: Any,
    quiet_s: float = 3.0,
    timeout_s: float = 120,
    every_s: float = 0.25,
    ready: Callable[[Any], bool] = lambda _: True,
    what: str = "the status line still changed {timeout_s} s after Pause",
) -> Any:
    """After a Pause click: poll ``read()`` (a status line's reading) every ``every_s`` until
    it has not changed for ``quiet_s`` (and ``ready`` holds of it) and return it; fail with
    ``what`` after ``timeout_s``. The slice under way at the click still ends, and a busy
    page paces slices up to 4x longer (``TrainingSession.pace``), so its last patch can land
    a second or more after the click."""
    deadline = time.time() + timeout_s
    last, since = read(), time.time()
    while time.time() < deadline:
        time.sleep(every_s)
        now = read()
        if now != last:
            last, since = now, time.time()
        elif ready(now) and time.time() - since >= quiet_s:
            return now
    pytest.fail(what.format(timeout_s=timeout_s, last=last))


def settled_step(page: Any, quiet_s: float = 3.0, timeout_s: float = 120) -> int:
    """:func:`settled` on the lesson's "Step N" status line; returns N."""
    return int(settled(lambda: step_count(page), quiet_s, timeout_s))


def visible_button(page: Any, name: str) -> Any:
    """The first visible button named exactly ``name`` (the shown lesson's, not a hidden tab's)."""
    return page.get_by_role("button", name=name, exact=True).locator("visible=true").first


def wait_for(page: Any, condition: Any, what: str, timeout_s: float = 150) -> None:
    """Poll ``condition()`` every :data:`POLL_S`; fail naming ``what`` after ``timeout_s``."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if condition():
            return
        time.sleep(POLL_S)
    pytest.fail(f"{what} did not happen in {timeout_s} s")


# Every visible button and file chooser of the page (shadow roots included) that is not fully
# usable: zero-size, outside the window, its text wider than itself, cut off by an ancestor
# that clips, or covered at its centre by something else (checked for the buttons inside the
# window). Returns the problems and the page's scrollWidth against the window's width. With the
# argument ``true`` it scrolls through the whole page a window at a time, checks each window
# (so every button is checked for cover) and returns the scroll to the top; ``wide`` lists the
# windows where the page was wider than the window.
BUTTON_PROBLEMS = """(scroll) => {
  const out = [], all = [], wide = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.tagName === 'BUTTON' || (el.tagName === 'INPUT' && el.type === 'file')) all.push(el);
    }
  };
  walk(document);
  const up = (el) => el.parentElement || (el.getRootNode() && el.getRootNode().host) || null;
  const W = window.innerWidth, H = window.innerHeight;
  const check = () => { for (const el of all) {
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    const r = el.getBoundingClientRect();
    const label = (el.innerText || el.value || el.title || el.className).trim().slice(0, 40);
    const problems = [];
    if (r.width < 4 || r.height < 4) problems.push('zero-size');
    if (r.left < -0.5 || r.right > W + 0.5)
      problems.push(`outside the window x=${r.left.toFixed(0)}..${r.right.toFixed(0)}`);
    if (el.scrollWidth > el.clientWidth + 1)
      problems.push(`text wider than the button (${el.scrollWidth} > ${el.clientWidth})`);
    let left = r.left, right = r.right;
    for (let p = up(el); p && p !== document.documentElement; p = up(p)) {
      if (!(p instanceof Element) || getComputedStyle(p).overflowX === 'visible') continue;
      const q = p.getBoundingClientRect();
      left = Math.max(left, q.left); right = Math.min(right, q.right);
    }
    const seen = Math.max(0, right - left);
    if (r.width >= 4 && seen < r.width - 1)
      problems.push(`clipped: ${seen.toFixed(0)} of ${r.width.toFixed(0)} px visible`);
    if (!problems.length && r.top >= 0 && r.bottom <= H) {
      const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
      let hit = document.elementFromPoint(x, y);
      while (hit && hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(x, y);
        if (!inner || inner === hit) break;
        hit = inner;
      }
      let mine = false;
      for (let h = hit; h; h = up(h)) if (h === el) { mine = true; break; }
      if (!mine && hit) problems.push(`covered by ${hit.tagName}.${hit.className}`);
    }
    const found = `${label}: ${problems.join('; ')}`;
    if (problems.length && !out.includes(found)) out.push(found);
  } };
  if (!scroll) check();
  else {
    const height = document.documentElement.scrollHeight;
    for (let y = 0; y < Math.max(height, 1); y += H) {
      window.scrollTo(0, y);
      check();
      const sw = document.documentElement.scrollWidth;
      if (sw > W) wide.push(`scrolled to y=${y}: scrollWidth ${sw} > innerWidth ${W}`);
    }
    window.scrollTo(0, 0);
  }
  return {buttons: all.length, problems: out, wide: wide,
          scrollWidth: document.documentElement.scrollWidth, innerWidth: W};
}"""

# the horizontal extent of every visible Bokeh canvas: [[left, right], ...]
CANVASES = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.classList.contains('bk-Canvas') && el.checkVisibility()) {
        const r = el.getBoundingClientRect();
        if (r.width > 0) out.push([r.left, r.right]);
      }
    }
  };
  walk(document);
  return out;
}"""


# What the page looks like now, to tell when it has stopped changing (:func:`laid_out`): the
# document's scroll size, every visible Bokeh canvas's box, how many visible tabs say "Loading"
# and how many visible section headers are still closed ("\u25b8 Title": the worker relabels a
# header "\u25be" in the patch that adds the opened section's body).
LAYOUT = """() => {
  const boxes = [];
  let closed = 0, loading = 0;
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const c = el.classList;  // (visibility only asked of these: it costs a style lookup)
      if (c.contains('bk-Canvas') && el.checkVisibility()) {
        const r = el.getBoundingClientRect();
        boxes.push([r.left, r.top, r.width, r.height].map(Math.round).join(','));
      } else if (c.contains('pyplay-section-header') && el.shadowRoot && el.checkVisibility()) {
        const b = el.shadowRoot.querySelector('button');
        if (b && b.textContent.trim().startsWith('\u25b8')) closed += 1;
      } else if (c.contains('pyplay-loading') && el.checkVisibility()) {
        loading += 1;
      }
    }
  };
  walk(document);
  const doc = document.scrollingElement;
  return {size: [doc.scrollWidth, doc.scrollHeight], boxes: boxes.join(';'), closed, loading};
}"""


def laid_out(page: Any, opened: bool = False, quiet_s: float = 0.5, timeout_s: float = 30) -> None:
    """Wait until the page has stopped changing (:func:`settled` on :data:`LAYOUT`): the same
    scroll size and canvas boxes for ``quiet_s``, polled every 0.1 s, no visible tab
    "Loading" and, with ``opened`` (a page with :data:`OPEN_SECTIONS`), no visible section
    still closed. Fails naming what still changed after ``timeout_s``. In place of a fixed
    sleep after a tab is opened or the window resized: it ends as soon as the layout holds,
    and waits longer when it does not."""
    settled(
        lambda: page.evaluate(LAYOUT),
        quiet_s,
        timeout_s,
        every_s=0.1,
        ready=lambda now: now["loading"] == 0 and not (opened and now["closed"]),
        what="the page kept changing for {timeout_s} s: {last}",
    )


def lessons() -> dict[str, str]:
    """Every lesson with a tab of its own, in tab order (:data:`pyplay.ui.lessons.LESSONS`, the
    sub-lessons left out): its title -> its status line's CSS class (``STATUS`` of its
    ``tests/lessons/<key>/cases.py`` where it is not ``pyplay-<key>-status``)."""
    status = gather("STATUS")
    return {
        spec.title: status.get(spec.key, f"pyplay-{spec.key}-status")
        for spec in LESSONS
        if spec.parent is None
    }


def show_tab(page: Any, title: str) -> None:
    """Show the playground's tab ``title``: a click event sent to the tab. Playwright's
    ``click`` first waits for the tab to hold still over two animation frames and scrolls it
    into view, 0.77 s a tab on a page with every lesson drawn (54.5 s of 71 tab changes in
    test_layout's every-button test), 0.31 s sent."""
    page.locator(".bk-tab", has_text=title).first.dispatch_event("click")


def open_lesson(page: Any, title: str = "Recurrent networks") -> None:
    """Open a lesson's tab (the page opens on the course's first lesson) and wait until it is
    built."""
    show_tab(page, title)
    page.get_by_role("button", name="Reset", exact=True).first.wait_for(timeout=150_000)


def fresh_model(page: Any) -> None:
    """Reset the shown lesson's model (its settings stay) and wait for its status line's
    "Step 0": a test on a module's shared page that counts steps from the first."""
    visible_button(page, "Reset").click()
    wait_for(page, lambda: step_count(page) == 0, "the new model (step 0)", 60)


def settle(page: Any) -> None:
    """Leave a page that a test used as the next test of its module expects to find it: no
    lesson training (every visible, enabled Pause pressed), no notice over the page, the
    course's first lesson open. Settings the test changed stay as they are: the tests of a
    module that shares one page (``SHARED_PAGE = True``) are written not to depend on them."""
    clicked = -1
    for _ in range(3):  # again only if a click showed another Pause (Pause stays enabled)
        pauses = page.get_by_role("button", name="Pause", exact=True).locator("visible=true")
        enabled = [pauses.nth(k) for k in range(pauses.count()) if pauses.nth(k).is_enabled()]
        if not enabled or len(enabled) <= clicked:
            break
        for button in enabled:
            button.click()
        clicked = len(enabled)
        time.sleep(0.5)
    notice = page.locator("#pyplay-notice")
    if notice.count():
        notice.click()
        notice.wait_for(state="detached", timeout=10_000)
    open_lesson(page)


# The page's Python (run through ``window.pyplay.runPython``) that returns a page to a new
# one's lessons: the "Start here" tab shown (every lesson left, so paused), every built lesson
# dropped (its tab back to "Loading", so opening it builds it anew at its default settings, as a
# page that builds a lesson when its tab opens does: ONE_LESSON), the address and the autosaver
# following the rebuilt lessons (a dropped lesson's model no longer saved, a rebuilt one's
# saved as a new page's), and the training pace and live redraws at their defaults. Returns
# the number of lessons dropped.
FRESH_LESSONS = """
import gc
from pyplay.ui.app import Playground, loading
from pyplay.ui.autosave import Autosaver
from pyplay.ui.location import LocationSync
from pyplay.ui.session import TrainingSession

found = [o for o in gc.get_objects() if type(o) is Playground]
if len(found) != 1:
    raise RuntimeError(f"{len(found)} playgrounds in the page, not one")
playground = found[0]
playground.tabs.active = 0
dropped = [*playground.lessons, *playground.prepared]
for title in dropped:
    playground.slots[title].objects = [loading(f"the {title} lesson")]
playground.lessons.clear()
playground.prepared.clear()
playground.drawn.clear()
for sync in (o for o in gc.get_objects() if type(o) is LocationSync):
    sync._attached.clear()
for saver in (o for o in gc.get_objects() if type(o) is Autosaver):
    for tracked in saver.tracked.values():
        for watcher in tracked.watchers:
            tracked.state.param.unwatch(watcher)
    saver.tracked.clear()
    saver.pending.clear()
TrainingSession.live = True
TrainingSession.pace = 1.0
str(len(dropped))
"""

# no lesson's Reset button left in the page (every lesson tab back to "Loading")
NO_LESSON = """() => {
  let found = 0;
  const walk = (root) => {
    for (const el of root.querySelectorAll('button')) {
      if (el.textContent.trim() === 'Reset') found++;
    }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return found === 0;
}"""


def fresh_lessons(page: Any) -> int:
    """Give a page that earlier tests used the lessons of a new page (:data:`FRESH_LESSONS`)
    and open the course's first lesson, built anew; returns how many lessons were dropped.
    A test module on the session's shared page starts here (``conftest.module_page``)."""
    settle(page)
    dropped = int(page.evaluate("c => window.pyplay.runPython(c)", FRESH_LESSONS))
    page.wait_for_function(NO_LESSON, timeout=60_000, polling=250)
    # BokehJS forgets the models no root reaches any more only 30 s after the last patch
    # (Document._schedule_recompute_all_models); the tests that read every model of the
    # document must not find the dropped lessons' ones, so it forgets them now
    page.evaluate("() => window.pyplay.document._recompute_all_models()")
    open_lesson(page)
    return dropped


# Replace the page's address by the link given (no reload) and give the worker the address
# as the page sends it once drawn (web/site/page.js rendered(): window.location as JSON, taken
# by pyplay.ui.location.follow_address).
FOLLOW = """(query) => {
  history.replaceState(history.state, "", query);
  const address = JSON.stringify(JSON.stringify(window.location));  // a Python string too
  return window.pyplay.runPython(
    `from pyplay.ui.location import follow_address\nfollow_address(${address})\n"followed"`);
}"""


def follow_link(page: Any, query: str) -> None:
    """Open the link ``query`` (e.g. ``"?lesson=memory&seed=3"``) on a page that earlier tests
    used, as a page opened from it would: the lessons of a new page first
    (:func:`fresh_lessons`), then the address replaced and handed to the page's Python the way
    the page hands it over once drawn, so the link opens its lesson with its settings. For the
    tests that use a link only to set a lesson up, on a shared page (``SHARED_PAGE = True``), in
    place of a cold load (10-30 s); ``test_shared_link`` loads its first link cold."""
    fresh_lessons(page)
    assert page.evaluate(FOLLOW, query) == "followed"


def section_header(page: Any, title: str) -> Any:
    """A lesson section's header button (``workbench.Section``: "\u25b8 Title" closed, "\u25be
    Title" open; the section's own heading leaves the page for this title)."""
    name = re.compile("^[\u25b8\u25be] " + re.escape(title) + "$")
    return page.get_by_role("button", name=name).locator("visible=true").first


# a fingerprint of the named columns of every data source in the page (numbers, nested
# arrays such as images included): (model id, column, count, weighted sum)
FINGERPRINT = """(columns) => {
  const out = [];
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    for (const c of columns) {
      const col = d instanceof Map ? d.get(c) : d[c];
      if (col === undefined) continue;
      let s = 0, n = 0;
      const visit = (v) => {
        if (typeof v === "number") { if (isFinite(v)) s += v * (1 + (n % 7)); n += 1; }
        else if (v != null && typeof v !== "string" && v.length !== undefined) {
          for (const x of v) visit(x);
        }
      };
      visit(col);
      out.push(`${m.id}:${c}:${n}:${s.toFixed(9)}`);
    }
  }
  return out.sort();
}"""


# the named columns of the first data source in the page that holds them all, or null
SOURCE_COLUMNS = """(columns) => {
  for (const m of window.pyplay.document.all_models) {
    const d = m.data;
    if (d == null || typeof d !== "object") continue;
    const get = (c) => (d instanceof Map ? d.get(c) : d[c]);
    if (columns.some((c) => get(c) === undefined)) continue;
    return Object.fromEntries(columns.map((c) => [c, Array.from(get(c))]));
  }
  return null;
}"""


def source_columns(page: Any, *columns: str) -> dict[str, list[Any]] | None:
    """``columns`` of the first Bokeh data source in the page that holds all of them."""
    found: dict[str, list[Any]] | None = page.evaluate(SOURCE_COLUMNS, list(columns))
    return found


def show_character_table(page: Any, size: int) -> dict[str, list[Any]]:
    """Choose the lesson's character model's table (``size`` rows) in the embeddings view once
    it is offered; the map's words and points, one per character, space among them."""
    table = page.get_by_role("combobox", name="Table")
    name = f"This lesson's model: character embedding ({size})"
    wait_for(page, lambda: name in table.locator("option").all_inner_texts(), "the model's table")
    table.select_option(name)
    page.locator(".pyplay-emb-title pre", has_text=name).wait_for(timeout=30_000)
    shown = source_columns(page, "word", "x", "y")
    assert shown is not None and len(shown["word"]) == size and "␣" in shown["word"]
    return shown


# A learner who opens every section: the lessons' sections (and "More settings") start closed
# (issue 33's workbench); the browser tests of what a section holds run in a context with this
# init script, which opens each closed section shown (a header whose chevron points right) as
# soon as it is drawn. The workbench's own tests run without it (tests/browser/test_workbench.py).
OPEN_SECTIONS = """(() => {
  const open = () => {
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        if (el.shadowRoot) walk(el.shadowRoot);
        if (el.classList.contains('pyplay-section-header') && el.shadowRoot
            && el.checkVisibility()) {
          const button = el.shadowRoot.querySelector('button');
          if (button && !button.classList.contains('bk-active')) button.click();
        }
      }
    };
    walk(document);
  };
  setInterval(open, 700);
})();"""


# A page that builds each lesson only when its tab opens (web/site/worker.js): the browser
# tests of one lesson or one feature run with it, since building and drawing every other lesson
# ahead, as the learner's page does after its start, took about a minute of CPU time per page
# (64 s against 24 s for the start itself, quiet machine) beside the test. The tests of the
# start, of the page as a learner first sees it, of the tour of every tab (test_tour) and of every
# button's layout in every lesson (test_layout) say
# ``AHEAD = True`` (or make their own context) and get the learner's page.
ONE_LESSON = "window.pyplayAhead = false;"


BLOCKING = ("critical", "serious")  # the axe-core impacts a page must not have
WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def blocking_violations(page: Any, preload: bool = True) -> dict[str, list[str]]:
    """axe-core's critical and serious WCAG 2.1 A/AA violations on the page as it is now:
    rule id -> the HTML of (up to five of) the elements that break it.

    ``preload=False`` leaves out axe's loading of every style sheet (its CSS object model, for
    the rule on locked screen orientation) and media file (for the rule on audio that plays by
    itself): the same for every tab of one page (the playground has no audio or video), it took
    more than half of each run (25 of 43 s, loaded machine), so the tour checks them on its first
    tab only."""
    from axe_playwright_python.sync_playwright import Axe

    options = {**WCAG_AA, "resultTypes": ["violations"], "preload": preload}
    found = Axe().run(page, options=options).response["violations"]
    return {
        v["id"]: [n["html"][:120] for n in v["nodes"][:5]] for v in found if v["impact"] in BLOCKING
    }
