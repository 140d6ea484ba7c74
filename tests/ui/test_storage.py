"""The snapshot stores and their limits (pyplay.ui.storage), without a browser."""

from __future__ import annotations

import asyncio
import json
import sys
import types

import pytest

from pyplay.ui import storage
from pyplay.ui.storage import (
    MAX_NAME_CHARS,
    MAX_SNAPSHOTS,
    IndexedDBStore,
    MemoryStore,
    Snapshot,
    StoreError,
    check_name,
    keep,
)


def snap(i: int, *, size: int = 10, named: bool = False, lesson: str = "rnn") -> Snapshot:
    return Snapshot(
        id=f"id{i}",
        name=f"model {i}",
        lesson=lesson,
        title="Recurrent networks",
        query="lesson=rnn",
        step=10 * i,
        saved_at=1000.0 + i,
        size=size,
        named=named,
    )


def test_memory_store_put_get_list_rename_delete():
    async def scenario():
        store = MemoryStore()
        await store.put(snap(1), b"one")
        await store.put(snap(2), b"two")
        assert [s.id for s in await store.list()] == ["id2", "id1"]  # newest first
        assert await store.get("id1") == b"one"
        assert await store.get("nope") is None
        await store.put(snap(1), b"one again")  # same id: replaced, not added
        assert len(await store.list()) == 2 and await store.get("id1") == b"one again"
        assert await store.rename("id1", "mine") is True
        renamed = next(s for s in await store.list() if s.id == "id1")
        assert renamed.name == "mine" and renamed.named
        assert await store.rename("nope", "x") is False
        assert await store.delete("id2") is True and await store.delete("id2") is False
        assert [s.id for s in await store.list()] == ["id1"]

    asyncio.run(scenario())


def test_check_name_says_what_is_expected():
    assert check_name("  my LSTM ") == "my LSTM"
    assert check_name("<b>bold</b>") == "<b>bold</b>"  # kept as text; shown as text
    for bad, words in [
        ("   ", "must not be empty"),
        ("x" * (MAX_NAME_CHARS + 1), f"at most {MAX_NAME_CHARS} characters, got 61"),
        ("two\nlines", "one line of text"),
        (42, "must be text, got int"),
    ]:
        with pytest.raises(ValueError, match=words):
            check_name(bad)


def test_keep_drops_the_oldest_autosaves_first_and_never_a_named_one():
    async def scenario():
        store = MemoryStore()
        await store.put(snap(0, named=True), b"kept")  # the oldest, but named
        for i in range(1, MAX_SNAPSHOTS):
            await store.put(snap(i), b"x")
        dropped = await keep(store, snap(100), b"new")
        assert [s.id for s in dropped] == ["id1"]
        ids = {s.id for s in await store.list()}
        assert len(ids) == MAX_SNAPSHOTS and "id0" in ids and "id100" in ids and "id1" not in ids
        assert await keep(store, snap(100), b"newer") == []  # an update needs no room

    asyncio.run(scenario())


def test_keep_refuses_when_only_named_snapshots_could_make_room():
    async def scenario():
        store = MemoryStore()
        for i in range(MAX_SNAPSHOTS):
            await store.put(snap(i, named=True), b"x")
        with pytest.raises(StoreError, match=r"full .* with models you named"):
            await keep(store, snap(100), b"new")
        assert len(await store.list()) == MAX_SNAPSHOTS  # nothing deleted

    asyncio.run(scenario())


def test_keep_refuses_a_snapshot_over_the_size_cap(monkeypatch):
    monkeypatch.setattr(storage, "MAX_SNAPSHOT_BYTES", 100)

    async def scenario():
        store = MemoryStore()
        with pytest.raises(StoreError, match=r"takes 0\.0 MB, more than"):
            await keep(store, snap(1), b"x" * 101)
        assert await store.list() == []

    asyncio.run(scenario())


def test_keep_makes_room_under_the_total_size_cap(monkeypatch):
    monkeypatch.setattr(storage, "MAX_TOTAL_BYTES", 25)

    async def scenario():
        store = MemoryStore()
        for i in range(3):
            await keep(store, snap(i, size=10), b"x" * 10)
        assert sorted(s.id for s in await store.list()) == ["id1", "id2"]

    asyncio.run(scenario())


def test_snapshot_metadata_round_trips_and_bad_fields_are_named():
    s = snap(3, named=True)
    assert Snapshot.from_mapping(json.loads(s.to_json())) == s
    with pytest.raises(ValueError, match="'step' must be int"):
        Snapshot.from_mapping({**json.loads(s.to_json()), "step": "ten"})
    with pytest.raises(ValueError, match="must be a mapping, got list"):
        Snapshot.from_mapping([1, 2])


class FakeArray:
    """What Pyodide's js.Uint8Array gives Python: assign() and to_bytes()."""

    def __init__(self, n: int = 0, data: bytes = b"") -> None:
        self.data = data or bytes(n)

    def assign(self, data: bytes) -> None:
        self.data = bytes(data)

    def to_bytes(self) -> bytes:
        return self.data


class FakeApi:
    """web/store.js's functions as a page's worker offers them (promises -> coroutines)."""

    def __init__(self, fail: str | None = None) -> None:
        self.rows: dict[str, dict] = {}
        self.files: dict[str, FakeArray] = {}
        self.fail = fail

    def _check(self) -> None:
        if self.fail:
            raise RuntimeError(f"JsException: {self.fail}")

    async def put(self, meta_json, array):
        self._check()
        meta = json.loads(meta_json)
        self.rows[meta["id"]], self.files[meta["id"]] = meta, array
        return True

    async def list(self):
        self._check()
        return json.dumps([*self.rows.values(), {"id": 5, "broken": True}])

    async def get(self, key):
        self._check()
        return self.files.get(key)

    async def rename(self, key, name):
        self._check()
        if key not in self.rows:
            return False
        self.rows[key].update(name=name, named=True)
        return True

    async def remove(self, key):
        self._check()
        return self.rows.pop(key, None) is not None


@pytest.fixture
def fake_js(monkeypatch):
    module = types.SimpleNamespace(Uint8Array=types.SimpleNamespace(new=FakeArray))
    monkeypatch.setitem(sys.modules, "js", module)
    return module


def test_indexeddb_store_through_the_javascript_functions(fake_js):
    async def scenario():
        api = FakeApi()
        store = IndexedDBStore(api)
        await store.put(snap(1), b"\x00npz bytes")
        await store.put(snap(2), b"two")
        assert [s.id for s in await store.list()] == ["id2", "id1"]  # the damaged row left out
        assert await store.get("id1") == b"\x00npz bytes" and await store.get("x") is None
        assert await store.rename("id1", "mine") and not await store.rename("x", "y")
        assert (await store.list())[1].name == "mine"
        assert await store.delete("id2") and not await store.delete("id2")

    asyncio.run(scenario())


def test_a_failing_browser_storage_is_a_store_error_in_words(fake_js):
    async def scenario():
        store = IndexedDBStore(FakeApi(fail="QuotaExceededError: the quota has been exceeded"))
        for call in (
            store.put(snap(1), b"x"),
            store.list(),
            store.get("id1"),
            store.rename("id1", "n"),
            store.delete("id1"),
        ):
            with pytest.raises(StoreError, match=r"The browser's storage failed .*Quota"):
                await call

    asyncio.run(scenario())


def test_browser_store_is_a_memory_store_natively():
    assert isinstance(storage.browser_store(), MemoryStore)
