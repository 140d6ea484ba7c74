"""The "Try this" experiments of every lesson, declared once in its LessonSpec: each sets up
what it says and, trained natively for its budget with its fixed seed, keeps its promise;
the "Start here" tab lists the course; the dynamic-networks default has something to learn."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

from pyplay.ui.lessons import COURSE, LESSONS, SPECS
from pyplay.ui.lessons.experiment import Experiment, set_up

WINDOW = 20  # the promise is checked on the mean loss of the last WINDOW steps

# every lesson's experiments, read from its spec (all slow: the test is marked so)
CASES = [
    pytest.param(spec.key, k, id=f"{spec.key}-{k}")
    for spec in LESSONS
    for k in range(len(spec.experiments))
]


class Outcome(NamedTuple):
    """What a trained experiment reached: the mean recent ``loss``, the ``baseline`` it is
    measured against (1.0 for absolute thresholds) and whether the promise holds."""

    loss: float
    baseline: float
    kept: bool


def outcome(state: Any, experiment: Experiment) -> Outcome:
    """Whether ``state``, trained, keeps ``experiment``'s promise."""
    losses = state.history["loss"][-WINDOW:]
    loss = float(np.mean(losses)) if losses else float("nan")
    baseline = 1.0
    if experiment.relative:
        baseline = float(state.task_obj.baseline_loss())
    kept = bool(np.isfinite(loss))
    if experiment.below is not None:
        kept = kept and loss < experiment.below * baseline
    if experiment.above is not None:
        kept = kept and loss > experiment.above * baseline
    return Outcome(loss, baseline, kept)


def promise(experiment: Experiment) -> str:
    """The promise in words, e.g. "loss below 0.2 x baseline after 300 steps"."""
    unit = " x baseline" if experiment.relative else ""
    parts = []
    if experiment.below is not None:
        parts.append(f"below {experiment.below:g}{unit}")
    if experiment.above is not None:
        parts.append(f"above {experiment.above:g}{unit}")
    return f"loss {' and '.join(parts)} after {experiment.steps:,} steps"


def test_every_top_level_lesson_has_two_to_four_experiments_and_is_in_the_course():
    for spec in LESSONS:
        if spec.parent is None:
            assert 2 <= len(spec.experiments) <= 4, spec.key
            assert spec.key in COURSE
    assert len(set(COURSE)) == len(COURSE)


@pytest.mark.slow
@pytest.mark.parametrize(("key", "index"), CASES)
def test_experiment_reaches_its_promise(key: str, index: int):
    spec = SPECS[key]
    experiment = spec.experiments[index]
    state = spec.state_class()(seed=5)  # set_up puts the seed back to its default
    state.lr = state.param["lr"].default * 3  # and every other setting
    set_up(state, tuple(spec.params), experiment)
    for name in spec.params:
        expected = experiment.settings.get(name, state.param[name].default)
        assert getattr(state, name) == expected, name
    assert len(state.history["loss"]) == 0  # a fresh model
    state.train(steps=experiment.steps)
    assert len(state.history["loss"]) == experiment.steps
    result = outcome(state, experiment)
    assert result.kept, (
        f"{experiment.label}: promised {promise(experiment)}, reached loss "
        f"{result.loss:.4g} (baseline {result.baseline:.4g})"
    )


def test_a_promise_that_does_not_hold_is_reported():
    spec = SPECS["dynamic"]
    state = spec.state_class()()
    never = Experiment("never", {}, 1, "nothing", below=0.0)
    set_up(state, tuple(spec.params), never)
    state.train(steps=1)
    assert not outcome(state, never).kept
    with pytest.raises(ValueError, match="promises nothing"):
        Experiment("x", {}, 1, "x")
    with pytest.raises(KeyError, match="not_a_setting"):
        set_up(state, tuple(spec.params), Experiment("x", {"not_a_setting": 1}, 1, "x", below=1))


def test_the_dynamic_networks_default_has_something_to_learn():
    state = SPECS["dynamic"].state_class()()
    state.train(steps=200)
    losses = np.asarray(state.history["loss"])
    assert losses[0] > 3e-3  # not the reference system itself (loss 0 from step 1)
    assert losses[-20:].mean() < 0.5 * losses[0]  # and it learns


def test_start_here_lists_the_course_without_building_a_lesson():
    import sys

    from pyplay.ui.landing import landing

    before = {m for m in sys.modules if m.startswith("pyplay.ui.lessons.")}
    opened: list[str] = []
    tab = landing(opened.append)
    after = {m for m in sys.modules if m.startswith("pyplay.ui.lessons.")}
    assert after == before  # no lesson's code imported for the landing
    buttons = [o for row in tab.objects[1:] for o in row.objects if hasattr(o, "clicks")]
    assert [b.name for b in buttons] == [f"Open {SPECS[k].title}" for k in COURSE]
    buttons[0]._process_events({"clicks": 1})
    assert opened == [SPECS[COURSE[0]].title]
