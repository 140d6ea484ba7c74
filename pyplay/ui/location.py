"""The page address and the playground kept in step: :class:`LocationSync` and
:func:`bind_location` (the hook ``pyplay.ui.app`` calls). What goes into the address, and how
each value is checked, is :mod:`pyplay.ui.urlstate`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyplay.ui.urlstate import LESSON_SPECS, apply_settings, parse_query, to_query, url_fields

__all__ = ["LocationSync", "bind_location"]


class LocationSync:
    """Keeps a Panel ``Location`` (the page address) and the playground's tabs in step.

    Parameters
    ----------
    location : panel.io.location.Location
        ``pn.state.location`` of the page's document.
    tabs : panel.Tabs
        The playground's tabs; a lesson's tab is found by its title (:attr:`LessonSpec.title`).
    open_lesson : callable
        ``open_lesson(index)`` returns the lesson view of tab ``index`` (building it if it is
        not built yet) or None; the view has ``state`` and, for sequence to sequence,
        ``source_box`` (a text input).

    Once the page's address is known (``location.href`` set: at once under ``panel serve``,
    after the first render in the browser, when the page sends its ``window.location``), its
    lesson's tab is opened and its settings applied; problems become a warning in that
    lesson's message. From then on the address follows the open lesson's settings.
    """

    def __init__(self, location: Any, tabs: Any, open_lesson: Callable[[int], Any]) -> None:
        self.location = location
        self.tabs = tabs
        self.open_lesson = open_lesson
        self.ready = False
        self.messages: list[str] = []
        self._writing = False
        self._seen: str | None = None  # the last query applied or written
        self._attached: set[str] = set()
        location.param.watch(self._on_location, ["search", "href"])
        tabs.param.watch(self._on_tab, "active")

    # ------------------------------------------------------------------ lookup
    def _index(self, lesson: str) -> int | None:
        titles = list(getattr(self.tabs, "_names", []))
        title = LESSON_SPECS[lesson].title
        return titles.index(title) if title in titles else None

    def _key(self, index: int) -> str | None:
        titles = list(getattr(self.tabs, "_names", []))
        if not 0 <= index < len(titles):
            return None
        return next((k for k, s in LESSON_SPECS.items() if s.title == titles[index]), None)

    def _lesson(self, key: str) -> Any:
        index = self._index(key)
        return None if index is None else self.open_lesson(index)

    # ------------------------------------------------------------------ address -> page
    def _on_location(self, *_: Any) -> None:
        search = self.location.search or ""
        if self._writing or not self.location.href or (self.ready and search == self._seen):
            return
        self.ready = True
        self._seen = search
        self.apply(search)

    def apply(self, query: str) -> str | None:
        """Open the lesson ``query`` names, apply its settings and decode input; returns the
        lesson key (None if the query names none). Messages go to :attr:`messages` and to
        the lesson's state as a warning."""
        parsed = parse_query(query)
        self.messages = list(parsed.messages)
        key = parsed.lesson
        index = None if key is None else self._index(key)
        if key is not None and index is None:
            self.messages.append(f"Address: the {key} lesson is not in this page.")
        lesson = None
        if key is not None and index is not None:
            self._writing = True
            try:
                self.tabs.active = index
                lesson = self.open_lesson(index)
                if lesson is not None:
                    self.messages += apply_settings(lesson.state, parsed.settings)
                    box = getattr(lesson, "source_box", None)
                    if parsed.source is not None and box is not None:
                        box.param.update(value=parsed.source, value_input=parsed.source)
            finally:
                self._writing = False
        if lesson is not None and self.messages:
            lesson.state.notify(" ".join(self.messages), "warning")
        current = self._key(int(self.tabs.active))
        if current is not None:  # the open lesson's changes go to the address from now on
            self._attach(current, self.open_lesson(int(self.tabs.active)))
        self.write()
        return key

    # ------------------------------------------------------------------ page -> address
    def _attach(self, key: str, lesson: Any) -> None:
        if lesson is None or key in self._attached:
            return
        self._attached.add(key)
        lesson.state.param.watch(lambda *_: self.write(key), list(url_fields(key)))
        box = getattr(lesson, "source_box", None)
        if LESSON_SPECS[key].source and box is not None:
            box.param.watch(lambda *_: self.write(key), "value")

    def _on_tab(self, event: Any) -> None:
        if self._writing:
            return
        key = self._key(int(event.new))
        if key is None:
            return
        lesson = self.open_lesson(int(event.new))
        if lesson is not None:
            self._attach(key, lesson)
            self.write(key)

    def query(self, key: str | None = None) -> str | None:
        """The query of lesson ``key`` (default: the open tab's), with ``?``; None when that
        tab has no lesson in :data:`LESSON_SPECS` or it is not built."""
        key = key or self._key(int(self.tabs.active))
        if key is None:
            return None
        lesson = self._lesson(key)
        if lesson is None:
            return None
        box = getattr(lesson, "source_box", None)
        source = None if box is None else (box.value or None)
        return "?" + to_query(key, lesson.state, source)

    def write(self, key: str | None = None) -> None:
        """Put lesson ``key``'s settings (default: the open tab's) in the address, if that
        lesson is the open one and the page's address is known."""
        if not self.ready or self._writing:
            return
        current = self._key(int(self.tabs.active))
        if current is None or (key is not None and key != current):
            return
        query = self.query(current)
        if query is None or query == self.location.search:
            return
        self._writing = True
        try:
            self._seen = self.location.search = query
        finally:
            self._writing = False


def bind_location(
    tabs: Any, open_lesson: Callable[[int], Any], location: Any = None
) -> LocationSync | None:
    """Keep the page address and the playground in step (see :class:`LocationSync`).

    Call it once, when the app is created, with the playground's tabs and its lesson opener
    (``Playground.tabs`` and ``Playground.open`` in :mod:`pyplay.ui.app`)::

        playground = Playground()
        bind_location(playground.tabs, playground.open)

    ``location`` defaults to ``pn.state.location`` (the current document's); without a
    document (a plain script) there is no address and None is returned.
    """
    if location is None:
        import panel as pn

        location = pn.state.location
    if location is None:
        return None
    sync = LocationSync(location, tabs, open_lesson)
    if location.href:  # already known (panel serve): apply now
        sync._on_location()
    return sync
