"""Issue 36's embeds in the browser: the look-inside widgets of ``pyplay.ui.embed.WIDGETS``
(:data:`FITTING`) take the width of their container, from a 320 px column of a course page up,
with nothing wider than it; no loading line stays once they are drawn; and an ``?embed=``
iframe tells its parent page its height, which ``embed.js`` sets on the iframe (so a course
page shows the whole widget without a scrollbar).

One host page holds the view widgets (one Python runtime builds them all, as ``embed.js`` does
for any page), a second one the whole lessons (a view widget such as ``gates`` shares its
lesson's view, so the two are not put on one page here), in columns first 320 px then 600 px
wide. A whole lesson stacks its controls above
its plots by its container's width (a CSS container query, ``pyplay.ui.style.CONTAINER``), so
it does in a 320 px column of a wide page too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browserkit import START_TIMEOUT_MS
from pyplay.ui.embed import WIDGETS
from pyplay.ui.lessons import SPECS

pytestmark = pytest.mark.browser

FITTING = tuple(WIDGETS)  # every widget (beam and lecture_rnn too: their legends stand under)
# the whole lessons, on a page of their own: a view widget (gates) shares its lesson's view
LESSONS = tuple(name for name in FITTING if name in SPECS)
VIEWS = tuple(name for name in FITTING if name not in SPECS)

# widgets whose content is wider than its column, and by how much: widget -> px
OVERFLOW = """(width) => {
  const out = {};
  for (const el of document.querySelectorAll('[data-pyplay-widget]')) {
    el.parentElement.style.width = width + 'px';
  }
  return new Promise((done) => setTimeout(() => {
    for (const el of document.querySelectorAll('[data-pyplay-widget]')) {
      const over = el.scrollWidth - el.parentElement.clientWidth;
      if (over > 1) out[el.dataset.pyplayWidget] = over;
    }
    done(out);
  }, 3000));
}"""


def host_page(folder: Path, names: list[str]) -> Path:
    """A course page with every widget named, each in its own column (``section``)."""
    widgets = "\n".join(
        f'<section style="width:320px"><div data-pyplay-widget="{n}"></div></section>'
        for n in names
    )
    page = folder / "all.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>every widget</title>'
        f'</head><body><main>{widgets}<iframe title="gates" style="width:320px;height:200px" '
        'src="./index.html?embed=gates"></iframe></main>'
        '<script src="./embed.js" defer></script></body></html>'
    )
    return page


def _load(page: Any, url: str, page_file: Path) -> None:
    page.set_viewport_size({"width": 1000, "height": 900})
    page.goto(url + page_file.name)
    page.wait_for_function(
        "() => document.documentElement.dataset.pyplayEmbedReady === 'true'",
        timeout=START_TIMEOUT_MS * 2,
    )
    page.wait_for_timeout(3000)


def test_the_view_widgets_fit_a_narrow_column_and_an_iframe_says_its_height(site, page):
    dist, url = site
    names = list(VIEWS)
    assert set(names) <= set(WIDGETS)
    page_file = host_page(dist, names)  # served beside the site's own files
    try:
        _load(page, url, page_file)
        count = page.locator("[data-pyplay-widget] .pyplay-widget, [data-pyplay-widget]")
        assert count.count() >= len(names)
        left = page.evaluate(
            "() => [...document.querySelectorAll('.pyplay-embed-status')].map(e => e.textContent)"
        )
        assert left == []  # no loading line stays once the widgets are drawn
        assert page.evaluate(OVERFLOW, 320) == {}
        assert page.evaluate(OVERFLOW, 600) == {}
        # the iframe grew to its widget's height (it started at 200 px)
        page.wait_for_function(
            "() => document.querySelector('iframe').getBoundingClientRect().height > 400",
            timeout=START_TIMEOUT_MS,
        )
        frame = page.frame_locator("iframe")
        frame.get_by_role("button", name="Train").wait_for(timeout=60_000)
        inner: Any = page.frames[1].evaluate("document.documentElement.scrollWidth")
        assert inner <= 320
    finally:
        page_file.unlink()


def test_the_whole_lessons_fit_a_narrow_column(site, browser):
    """Each lesson, as it opens (its sections closed), stacks its controls above its plots in
    a 320 px column of a 1,000 px page (its container's width decides, not the window's) and
    fits it, and a 600 px one."""
    dist, url = site
    page_file = host_page(dist, list(LESSONS))
    context = browser.new_context()  # without browserkit.OPEN_SECTIONS
    try:
        page = context.new_page()
        _load(page, url, page_file)
        assert page.evaluate(OVERFLOW, 320) == {}
        assert page.evaluate(OVERFLOW, 600) == {}
    finally:
        context.close()
        page_file.unlink()
