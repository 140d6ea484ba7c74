"""The page's start: no pandas & co., ever, and every lesson still draws and trains.

The served Bokeh and Panel are patched at build time not to import pandas unless it is in use
(``web/tools/sitebuild/patches.py``); the site serves neither pandas nor Pillow, contourpy,
pytz or dateutil. These tests read the worker's ``sys.modules`` through ``window.pyplay``
after the start and after a tour of every lesson (each opened, one step trained, its plots on
screen).
"""

from __future__ import annotations

import json
import re
import time

import pytest

from browserkit import READY, step_count, wait_for, wait_ready, wait_step
from pyplay.ui.lessons import LESSONS, SPECS

pytestmark = pytest.mark.browser
AHEAD = True  # the learner's page: every lesson built and drawn ahead (conftest.py)

# top-level modules the page must never import on its own
NEVER = ("pandas", "PIL", "contourpy", "pytz", "dateutil")
LOADED = (
    "import json, sys\n"
    f"json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(NEVER)!r})))"
)
# every lesson: its tab's title, then the sub-tab inside it (None: the tab is the lesson)
TOUR = tuple((SPECS[s.parent].title, s.title) if s.parent else (s.title, None) for s in LESSONS)
STEP = re.compile(r"Step [1-9]")


PENDING = "from pyplay.ui import later\nlater.pending()"  # jobs queued after the first render


def pending(page) -> int:
    return int(page.evaluate("c => window.pyplay.runPython(c)", PENDING))


def never_loaded(page) -> list[str]:
    return json.loads(page.evaluate("c => window.pyplay.runPython(c)", LOADED))


def visible_canvases(page) -> int:
    return page.locator("canvas:visible").count()


def test_the_site_serves_no_pandas(site):
    dist, _ = site
    lock = json.loads((dist / "pyodide" / "pyodide-lock.json").read_text())
    served = set(lock["packages"])
    for name in ("pandas", "pillow", "contourpy", "pytz", "python-dateutil"):
        assert name not in served, name
    assert not [p.name for p in (dist / "pyodide").glob("pandas-*")]
    pins = json.loads((dist / "pyplay-lock.json").read_text())["packages"]
    assert "patched: bokeh-cds-init" in pins["bokeh"]["source"]
    assert "patched: panel-pyodide-read-csv" in pins["panel"]["source"]


def test_no_pandas_at_start_nor_in_a_tour_of_every_lesson(ready_page, page_log):
    page = ready_page
    assert never_loaded(page) == []
    for tab, sub in TOUR:
        page.get_by_text(tab, exact=True).first.click()
        if sub:
            page.get_by_text(sub, exact=True).first.click()
        step = page.locator("button:visible").filter(has_text=re.compile(r"^\s*Step\s*$")).first
        step.wait_for(timeout=60_000)
        wait_for(page, lambda: visible_canvases(page) > 0, f"a plot in {sub or tab}", 60)
        before = page.get_by_text(STEP).locator("visible=true").count()
        step.click()
        wait_for(
            page,
            lambda b=before: page.get_by_text(STEP).locator("visible=true").count() > b,
            f"one step trained in {sub or tab}",
            120,
        )
        time.sleep(0.5)  # the plots' updates after the step
        assert visible_canvases(page) > 0, sub or tab
    # after the tour the page settles: the lessons left were drawn into their hidden tabs,
    # one at a time (web/site/worker.js drawAhead), and the handshake with the page ended
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplaySettled === 'true'", timeout=240_000
    )
    assert page.locator(".pyplay-loading").count() == 0  # no tab left saying "Loading"
    assert never_loaded(page) == []
    assert page_log.errors == []
    assert page.locator("#pyplay-notice").count() == 0


LOADER = """() => {
  const loader = document.getElementById("pyplay-loader");
  if (!loader) return null;
  const active = loader.querySelector("li.active");
  return {
    active: active ? active.dataset.stage : null,
    done: [...loader.querySelectorAll("li.done")].map((li) => li.dataset.stage),
    took: [...loader.querySelectorAll("li.done .took")].map((s) => s.textContent),
    value: document.getElementById("pyplay-progress").value,
    elapsed: document.getElementById("pyplay-elapsed").textContent,
  };
}"""


def test_the_loader_shows_its_stages_a_progress_bar_and_the_seconds(page, site_url):
    page.goto(site_url)
    samples = []
    while not page.evaluate(f"() => {READY}"):
        sample = page.evaluate(LOADER)
        if sample is not None:
            samples.append(sample)
        time.sleep(0.1)
    wait_ready(page)
    seen = [s["active"] for s in samples]
    assert seen[0] == "runtime"
    assert {"runtime", "packages", "modules", "app"} <= set(seen), seen
    values = [s["value"] for s in samples]
    assert values == sorted(values) and values[-1] > values[0], values  # forwards only
    seconds = [float(s["elapsed"].removesuffix(" s")) for s in samples]
    assert seconds == sorted(seconds) and seconds[-1] > seconds[0], seconds  # ticking
    last = samples[-1]
    assert last["done"] and all(re.fullmatch(r"\d+\.\d s", t) for t in last["took"]), last
    remembered = json.loads(page.evaluate("localStorage.getItem('pyplay-stage-seconds')"))
    assert set(remembered) == {"runtime", "packages", "modules", "app", "draw"}
    assert all(v >= 0 for v in remembered.values())


def test_the_other_lessons_are_built_only_while_nothing_trains(page, site_url):
    """A lesson's build holds the worker for 0.5-2 s: built one after the other beside a model
    the learner trains at once, they halved its steps for the first 10 s. The worker builds
    the next lesson only when no patch went either way for a second (web/site/worker.js
    whenQuiet), so none is built while the first lesson trains, and all of them once paused."""
    page.goto(site_url)
    wait_ready(page)
    page.get_by_role("button", name="Train", exact=True).locator("visible=true").first.click()
    wait_step(page, 20)
    waiting = pending(page)
    assert waiting > 0, "every other lesson was built before the first training steps"
    step = step_count(page)
    time.sleep(6.0)
    assert step_count(page) > step + 20  # it trained meanwhile ...
    assert pending(page) == waiting  # ... and no lesson was built
    page.get_by_role("button", name="Pause", exact=True).locator("visible=true").first.click()
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplaySettled === 'true'", timeout=240_000
    )
    assert pending(page) == 0  # paused: all built, then drawn ahead
