"""The Sequence to sequence lesson's training lengths and its "Attention and long sentences"
section without a browser: settings, the comparison's models, slices, pause, plot data."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.ui.export import as_code
from pyplay.ui.lessons.seq2seq.by_length import (
    COMPARE_STEPS,
    ComparisonSetting,
    LengthComparison,
)
from pyplay.ui.lessons.seq2seq.state import Seq2SeqState
from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson


# ------------------------------------------------------------------ the lengths as settings
def test_training_lengths_are_settings_with_the_old_defaults() -> None:
    state = Seq2SeqState()
    assert (state.min_len, state.max_len) == (3, 10)
    assert (state.task_obj.min_len, state.task_obj.max_len) == (3, 10)
    version = state.version
    state.param.update(min_len=6, max_len=14)
    assert state.version == version + 1  # one rebuild for both
    assert (state.task_obj.min_len, state.task_obj.max_len) == (6, 14)
    assert "6-14 letters" in state.message
    lengths = state.task_obj.batch(64).src_lengths
    assert lengths.min() >= 6 and lengths.max() <= 14
    assert state.param.min_len.softbounds == (1, 15)
    assert state.param.max_len.softbounds == (2, 20)


def test_inverted_lengths_are_a_message_and_the_model_stays() -> None:
    state = Seq2SeqState()
    state.train(steps=2)
    model = state.model
    state.max_len = 2
    assert state.message_kind == "danger"
    assert "longest source (2) must not be shorter than the shortest (3)" in state.message
    assert state.model is model and state.trainer is not None and state.trainer.step_count == 2


def test_lengths_apply_to_copy_and_not_to_the_other_tasks() -> None:
    state = Seq2SeqState(task="copy_var", min_len=2, max_len=4)
    assert (state.task_obj.min_len, state.task_obj.max_len) == (2, 4)
    dates = Seq2SeqState(task="dates", min_len=2, max_len=4)
    assert dates.task_obj.name == "dates" and dates.message_kind != "danger"


def test_lengths_are_in_the_script_and_the_model_file() -> None:
    state = Seq2SeqState(task="copy_var", min_len=4, max_len=12, hidden_size=8)
    code = as_code("seq2seq", state, steps=2, log_every=1)
    assert "VariableCopy(" in code and "min_len=4" in code and "max_len=12" in code
    state.train(steps=2)
    other = Seq2SeqState()
    assert other.load_bytes(state.save_bytes().getvalue()), other.message
    assert (other.min_len, other.max_len, other.task) == (4, 12, "copy_var")
    assert (other.task_obj.min_len, other.task_obj.max_len) == (4, 12)


@pytest.mark.slow
def test_the_lesson_shows_the_length_sliders_only_for_reversal_and_copy() -> None:
    view = Seq2SeqLesson(Seq2SeqState())
    shortest, longest = view.length_sliders()
    assert (shortest.start, shortest.end, longest.start, longest.end) == (1, 15, 2, 20)
    assert shortest.value == 3 and longest.value == 10
    longest.value = 12
    assert view.state.max_len == 12 and view.state.task_obj.max_len == 12


# ------------------------------------------------------------------ the comparison
def test_the_setting_follows_the_lesson() -> None:
    state = Seq2SeqState(task="sorting", cell="lstm", hidden_size=20, min_len=4, max_len=7)
    setting = ComparisonSetting.of(state, steps=30)
    assert setting.task == "reversal"  # sorting draws digits: the comparison reverses letters
    assert (setting.min_len, setting.max_len, setting.cell, setting.hidden_size) == (
        4, 7, "lstm", 20,
    )  # fmt: skip
    assert setting.lengths == range(4, 15)
    text = setting.describe()
    assert "4-7 letters" in text and "LSTM cells of 20 units" in text and "30 steps" in text
    assert ComparisonSetting.of(Seq2SeqState(task="copy_var")).task == "copy_var"
    assert ComparisonSetting.of(Seq2SeqState()).steps == COMPARE_STEPS


def test_both_models_train_on_the_same_batches_and_the_lesson_model_is_untouched() -> None:
    state = Seq2SeqState(hidden_size=8, min_len=2, max_len=4)
    before = {k: v.copy() for k, v in state.model.params.items()}
    comparison = LengthComparison()
    assert comparison.begin(state, steps=6)
    plain, attention = comparison.trainers["init"], comparison.trainers["attention"]
    assert plain.model.wiring == "init" and attention.model.wiring == "attention"
    assert plain.model.hidden_size == attention.model.hidden_size == 8
    assert plain.task is not attention.task
    twin_a, twin_b = (
        type(plain.task)(**plain.task.config),
        type(attention.task)(**attention.task.config),
    )
    np.testing.assert_array_equal(twin_a.batch(5).src, twin_b.batch(5).src)
    assert comparison.train(steps=4) == 4 and comparison.step_count == 4
    assert plain.step_count == attention.step_count == 4
    assert comparison.train(steps=10) == 2 and comparison.finished  # never past its steps
    assert not comparison.running and comparison.train(steps=3) == 0
    for k, v in state.model.params.items():
        np.testing.assert_array_equal(v, before[k])
    assert state.trainer is not None and state.trainer.step_count == 0


def test_curves_cover_the_lengths_and_are_computed_once_a_step() -> None:
    comparison = LengthComparison()
    assert comparison.curves() == {} and "press Compare" in comparison.progress()
    assert comparison.begin(Seq2SeqState(hidden_size=8, min_len=2, max_len=3), steps=3)
    comparison.train(steps=1)
    curves = comparison.curves()
    assert set(curves) == {"init", "attention"}
    for curve in curves.values():
        assert curve.lengths.tolist() == [2, 3, 4, 5, 6]
        assert ((0 <= curve.exact_match) & (curve.exact_match <= 1)).all()
    assert comparison.curves() is curves  # the same step: not evaluated again
    text = comparison.progress()
    assert text.startswith("Paused: step 1 of 3.")
    assert "After 1 steps, exact match at length 3: plain" in text
    assert "; at length 4: plain" in text and text.endswith(".")
    comparison.train(steps=1)
    assert comparison.curves() is not curves


def test_a_setting_that_does_not_fit_keeps_the_comparison_shown() -> None:
    comparison = LengthComparison()
    assert comparison.begin(Seq2SeqState(hidden_size=8), steps=2)
    setting = comparison.setting
    bad = Seq2SeqState(hidden_size=8)
    bad.lr = -1.0  # the lesson refuses it too; the comparison says why it cannot start
    assert not comparison.begin(bad)
    assert comparison.message.startswith("Cannot compare: ") and "lr" in comparison.message
    assert comparison.setting is setting


# ------------------------------------------------------------------ the section
@pytest.mark.slow
def test_compare_trains_in_slices_draws_the_plot_and_pauses() -> None:
    view = Seq2SeqLesson(Seq2SeqState(hidden_size=8, min_len=2, max_len=4))
    section = view.by_length
    section.steps = 40
    view.session.start()  # the lesson's own training (no event loop here: only the flag)
    section.compare()
    assert not view.state.running and section.state.running  # one training at a time
    assert section.state.setting is not None and section.state.setting.max_len == 4
    assert "GRU cells of 8 units" in section.setting.object
    assert section.band.left == 1.5 and section.band.right == 4.5
    assert section.label.text == "trained on 2-4"
    assert (section.fig.x_range.start, section.fig.x_range.end) == (1.5, 8.5)
    section.session.budget_s = 1e-3  # a few steps a slice (0.25 s ran all 40 on a fast machine)
    section.session.train_slice()
    assert section.state.step_count >= 1
    section.session.pause()  # redraws from the models as they are now
    data = section.source.data
    assert list(data["length"]) == [2, 3, 4, 5, 6, 7, 8]
    assert len(data["init"]) == len(data["attention"]) == len(data["attention_tok"]) == 7
    assert f"after {section.state.step_count} steps" in section.fig.title.text
    assert section.progress.object.startswith("Paused: step")
    steps = section.state.step_count
    section.session.train_slice()  # paused: nothing happens
    assert section.state.step_count == steps
    view.session.start()  # the lesson's Train pauses the comparison
    assert not section.state.running
    section.resume()  # Continue: the same models train on, the lesson's training pauses
    assert section.state.running and not view.state.running
    section.session.train_slice()
    assert section.state.step_count > steps
    section.state.train(steps=40)
    assert section.state.finished and not section.state.running
    section.resume()  # done: nothing to continue
    assert not section.state.running


@pytest.mark.slow
def test_a_comparison_runs_to_its_end_on_the_event_loop() -> None:
    view = Seq2SeqLesson(Seq2SeqState(hidden_size=6, min_len=2, max_len=3, batch_size=4))
    section = view.by_length

    async def run() -> None:
        assert section.state.begin(view.state, steps=12)
        section.session.start()
        while section.state.running:
            await asyncio.sleep(0.01)
        await section.session.loop_task

    asyncio.run(run())
    assert section.state.finished and section.state.step_count == 12
    assert len(section.source.data["length"]) == 5  # drawn when it stopped by itself
    assert section.progress.object.startswith("Done: step 12 of 12.")
