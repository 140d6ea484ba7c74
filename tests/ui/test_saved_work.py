"""Autosave and the saved-work list (pyplay.ui.autosave, pyplay.ui.saved_work), without a
browser: the recurrent lesson trained, saved, listed, renamed, restored into a fresh page."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("panel")

import panel as pn

from pyplay.ui.app import Playground
from pyplay.ui.autosave import Autosaver, trained_steps
from pyplay.ui.saved_work import TAB_TITLE, SavedWork, attach_saved_work
from pyplay.ui.storage import MemoryStore, Snapshot, Store, StoreError


class Tasks:
    """A scheduler that keeps the coroutines the page would run soon; ``run()`` runs them."""

    def __init__(self) -> None:
        self.todo: list[Callable[[], Any]] = []

    def __call__(self, make: Callable[[], Any]) -> None:
        self.todo.append(make)

    def run(self) -> None:
        async def drain() -> None:
            while self.todo:
                await self.todo.pop(0)()

        asyncio.run(drain())


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class BrokenStore(Store):
    """IndexedDB missing or over quota: every call fails."""

    async def _fail(self, *_: Any) -> Any:
        raise StoreError("The browser's storage failed while saving: QuotaExceededError")

    put = get = list = rename = delete = _fail  # type: ignore[assignment]


def page(store: Store | None = None, clock: Clock | None = None) -> tuple[SavedWork, Tasks]:
    tasks = Tasks()
    saved = SavedWork(Playground(), store or MemoryStore(), schedule=tasks, clock=clock or Clock())
    return saved, tasks


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def rnn(saved: SavedWork) -> Any:
    """The recurrent lesson, opened (built and tracked) if it is not yet."""
    if "Recurrent networks" not in saved.playground.lessons:
        saved.playground.show("Recurrent networks")
    return saved.playground.lessons["Recurrent networks"]


def train_and_pause(saved: SavedWork, tasks: Tasks, steps: int) -> Any:
    """Train ``steps`` steps as the page's Train / Pause do; runs the autosave."""
    state = rnn(saved).state
    state.running = True
    state.train(steps=steps)
    saved.autosaver.clock.t += 60.0  # a minute later
    state.running = False  # Pause
    tasks.run()
    return state


def predictions(state: Any) -> np.ndarray:
    batch = state.inspection_batch(0)
    out, _, _ = state.model.forward(batch.inputs, None, batch.lengths, training=False)
    return np.asarray(out)


@pytest.mark.slow
def test_pausing_saves_one_entry_per_model_updated_in_place():
    saved, tasks = page()
    state = train_and_pause(saved, tasks, 5)
    (first,) = saved.snapshots
    assert (first.lesson, first.title, first.step, first.name) == (
        "rnn",
        "Recurrent networks",
        5,
        "LSTM on adding",
    )
    assert "cell=lstm" in first.query and first.size > 1000
    assert saved.autosaver is not None and saved.autosaver.last_save_s is not None
    (row,) = saved.rows.objects
    changes: list[str] = []
    saved.rows.param.watch(lambda e: changes.append(e.name), "objects")
    train_and_pause(saved, tasks, 3)
    (again,) = run(saved.store.list())
    assert again.id == first.id and again.step == 8  # the same entry, updated
    # ... in place in the list: the page keeps its views of the entry (an entry made anew at
    # every autosave left the old one's DOM nodes and listeners behind in the page)
    assert saved.rows.objects == [row] and changes == []
    assert any("8 steps" in str(t.object) for t in row.select(pn.pane.Str))
    restore = next(b for b in row.select(pn.widgets.Button) if b.name == "Restore")
    state.hidden_size = 16  # a new model: a new entry
    train_and_pause(saved, tasks, 2)
    entries = run(saved.store.list())
    assert [s.step for s in entries] == [2, 8] and entries[0].id != first.id
    assert saved.rows.objects[1] is row and changes == ["objects"]  # the new one added
    restore.clicks += 1  # the kept entry's buttons still act on their own snapshot
    tasks.run()
    assert saved.message == "Restored 'LSTM on adding' (8 steps)."
    assert rnn(saved).state.hidden_size != 16  # the model of 8 steps, not the new one


@pytest.mark.slow
def test_nothing_is_saved_for_an_untrained_model_or_twice_at_the_same_step():
    saved, tasks = page()
    state = rnn(saved).state
    state.running = True
    state.running = False
    tasks.run()
    assert run(saved.store.list()) == []
    train_and_pause(saved, tasks, 2)
    stored = run(saved.store.list())[0]
    state.running, state.running = True, False  # paused again without a step
    tasks.run()
    assert run(saved.store.list())[0].saved_at == stored.saved_at


@pytest.mark.slow
def test_autosave_every_15_seconds_of_training_with_a_fake_clock():
    clock = Clock()
    saved, tasks = page(clock=clock)
    state = rnn(saved).state
    state.running = True  # Train: the interval starts now
    for t in (5, 10, 14.9):  # a training slice every few seconds, then its status line
        clock.t += t - (clock.t - 1_000_000.0)
        state.train(steps=1)
    assert tasks.todo == []  # not yet 15 s
    clock.t = 1_000_000.0 + 15.0
    state.train(steps=1)
    assert len(tasks.todo) == 1  # the save is queued, not run inside the slice
    tasks.run()
    assert [s.step for s in saved.snapshots] == [4]
    clock.t += 10
    state.train(steps=1)
    assert tasks.todo == []  # 10 s since that save
    clock.t += 5
    state.train(steps=1)
    tasks.run()
    assert run(saved.store.list())[0].step == 6 and len(run(saved.store.list())) == 1


@pytest.mark.slow
def test_loading_a_model_saves_it():
    saved, tasks = page()
    playground = Playground()
    playground.show("Recurrent networks")
    other = playground.lessons["Recurrent networks"].state
    other.train(steps=4)
    assert rnn(saved).state.load_bytes(other.save_bytes().getvalue())
    tasks.run()
    assert [s.step for s in run(saved.store.list())] == [4]


@pytest.mark.slow
def test_the_offer_after_a_reload_and_restoring_into_a_fresh_page():
    clock = Clock()
    store = MemoryStore()
    saved, tasks = page(store, clock)
    before = train_and_pause(saved, tasks, 7)
    expected = predictions(before)

    fresh, fresh_tasks = page(store, clock)  # the page reloaded: same store, new playground
    snapshot = run(fresh.check_offer())
    assert snapshot is not None and snapshot.step == 7
    assert fresh.offer.startswith("Restore your work from ")
    assert "LSTM on adding, 7 steps" in fresh.offer
    assert rnn(fresh).state.trainer.step_count == 0
    assert run(fresh.restore(snapshot.id)) is True
    state = rnn(fresh).state
    assert state.trainer.step_count == 7 and "Step 7" in state.status
    np.testing.assert_allclose(predictions(state), expected, rtol=0, atol=1e-12)
    assert fresh.offer == "" and "Restored 'LSTM on adding'" in fresh.message
    fresh_tasks.run()
    state.running = True
    state.train(steps=2)
    state.running = False
    fresh_tasks.run()
    (entry,) = run(store.list())
    assert entry.id == snapshot.id and entry.step == 9  # the restored entry continues


@pytest.mark.slow
def test_restore_opens_the_lesson_tab():
    store = MemoryStore()
    saved, tasks = page(store)
    train_and_pause(saved, tasks, 1)
    fresh, _ = page(store)
    fresh.playground.tabs.active = 2  # another lesson is open
    run(fresh.check_offer())
    assert run(fresh.restore(fresh.snapshots[0].id))
    assert fresh.playground.tabs.active == fresh.playground.titles.index("Recurrent networks")


@pytest.mark.slow
def test_a_corrupt_snapshot_is_a_message_and_the_model_stays():
    store = MemoryStore()
    saved, tasks = page(store)
    train_and_pause(saved, tasks, 3)
    (snapshot,) = run(store.list())
    store.items[snapshot.id] = (snapshot, b"PK\x03\x04 not really a zip")
    fresh, _ = page(store)
    run(fresh.refresh())
    state = rnn(fresh).state
    model = state.model
    assert run(fresh.restore(snapshot.id)) is False
    assert fresh.message.startswith("Not restored: Not loaded: ")
    assert ".npz" in fresh.message  # what the file should have been
    assert state.model is model and state.trainer.step_count == 0
    assert fresh.message_kind == "danger"


@pytest.mark.slow
def test_rename_delete_and_download():
    saved, tasks = page()
    train_and_pause(saved, tasks, 2)
    (s,) = saved.snapshots
    for bad, words in [("", "must not be empty"), ("x" * 61, "at most 60 characters")]:
        assert run(saved.rename(s.id, bad)) is False
        assert saved.message.startswith("Not renamed: ") and words in saved.message
    assert run(saved.store.list())[0].name == "LSTM on adding"  # unchanged
    box = saved.rows.select(pn.widgets.TextInput)[0]
    box.value = "<b>my</b> LSTM"
    assert run(saved.rename(s.id, box.value)) is True
    assert box.value == "" and box.placeholder == "<b>my</b> LSTM"  # the entry shows the name
    assert saved.snapshots[0].name == "<b>my</b> LSTM" and saved.snapshots[0].named
    panes = saved.rows.select(pn.pane.Str)
    assert "<b>my</b> LSTM" in [o.object for o in panes]
    shown = [html.unescape(o.get_root().text) for o in panes + saved.top.select(pn.pane.Str)]
    assert "<pre>&lt;b&gt;my&lt;/b&gt; LSTM</pre>" in shown  # the page gets text, not HTML
    assert all("<b>" not in text for text in shown)
    data = run(saved.download(s.id))
    assert data is not None and data.getvalue() == run(saved.store.get(s.id))
    assert data.getvalue()[:2] == b"PK"  # an .npz (a zip archive)
    train_and_pause(saved, tasks, 1)  # later saves keep the user's name
    assert run(saved.store.list())[0].name == "<b>my</b> LSTM"
    assert run(saved.delete(s.id)) is True
    assert saved.snapshots == [] and "Deleted '<b>my</b> LSTM'" in saved.message
    assert run(saved.download(s.id)) is None and "no longer saved" in saved.message
    assert run(saved.restore(s.id)) is False
    train_and_pause(saved, tasks, 1)  # the deleted entry is not resurrected: a new one
    assert [x.id for x in run(saved.store.list())] != [s.id]


@pytest.mark.slow
def test_dismiss_hides_the_offer_and_an_empty_store_offers_nothing():
    store = MemoryStore()
    saved, tasks = page(store)
    assert run(saved.check_offer()) is None and saved.offer == ""
    train_and_pause(saved, tasks, 1)
    fresh, _ = page(store)
    run(fresh.check_offer())
    assert fresh.offer
    fresh.dismiss()
    assert fresh.offer == "" and len(fresh.snapshots) == 1


@pytest.mark.slow
def test_a_broken_store_is_a_message_and_the_playground_still_works():
    saved, tasks = page(BrokenStore())
    assert run(saved.check_offer()) is None
    assert "QuotaExceededError" in saved.message and "not saved across reloads" in saved.message
    state = train_and_pause(saved, tasks, 3)
    assert saved.message.startswith("Autosave is not working: ")
    assert state.trainer.step_count == 3
    saved.message = ""
    state.running = True
    state.train(steps=1)
    state.running = False
    tasks.run()
    assert saved.message == ""  # the same problem is not repeated every save
    for action in (saved.restore("x"), saved.rename("x", "ok"), saved.delete("x")):
        assert run(action) is False
    assert state.trainer.step_count == 4


def test_a_lesson_that_cannot_save_is_not_tracked():
    class NoFiles:
        running = False

    autosaver = Autosaver(MemoryStore(), Tasks(), lambda text, kind: None)
    assert autosaver.track("x", "X", NoFiles()) is False


@pytest.mark.slow
def test_a_failing_save_is_a_message_and_training_goes_on():
    saved, tasks = page()
    state = rnn(saved).state

    def broken() -> Any:
        raise ValueError("no model")

    state.save_bytes = broken
    train_and_pause(saved, tasks, 2)
    assert saved.message == "Autosave of Recurrent networks failed: no model"
    assert state.trainer.step_count == 2
    # beside the training it concerns (the lesson's message), and not above the tabs
    assert state.message == saved.message and state.message_kind == "warning"
    assert saved.offer_result == ""


@pytest.mark.slow
def test_the_banner_says_what_its_restore_did_and_nothing_else():
    clock, store = Clock(), MemoryStore()
    saved, tasks = page(store, clock)
    train_and_pause(saved, tasks, 3)
    fresh, fresh_tasks = page(store, clock)
    assert list(fresh.top) == []  # no banner on the page before there is an offer
    run(fresh.check_offer())
    assert len(fresh.top) == 1  # the offer brought it
    fresh.notify("Renamed to 'x'.", "success")  # a Saved work action: said in that tab only
    assert fresh.offer_result == ""
    fresh._restore_offered()
    fresh_tasks.run()
    assert fresh.offer_result == "Restored 'LSTM on adding' (3 steps)."
    assert fresh.offer == "", "the offer is taken; its result stays where it was clicked"
    shown = [o.object for o in fresh.top.select(pn.pane.Str)]
    assert fresh.offer_result in shown


def test_the_app_has_the_tab_and_restores_from_the_list():
    playground = Playground()
    saved = attach_saved_work(playground, MemoryStore())
    assert playground.tabs._names[-1] == TAB_TITLE
    assert isinstance(saved.snapshots, list)
    snapshot = Snapshot("a", "n", "rnn", "No such lesson", "", 1, 1.0, 1)
    saved.snapshots = [snapshot]
    run(saved.store.put(snapshot, b"x"))
    assert run(saved.restore("a")) is False
    assert "this page has no lesson 'No such lesson'" in saved.message


def _dynamic(saved: SavedWork) -> Any:
    saved.playground.tabs.active = saved.playground.titles.index("Dynamic networks")
    return saved.playground.lessons["Dynamic networks"]


@pytest.mark.slow
def test_a_lesson_with_two_savable_states_has_two_entries_and_restores_the_right_one():
    store = MemoryStore()
    saved, tasks = page(store)
    lesson = _dynamic(saved)
    assert {"dynamic", "textbook"} <= set(saved.autosaver.tracked)
    textbook, lddn = lesson.seq2seq.state, lesson.state
    textbook.form = "dot"
    for state, steps in ((textbook, 3), (lddn, 2)):
        state.running = True
        state.train(steps=steps)
        state.running = False
    tasks.run()
    entries = {s.lesson: s for s in run(store.list())}
    assert set(entries) == {"dynamic", "textbook"}
    assert (entries["textbook"].title, entries["textbook"].step) == ("Textbook seq2seq", 3)
    query = entries["textbook"].query
    assert "lesson=textbook" in query and "form=dot" in query
    assert (entries["dynamic"].title, entries["dynamic"].step) == ("Dynamic networks", 2)
    assert entries["dynamic"].id != entries["textbook"].id
    expected = textbook.explain("abcd")
    assert expected is not None

    fresh, fresh_tasks = page(store)  # a reload: the first tab is open
    run(fresh.refresh())
    assert run(fresh.restore(entries["textbook"].id)), fresh.message
    assert fresh.playground.tabs.active == saved.playground.titles.index("Dynamic networks")
    view = fresh.playground.lessons["Dynamic networks"]
    assert view.shown_part() == "textbook"  # the sub-tab is shown
    state = view.seq2seq.state
    assert state.form == "dot" and state.trainer.step_count == 3
    assert trained_steps(view.state) == 0  # the LDDN of the same tab is untouched
    again = state.explain("abcd")
    assert again is not None and again.output == expected.output
    np.testing.assert_allclose(again.trace.logits, expected.trace.logits, rtol=0, atol=1e-12)
    assert view.seq2seq.loss_source.data["step"] == [1, 2, 3]  # the file's curve
    assert "Restored 'Textbook seq2seq' (3 steps)" in fresh.message
    fresh_tasks.run()
    state.running = True
    state.train(steps=1)
    state.running = False
    fresh_tasks.run()
    by_lesson = {s.lesson: s for s in run(store.list())}
    assert by_lesson["textbook"].id == entries["textbook"].id  # the restored entry continues
    assert by_lesson["textbook"].step == 4 and by_lesson["dynamic"].step == 2

    assert run(fresh.restore(entries["dynamic"].id)), fresh.message
    assert view.shown_part() is None and view.subtabs.active == 0  # "Build and run"
    assert trained_steps(view.state) == 2 and state.trainer.step_count == 4


@pytest.mark.slow
def test_a_textbook_snapshot_holding_another_lessons_file_is_refused():
    store = MemoryStore()
    saved, tasks = page(store)
    train_and_pause(saved, tasks, 2)  # a recurrent-lesson file
    (rnn_entry,) = run(store.list())
    data = run(store.get(rnn_entry.id))
    snapshot = Snapshot("t", "mine", "textbook", "Textbook seq2seq", "", 2, 1.0, len(data))
    run(store.put(snapshot, data))
    fresh, _ = page(store)
    run(fresh.refresh())
    assert run(fresh.restore("t")) is False
    assert "not of the Textbook seq2seq lesson" in fresh.message
    state = fresh.playground.lessons["Dynamic networks"].seq2seq.state
    assert state.trainer.step_count == 0 and state.message_kind == "danger"


@pytest.mark.slow
def test_a_run_that_blew_up_keeps_the_model_saved_before_it():
    # issue 21: trained to a low loss, then learning rate 10, SGD, no clipping: the saved
    # work held only the blown-up model. Now the good save stays, named, beside the new one.
    saved, tasks = page()
    state = train_and_pause(saved, tasks, 80)
    (good,) = run(saved.store.list())
    good_loss = saved.autosaver.tracked["rnn"].entry.loss  # the loss it was saved at
    state.param.update(lr=10.0, optimizer="sgd", clip=0.0)
    state.running = True
    with np.errstate(all="ignore"):  # as in the page
        for _ in range(200):
            state.train(steps=1)
            saved.autosaver.clock.t += 20.0  # an autosave every slice or two
            tasks.run()
            if not state.running:
                break
    assert not state.running and "loss diverged" in state.stopped
    tasks.run()
    entries = {s.id: s for s in run(saved.store.list())}
    kept = entries[good.id]
    assert kept.named and kept.name == "LSTM on adding, before the loss rose"
    assert kept.step <= good.step + 1  # the model from before the blow-up
    assert len(entries) == 2  # the model now, in its own entry beside it
    fresh = page(saved.store)[0]
    restored = rnn(fresh).state
    assert restored.load_bytes(run(saved.store.get(good.id)))
    assert all(np.isfinite(v).all() for v in restored.model.params.values())
    assert good_loss is not None and np.isfinite(good_loss)


@pytest.mark.slow
def test_a_new_model_setting_mid_training_keeps_the_trained_model():
    store = MemoryStore()
    saved, tasks = page(store)
    state = rnn(saved).state
    state.running = True  # training, not yet 15 s: nothing saved so far
    state.train(steps=6)
    expected = predictions(state)
    tasks.run()
    assert run(store.list()) == []
    state.cell = "gru"  # a new model replaces the trained LSTM
    assert state.model.cell == "gru" and state.trainer.step_count == 0
    tasks.run()
    (kept,) = run(store.list())
    assert (kept.name, kept.step) == ("LSTM on adding", 6)
    fresh, _ = page(store)
    run(fresh.refresh())
    assert run(fresh.restore(kept.id)), fresh.message
    back = rnn(fresh).state
    assert back.cell == "lstm" and back.trainer.step_count == 6  # saved with its own settings
    np.testing.assert_allclose(predictions(back), expected, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_the_offer_names_every_saved_model_and_names_say_what_they_are():
    clock = Clock()
    store = MemoryStore()
    saved, tasks = page(store, clock)
    train_and_pause(saved, tasks, 3)
    ctc_index = saved.playground.titles.index("CTC")
    saved.playground.tabs.active = ctc_index
    ctc = saved.playground.lessons["CTC"].state
    clock.t += 10
    ctc.running = True
    ctc.train(steps=2)
    ctc.running = False
    tasks.run()
    names = [s.name for s in run(store.list())]
    assert names == ["CTC: GRU", "LSTM on adding"]  # newest first; not "GRU" alone
    fresh, _ = page(store, clock)
    run(fresh.check_offer())
    assert "CTC: GRU, 2 steps (CTC)" in fresh.offer
    assert "Also saved, in Saved work: LSTM on adding, 3 steps (Recurrent networks)" in fresh.offer


def test_the_list_is_drawn_when_its_tab_opens_not_while_it_is_hidden():
    playground = Playground()
    saved = attach_saved_work(playground, MemoryStore())
    assert playground.tabs.active != playground.titles.index(TAB_TITLE)
    before = list(saved.rows.objects)
    saved.snapshots = [Snapshot("a", "n", "rnn", "Recurrent networks", "", 1, 1.0, 1)]
    saved._draw()  # a save while a lesson is open: the hidden list is left as it was
    assert saved.rows.objects == before
    playground.tabs.active = playground.titles.index(TAB_TITLE)
    assert [type(e).__name__ for e in saved._entries.values()] == ["SavedEntry"]
    assert saved.rows.objects == [saved._entries["a"].layout]
    saved.snapshots = []
    saved._draw()  # shown: at once
    assert [type(r).__name__ for r in saved.rows.objects] == ["Text"]
