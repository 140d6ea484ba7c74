"""One tour of every tab of the learner's page, looked at three ways.

The tour (:func:`tour`, once for the module) opens every tab of one playground built as a
learner's is (``AHEAD``: every lesson built and drawn ahead) with every section opened as it
is drawn (``browserkit.OPEN_SECTIONS``). In each tab it runs axe-core on the tab as it is first
shown; in each lesson (and each sub-lesson of a tab) it trains one step with Step and waits for
the step and a plot on screen; in each lesson with a tab of its own it then trains with Train
until the status line has been redrawn live twice, and pauses. At the end it waits for the page
to settle. What it saw is checked by:

- **accessibility (issue 36):** no tab has a critical or serious axe-core violation of WCAG 2.1
  A/AA (axe-core comes with the PyPI package ``axe-playwright-python``, injected through
  Playwright: the page still requests nothing outside its origin); the tabs are a tablist a
  screen reader announces, the controls are found by their visible labels;
- **no pandas & co.:** the worker never imports pandas, Pillow, contourpy, pytz or dateutil,
  at the start nor after every lesson has been opened and trained (the served Bokeh and Panel
  are patched at build time not to; ``web/tools/sitebuild/patches.py``), and after the tour
  the page settles with no tab left loading;
- **a clean console (issue 17):** the tour logs no warning and no error.

The three used to take a tour each (about 400 s together on these machines); one tour serves
them all (issue 37).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from browserkit import blocking_violations, laid_out, visible_button, wait_for
from pyplay.ui.lessons import LESSONS, SPECS

pytestmark = pytest.mark.browser
SHARED_PAGE = True  # the session's learner's page, first of its modules (conftest.py)
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
REDRAWS = 2  # live redraws of the status line each lesson with a tab of its own trains for


def never_loaded(page: Any) -> list[str]:
    """The modules of :data:`NEVER` the page's worker has imported."""
    return list(json.loads(page.evaluate("c => window.pyplay.runPython(c)", LOADED)))


def visible_canvases(page: Any) -> int:
    return int(page.locator("canvas:visible").count())


@dataclass
class Tour:
    """What the tour saw."""

    titles: list[str] = field(default_factory=list)  # the tablist's tabs
    selected_first: str = ""  # the tab selected when the page opened
    labelled: bool = False  # Hidden size found as a slider, Learning rate by its label
    violations: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # tab -> axe's
    pandas_at_start: list[str] = field(default_factory=list)
    pandas_after: list[str] = field(default_factory=list)
    stepped: list[str] = field(default_factory=list)  # lessons that trained a step, plot shown
    trained: list[str] = field(default_factory=list)  # lessons trained with Train, then paused
    loading_left: int = -1  # tabs still saying "Loading" once the page settled
    notices: int = -1  # notices over the page at the end
    console: list[str] = field(default_factory=list)  # warnings and errors, after the start
    errors: list[str] = field(default_factory=list)  # the page log's errors, the start included


def shown_steps(page: Any) -> list[str]:
    """The visible "Step N" lines of the tab shown."""
    return list(page.get_by_text(STEP).locator("visible=true").all_inner_texts())


def train_lesson(page: Any, name: str) -> None:
    """Train the lesson shown with Train until its status line has been redrawn live
    :data:`REDRAWS` times, then Pause."""
    visible_button(page, "Train").click()
    for k in range(REDRAWS):
        before = shown_steps(page)
        wait_for(page, lambda b=before: shown_steps(page) != b, f"{name}: live redraw {k + 1}", 120)
    visible_button(page, "Pause").click()
    time.sleep(1.0)


def step_lesson(page: Any, name: str) -> None:
    """Train one step of the lesson shown with its Step button; wait for the step and a plot."""
    step = page.locator("button:visible").filter(has_text=re.compile(r"^\s*Step\s*$")).first
    step.wait_for(timeout=60_000)
    wait_for(page, lambda: visible_canvases(page) > 0, f"a plot in {name}", 60)
    before = page.get_by_text(STEP).locator("visible=true").count()
    step.click()
    wait_for(
        page,
        lambda: page.get_by_text(STEP).locator("visible=true").count() > before,
        f"one step trained in {name}",
        120,
    )
    time.sleep(0.5)  # the plots' updates after the step
    assert visible_canvases(page) > 0, name


@pytest.fixture(scope="module")
def tour(module_page: tuple[Any, Any]) -> Tour:
    page, loading = module_page
    seen = Tour()
    page.on(
        "console",
        lambda m: m.type in ("warning", "error") and seen.console.append(f"{m.type}: {m.text}"),
    )
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    seen.errors += loading.errors
    seen.pandas_at_start = never_loaded(page)
    seen.titles = page.get_by_role("tablist").first.get_by_role("tab").all_inner_texts()
    seen.selected_first = page.get_by_role("tab", selected=True).first.inner_text()
    page.get_by_role("slider", name="Hidden size").first.wait_for(timeout=60_000)
    page.get_by_label("Learning rate").first.wait_for(timeout=120_000)  # More settings opened
    seen.labelled = True
    lessons = {spec.title for spec in LESSONS if spec.parent is None}
    for title in seen.titles:
        # (the click event sent: browserkit.show_tab)
        page.get_by_role("tab", name=title, exact=True).first.dispatch_event("click")
        wait_for(
            page,
            lambda t=title: page.get_by_role("tab", selected=True).first.inner_text() == t,
            f"the tab {title!r} shown",
            timeout_s=120,
        )
        # built, drawn, its sections opened, its layout held (a generous wait: the tour opens
        # each tab the first time, every section drawn, and a busy machine slows that most)
        laid_out(page, opened=True, timeout_s=180)
        seen.violations[title] = blocking_violations(page, preload=title == seen.titles[0])
        if title not in lessons:
            continue
        step_lesson(page, title)
        seen.stepped.append(title)
        train_lesson(page, title)
        seen.trained.append(title)
        for sub in (sub for tab, sub in TOUR if tab == title and sub is not None):
            page.get_by_text(sub, exact=True).first.click()
            step_lesson(page, sub)
            seen.stepped.append(sub)
    page.get_by_role("tab", name="Recurrent networks", exact=True).first.click()
    # after the tour the page settles: the lessons left were drawn into their hidden tabs,
    # one at a time (web/site/worker.js drawAhead), and the handshake with the page ended
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplaySettled === 'true'", timeout=240_000
    )
    seen.loading_left = page.locator(".pyplay-loading").count()
    seen.pandas_after = never_loaded(page)
    seen.notices = page.locator("#pyplay-notice").count()
    return seen


def test_no_tab_has_a_critical_or_serious_accessibility_violation(tour):
    assert "Recurrent networks" in tour.titles and "About" in tour.titles
    assert len(tour.titles) >= 12
    assert tour.selected_first == "Recurrent networks"  # the page opens on the first lesson
    assert tour.labelled  # the controls are found by their visible labels
    assert set(tour.violations) == set(tour.titles)  # every tab was checked
    assert {t: v for t, v in tour.violations.items() if v} == {}


def test_no_pandas_at_start_nor_in_a_tour_of_every_lesson(tour):
    assert tour.pandas_at_start == []
    assert sorted(tour.stepped) == sorted(sub or tab for tab, sub in TOUR)  # every lesson
    assert tour.loading_left == 0  # no tab left saying "Loading"
    assert tour.pandas_after == []
    assert tour.errors == []
    assert tour.notices == 0


def test_a_tour_of_every_lesson_leaves_the_console_clean(tour):
    assert sorted(tour.trained) == sorted(s.title for s in LESSONS if s.parent is None)
    assert tour.console == [], tour.console[:10]
    assert tour.errors == []
