"""The playground: every lesson in one page, with navigation between them.

``create_app()`` returns a servable Panel object. In the browser the static site's worker
calls it (see ``web/site/worker.js``); natively ``panel serve pyplay/ui/app.py`` shows the same app.

The tabs follow the course (:data:`pyplay.ui.lessons.COURSE`, from a plain RNN to
transformers), after "Start here" (:mod:`pyplay.ui.landing`), which lists it with a line per
lesson. The page opens on the course's first lesson, built for the first render, so a learner
can press Train at once (a menu and a wait were the first minute before). Any other lesson is
imported and built the first time its tab is opened; in the page (``create_app(defer=True)``)
the saved-work machinery and then every lesson are built after the first render, one at a time
(:mod:`pyplay.ui.later`), then drawn into their hidden tabs one at a time while the page is
idle (:meth:`Playground.draw_ahead`), so that opening a tab later only shows it, and a tab
opened before shows a loading message. The open lesson's settings follow the page address
(:mod:`pyplay.ui.location`): copying it reproduces the setup; an address that opens no lesson
(``?lesson=`` a lesson this page does not have) says so, naming it, above the tabs
(:func:`address_note`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import panel as pn

from pyplay.ui import model_walk
from pyplay.ui.landing import TITLE as START_TITLE
from pyplay.ui.landing import landing
from pyplay.ui.lectures import reference_list
from pyplay.ui.lessons import COURSE, SPECS, LessonSpec
from pyplay.ui.lessons import LESSONS as REGISTERED
from pyplay.ui.location import bind_location
from pyplay.ui.storage import SAVED_WORK  # the tab of pyplay.ui.saved_work (imported later)
from pyplay.ui.style import TABS_CSS, use_page_style
from pyplay.ui.text import Text

__all__ = ["LESSONS", "Playground", "address_note", "create_app"]

# tab title -> spec of every top-level lesson, in tab order: the course's (sub-lessons live in
# their parent)
LESSONS: dict[str, LessonSpec] = {SPECS[key].title: SPECS[key] for key in COURSE}
FIRST = 1  # the tab the page opens on: the course's first lesson, ready to train

ABOUT = f"""
**pyplay** trains small sequence models right here, in your browser: the Python runs on this
page (Pyodide), nothing is sent to a server. The same NumPy code is a Python library, used
natively from a clone of pyplay's repository (`pip install -e .` there; the `pyplay` on PyPI
is another project), with hand-written backward passes checked against PyTorch.

Lessons: {"; ".join(f"**{s.title}** ({s.about})" for s in REGISTERED if s.parent is None)}.

**The lectures.** The lessons follow five texts on recurrent networks and attention; where a
lesson cites one, it names it as in bold here:

{reference_list()}
"""

SLOT = {"sizing_mode": "stretch_width", "css_classes": ["pyplay-lesson"]}
APP_LAYOUT = {"sizing_mode": "stretch_width", "css_classes": ["pyplay-app"]}


# a spinner drawn by CSS before the text: one model per waiting tab (a LoadingSpinner beside
# a Markdown pane in a Row made ten, and the page's first render has eleven waiting tabs)
SPINNER_CSS = """
:host::before {
  content: ""; display: inline-block; width: 18px; height: 18px; margin: 0 10px 0 4px;
  border: 3px solid #d0d7de; border-top-color: #0072b5; border-radius: 50%;
  animation: pyplay-spin 1s linear infinite; vertical-align: middle;
}
:host { display: flex; align-items: center; }
pre { font-family: inherit; margin: 0; }
@keyframes pyplay-spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { :host::before { animation: none; } }
"""


def loading(what: str) -> pn.viewable.Viewable:
    """What a tab shows until its content is built: a spinner and "Loading <what>..."."""
    return Text(f"Loading {what}...", css_classes=["pyplay-loading"], stylesheets=[SPINNER_CSS])


class Playground:
    """The tabs of the playground ("Start here", one per lesson, About); ``lessons`` maps a
    tab title to its lesson once shown, ``slots`` a lesson's tab title to its tab's column,
    ``prepared`` a lesson built (after the first render) but not shown yet to it and its
    layout, ``drawn`` the lessons whose layout is already in their (hidden) tab, ``held`` the
    tabs other than lessons whose content waits (:meth:`hold`)."""

    def __init__(self, hold_start: bool = False) -> None:
        self.lessons: dict[str, Any] = {}
        self.prepared: dict[str, tuple[Any, Any]] = {}
        self.drawn: set[str] = set()
        self.held: dict[str, tuple[pn.Column, Callable[[], Any]]] = {}
        self.slots = {title: pn.Column(loading(f"the {title} lesson"), **SLOT) for title in LESSONS}
        # "Start here", hidden while the first lesson is shown: with ``hold_start`` (the page)
        # filled after the first render, or when its tab is opened first
        start = pn.Column(loading("the course path"), sizing_mode="stretch_width")
        self.hold(START_TITLE, start, lambda: landing(self.show))
        if not hold_start:
            self.fill(START_TITLE)
        self.tabs = pn.Tabs(
            (START_TITLE, start),
            *self.slots.items(),
            ("About", pn.pane.Markdown(ABOUT)),
            dynamic=False,
            active=FIRST,
            sizing_mode="stretch_width",
            stylesheets=[TABS_CSS],
        )
        self.tabs.param.watch(lambda event: self.open(event.new), "active")
        self.open(FIRST)

    def hold(self, title: str, slot: pn.Column, make: Callable[[], Any]) -> None:
        """Tab ``title``'s content (a tab other than a lesson's), ``make()``, goes into its
        ``slot`` when the tab is first opened, :meth:`fill` is called, or :meth:`draw_ahead`
        reaches it after the lessons: a hidden tab's views drawn with the first render cost
        the page's main thread just when a learner reaches for Train."""
        self.held[title] = (slot, make)

    def fill(self, title: str) -> bool:
        """Put held tab ``title``'s content into its slot, once; False if none was held."""
        slot_make = self.held.pop(title, None)
        if slot_make is None:
            return False
        slot, make = slot_make
        slot.objects = [make()]
        return True

    @property
    def titles(self) -> list[str]:
        """The titles of all tabs, in order."""
        return list(self.tabs._names)

    def show(self, title: str) -> None:
        """Show tab ``title`` (building its lesson)."""
        self.tabs.active = self.titles.index(title)

    def open(self, index: int) -> Any:
        """Build (or take the prepared) lesson of tab ``index`` and show it in its tab; returns
        it (None for a tab without a lesson). Every other lesson pauses: one lesson trains at
        a time, the one on screen."""
        titles = self.titles
        shown = titles[index] if 0 <= index < len(titles) else None
        if shown is not None:
            self.fill(shown)
        for title, lesson in self.lessons.items():
            if title != shown:
                lesson.leave()
        if shown not in LESSONS:
            return None
        title = shown
        if title not in self.lessons:
            lesson, layout = self.prepare(title)
            del self.prepared[title]
            self.lessons[title] = lesson
            if title not in self.drawn:
                self.slots[title].objects = [layout]
                self.drawn.add(title)
        return self.lessons[title]

    def prepare(self, title: str) -> tuple[Any, Any]:
        """Build lesson ``title`` and its layout without showing it (the page does this after
        the first render): opening its tab then only draws it (or only shows it, once
        :meth:`draw_ahead` has drawn it)."""
        if title not in self.prepared and title not in self.lessons:
            lesson = LESSONS[title].view_class()()
            lesson.open_tab = self.show  # the course strip under its workbench
            self.prepared[title] = (lesson, lesson.panel())
        return self.prepared.get(title) or (self.lessons[title], self.slots[title].objects[0])

    def draw_ahead(self) -> str | None:
        """Put the next lesson built but not drawn yet (in tab order) into its hidden tab,
        without opening it, then each held tab's content (:meth:`hold`); returns its title
        (None when none is left). Opening its tab
        then only shows it: converting a lesson to Bokeh models, sending it and building its
        views in the page took 1.5-2 s of the click (Sequence to sequence, quiet machine).
        The page's worker calls this one lesson at a time, paced (``web/site/worker.js``):
        drawing every lesson at once (tried) kept the page's main thread busy for seconds
        per lesson, and clicks waited behind it (30 s under load, test_layout)."""
        for title in LESSONS:
            if title in self.prepared and title not in self.drawn:
                self.drawn.add(title)
                self.slots[title].objects = [self.prepared[title][1]]
                return title
        for title in list(self.held):
            self.fill(title)
            return title
        return None


def address_note() -> tuple[Text, Callable[[str], None]]:
    """The note above the tabs of why the page address opened no lesson, and ``say(text)``
    that shows ``text`` there ("" hides it). The text quotes what the address carried
    (:mod:`pyplay.ui.urlstate` names the lesson asked for): a :class:`Text` shows it as
    text, never as HTML or Markdown."""
    note = Text("", visible=False, css_classes=["pyplay-address-note"], sizing_mode="stretch_width",
                styles={"color": "#8a4b00"})  # fmt: skip

    def say(text: str) -> None:
        note.param.update(object=text, visible=bool(text))

    return note, say


def create_app(defer: bool = False, ahead: bool = True) -> pn.viewable.Viewable:
    """The whole playground: a header, "Start here", one tab per lesson (built when first
    opened) and "Saved work".

    ``defer`` (the page's worker): build the saved-work machinery and, with ``ahead``, the
    lessons after the first render (:mod:`pyplay.ui.later`) instead of now and when opened.
    ``ahead=False`` builds each lesson only when its tab is first opened (a page that looks at
    one lesson: ``web/site/worker.js``).
    """
    # no signatures for IDEs on Panel's ~280 classes: a page asks for none (0.03 s of its start)
    pn.extension(notifications=False, apply_signatures=False)
    model_walk.install()  # each change of the page's model graph walks it faster
    use_page_style()
    playground = Playground(hold_start=defer)
    note, say = address_note()  # why the address opened no lesson, above the tabs
    bind_location(playground.tabs, playground.open, on_note=say)  # the settings in the address
    header = pn.pane.Markdown("# pyplay: sequence models, live", sizing_mode="stretch_width")
    top = pn.Column(sizing_mode="stretch_width")  # the saved-work banner, once it offers
    saved_tab = pn.Column(loading("saved work"), sizing_mode="stretch_width")

    def saved_work() -> None:  # autosave, the restore offer, the "Saved work" tab
        from pyplay.ui.saved_work import attach_saved_work

        attach_saved_work(playground, into=saved_tab, hold=defer, top=top)

    playground.tabs.append((SAVED_WORK, saved_tab))
    if not defer:
        saved_work()
        return pn.Column(header, top, note, playground.tabs, **APP_LAYOUT)
    from pyplay.ui import later

    later.defer("saved work", saved_work)
    later.defer("the course path", partial(playground.fill, START_TITLE))  # "Start here"
    later.draw_ahead_with(playground.draw_ahead)
    for title in LESSONS if ahead else ():  # in tab order; one opened before its turn is
        later.defer(f"the {title} lesson", partial(playground.prepare, title))  # built then
    return pn.Column(header, top, note, playground.tabs, **APP_LAYOUT)


if __name__.startswith("bokeh"):
    create_app().servable(title="pyplay")
