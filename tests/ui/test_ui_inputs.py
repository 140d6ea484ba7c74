"""The page says what it did with every input, without a browser: a number box that refuses a
text next to itself and keeps the last good value (pyplay.ui.inputs), its range the same as
the page address's, an address naming no lesson of the page said above the tabs, a failed
save said in the Saved work tab every time, and a paste cut at its box's limit said under it."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("panel")

import panel as pn
from panel.io.location import Location

from pyplay.ui.app import address_note
from pyplay.ui.base_state import SEED_MAX, LessonBase
from pyplay.ui.inputs import NumberBox, cut_note, paste_box
from pyplay.ui.lessons.rnn.data_views import data_panel
from pyplay.ui.lessons.rnn.state import MAX_UPLOAD_BYTES, LessonState
from pyplay.ui.location import bind_location, follow_address
from pyplay.ui.saved_work import SavedWork
from pyplay.ui.storage import MemoryStore, Snapshot, StoreError
from pyplay.ui.text import Text
from pyplay.ui.training import lr_input, seed_input, typed_number
from pyplay.ui.urlstate import parse_query, to_query, url_fields


def shown(pane: Any) -> str:
    """What a Text pane sends to the page (its transport form)."""
    return str(pane._transform_object(pane.object)["object"])


# ---------------------------------------------------------------------------- number boxes
def test_a_refused_seed_is_put_back_and_said_next_to_its_box_and_blocks_nothing():
    state = LessonState()
    seed = seed_input(state)
    seed.box.value = "-5"
    assert state.seed == 0 and seed.box.value == "0" and seed.box.value_input == "0"
    assert seed.note == "Seed: expected an integer from 0 to 4294967295; got -5. Kept 0."
    assert seed.note_pane.visible
    state.reset()  # Reset builds a model (it said "Not rebuilt: rng must be ..., got -5")
    assert state.message_kind != "danger" and "Not rebuilt" not in state.message
    assert state.load_bytes(state.save_bytes().getvalue())  # Load model works too
    seed.box.value = "7"  # a good value is taken and the note goes
    assert state.seed == 7 and seed.note == "" and not seed.note_pane.visible


@pytest.mark.parametrize(
    ("which", "typed", "given"),
    [
        ("lr", "nan", "got nan"),
        ("lr", "1e30", "got 1e30"),
        ("lr", "1e6", "got 1e6"),  # the address refuses above 10: the box does too
        ("lr", "<script>alert(1)</script>", "got '<script>alert(1)</script>'"),
        ("lr", "", "got ''"),
        ("seed", "nan", "got nan"),
        ("seed", "1e30", "got 1e30"),
        ("seed", "3.5", "got 3.5"),
        ("seed", "__import__('os').system('x')", "got \"__import__('os').system("),
        ("clip", "inf", "got inf"),
        ("clip", "1e30", "got 1e30"),
        ("clip", "<img src=x onerror=alert(1)>", "got '<img src=x onerror=alert(1)>'"),
    ],
)
def test_what_the_browser_dropped_reaches_python_and_is_refused_with_a_note(
    which: str, typed: str, given: str
):
    # Bokeh's number inputs dropped these in the browser: Python never heard of them
    state = LessonState()
    before = (state.lr, state.seed, state.clip)
    make: dict[str, Callable[[], NumberBox]] = {
        "lr": lambda: lr_input(state),
        "seed": lambda: seed_input(state),
        "clip": lambda: typed_number(state.param.clip, "Clip (0 = off)"),
    }
    box = make[which]()
    assert isinstance(box.box, pn.widgets.TextInput)  # every text typed reaches Python
    box.box.value = typed
    assert (state.lr, state.seed, state.clip) == before  # never the refused value
    assert box.box.value == box.current() == {"lr": "0.02", "seed": "0", "clip": "1.0"}[which]
    assert box.note.startswith(f"{box.label}: expected ") and given in box.note
    assert box.note.endswith(f". Kept {box.current()}.")
    assert "<script" not in shown(box.note_pane) and "<img" not in shown(box.note_pane)


def test_the_box_accepts_what_the_address_accepts_and_no_more():
    state = LessonState()
    for name, box in (("lr", lr_input(state)), ("seed", seed_input(state))):
        assert box.field == url_fields("rnn")[name]  # one range, read in both places
    lr, seed = lr_input(state), seed_input(state)
    lr.box.value = "10"
    seed.box.value = str(SEED_MAX)
    assert (state.lr, state.seed) == (10.0, SEED_MAX) and lr.note == seed.note == ""
    parsed = parse_query(to_query("rnn", state))  # so the setup can be shared
    assert parsed.messages == [] and (parsed.settings["lr"], parsed.settings["seed"]) == (
        10.0,
        SEED_MAX,
    )
    lr.box.value = "10.5"
    assert state.lr == 10.0 and "expected a number from 1e-06 to 10; got 10.5" in lr.note
    lr.box.value = "1e-3"  # taken, and shown as the address writes it
    assert state.lr == 0.001 and lr.box.value == "0.001" and lr.note == ""


def test_a_value_set_elsewhere_shows_in_the_box_and_clears_its_note():
    state = LessonState()
    lr = lr_input(state)
    lr.box.value = "-1"
    assert lr.note
    state.lr = 0.05  # a Try this setup, an address, a lesson file
    assert lr.box.value == "0.05" and lr.note == ""
    lr.disabled = True
    assert lr.box.disabled


# ---------------------------------------------------------------------------- the address
class _Page:
    """The recurrent lesson's tab (its state alone) and About, as the playground has them."""

    def __init__(self) -> None:
        self.state = LessonState()
        self.tabs = pn.Tabs(("Recurrent networks", pn.Column()), ("About", pn.Column()))

    def open(self, index: int) -> Any:
        return SimpleNamespace(state=self.state) if index == 0 else None


def _arrive(location: Location, search: str) -> None:
    """The page's address arrives as web/site/page.js sends it: ``window.location`` as JSON,
    with keys the address object does not have (``ancestorOrigins``, ``origin``)."""
    href = "http://localhost/index.html" + search
    sent = {"href": href, "search": search, "origin": "http://localhost", "ancestorOrigins": {}}
    follow_address(json.dumps(sent), location)


def test_follow_address_takes_what_the_address_object_has_and_names_what_it_expected():
    location = Location()
    _arrive(location, "?lesson=rnn&seed=3")  # no playground bound: the address as sent
    assert (location.href, location.search) == (
        "http://localhost/index.html?lesson=rnn&seed=3",
        "?lesson=rnn&seed=3",
    )
    with pytest.raises(TypeError, match="address: expected the JSON of an object, got list"):
        follow_address("[1, 2]", Location())


def test_an_address_naming_no_lesson_of_the_page_is_said_above_the_tabs():
    page, location = _Page(), Location()
    note, say = address_note()
    bind_location(page.tabs, page.open, location, on_note=say)
    _arrive(location, "?lesson=nope&seed=3")
    assert note.visible and "got 'nope'" in str(note.object)  # the lesson asked for, named
    assert "no settings were applied" in str(note.object)
    assert "got 'nope'" in page.state.message  # and in the open lesson, as before
    page.tabs.active = 1  # the learner moves on: the note goes
    assert not note.visible and note.object == ""
    _arrive(location, "?lesson=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    assert note.visible and "<img" in str(note.object)
    assert "<img" not in shown(note) and "&amp;lt;img" in shown(note)  # text, not HTML


def test_an_address_that_opens_its_lesson_leaves_no_note():
    page, location = _Page(), Location()
    notes: list[str] = []
    bind_location(page.tabs, page.open, location, on_note=notes.append)
    _arrive(location, "?lesson=nope")
    _arrive(location, "?lesson=rnn")
    assert notes[0].startswith("Address: lesson must be one of ") and notes[-1] == ""


# ---------------------------------------------------------------------------- saving
class _FullStore(MemoryStore):
    """The browser's storage, full while ``full``: every put fails as IndexedDB's does."""

    full = True

    async def put(self, snapshot: Snapshot, data: bytes) -> None:
        if self.full:
            raise StoreError("The browser's storage failed while saving: QuotaExceededError")
        await super().put(snapshot, data)


class _Trained(LessonBase):
    """A lesson state with a model of ``_step`` steps to save."""

    def __init__(self) -> None:
        super().__init__()
        self._step = 3

    def save_bytes(self) -> io.BytesIO:
        return io.BytesIO(b"model at step %d" % self._step)


def test_every_failed_save_is_said_next_to_saved_work_until_one_succeeds():
    todo: list[Callable[[], Any]] = []
    clock = SimpleNamespace(t=1_000_000.0)
    playground = SimpleNamespace(tabs=pn.Tabs(("Fake", pn.Column())), lessons={}, titles=["Fake"])
    store = _FullStore()
    saved = SavedWork(playground, store, schedule=todo.append, clock=lambda: clock.t)
    state = _Trained()
    assert saved.autosaver is not None and saved.autosaver.track("fake", "Fake", state)

    def pause_after(steps: int) -> None:  # train, pause: the pause saves
        state._step, clock.t = steps, clock.t + 120.0
        state.running = True
        state.running = False

        async def drain() -> None:
            while todo:
                await todo.pop(0)()

        asyncio.run(drain())

    pause_after(3)
    first = saved.save_problem
    assert first.startswith("Not saved at ") and "QuotaExceededError" in first
    assert first.endswith("The entries below are as they were.")
    note = next(p for p in saved.panel().select(Text) if "pyplay-save-problem" in p.css_classes)
    assert note.visible and "QuotaExceededError" in str(note.object)
    saved.notify("Deleted 'old'.")  # another message takes the tab's message line
    pause_after(4)
    assert saved.save_problem != first and "QuotaExceededError" in saved.save_problem  # again
    assert saved.message == "Deleted 'old'."  # the message line does not repeat it
    store.full = False
    pause_after(5)
    assert saved.save_problem == "" and not note.visible
    assert [s.step for s in asyncio.run(store.list())] == [5]


# ---------------------------------------------------------------------------- pasting
def test_your_data_takes_a_paste_up_to_the_file_limit_and_says_when_it_was_cut():
    panel = data_panel(LessonState(), "help")
    boxes = list(panel.select(pn.widgets.TextAreaInput))
    assert [b.name for b in boxes] == ["Your text", "Your numbers"]
    assert all(b.max_length == MAX_UPLOAD_BYTES for b in boxes)  # Panel's default cut at 5,000
    notes = [p for p in panel.select(Text) if "pyplay-cut-note" in p.css_classes]
    assert len(notes) == 2 and not any(n.visible for n in notes)
    text = boxes[0]
    text.value = "a" * 6000  # what used to be cut at 5,000 without a word
    assert not notes[0].visible
    text.value = "a" * MAX_UPLOAD_BYTES  # the browser kept this much of a longer paste
    assert notes[0].visible and "kept the first 1,000,000 characters" in str(notes[0].object)
    text.value = "short"
    assert not notes[0].visible


def test_a_cut_is_counted_as_the_browser_counts():
    assert cut_note("Your text", "ab", 3) == ""
    assert cut_note("Your text", "abc", 3).startswith("Your text: kept the first 3 characters")
    assert cut_note("Your text", "\U0001f600a", 3)  # an emoji is two units in the browser
    box, note = paste_box("Mine", 4)
    box.value_input = "abcd"  # what the browser holds, before the box is left
    assert note.visible and box.max_length == 4
