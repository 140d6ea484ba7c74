"""The playground: every lesson in one page, with navigation between them.

``create_app()`` returns a servable Panel object. In the browser the static site's worker
calls it (see ``web/site/worker.js``); natively ``panel serve pyplay/ui/app.py`` shows the same app.

The first tab, "Start here" (:mod:`pyplay.ui.landing`), is built from the lesson specs alone;
each lesson is imported and built the first time its tab is opened, so the first render costs
no lesson's code (the start-up target of the playground) and lessons nobody opens cost
nothing. The open lesson's settings follow
the page address (:mod:`pyplay.ui.location`): copying it reproduces the setup.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from pyplay.ui.landing import TITLE as START_TITLE
from pyplay.ui.landing import landing
from pyplay.ui.lessons import LESSONS as REGISTERED
from pyplay.ui.lessons import LessonSpec
from pyplay.ui.location import bind_location
from pyplay.ui.style import TABS_CSS, use_page_style

__all__ = ["LESSONS", "Playground", "create_app"]

# tab title -> spec of every top-level lesson, in tab order (sub-lessons live in their parent)
LESSONS: dict[str, LessonSpec] = {s.title: s for s in REGISTERED if s.parent is None}

ABOUT = f"""
**pyplay** trains small sequence models right here, in your browser: the Python runs on this
page (Pyodide), nothing is sent to a server. The same NumPy code is a Python library, used
natively from a clone of pyplay's repository (`pip install -e .` there; the `pyplay` on PyPI
is another project), with hand-written backward passes checked against PyTorch.

Lessons: {"; ".join(f"**{s.title}** ({s.about})" for s in REGISTERED if s.about)}.
"""


class Playground:
    """The tabs of the playground ("Start here", one per lesson, About); ``lessons`` maps a
    tab title to its lesson once built, ``slots`` a lesson's tab title to its tab's column."""

    def __init__(self) -> None:
        self.lessons: dict[str, Any] = {}
        self.slots = {
            title: pn.Column(sizing_mode="stretch_width", css_classes=["pyplay-lesson"])
            for title in LESSONS
        }
        self.tabs = pn.Tabs(
            (START_TITLE, landing(self.show)),
            *self.slots.items(),
            ("About", pn.pane.Markdown(ABOUT)),
            dynamic=False,
            sizing_mode="stretch_width",
            stylesheets=[TABS_CSS],
        )
        self.tabs.param.watch(lambda event: self.open(event.new), "active")
        self.open(0)

    @property
    def titles(self) -> list[str]:
        """The titles of all tabs, in order."""
        return list(self.tabs._names)

    def show(self, title: str) -> None:
        """Show tab ``title`` (building its lesson)."""
        self.tabs.active = self.titles.index(title)

    def open(self, index: int) -> Any:
        """Build the lesson of tab ``index`` if it is not built yet; returns it (None for a
        tab without a lesson)."""
        titles = self.titles
        if not 0 <= index < len(titles) or titles[index] not in LESSONS:
            return None
        title = titles[index]
        if title not in self.lessons:
            lesson = LESSONS[title].view_class()()
            self.lessons[title] = lesson
            self.slots[title].objects = [lesson.panel()]
        return self.lessons[title]


def create_app() -> pn.viewable.Viewable:
    """The whole playground: a header and one tab per lesson (built when first opened)."""
    pn.extension(notifications=False)
    use_page_style()
    playground = Playground()
    bind_location(playground.tabs, playground.open)  # the settings in the page address
    header = pn.pane.Markdown("# pyplay: sequence models, live", sizing_mode="stretch_width")
    from pyplay.ui.saved_work import attach_saved_work

    saved = attach_saved_work(playground)  # autosave, the restore offer, the "Saved work" tab
    return pn.Column(header, saved.top, playground.tabs, sizing_mode="stretch_width")


if __name__.startswith("bokeh"):
    create_app().servable(title="pyplay")
