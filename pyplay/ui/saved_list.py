"""The list of the "Saved work" tab (:mod:`pyplay.ui.saved_work`): one entry per snapshot, its
name, what it is, and its Restore, Rename, Delete and Download buttons (:class:`SavedEntry`,
:func:`list_entries`: an entry stays in the page and is updated when its snapshot is saved again),
with the times and sizes it shows; and the note above it of a save that failed
(:func:`problem_note`).

Names are shown as text (never HTML or Markdown) in :class:`pyplay.ui.text.Text` panes
(Panel 1.7's ``Str`` would inject them); a downloaded file's name keeps only letters, digits,
``-`` and ``_`` of the entry's name.
"""

from __future__ import annotations

import io
import re
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import panel as pn

from pyplay.ui.location import tab_title
from pyplay.ui.storage import Snapshot
from pyplay.ui.text import Text
from pyplay.ui.urlstate import LESSON_SPECS

__all__ = [
    "NOTHING_SAVED",
    "SavedEntry",
    "file_name",
    "format_time",
    "info_text",
    "list_entries",
    "problem_note",
    "size_text",
    "tab_of",
]


def format_time(seconds: float) -> str:
    """``seconds`` since the epoch as the page's local date and time, e.g. "2025-03-01 10:32"
    (the browser's clock and time zone in Pyodide)."""
    if sys.platform == "emscripten":
        try:
            import js

            d = js.Date.new(seconds * 1000.0)
            return (
                f"{int(d.getFullYear()):04d}-{int(d.getMonth()) + 1:02d}-{int(d.getDate()):02d} "
                f"{int(d.getHours()):02d}:{int(d.getMinutes()):02d}"
            )
        except Exception:
            pass
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def size_text(n: int) -> str:
    """``n`` bytes as the list shows them: "3.2 MB", or "12 kB" under 100 kB."""
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{max(1, round(n / 1000))} kB"


def file_name(snapshot: Snapshot) -> str:
    """The name a downloaded snapshot gets, e.g. "pyplay-LSTM-on-adding-300-steps.npz"."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", snapshot.name).strip("-")[:40] or "model"
    return f"pyplay-{stem}-{snapshot.step}-steps.npz"


class _Download(pn.widgets.FileDownload):
    """A download whose asynchronous callback may return None (the reason is a message)
    instead of failing in the page's event loop. Overrides Panel 1.7's ``FileDownload``
    hook for asynchronous callbacks."""

    async def _async_sync_data(self) -> None:
        fileobj = await self.callback()  # type: ignore[misc]
        if fileobj is not None:
            self._sync_data(fileobj)


NOTHING_SAVED = "Nothing saved yet."  # the list while it is empty


class SavedEntry:
    """The list's entry for one snapshot: its name, what it is, and Restore / Rename / Delete
    / Download buttons that call ``saved``'s (a :class:`~pyplay.ui.saved_work.SavedWork`)
    ``restore``, ``rename``, ``delete`` and ``download`` through ``saved.schedule`` (off the
    click's callback). :meth:`show` puts a newer save of the same snapshot in place: the
    autosave of a lesson that trains rewrites its entry every few seconds, and an entry made
    anew each time left the page's views of the old one behind (DOM nodes and listeners that
    were never freed: +8 nodes a second while the recurrent lesson trained)."""

    def __init__(self, s: Snapshot, saved: Any) -> None:
        self.snapshot = s

        def run(make: Callable[[], Awaitable[Any]]) -> Callable[[Any], None]:
            return lambda *_: saved.schedule(make)

        restore = pn.widgets.Button(name="Restore", button_type="primary", width=90)
        restore.on_click(run(lambda: saved.restore(self.snapshot.id)))
        self.box = pn.widgets.TextInput(name="New name", placeholder=s.name, width=220)
        rename = pn.widgets.Button(name="Rename", width=90)
        rename.on_click(run(lambda: saved.rename(self.snapshot.id, self.box.value)))
        delete = pn.widgets.Button(name="Delete", button_type="danger", width=90)
        delete.on_click(run(lambda: saved.delete(self.snapshot.id)))

        async def fetch() -> io.BytesIO | None:
            result: io.BytesIO | None = await saved.download(self.snapshot.id)
            return result

        self.download = _Download(
            callback=fetch, filename=file_name(s), label="Download .npz", width=150
        )
        self.name = Text(s.name, css_classes=["pyplay-saved-name"])
        self.info = Text(info_text(s))
        self.layout = pn.Column(
            self.name,
            self.info,
            pn.Row(restore, self.box, rename, delete, self.download),
            css_classes=["pyplay-saved-entry"],
            sizing_mode="stretch_width",
        )

    def show(self, s: Snapshot) -> None:
        """Show ``s`` (the same snapshot saved again, or renamed: the name typed for it goes
        from the box, as it did when the list was made anew) in this entry."""
        if s.name != self.snapshot.name:
            self.box.param.update(value="", value_input="")
        self.snapshot = s
        self.name.object = s.name
        self.info.object = info_text(s)
        self.box.placeholder = s.name
        self.download.filename = file_name(s)


def info_text(s: Snapshot) -> str:
    """What an entry says of its snapshot: lesson, steps, when saved, size."""
    return f"{s.title} · {s.step:,} steps · saved {format_time(s.saved_at)} · {size_text(s.size)}"


def list_entries(
    snapshots: list[Snapshot], saved: Any, shown: dict[str, SavedEntry]
) -> dict[str, SavedEntry]:
    """The list's entries by snapshot id, in the order of ``snapshots``: a snapshot among the
    entries ``shown`` so far keeps its entry, updated in place (:meth:`SavedEntry.show`); the
    others get a new one."""
    entries: dict[str, SavedEntry] = {}
    for s in snapshots:
        entry = shown.get(s.id)
        if entry is None:
            entry = SavedEntry(s, saved)
        else:
            entry.show(s)
        entries[s.id] = entry
    return entries


def problem_note(problem: Any) -> Text:
    """The note above the list while ``problem`` (a string parameter: the last save that
    failed) holds one; shown as text, in the colour of a warning."""
    return Text(
        problem,
        visible=pn.bind(bool, problem),
        css_classes=["pyplay-save-problem"],
        sizing_mode="stretch_width",
        styles={"color": "#8a1f11"},
    )


def tab_of(snapshot: Snapshot) -> str:
    """The playground tab of a snapshot's lesson: its title, or for a lesson shown in a
    sub-tab (:attr:`LessonSpec.parent`) its parent's."""
    spec = LESSON_SPECS.get(snapshot.lesson)
    if spec is not None and spec.parent is not None and spec.title == snapshot.title:
        return tab_title(snapshot.lesson)
    return snapshot.title
