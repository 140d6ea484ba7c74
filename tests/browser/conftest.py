"""Fixtures for end-to-end tests: the built site served on localhost, headless Chromium.

The site is built once per session (skipped when ``web/dist`` is fresh) by the build package
``web/tools/sitebuild``, served by the same server code as ``python build.py serve``, and
driven by Python Playwright with Debian's Chromium. Every page records the URLs it requested
and the console errors it logged.

A page's cold start costs 10-30 s on these machines, so the test modules that say
``SHARED_PAGE = True`` run on one page loaded once for the session (:func:`module_page`):
each module starts with the lessons of a new page (:func:`browserkit.fresh_lessons`), and
each test leaves it as :func:`browserkit.settle` says. The modules that also say
``AHEAD = True`` (the tour first, then the layout tests) share a second one, the learner's
page, every lesson built and drawn ahead, each taking it as the module before left it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sitebuild
from browserkit import (
    FAILED,
    ONE_LESSON,
    OPEN_SECTIONS,
    READY,
    PageLog,
    fresh_lessons,
    open_lesson,
    settle,
    wait_ready,
)
from pagemeasure import CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VIEWPORT = {"width": 1400, "height": 1000}  # a test page's window (a shared page's between tests)


FIRST_ON_LEARNERS_PAGE = "test_tour"  # it reads the learner's shared page as it opened


def _on_learners_page(module: Any) -> bool:
    """Whether a test module shares the session's learner's page (:func:`module_page`)."""
    return bool(getattr(module, "AHEAD", False)) and getattr(module, "SHARED_PAGE", None) is True


LEARNERS_PAGE_GROUP = "learners-page"  # the xdist group of every module on that page


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups (a plain hook)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each module's browser tests on one worker when the suite runs on several
    (``--dist loadgroup``, as the CI script ``tests/ci.sh`` runs them): they may share the
    module's loaded page, and the modules on the learner's shared page share one group (one
    worker, one such page). A group marked later than xdist's worker hook, which turns the
    marks into the ``@group`` suffix of the test's id that its scheduler reads, is no group:
    each test went to whichever worker was free (two tests of one module ran at once and one
    deleted the other's page)."""
    for item in items:
        if item.get_closest_marker("browser") is not None and item.module is not None:
            group = LEARNERS_PAGE_GROUP if _on_learners_page(item.module) else item.module.__name__
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")  # after the sort
# of tests/conftest.py, which it must not undo (a second hook of the same name: pytest
# registers only names that begin with pytest_)
def pytest_order_learners_page(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules on the learner's shared page in order, :data:`FIRST_ON_LEARNERS_PAGE`'s
    first (it checks the page as it opened). Run on one process, they come last: the CI
    script's tests that need no browser have ended by then (beside them the tour took 435 s,
    after them 200 s, one browser test at a time). On several workers they come first of
    the browser tests: xdist's scheduler hands out the groups with the most tests first
    (ties in this order), so the learner's page (7 tests, the longest group: about 13
    minutes in the CI script) starts early and one worker takes it while the other works
    through the rest, instead of a tail run alone at the end."""
    first = [i for i in items if getattr(i.module, "__name__", "") == FIRST_ON_LEARNERS_PAGE]
    rest = [i for i in items if getattr(i.module, "__name__", "") != FIRST_ON_LEARNERS_PAGE]
    on = [i for i in rest if i.module is not None and _on_learners_page(i.module)]
    others = [i for i in rest if i not in on]
    if hasattr(config, "workerinput"):  # this process is one of pytest-xdist's workers
        # still after every test that needs no browser (tests/conftest.py's sort)
        plain = [i for i in others if "browser" not in getattr(i, "fixturenames", ())]
        items[:] = plain + first + on + [i for i in others if i not in plain]
    else:
        items[:] = others + first + on


@pytest.fixture(scope="session")
def build() -> Any:
    """The site build (``web/tools/sitebuild``), as ``python build.py`` runs it."""
    return sitebuild


@pytest.fixture(scope="session")
def site(build: Any) -> Iterator[tuple[Path, str]]:
    """(dist directory, base URL) of the built site, served for the whole session."""
    if not build.is_fresh():
        build.build()
    server, url = build.serve_in_thread()
    yield build.DIST, url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def site_url(site: tuple[Path, str]) -> str:
    return site[1]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _harness(ctx: Any, module: Any) -> None:
    """The init scripts of a test context: every section opened as it is drawn
    (:data:`browserkit.OPEN_SECTIONS`) and, unless the module says ``AHEAD = True``, each
    lesson built only when its tab opens (:data:`browserkit.ONE_LESSON`)."""
    ctx.add_init_script(OPEN_SECTIONS)
    if not getattr(module, "AHEAD", False):
        ctx.add_init_script(ONE_LESSON)


def _load(browser: Any, site_url: str, module: Any) -> tuple[Any, Any, PageLog]:
    """A new context with the test harness of ``module`` (:func:`_harness`) and a playground
    loaded in it, ready: (context, page, the log of its loading)."""
    ctx = browser.new_context(viewport=VIEWPORT)
    _harness(ctx, module)
    p = ctx.new_page()
    loading = PageLog()
    stop = loading.attach(p)
    p.goto(site_url)
    wait_ready(p)
    stop()
    return ctx, p, loading


class SessionPage:
    """A playground that the test modules sharing a page across the session use (see
    :func:`module_page`: one with each lesson built when its tab opens, one as a learner's),
    loaded when a module first asks for it and again when a module left it broken (not
    ready, or its start failed)."""

    def __init__(self, browser: Any, site_url: str) -> None:
        self.browser, self.site_url = browser, site_url
        self.loaded: tuple[Any, Any, PageLog] | None = None

    def get(self, module: Any) -> tuple[Any, PageLog]:
        if self.loaded is not None and not self._healthy(self.loaded[1]):
            self.close()
        if self.loaded is None:
            self.loaded = _load(self.browser, self.site_url, module)
        return self.loaded[1], self.loaded[2]

    @staticmethod
    def _healthy(page: Any) -> bool:
        try:
            return bool(page.evaluate(f"() => ({READY}) && !({FAILED})"))
        except Exception:  # a closed or crashed page
            return False

    def close(self) -> None:
        if self.loaded is not None:
            self.loaded[0].close()
            self.loaded = None


@pytest.fixture(scope="session")
def session_page(browser: Any, site_url: str) -> Iterator[SessionPage]:
    """The session's shared playground (:class:`SessionPage`), each lesson built when its tab
    opens."""
    shared = SessionPage(browser, site_url)
    yield shared
    shared.close()


@pytest.fixture(scope="session")
def learners_page(browser: Any, site_url: str) -> Iterator[SessionPage]:
    """The session's shared learner's playground (:class:`SessionPage`): every lesson built
    and drawn ahead, for the modules that say ``AHEAD = True`` and ``SHARED_PAGE = True``."""
    shared = SessionPage(browser, site_url)
    yield shared
    shared.close()


@pytest.fixture(scope="module")
def module_page(
    request: pytest.FixtureRequest, browser: Any, site_url: str
) -> Iterator[tuple[Any, PageLog]]:
    """The page of a test module that says ``SHARED_PAGE = True``, with the log of its loading
    (a cold start costs 10-30 s on these machines).

    A module with the default harness (:func:`_harness`: each lesson built when its tab opens)
    takes the session's one page (:func:`session_page`), given the lessons of a new page
    first (:func:`browserkit.fresh_lessons`: every lesson built earlier dropped, so each opens
    at its defaults). A module that says ``AHEAD = True`` takes the session's learner's page
    (:func:`learners_page`) as the module before left it, its lessons built, trained and their
    sections opened (the tour, ``test_tour.py``, takes it first: it checks the page as it
    opened, and building and drawing every lesson ahead costs a minute). A module that says
    ``SHARED_PAGE = "module"`` (its tests break the page on purpose) loads one of its own."""
    module = request.module
    if getattr(module, "SHARED_PAGE", None) == "module":
        ctx, p, loading = _load(browser, site_url, module)
        yield p, loading
        ctx.close()
        return
    if getattr(module, "AHEAD", False):
        yield request.getfixturevalue("learners_page").get(module)
        return
    p, loading = request.getfixturevalue("session_page").get(module)
    fresh_lessons(p)
    yield p, loading


def _shares_page(request: pytest.FixtureRequest) -> bool:
    """Whether the test takes its module's shared page: it asks for ``ready_page`` in a module
    that says ``SHARED_PAGE = True`` (a test that asks for ``page`` gets a fresh one)."""
    return "ready_page" in request.fixturenames and bool(
        getattr(request.module, "SHARED_PAGE", False)
    )


@pytest.fixture
def page_log(request: pytest.FixtureRequest) -> PageLog:
    """What the test's page did. On a shared page (:func:`module_page`): what it did while
    loading, then during this test (not during earlier tests, of this module or others)."""
    if _shares_page(request):
        return request.getfixturevalue("module_page")[1].copy()
    return PageLog()


@pytest.fixture
def context(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A browser context whose pages open every section as it is drawn (the tests of what a
    section holds; :data:`browserkit.OPEN_SECTIONS`) and build a lesson when its tab opens
    (unless the module says ``AHEAD = True``: :func:`_harness`)."""
    ctx = browser.new_context(viewport=VIEWPORT)
    _harness(ctx, request.module)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: Any, page_log: PageLog) -> Any:
    p = context.new_page()
    page_log.attach(p)
    return p


@pytest.fixture
def ready_page(request: pytest.FixtureRequest, site_url: str, page_log: PageLog) -> Iterator[Any]:
    """The playground, loaded and interactive, with the recurrent-networks lesson open (the
    page opens on it, the course's first).

    In a module that says ``SHARED_PAGE = True`` every test gets the module's page
    (:func:`module_page`: the session's shared page, its lessons new at the module's start;
    the learner's page as the module before left it; or one of the module's own), left by the
    test before as :func:`browserkit.settle` leaves it:
    nothing training, no notice, the first lesson open, the window at :data:`VIEWPORT`;
    ``page_log`` records this test only.
    """
    if not _shares_page(request):
        page = request.getfixturevalue("page")
        page.goto(site_url)
        wait_ready(page)
        open_lesson(page)
        yield page
        return
    page = request.getfixturevalue("module_page")[0]
    stop = page_log.attach(page)
    open_lesson(page)
    yield page
    stop()
    if page.viewport_size != VIEWPORT:  # a test that resized the window
        page.set_viewport_size(VIEWPORT)
    settle(page)
