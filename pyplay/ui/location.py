"""The page address and the playground kept in step: :class:`LocationSync` and
:func:`bind_location` (the hook ``pyplay.ui.app`` calls). What goes into the address, and how
each value is checked, is :mod:`pyplay.ui.urlstate`.

A lesson may live in a sub-tab of another lesson's view (its :class:`LessonSpec` names that
lesson as ``parent``; e.g. the book's seq2seq in the dynamic networks lesson). Such a view has

- ``parts``: lesson key -> the view of that sub-lesson (with its own ``state``);
- ``show_part(key)``: show the sub-tab of ``key`` (the view's own key: its first sub-tab)
  and return the view of that lesson;
- ``shown_part()``: the key of the part whose sub-tab is shown (None: none is);
- ``watch_parts(callback)``: call ``callback()`` when another sub-tab is shown.

:func:`part_view`, :func:`show_part`, :func:`shown_lesson` and :func:`lesson_states` read a
view through these (a view without parts is its own lesson), for the address here and for
autosave (:mod:`pyplay.ui.saved_work`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyplay.ui.urlstate import LESSON_SPECS, apply_settings, parse_query, to_query, url_fields

__all__ = [
    "LocationSync",
    "bind_location",
    "follow_address",
    "lesson_states",
    "opened",
    "part_view",
    "show_part",
    "shown_lesson",
    "tab_title",
    "top_lesson",
]


# ------------------------------------------------------------------ lessons in sub-tabs
def tab_title(key: str) -> str:
    """The title of the playground tab showing lesson ``key`` (its parent's for a sub-tab)."""
    spec = LESSON_SPECS[key]
    return LESSON_SPECS[spec.parent].title if spec.parent else spec.title


def top_lesson(title: str) -> str | None:
    """The key of the lesson of playground tab ``title`` (None: a tab without a lesson)."""
    return next((k for k, s in LESSON_SPECS.items() if s.title == title and not s.parent), None)


def part_view(view: Any, key: str) -> Any:
    """The view of lesson ``key`` within ``view`` (a playground tab's lesson view): ``view``
    itself, or its part ``key`` (None when it has no such part)."""
    if LESSON_SPECS[key].parent is None:
        return view
    return getattr(view, "parts", {}).get(key)


def show_part(view: Any, key: str) -> Any:
    """:func:`part_view`, with its sub-tab brought into view."""
    show = getattr(view, "show_part", None)
    return part_view(view, key) if not callable(show) else show(key)


def shown_lesson(key: str, view: Any) -> str:
    """The lesson shown by ``view``, the view of top-level lesson ``key``: a part's key
    while its sub-tab is shown, else ``key``."""
    shown = getattr(view, "shown_part", None)
    part = shown() if callable(shown) else None
    return part if isinstance(part, str) and part in LESSON_SPECS else key


def lesson_states(title: str, view: Any) -> list[tuple[str, str, Any]]:
    """``(lesson key, title, state)`` of every lesson of playground tab ``title``: its own
    (keyed by its title when the address has no such lesson), then each part's."""
    key = top_lesson(title) or title
    states = [] if getattr(view, "state", None) is None else [(key, title, view.state)]
    for part, sub in getattr(view, "parts", {}).items():
        states.append((part, LESSON_SPECS[part].title, sub.state))
    return states


APPLIED = "applied to the current model."  # what a training setting's watcher says


def opened(key: str, settings: dict[str, Any], source: str | None = None) -> str:
    """What a shared address opened, e.g. "Opened from the link: Recurrent networks with
    cell gru, seed 3." (the lesson's own message about its model is replaced by this)."""
    parts = [f"{name.replace('_', ' ')} {value}" for name, value in settings.items()]
    if source is not None:
        parts.append(f"the input {source!r}")
    what = f" with {', '.join(parts)}" if parts else ""
    return f"Opened from the link: {LESSON_SPECS[key].title}{what}."


class LocationSync:
    """Keeps a Panel ``Location`` (the page address) and the playground's tabs in step.

    Parameters
    ----------
    location : panel.io.location.Location
        ``pn.state.location`` of the page's document.
    tabs : panel.Tabs
        The playground's tabs; a lesson's tab is found by its title (:func:`tab_title`).
    open_lesson : callable
        ``open_lesson(index)`` returns the lesson view of tab ``index`` (building it if it is
        not built yet) or None; the view has ``state``, for sequence to sequence
        ``source_box`` (a text input), and perhaps parts (sub-tabs, see the module docstring).
    on_note : callable, optional
        ``on_note(text)`` shows ``text`` in the page, above the tabs: why an address opened
        no lesson (a lesson this page does not have, named; too long; too many settings).
        Called with "" when a later address opens one, or the learner opens another tab.

    Once the page's address is known (``location.href`` set: at once under ``panel serve``,
    after the first render in the browser, when the page sends its ``window.location``), its
    lesson's tab is opened and its settings applied; problems become a warning in that
    lesson's message. From then on the address follows the open lesson's settings (those of
    the part whose sub-tab is shown, if one is).
    """

    def __init__(
        self,
        location: Any,
        tabs: Any,
        open_lesson: Callable[[int], Any],
        on_note: Callable[[str], Any] | None = None,
    ) -> None:
        self.location = location
        self.tabs = tabs
        self.open_lesson = open_lesson
        self.on_note = on_note
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
        title = tab_title(lesson)
        return titles.index(title) if title in titles else None

    def _key(self, index: int) -> str | None:
        """The top-level lesson of tab ``index``."""
        titles = list(getattr(self.tabs, "_names", []))
        return top_lesson(titles[index]) if 0 <= index < len(titles) else None

    def _current(self) -> str | None:
        """The lesson shown: the open tab's, or its part whose sub-tab is shown."""
        index = int(self.tabs.active)
        key = self._key(index)
        return None if key is None else shown_lesson(key, self.open_lesson(index))

    def _lesson(self, key: str) -> Any:
        index = self._index(key)
        view = None if index is None else self.open_lesson(index)
        return None if view is None else part_view(view, key)

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
        the lesson's state as a warning (to the open lesson's when the address names no
        lesson it can open: a wrong lesson, too many settings, too long)."""
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
                view = self.open_lesson(index)
                lesson = None if view is None else show_part(view, key)
                if view is not None and lesson is None:
                    self.messages.append(f"Address: the {key} lesson is not in this page.")
                if lesson is not None:
                    said: list[str] = []
                    watcher = lesson.state.param.watch(lambda e: said.append(e.new), "message")
                    try:
                        self.messages += apply_settings(lesson.state, parsed.settings)
                    finally:
                        lesson.state.param.unwatch(watcher)
                    if not self.messages:  # say what the address opened, and the new model
                        built = [m for m in said if m and not m.endswith(APPLIED)][-1:]
                        text = " ".join([opened(key, parsed.settings, parsed.source), *built])
                        lesson.state.notify(text, "info")
                    box = getattr(lesson, "source_box", None)
                    if parsed.source is not None and box is not None:
                        box.param.update(value=parsed.source, value_input=parsed.source)
            finally:
                self._writing = False
        if self.messages:  # the named lesson's, or else the open one's: never dropped silently
            target = lesson if lesson is not None else self.open_lesson(int(self.tabs.active))
            state = getattr(target, "state", None)
            if state is not None:
                state.notify(" ".join(self.messages), "warning")
        # an address that opened no lesson is also said above the tabs, whichever tab is open
        self.note(" ".join(self.messages) if lesson is None else "")
        current = self._key(int(self.tabs.active))
        if current is not None:  # the open lesson's changes go to the address from now on
            self._attach(current, self.open_lesson(int(self.tabs.active)))
        self.write()
        return key

    # ------------------------------------------------------------------ page -> address
    def _attach(self, key: str, lesson: Any) -> None:
        """Write the address when a setting of top-level lesson ``key`` (view ``lesson``) or
        of one of its parts changes, or another of its sub-tabs is shown."""
        if lesson is None or key in self._attached:
            return
        self._attached.add(key)
        for part, view in [(key, lesson), *getattr(lesson, "parts", {}).items()]:
            view.state.param.watch(lambda *_, k=part: self.write(k), list(url_fields(part)))
            box = getattr(view, "source_box", None)
            if LESSON_SPECS[part].source and box is not None:
                box.param.watch(lambda *_, k=part: self.write(k), "value")
        watch_parts = getattr(lesson, "watch_parts", None)
        if callable(watch_parts):
            watch_parts(lambda *_: self.write())

    def note(self, text: str) -> None:
        """Show ``text`` above the tabs (through ``on_note``; "" hides it)."""
        if self.on_note is not None:
            self.on_note(text)

    def _on_tab(self, event: Any) -> None:
        if self._writing:
            return
        self.note("")  # the learner moved on from what the address opened
        key = self._key(int(event.new))
        if key is None:
            return
        lesson = self.open_lesson(int(event.new))
        if lesson is not None:
            self._attach(key, lesson)
            self.write()

    def query(self, key: str | None = None) -> str | None:
        """The query of lesson ``key`` (default: the one shown), with ``?``; None when that
        tab has no lesson in :data:`LESSON_SPECS` or it is not built."""
        key = key or self._current()
        if key is None:
            return None
        lesson = self._lesson(key)
        if lesson is None:
            return None
        box = getattr(lesson, "source_box", None)
        source = None if box is None else (box.value or None)
        return "?" + to_query(key, lesson.state, source)

    def write(self, key: str | None = None) -> None:
        """Put lesson ``key``'s settings (default: the one shown) in the address, if that
        lesson is the one shown and the page's address is known."""
        if not self.ready or self._writing:
            return
        current = self._current()
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
    tabs: Any,
    open_lesson: Callable[[int], Any],
    location: Any = None,
    on_note: Callable[[str], Any] | None = None,
) -> LocationSync | None:
    """Keep the page address and the playground in step (see :class:`LocationSync`).

    Call it once, when the app is created, with the playground's tabs and its lesson opener
    (``Playground.tabs`` and ``Playground.open`` in :mod:`pyplay.ui.app`)::

        playground = Playground()
        bind_location(playground.tabs, playground.open)

    ``location`` defaults to ``pn.state.location`` (the current document's); without a
    document (a plain script) there is no address and None is returned. ``on_note`` shows
    why an address opened no lesson, above the tabs (see :class:`LocationSync`).
    """
    if location is None:
        import panel as pn

        location = pn.state.location
    if location is None:
        return None
    sync = LocationSync(location, tabs, open_lesson, on_note)
    if location.href:  # already known (panel serve): apply now
        sync._on_location()
    return sync


def follow_address(address: str, location: Any = None) -> None:
    """Give the document's address object (``pn.state.location``, or ``location``) the page's
    address: ``address`` is the JSON of the browser's ``window.location``, which
    ``web/site/page.js`` sends once the page is drawn. Its ``href`` and ``search`` reach
    :class:`LocationSync`, which opens the lesson it names with its settings; keys the object
    does not have are left out. (The browser tests on a shared page give it a link the same
    way: ``tests/browser/browserkit.follow_link``.)"""
    from panel.util import edit_readonly

    if location is None:
        import panel as pn

        location = pn.state.location
    if location is None:
        return
    fields = json.loads(address)
    if not isinstance(fields, dict):
        raise TypeError(f"address: expected the JSON of an object, got {type(fields).__name__}")
    with edit_readonly(location):
        location.param.update({k: v for k, v in fields.items() if k in location.param})
