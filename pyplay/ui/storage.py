"""Where the playground keeps work across a reload: snapshots of trained models in a store.

A snapshot is one lesson's model as the ``.npz`` bytes its state's ``save_bytes()`` writes,
with what the list of saved work shows: a name, the lesson, the settings (as the page-address
query of :mod:`pyplay.ui.urlstate`), the step count, when it was saved and its size.

- :class:`Store` is the interface (asynchronous: the browser's IndexedDB answers with
  promises): ``put``, ``get``, ``list``, ``rename``, ``delete``.
- :class:`MemoryStore` keeps snapshots in a dict (native runs and tests).
- :class:`IndexedDBStore` calls ``web/site/store.js`` (database "pyplay"), which the page's worker
  loads; every failure of the browser's storage (private mode, quota, a blocked database)
  becomes a :class:`StoreError` with a sentence a person can read.
- :func:`keep` applies the limits (:data:`MAX_SNAPSHOTS`, :data:`MAX_SNAPSHOT_BYTES`,
  :data:`MAX_TOTAL_BYTES`) before a put: the oldest automatic snapshots go first, names the
  user gave are never dropped silently.

No Panel here, and nothing from the store is ever evaluated: metadata is JSON, models are
``.npz`` read by the lesson states through :func:`pyplay.npz.read_npz` (headers checked
before anything is allocated, never pickle).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_SNAPSHOTS",
    "MAX_SNAPSHOT_BYTES",
    "MAX_TOTAL_BYTES",
    "SAVED_WORK",
    "IndexedDBStore",
    "MemoryStore",
    "Snapshot",
    "Store",
    "StoreError",
    "browser_store",
    "check_name",
    "keep",
]

SAVED_WORK = "Saved work"  # what the page calls what it keeps: the title of its tab

MAX_SNAPSHOTS = 20
MAX_SNAPSHOT_BYTES = 20_000_000
MAX_TOTAL_BYTES = 100_000_000
MAX_NAME_CHARS = 60


class StoreError(Exception):
    """The store could not do what was asked; the message says why, in words."""


@dataclass(frozen=True)
class Snapshot:
    """What the list of saved work shows about one saved model (its bytes are kept apart).

    Attributes
    ----------
    id : str
        Unique key in the store.
    name : str
        Shown in the list; the model's description until the user renames it.
    lesson : str
        The lesson's key (``"rnn"``, ...; see :data:`pyplay.ui.urlstate.LESSON_SPECS`) or, for
        a lesson without one, its tab title.
    title : str
        The lesson's tab title (its sub-tab's for a lesson shown in one).
    query : str
        The lesson's settings as a page-address query ("" when it has none).
    step : int
        Training steps of the saved model.
    saved_at : float
        Seconds since the epoch.
    size : int
        Bytes of the ``.npz``.
    named : bool
        True once the user gave it a name (such snapshots are not pruned automatically).
    """

    id: str
    name: str
    lesson: str
    title: str
    query: str
    step: int
    saved_at: float
    size: int
    named: bool = False

    def to_json(self) -> str:
        """The metadata as a JSON object (what ``web/site/store.js`` keeps)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_mapping(cls, data: Any) -> Snapshot:
        """A snapshot from stored metadata; ValueError naming the field if it is not one."""
        if not isinstance(data, dict):
            raise ValueError(f"a snapshot must be a mapping, got {type(data).__name__}")
        kinds: dict[str, type] = {"id": str, "name": str, "lesson": str, "title": str}
        kinds.update(query=str, step=int, saved_at=float, size=int, named=bool)
        values: dict[str, Any] = {}
        for f in fields(cls):
            value = data.get(f.name, False if f.name == "named" else None)
            kind = kinds[f.name]
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise ValueError(f"snapshot field {f.name!r} must be {kind.__name__}")
            values[f.name] = value
        return cls(**values)


def check_name(name: Any) -> str:
    """``name`` stripped if it is a usable snapshot name; ValueError saying what is expected."""
    if not isinstance(name, str):
        raise ValueError(f"a name must be text, got {type(name).__name__}")
    text = name.strip()
    if not text:
        raise ValueError("a name must not be empty")
    if len(text) > MAX_NAME_CHARS:
        raise ValueError(
            f"a name must be at most {MAX_NAME_CHARS} characters, got {len(text)} characters"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("a name must be one line of text without control characters")
    return text


class Store:
    """Interface of a snapshot store; every method is a coroutine and raises only
    :class:`StoreError`."""

    async def put(self, snapshot: Snapshot, data: bytes) -> None:
        """Insert ``snapshot`` with its ``.npz`` bytes, or replace the one with its id."""
        raise NotImplementedError

    async def get(self, snapshot_id: str) -> bytes | None:
        """The ``.npz`` bytes of ``snapshot_id`` (None if there is no such snapshot)."""
        raise NotImplementedError

    async def list(self) -> list[Snapshot]:
        """Every snapshot, newest first."""
        raise NotImplementedError

    async def rename(self, snapshot_id: str, name: str) -> bool:
        """Give ``snapshot_id`` the name ``name`` (marks it named); False if it is gone."""
        raise NotImplementedError

    async def delete(self, snapshot_id: str) -> bool:
        """Remove ``snapshot_id``; False if it was not there."""
        raise NotImplementedError


def _newest_first(snapshots: list[Snapshot]) -> list[Snapshot]:
    return sorted(snapshots, key=lambda s: s.saved_at, reverse=True)


class MemoryStore(Store):
    """Snapshots in a dict, for native runs and tests (gone when the process ends)."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[Snapshot, bytes]] = {}

    async def put(self, snapshot: Snapshot, data: bytes) -> None:
        self.items[snapshot.id] = (snapshot, bytes(data))

    async def get(self, snapshot_id: str) -> bytes | None:
        item = self.items.get(snapshot_id)
        return None if item is None else item[1]

    async def list(self) -> list[Snapshot]:
        return _newest_first([s for s, _ in self.items.values()])

    async def rename(self, snapshot_id: str, name: str) -> bool:
        if snapshot_id not in self.items:
            return False
        snapshot, data = self.items[snapshot_id]
        self.items[snapshot_id] = (replace(snapshot, name=name, named=True), data)
        return True

    async def delete(self, snapshot_id: str) -> bool:
        return self.items.pop(snapshot_id, None) is not None


def _reason(err: BaseException) -> str:
    """The last line of a JavaScript error's text (its name and message)."""
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__


class IndexedDBStore(Store):
    """Snapshots in the browser's IndexedDB, through ``web/site/store.js`` (``api`` is its
    ``self.pyplayStore`` object, reached through Pyodide's ``js`` module).

    The bytes are copied into a fresh ``Uint8Array`` before they are handed over, and copied
    back out on :meth:`get`. A failing call (no IndexedDB, quota exceeded, a blocked or broken
    database) raises :class:`StoreError`.
    """

    def __init__(self, api: Any) -> None:
        self.api = api

    async def _call(self, doing: str, method: str, *args: Any) -> Any:
        try:
            return await getattr(self.api, method)(*args)
        except Exception as err:  # a JsException from the browser, whatever its kind
            raise StoreError(f"The browser's storage failed {doing}: {_reason(err)}") from None

    async def put(self, snapshot: Snapshot, data: bytes) -> None:
        import js

        try:
            array = js.Uint8Array.new(len(data))
            array.assign(data)
        except Exception as err:
            raise StoreError(f"The model could not be handed to the browser: {err}") from None
        await self._call("while saving", "put", snapshot.to_json(), array)

    async def get(self, snapshot_id: str) -> bytes | None:
        array = await self._call("while reading", "get", snapshot_id)
        if array is None:
            return None
        try:
            return bytes(array.to_bytes())
        except Exception as err:
            raise StoreError(f"The saved model could not be read back: {err}") from None

    async def list(self) -> list[Snapshot]:
        text = await self._call("while listing saved work", "list")
        try:
            rows = json.loads(str(text))
        except ValueError as err:
            raise StoreError(f"The list of saved work is damaged: {err}") from None
        snapshots = []
        for row in rows if isinstance(rows, list) else []:
            try:
                snapshots.append(Snapshot.from_mapping(row))
            except ValueError:
                continue  # a damaged entry is left out of the list
        return _newest_first(snapshots)

    async def rename(self, snapshot_id: str, name: str) -> bool:
        return bool(await self._call("while renaming", "rename", snapshot_id, name))

    async def delete(self, snapshot_id: str) -> bool:
        return bool(await self._call("while deleting", "remove", snapshot_id))


def browser_store() -> Store | None:
    """The page's store: IndexedDB when running in Pyodide with ``web/site/store.js`` loaded,
    None in Pyodide without it (e.g. the build's profile run under Node), a
    :class:`MemoryStore` natively."""
    if sys.platform != "emscripten":
        return MemoryStore()
    try:
        import js

        api = getattr(js, "pyplayStore", None)
    except Exception:
        return None
    return None if api is None else IndexedDBStore(api)


async def keep(store: Store, snapshot: Snapshot, data: bytes) -> list[Snapshot]:
    """Put ``snapshot`` in ``store`` within the limits; returns the snapshots dropped for it.

    At most :data:`MAX_SNAPSHOTS` snapshots and :data:`MAX_TOTAL_BYTES` in all are kept: the
    oldest automatic (never renamed) snapshots are deleted first. A snapshot larger than
    :data:`MAX_SNAPSHOT_BYTES`, or one that would need a snapshot the user named to go,
    raises :class:`StoreError` saying so (nothing is deleted then).
    """
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise StoreError(
            f"Not saved: the model takes {len(data) / 1e6:.1f} MB, more than the "
            f"{MAX_SNAPSHOT_BYTES / 1e6:.0f} MB a snapshot may take."
        )
    others = [s for s in await store.list() if s.id != snapshot.id]
    drop: list[Snapshot] = []
    count, total = len(others) + 1, sum(s.size for s in others) + len(data)
    for old in sorted((s for s in others if not s.named), key=lambda s: s.saved_at):
        if count <= MAX_SNAPSHOTS and total <= MAX_TOTAL_BYTES:
            break
        drop.append(old)
        count, total = count - 1, total - old.size
    if count > MAX_SNAPSHOTS or total > MAX_TOTAL_BYTES:
        raise StoreError(
            f"Not saved: saved work is full ({MAX_SNAPSHOTS} snapshots or "
            f"{MAX_TOTAL_BYTES / 1e6:.0f} MB at most) with models you named; delete some "
            "under 'Saved work' to keep saving."
        )
    await store.put(snapshot, data)
    for old in drop:
        await store.delete(old.id)
    return drop
