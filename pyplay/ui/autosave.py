"""Autosave: every lesson's trained model goes to the store while and after it trains.

:class:`Autosaver` watches the states of the lessons it is given (:meth:`Autosaver.track`)
and saves a snapshot (:mod:`pyplay.ui.storage`) of a lesson's model

- every :attr:`Autosaver.interval_s` seconds (default 15) of training: checked when the status
  line changes after a training slice, which costs one clock reading; the save itself runs
  afterwards as its own task, not inside the slice;
- when training stops (Pause, finished, diverged: ``running`` turns False);
- after a model is loaded (the state's ``version`` changes and its model has trained steps);
- just before a trained model is replaced (a new model setting, Reset, a "Try this" setup, a
  loaded file: the state's ``replacing`` changes): its bytes are taken at once, while the
  state still holds it, and written to its entry right after, so a change that starts a new
  model never loses the one trained so far.

Each lesson's model has one entry, updated in place; a new model (Reset, a changed model
setting: ``version`` changes) starts a new entry. Models that have not trained are not saved,
nor a model saved already at the same step. A run that blew up never costs the model saved
before it: when the recent loss has grown more than :data:`WORSE` times since the entry's
last save, that save is kept under a name of its own ("..., before the loss rose", kept until
the learner deletes it) and the model now goes into a new entry beside it; and a model with
NaN or infinite weights is never saved at all (:func:`pyplay.io.save_model` refuses it).
Nothing here raises into the page: a lesson that cannot save, or a store that fails, becomes
a message through ``notify``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyplay.ui.storage import MAX_NAME_CHARS, Snapshot, Store, StoreError, keep

__all__ = ["INTERVAL_S", "WORSE", "Autosaver", "Entry", "describe", "recent_loss", "trained_steps"]

INTERVAL_S = 15.0  # seconds of training between two autosaves of a lesson
WORSE = 10.0  # a recent loss this many times the saved one keeps the saved model apart
RECENT = 10  # steps whose mean loss is a model's recent loss

Schedule = Callable[[Callable[[], Awaitable[Any]]], Any]
Notify = Callable[[str, str], None]


def trained_steps(state: Any) -> int:
    """Training steps of a lesson state's model (its trainer's count, else ``_step``)."""
    count: Any = getattr(getattr(state, "trainer", None), "step_count", None)
    if count is None:
        count = getattr(state, "_step", 0)
    try:
        return int(count)
    except (TypeError, ValueError):
        return 0


def recent_loss(state: Any, after: int = -1) -> float | None:
    """The mean loss of a lesson state's last steps, at most :data:`RECENT` of those after
    step ``after`` (the last save; all when -1); None before any, or when not finite."""
    history = getattr(state, "history", {})
    pairs = list(zip(history.get("step", []), history.get("loss", []), strict=False))
    losses = [loss for step, loss in pairs if step > after][-RECENT:] or [
        loss for _, loss in pairs[-RECENT:]
    ]
    if not losses:
        return None
    value = float(np.mean(losses))
    return value if np.isfinite(value) else None


def describe(state: Any, title: str) -> str:
    """A short name of a lesson's model: the state's own ``model_name()`` when it has one,
    else e.g. "LSTM on adding", or "CTC: GRU" (the lesson's title and the cell when the
    lesson has no task), or the title alone."""
    named = getattr(state, "model_name", None)
    if callable(named):
        return f"{title}: {named()}"
    cell = getattr(state, "cell", None)
    task = getattr(state, "task", None)
    if isinstance(cell, str) and isinstance(task, str):
        return f"{cell.upper()} on {task}"
    return f"{title}: {cell.upper()}" if isinstance(cell, str) else title


@dataclass
class Entry:
    """The store entry a lesson's current model is saved under."""

    id: str
    name: str
    named: bool = False
    saved: tuple[int, int] | None = None  # (version, step) of the last save
    loss: float | None = None  # the model's recent loss at the last save


@dataclass
class _Tracked:
    key: str
    title: str
    state: Any
    entry: Entry
    mark: float = 0.0  # clock reading when training started or last saved
    best: float | None = None  # the lowest recent loss saved of the current model
    watchers: list[Any] = field(default_factory=list)


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


class Autosaver:
    """Saves the tracked lessons' models to ``store``.

    Parameters
    ----------
    store : Store
        Where snapshots go.
    schedule : callable
        ``schedule(coroutine_function)`` runs the coroutine soon, off the current callback
        (the page passes Panel's ``param.parameterized.async_executor``; tests collect them).
    notify : callable
        ``notify(text, kind)`` shows a message (kind: info, success, warning, danger).
    clock : callable
        Seconds (default ``time.time``); the snapshots' times and the save interval.
    interval_s : float
        Seconds of training between saves.
    on_saved : callable, optional
        Called with each snapshot saved (the list of saved work refreshes).
    on_failed : callable, optional
        Called with the reason of every save that failed (``notify`` says a problem once,
        not at every save; the saved-work tab keeps the last failure in sight until a save
        succeeds).
    """

    def __init__(
        self,
        store: Store,
        schedule: Schedule,
        notify: Notify,
        clock: Callable[[], float] = time.time,
        interval_s: float = INTERVAL_S,
        on_saved: Callable[[Snapshot], Any] | None = None,
        on_failed: Callable[[str], Any] | None = None,
    ) -> None:
        self.store = store
        self.schedule = schedule
        self.notify = notify
        self.clock = clock
        self.interval_s = interval_s
        self.on_saved = on_saved
        self.on_failed = on_failed
        self.tracked: dict[str, _Tracked] = {}
        self.pending: dict[str, Entry] = {}  # the entry a model being restored continues
        self.last_save_s: float | None = None  # seconds the last save_bytes() took
        self._busy: set[str] = set()
        self._again: set[str] = set()
        self._problem: str | None = None

    # ------------------------------------------------------------------ lessons
    def track(self, key: str, title: str, state: Any) -> bool:
        """Watch ``state`` (lesson ``key``, tab ``title``); False if it cannot be saved."""
        if key in self.tracked:
            return True
        if not callable(getattr(state, "save_bytes", None)):
            return False
        tracked = _Tracked(key, title, state, Entry(_new_id(), describe(state, title)))
        self.tracked[key] = tracked
        tracked.watchers = [
            state.param.watch(lambda e: self._on_running(key, e.new), "running"),
            state.param.watch(lambda e: self._on_version(key), "version"),
            state.param.watch(lambda e: self._on_status(key), "status"),
            state.param.watch(lambda e: self._on_replacing(key), "replacing"),
        ]
        return True

    def continue_entry(self, key: str, entry: Entry) -> None:
        """The next model loaded into lesson ``key`` continues ``entry`` (a restore)."""
        self.pending[key] = entry

    def mark_saved(self, key: str) -> None:
        """Lesson ``key``'s model, as it is now, is in the store already (just restored)."""
        tracked = self.tracked.get(key)
        if tracked is not None:
            tracked.entry.saved = (int(tracked.state.version), trained_steps(tracked.state))

    def renamed(self, snapshot_id: str, name: str | None) -> None:
        """The user renamed ``snapshot_id`` (``name``) or deleted it (None): later saves of
        that model keep the name, or start a new entry."""
        for tracked in self.tracked.values():
            if tracked.entry.id != snapshot_id:
                continue
            if name is None:
                tracked.entry = Entry(_new_id(), describe(tracked.state, tracked.title))
            else:
                tracked.entry.name, tracked.entry.named = name, True

    # ------------------------------------------------------------------ triggers
    def _on_running(self, key: str, running: bool) -> None:
        if running:
            self.tracked[key].mark = self.clock()
        else:
            self.request(key)

    def _on_status(self, key: str) -> None:
        tracked = self.tracked[key]
        if tracked.state.running and self.clock() - tracked.mark >= self.interval_s:
            tracked.mark = self.clock()
            self.request(key)

    def _on_version(self, key: str) -> None:
        tracked = self.tracked[key]
        entry = self.pending.pop(key, None)
        tracked.entry = entry or Entry(_new_id(), describe(tracked.state, tracked.title))
        tracked.best = None
        if trained_steps(tracked.state) > 0:  # a loaded model (a rebuilt one has 0 steps)
            self.request(key)

    def _on_replacing(self, key: str) -> None:
        """The state's trained model is about to be replaced: take its bytes now (the state
        still holds it) and write them to its entry soon."""
        tracked = self.tracked[key]
        captured = self._capture(tracked, recent_loss(tracked.state), rename=False)
        if captured is not None:
            self.schedule(lambda: self._write(tracked, *captured))

    def request(self, key: str) -> None:
        """Save lesson ``key``'s model soon (at once if a save of it is under way: after it)."""
        if key in self._busy:
            self._again.add(key)
            return
        self.schedule(lambda: self.save(key))

    # ------------------------------------------------------------------ saving
    async def save(self, key: str) -> Snapshot | None:
        """Save lesson ``key``'s model now; returns the snapshot (None when nothing needed
        saving or it failed: then ``notify`` said why)."""
        if key in self._busy:
            self._again.add(key)
            return None
        self._busy.add(key)
        try:
            snapshot = await self._save(key)
            while key in self._again:
                self._again.discard(key)
                snapshot = await self._save(key) or snapshot
            return snapshot
        finally:
            self._busy.discard(key)

    async def _save(self, key: str) -> Snapshot | None:
        tracked = self.tracked[key]
        state, entry = tracked.state, tracked.entry
        steps = trained_steps(state)
        stamp = (int(state.version), steps)
        if steps <= 0 or entry.saved == stamp:
            return None
        after = entry.saved[1] if entry.saved is not None else -1
        loss = recent_loss(state, after)
        await self._keep_apart(tracked, loss)
        captured = self._capture(tracked, loss)
        return None if captured is None else await self._write(tracked, *captured)

    def _capture(
        self, tracked: _Tracked, loss: float | None, rename: bool = True
    ) -> tuple[Entry, bytes, tuple[int, int], float | None, str] | None:
        """The bytes of ``tracked``'s model for its entry, now: ``(entry, data, (version,
        step), loss, query)``; None when it has not trained, is saved as it is, or cannot be
        saved (a message says why). ``rename``: name the entry after the settings now (not
        when the settings already describe the next model)."""
        state, entry = tracked.state, tracked.entry
        steps = trained_steps(state)
        stamp = (int(state.version), steps)
        if steps <= 0 or entry.saved == stamp:
            return None
        start = time.perf_counter()
        try:
            data = state.save_bytes().getvalue()
        except Exception as err:  # a lesson that cannot save must never stop the page
            self._failed(f"Autosave of {tracked.title} failed: {err}")
            return None
        self.last_save_s = time.perf_counter() - start
        if rename and not entry.named:
            entry.name = describe(state, tracked.title)
        return entry, data, stamp, loss, _query(tracked.key, state)

    async def _write(
        self,
        tracked: _Tracked,
        entry: Entry,
        data: bytes,
        stamp: tuple[int, int],
        loss: float | None,
        query: str,
    ) -> Snapshot | None:
        """Write captured bytes to ``entry`` in the store (see :meth:`_capture`)."""
        snapshot = Snapshot(
            id=entry.id,
            name=entry.name,
            lesson=tracked.key,
            title=tracked.title,
            query=query,
            step=stamp[1],
            saved_at=float(self.clock()),
            size=len(data),
            named=entry.named,
        )
        try:
            dropped = await keep(self.store, snapshot, data)
        except StoreError as err:
            self._failed(f"Autosave is not working: {err}")
            return None
        entry.saved, entry.loss = stamp, loss
        current = tracked.entry is entry  # not a model replaced since
        if current and loss is not None and (tracked.best is None or loss < tracked.best):
            tracked.best = loss
        self._problem = None
        if dropped:
            self.notify(
                f"Saved work keeps {len(dropped)} fewer old autosave(s) to make room.", "info"
            )
        if self.on_saved is not None:
            self.on_saved(snapshot)
        return snapshot

    async def _keep_apart(self, tracked: _Tracked, loss: float | None) -> bool:
        """When the model got much worse since its entry was last saved (a run that blew up)
        and that save was a good one (within twice the best loss saved of this model), keep it
        under its own name and give the model now a new entry; True if so. Once apart, the
        worse model's entry is updated in place until the model is good again."""
        entry = tracked.entry
        if entry.saved is None or entry.loss is None or tracked.best is None:
            return False
        if entry.loss > 2.0 * tracked.best:  # that save is no good one to keep
            return False
        if loss is not None and loss <= WORSE * max(entry.loss, 1e-12):
            return False
        kept = f"{entry.name}, before the loss rose"[:MAX_NAME_CHARS]
        try:
            renamed = await self.store.rename(entry.id, kept)
        except StoreError as err:
            self._report(f"Autosave is not working: {err}", "warning")
            renamed = False
        if renamed:
            now = "not finite" if loss is None else f"{loss:.4g}"
            self.notify(
                f"Saved work keeps '{kept}' (loss {entry.loss:.4g}); the model now (loss {now}) "
                "is saved beside it.",
                "info",
            )
        tracked.entry = Entry(_new_id(), describe(tracked.state, tracked.title))
        return True

    def _failed(self, text: str) -> None:
        """A save failed: ``on_failed`` hears of every one, ``notify`` once per problem."""
        if self.on_failed is not None:
            self.on_failed(text)
        self._report(text, "warning")

    def _report(self, text: str, kind: str) -> None:
        """``notify`` once per distinct problem (not every 15 s)."""
        if text != self._problem:
            self._problem = text
            self.notify(text, kind)


def _query(key: str, state: Any) -> str:
    """The lesson's settings as an address query ("" when the lesson has none)."""
    from pyplay.ui.urlstate import LESSON_SPECS, to_query

    if key not in LESSON_SPECS:
        return ""
    try:
        return to_query(key, state)
    except Exception:  # the query is only shown and kept, never needed to restore
        return ""
