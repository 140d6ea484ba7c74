"""Saved work in the page: the offer to restore after a reload, and the list of snapshots.

:class:`SavedWork` joins the playground (:class:`pyplay.ui.app.Playground`), a store
(:mod:`pyplay.ui.storage`) and the :class:`~pyplay.ui.autosave.Autosaver`:

- :attr:`SavedWork.top` goes above the tabs: after a (re)load a banner offering the newest
  snapshot back and naming the others, and the last message about saved work;
- a "Saved work" tab lists every snapshot: name, lesson, steps, time, size, with Restore,
  Rename (a text box), Delete and Download (.npz) (:mod:`pyplay.ui.saved_list`); under its
  heading, the last save that failed (storage full, quota, a blocked database), in sight
  until a save succeeds, so a failure is never silent while the entries stay as they were.

Every savable state of a built lesson is autosaved as its own entry: the lesson's ``state``
and those of its sub-tab lessons (:func:`pyplay.ui.location.lesson_states`). Restoring opens
the snapshot's lesson tab (and sub-tab) and hands the bytes to that state's ``load_bytes``
(which validates them); every failure is a message. Names are shown as text (never HTML or
Markdown) in :class:`pyplay.ui.text.Text` panes (Panel 1.7's ``Str`` would inject them).
"""

from __future__ import annotations

import io
import time
from collections.abc import Awaitable, Callable
from typing import Any

import panel as pn
import param

from pyplay.ui.autosave import Autosaver, Entry
from pyplay.ui.location import lesson_states, show_part
from pyplay.ui.saved_list import (
    NOTHING_SAVED,
    SavedEntry,
    format_time,
    list_entries,
    problem_note,
    tab_of,
)
from pyplay.ui.storage import SAVED_WORK, Snapshot, Store, StoreError, browser_store, check_name
from pyplay.ui.text import Text
from pyplay.ui.urlstate import LESSON_SPECS

__all__ = ["TAB_TITLE", "SavedWork", "attach_saved_work", "format_time"]

TAB_TITLE = SAVED_WORK  # the tab is made by the app before this module is imported
HELP = (
    "Models you train are saved in this browser as you go (every 15 s of training, when "
    "training stops, and after loading a model), one entry per model. Nothing leaves your "
    "computer. At most 20 entries are kept: the oldest automatic ones make room first; "
    "entries you rename are only removed by you."
)


class SavedWork(param.Parameterized):
    """The saved-work banner, list and actions over ``playground`` and ``store``.

    Parameters
    ----------
    playground : pyplay.ui.app.Playground
        Its ``lessons``, ``titles`` (of all tabs, in order), ``tabs`` and ``open(index)``.
    store : Store or None
        None: saving is off (the message says so) and the playground works as before.
    schedule : callable, optional
        ``schedule(coroutine_function)`` runs a coroutine off the current callback (default
        Panel's ``param.parameterized.async_executor``).
    clock : callable
        Seconds since the epoch (tests pass a fake clock).
    top : panel.Column, optional
        Where the banner goes once there is an offer (default: a new column, :attr:`top`).
    """

    message = param.String(default="")
    message_kind = param.String(default="info")
    offer = param.String(default="", doc="the banner's text; empty: no banner")
    offer_result = param.String(default="", doc="what the banner's Restore did, under it")
    save_problem = param.String(default="", doc="the last failed save, until one succeeds")

    def __init__(
        self,
        playground: Any,
        store: Store | None,
        schedule: Callable[[Callable[[], Awaitable[Any]]], Any] | None = None,
        clock: Callable[[], float] = time.time,
        top: pn.Column | None = None,
    ) -> None:
        super().__init__()
        self.playground = playground
        self.store = store
        # Panel's executor, looked up when used (Panel sets it for Pyodide or the server)
        self.schedule = schedule or (lambda make: param.parameterized.async_executor(make))
        self.snapshots: list[Snapshot] = []
        self.offered: Snapshot | None = None
        self.clock = clock
        self.autosaver = (
            None
            if store is None
            else Autosaver(
                store,
                self.schedule,
                self._autosave_notice,
                clock,
                on_saved=self._on_saved,
                on_failed=self._on_save_failed,
            )
        )
        self.rows = pn.Column(Text("Looking for saved work..."), sizing_mode="stretch_width")
        self._entries: dict[str, SavedEntry] = {}  # the list's entries by snapshot id
        self._nothing = Text(NOTHING_SAVED)  # the list while it is empty
        self._stale = False  # the list changed while its tab was hidden: drawn when shown
        # above the tabs: the banner and its result, on the page once it has something to say
        self.top = pn.Column(sizing_mode="stretch_width") if top is None else top
        self.param.watch(self._show_top, ["offer", "offer_result"])
        playground.tabs.param.watch(self._on_tab, "active")
        self.track_lessons()

    def _on_tab(self, *_: Any) -> None:
        self.track_lessons()
        if self._stale:  # changed while hidden
            self._draw()

    # ------------------------------------------------------------------ messages
    def notify(self, text: str, kind: str = "info") -> None:
        """Show ``text`` in the saved-work tab, beside the list its actions change (messages
        appear next to what caused them, never above the tabs)."""
        self.message_kind, self.message = kind, text

    def _autosave_notice(self, text: str, kind: str = "info") -> None:
        """A message of the autosaver: in the saved-work tab; a warning (autosave is not
        working) also in the open lesson, beside the training that is not being saved."""
        self.notify(text, kind)
        if kind not in ("warning", "danger"):
            return
        titles = self.playground.titles
        active = self.playground.tabs.active
        title = titles[active] if 0 <= active < len(titles) else None
        state = getattr(self.playground.lessons.get(title), "state", None)
        if state is not None and hasattr(state, "notify"):
            state.notify(text, kind)

    def _message_pane(self, message: Any = None) -> Text:
        shown = self.param.message if message is None else message
        return Text(
            shown,
            visible=pn.bind(bool, shown),
            css_classes=["pyplay-saved-message"],
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ lessons
    def _titles(self) -> list[str]:
        return list(self.playground.titles)

    def track_lessons(self) -> None:
        """Autosave every lesson built so far (lessons are built when first opened)."""
        if self.autosaver is None:
            return
        for title, lesson in list(self.playground.lessons.items()):
            for key, name, state in lesson_states(title, lesson):  # a sub-tab's lesson too
                self.autosaver.track(key, name, state)

    # ------------------------------------------------------------------ store
    async def refresh(self) -> list[Snapshot]:
        """Read the list from the store and redraw it; store problems become the message."""
        if self.store is None:
            self.notify("Saving work is off: this page has no storage for it.", "warning")
            return []
        try:
            self.snapshots = await self.store.list()
        except StoreError as err:
            self.notify(f"{err} Your work is not saved across reloads.", "warning")
            return []
        self._draw()
        return self.snapshots

    async def check_offer(self) -> Snapshot | None:
        """After a (re)load: offer the newest snapshot back in the banner."""
        snapshots = await self.refresh()
        self.offered = snapshots[0] if snapshots else None
        if self.offered is not None:
            s, more = self.offered, snapshots[1:]
            others = "; ".join(f"{o.name}, {o.step:,} steps ({o.title})" for o in more[:4])
            rest = f" and {len(more) - 4} more" if len(more) > 4 else ""
            self.offer = (
                f"Restore your work from {format_time(s.saved_at).split(' ')[-1]}: "
                f"{s.name}, {s.step:,} steps ({s.title})"
                + (f". Also saved, in Saved work: {others}{rest}" if more else "")
            )
        return self.offered

    def dismiss(self, *_: Any) -> None:
        """Hide the banner (the snapshots stay in the list)."""
        self.offer, self.offered = "", None

    def _on_save_failed(self, reason: str) -> None:
        """A save failed (every one, not only the first of a kind): said under the tab's
        heading with its time, beside the entries it left as they were."""
        when = format_time(self.clock()).split(" ")[-1]
        self.save_problem = f"Not saved at {when}. {reason} The entries below are as they were."

    def _on_saved(self, snapshot: Snapshot) -> None:
        self.save_problem = ""
        self.snapshots = [snapshot] + [s for s in self.snapshots if s.id != snapshot.id]
        self.schedule(self.refresh)

    def _find(self, snapshot_id: str) -> Snapshot | None:
        return next((s for s in self.snapshots if s.id == snapshot_id), None)

    # ------------------------------------------------------------------ actions
    async def restore(self, snapshot_id: str) -> bool:
        """Open the snapshot's lesson and load it there; False (and a message) on any
        problem, the open lesson's model then stays as it was."""
        snapshot = self._find(snapshot_id)
        if snapshot is None or self.store is None:
            self.notify("Not restored: that snapshot is no longer in the list.", "danger")
            return False
        missing = f"Not restored: '{snapshot.name}' is no longer saved."
        data = await self._get(snapshot_id, "Not restored", missing)
        if data is None:
            return False
        titles, tab = self._titles(), tab_of(snapshot)
        if tab not in titles:
            self.notify(f"Not restored: this page has no lesson {snapshot.title!r}.", "danger")
            return False
        index = titles.index(tab)
        lesson = self.playground.open(index)
        self.playground.tabs.active = index
        states = {key: state for key, _, state in lesson_states(tab, lesson)}
        state = states.get(snapshot.lesson, getattr(lesson, "state", None))
        if snapshot.lesson in LESSON_SPECS and lesson is not None:
            show_part(lesson, snapshot.lesson)  # its sub-tab, for a lesson in one
        load = getattr(state, "load_bytes", None)
        if not callable(load):
            self.notify(f"Not restored: the {snapshot.title} lesson cannot load models.", "danger")
            return False
        self.track_lessons()
        if self.autosaver is not None:
            self.autosaver.continue_entry(
                snapshot.lesson, Entry(snapshot.id, snapshot.name, snapshot.named)
            )
        try:
            ok = bool(load(data))
        except Exception as err:  # load_bytes validates; this is a last guard
            ok = False
            self.notify(f"Not restored: {err}", "danger")
            return False
        if not ok:
            if self.autosaver is not None:
                self.autosaver.pending.pop(snapshot.lesson, None)
            self.notify(
                f"Not restored: {getattr(state, 'message', '') or 'the file was refused.'}",
                "danger",
            )
            return False
        if self.autosaver is not None:
            self.autosaver.mark_saved(snapshot.lesson)  # it is in the store as it is
        if self.offered is not None and self.offered.id == snapshot_id:
            self.dismiss()
        self.notify(f"Restored '{snapshot.name}' ({snapshot.step:,} steps).", "success")
        return True

    async def rename(self, snapshot_id: str, name: Any) -> bool:
        """Rename a snapshot; a bad name is a message and changes nothing."""
        try:
            text = check_name(name)
        except ValueError as err:
            self.notify(f"Not renamed: {err}.", "danger")
            return False
        if self.store is None:
            return False
        try:
            found = await self.store.rename(snapshot_id, text)
        except StoreError as err:
            self.notify(f"Not renamed: {err}", "danger")
            return False
        if not found:
            self.notify("Not renamed: that snapshot is no longer saved.", "danger")
        else:
            if self.autosaver is not None:
                self.autosaver.renamed(snapshot_id, text)
            self.notify(f"Renamed to '{text}'.", "success")
        await self.refresh()
        return found

    async def delete(self, snapshot_id: str) -> bool:
        """Delete a snapshot from the store (the lesson's model in the page stays)."""
        if self.store is None:
            return False
        snapshot = self._find(snapshot_id)
        try:
            found = await self.store.delete(snapshot_id)
        except StoreError as err:
            self.notify(f"Not deleted: {err}", "danger")
            return False
        if self.autosaver is not None:
            self.autosaver.renamed(snapshot_id, None)
        if self.offered is not None and self.offered.id == snapshot_id:
            self.dismiss()
        name = snapshot.name if snapshot else "the snapshot"
        self.notify(f"Deleted '{name}'." if found else f"'{name}' was already gone.", "info")
        await self.refresh()
        return found

    async def download(self, snapshot_id: str) -> io.BytesIO | None:
        """The snapshot's ``.npz`` bytes for a download (None and a message if unreadable)."""
        missing = "Not downloaded: that snapshot is no longer saved."
        data = await self._get(snapshot_id, "Not downloaded", missing)
        return None if data is None else io.BytesIO(data)

    async def _get(self, snapshot_id: str, failed: str, missing: str) -> bytes | None:
        """The snapshot's bytes; None and a message (``failed: why``, or ``missing``) if none."""
        if self.store is None:
            return None
        try:
            data = await self.store.get(snapshot_id)
        except StoreError as err:
            self.notify(f"{failed}: {err}", "danger")
            return None
        if data is None:
            self.notify(missing, "danger")
        return data

    # ------------------------------------------------------------------ layout
    def _restore_offered(self, *_: Any) -> None:
        offered = self.offered
        if offered is not None:
            self.schedule(lambda: self._restore_from_banner(offered.id))

    async def _restore_from_banner(self, snapshot_id: str) -> bool:
        """The banner's Restore: what it did is said under the banner, where it was asked."""
        ok = await self.restore(snapshot_id)
        self.offer_result = self.message
        return ok

    def _show_top(self, *_: Any) -> None:
        """The banner joins :attr:`top` the first time there is an offer or its result."""
        if not self.top.objects and (self.offer or self.offer_result):
            self.top.objects = [self._banner()]

    def _banner(self) -> pn.Column:
        restore = pn.widgets.Button(name="Restore", button_type="primary", width=100)
        restore.on_click(self._restore_offered)
        dismiss = pn.widgets.Button(name="Dismiss", width=100)
        dismiss.on_click(self.dismiss)
        banner = pn.Row(
            Text(self.param.offer, sizing_mode="stretch_width"),
            restore,
            dismiss,
            visible=pn.bind(bool, self.param.offer),
            css_classes=["pyplay-restore-offer"],
            sizing_mode="stretch_width",
        )
        return pn.Column(
            banner, self._message_pane(self.param.offer_result), sizing_mode="stretch_width"
        )

    def _shown(self) -> bool:
        """Whether the "Saved work" tab is open (a playground without it shows the list)."""
        titles = list(self.playground.titles)
        return TAB_TITLE not in titles or self.playground.tabs.active == titles.index(TAB_TITLE)

    def _draw(self) -> None:
        """Redraw the list from :attr:`snapshots`; while its tab is hidden, when it opens (the
        page built a new entry's views at once even there: a 120-280 ms long task at the first
        autosave of a model in training)."""
        if not self._shown():
            self._stale = True
            return
        self._stale = False
        self._entries = list_entries(self.snapshots, self, self._entries)
        rows: list[Any] = [entry.layout for entry in self._entries.values()] or [self._nothing]
        if [id(r) for r in rows] != [id(r) for r in self.rows.objects]:  # added, gone, moved
            self.rows.objects = rows

    def panel(self) -> pn.Column:
        """The "Saved work" tab (the list is drawn once the store has answered)."""
        return pn.Column(
            "## Models saved in this browser",
            problem_note(self.param.save_problem),
            pn.pane.Markdown(HELP),
            self._message_pane(),
            self.rows,
            sizing_mode="stretch_width",
        )


def attach_saved_work(
    playground: Any,
    store: Store | None = None,
    into: Any = None,
    hold: bool = False,
    top: pn.Column | None = None,
) -> SavedWork:
    """Autosave, the restore offer (once the address is known) and the "Saved work" tab
    (appended, or filling ``into``) for ``playground``. Put the result's ``top`` above it, or
    give the banner its place: ``top``.

    With ``hold`` (the page, just after its first render), the tab's list joins ``into``
    only when the tab is first shown or drawn ahead after the lessons (the playground's
    ``hold``): put into the page at once, the hidden tab's views and the banner's took two
    long tasks of about 0.2 s each on the page's main thread just when a learner reaches for
    Train (``web/measure.py first``)."""
    saved = SavedWork(playground, store if store is not None else browser_store(), top=top)
    if into is None:
        playground.tabs.append((TAB_TITLE, into := pn.Column(sizing_mode="stretch_width")))
    if hold and not saved._shown():  # not the tab open already (an address naming it)
        playground.hold(TAB_TITLE, into, saved.panel)
    else:
        into.objects = [saved.panel()]
    location = pn.state.location
    if location is not None and saved.store is not None:
        started: list[bool] = []

        def start(*_: Any) -> None:
            if location.href and not started:
                started.append(True)
                saved.schedule(saved.check_offer)

        location.param.watch(start, "href")
        start()
    return saved
