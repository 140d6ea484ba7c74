"""The "Soft and hard attention" lesson's state and view, without a browser: both models train
step for step on the same batches, the hard one with or without its baseline; the variance of
its gradient estimate is measured on a fixed batch as it trains; an example shows both models'
weights and the drawn position; files keep both models; the script trains both."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("param")

from pyplay.ui.export import as_code
from pyplay.ui.lessons.glimpse.figures import symbol_names
from pyplay.ui.lessons.glimpse.state import VARIANCE_EVERY, GlimpseLessonState
from scripts import run_script


def test_both_models_train_on_the_same_batches() -> None:
    state = GlimpseLessonState(hidden_size=8)
    records = state.train(steps=3)
    assert [r.step for r in records] == [1, 2, 3]
    soft = state.soft_trainer
    assert soft is not None and soft.step_count == 3 and soft.model.attention == "soft"
    assert state.model is not None and state.model.attention == "hard"
    assert {len(v) for v in state.history.values()} == {3}
    assert np.isfinite(state.history["soft"]).all()
    assert "hard loss" in state.status and "soft loss" in state.status
    a, b = state.trainer.task.batch(4), soft.task.batch(4)  # type: ignore[union-attr]
    np.testing.assert_array_equal(a.inputs, b.inputs)  # the two tasks draw in step
    np.testing.assert_array_equal(a.targets, b.targets)


def test_the_variance_is_measured_every_few_steps_and_the_baseline_lowers_it() -> None:
    state = GlimpseLessonState()
    assert state.spread["step"] == [0] and state.spread["b"] == [0.0]  # measured at the start
    state.train(steps=3 * VARIANCE_EVERY)
    steps = [0, VARIANCE_EVERY, 2 * VARIANCE_EVERY, 3 * VARIANCE_EVERY]
    assert state.spread["step"] == steps
    assert state.spread["b"][1] > 1.0  # the running mean of losses near ln 8
    # early on, with b near the mean loss, the estimate varies far less than with b = 0
    assert state.spread["baseline"][1] < 0.2 * state.spread["plain"][1], state.spread


@pytest.mark.slow
def test_measuring_and_looking_never_change_the_training() -> None:
    looked, plain = GlimpseLessonState(seed=2), GlimpseLessonState(seed=2)
    for _ in range(3):
        looked.example(1)
        looked.train(steps=VARIANCE_EVERY)
        plain.train(steps=VARIANCE_EVERY)
    assert looked.history == plain.history


def test_the_baseline_switch_applies_to_the_current_model() -> None:
    state = GlimpseLessonState(hidden_size=8)
    state.train(steps=5)
    trainer, b = state.trainer, state.trainer.objective.baseline  # type: ignore[union-attr]
    state.baseline = False
    assert state.trainer is trainer and trainer.objective.use_baseline is False  # type: ignore
    assert trainer.objective.baseline == b and trainer.step_count == 5  # type: ignore
    assert "b = 0" in state.message
    state.lr = 0.02  # a new trainer for both, each keeping its steps; the hard one its b
    new = state.trainer
    assert new is not trainer and new.step_count == 5  # type: ignore[union-attr]
    assert new.objective.baseline == b and new.objective.use_baseline is False  # type: ignore
    assert state.soft_trainer.step_count == 5  # type: ignore[union-attr]
    assert state.soft_trainer.optimizer.lr == 0.02  # type: ignore[union-attr]


@pytest.mark.slow
def test_an_example_shows_both_weights_and_the_drawn_position() -> None:
    state = GlimpseLessonState(seq_len=6, n_symbols=4)
    view = state.example(3)
    assert view is not None
    assert view.symbols.shape == (6,) and view.soft_p.shape == view.hard_p.shape == (6,)
    assert np.isclose(view.soft_p.sum(), 1, atol=1e-5) and np.isclose(view.hard_p.sum(), 1)
    assert view.symbols[view.marked] == view.target and 0 <= view.sampled < 6
    state.train(steps=150)
    drawn = {state.example(3).sampled for _ in range(5)}  # type: ignore[union-attr]
    view = state.example(3)
    assert view is not None and view.hard_p[view.marked] > 0.9 and drawn == {view.marked}
    assert view.soft_answer == view.target == view.hard_answer


def test_symbols_are_letters_and_numbers_beyond_the_alphabet() -> None:
    assert symbol_names(np.array([0, 2, 25])) == ["A", "C", "Z"]
    assert symbol_names(np.array([3, 30])) == ["3", "30"]
    state = GlimpseLessonState(n_symbols=30, seq_len=4)  # beyond the slider, from code
    assert state.message_kind != "danger" and state.example(0) is not None


def test_a_file_keeps_both_models_and_the_baseline() -> None:
    state = GlimpseLessonState(hidden_size=8, baseline=False, seed=4)
    state.train(steps=25)
    data = state.save_bytes().read()
    other = GlimpseLessonState(seq_len=5)
    assert other.load_bytes(data), other.message
    assert (other.seq_len, other.hidden_size, other.baseline, other.seed) == (10, 8, False, 4)
    for mine, theirs in (
        (state.model, other.model),
        (state.soft_trainer.model, other.soft_trainer.model),
    ):  # type: ignore
        for name, value in mine.params.items():  # type: ignore[union-attr]
            np.testing.assert_array_equal(theirs.params[name], value)  # type: ignore
    b = state.trainer.objective.baseline  # type: ignore[union-attr]
    assert other.trainer.objective.baseline == b  # type: ignore[union-attr]
    assert other.trainer.objective.use_baseline is False  # type: ignore[union-attr]
    assert other.soft_trainer.step_count == 25  # type: ignore[union-attr]
    assert other.history == state.history and other.spread["step"] == [25]
    assert not GlimpseLessonState(hidden_size=16).load_bytes(b"not a file")


@pytest.mark.slow
def test_the_script_trains_both_models_as_the_page_does(tmp_path: Path) -> None:
    state = GlimpseLessonState(hidden_size=8, baseline=False, seed=1)
    code = as_code("glimpse", state, steps=4, log_every=1)
    assert "trainer.objective.use_baseline = False" in code
    out = run_script(code, tmp_path)
    state.train(steps=4)
    hard = [float(x) for x in re.findall(r"^step \d+: loss (\S+)$", out, flags=re.M)]
    soft = [float(x) for x in re.findall(r"^step \d+: soft loss (\S+)$", out, flags=re.M)]
    assert hard == pytest.approx(state.history["loss"], abs=2e-6)
    assert soft == pytest.approx(state.history["soft"], abs=2e-6)
    assert "soft attention on fresh examples:" in out


@pytest.mark.slow
def test_the_view_follows_training() -> None:
    from pyplay.ui.lessons.glimpse.view import GlimpseLesson

    view = GlimpseLesson(GlimpseLessonState(hidden_size=8))
    before = list(view.example_sources[0].data["weight"])
    assert len(before) == 2 * 10 and len(view.variance_source.data["step"]) == 0  # one point
    view.session.step()
    for _ in range(VARIANCE_EVERY):
        view._stream(view.state.train(steps=1))
    view.session.live_refresh()
    assert list(view.loss_source.data["soft"]) == view.state.history["soft"]
    assert list(view.accuracy_source.data["hard"]) == view.state.history["accuracy"]
    assert view.variance_source.data["step"].tolist() == [0, VARIANCE_EVERY]
    assert list(view.example_sources[0].data["weight"]) != before
    assert "soft answers" in view.answer.object and "hard drew" in view.answer.object
    view.example.value = 5
    assert view.example_fig.title.text.startswith("Attention over example 5")
    view.state.seq_len = 7  # a new model: the curves start again
    assert len(view.loss_source.data["step"]) == 0 and len(view.example_sources[0].data["x"]) == 14
