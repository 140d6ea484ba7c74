"""The page's start: the site serves no pandas & co., the loader shows its stages, the first
lesson trains at once and the others are built only while nothing trains.

The served Bokeh and Panel are patched at build time not to import pandas unless it is in use
(``web/tools/sitebuild/patches.py``); the site serves neither pandas nor Pillow, contourpy,
pytz or dateutil. That the page never imports them, at its start nor in a tour of every
lesson, is checked on the tour of ``test_tour.py``.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from browserkit import READY, step_count, wait_ready, wait_step

pytestmark = pytest.mark.browser
AHEAD = True  # the learner's page: every lesson built and drawn ahead (conftest.py)

PENDING = "from pyplay.ui import later\nlater.pending()"  # jobs queued after the first render


def pending(page) -> int:
    return int(page.evaluate("c => window.pyplay.runPython(c)", PENDING))


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
