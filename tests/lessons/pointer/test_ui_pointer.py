"""The Pointer networks lesson's state and view, without a browser: it trains on sorting and on the
convex hull, scores greedy decoding on fixed examples (exact match, per-step pointer accuracy),
shows one example's pointing weights, and settings that do not fit are a message."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.models.pointer import PointerNetwork
from pyplay.tasks.hull import convex_hull
from pyplay.ui.lessons.pointer.state import EXAMPLES, PointerLessonState


def test_it_trains_on_sorting_and_says_how_well_it_points() -> None:
    state = PointerLessonState(hidden_size=8)
    assert "Pointing uniformly: 1.535" in state.status  # E[n log n] / E[n], n in 3..6
    records = state.train(steps=3)
    assert [r.step for r in records] == [1, 2, 3] and len(state.history["loss"]) == 3
    assert "pointer accuracy (teacher forced)" in state.status
    assert isinstance(state.model, PointerNetwork) and state.model.vocab_size == 13


def test_a_sorting_example_is_its_digits_the_pointers_and_the_weights() -> None:
    state = PointerLessonState(hidden_size=8)
    decoded = state.decode()
    assert len(decoded) == EXAMPLES
    view = state.pointing(2, decoded)
    assert view is not None and view.values is not None and view.points is None
    n = len(view.values)
    assert 3 <= n <= 6 and view.inputs == [str(v) for v in view.values]
    assert view.target == np.argsort(view.values, kind="stable").tolist()
    assert sorted(view.predicted) == list(range(n))  # greedy never points twice
    assert view.weights.shape == (n, n)
    np.testing.assert_allclose(view.weights.sum(axis=1), 1.0, rtol=1e-5)
    # the weights are the model's softmax(u^i) with the decoder fed its own choices
    src = state._examples.src[2:3, :n]  # type: ignore[union-attr]
    probs, _ = state.model.forward(src, [n], [[-1, *view.predicted[:-1]]])  # type: ignore[union-attr]
    np.testing.assert_array_equal(view.weights, probs[0])
    assert state.pointing(10_000, decoded) is not None  # clipped to the last example


def test_a_hull_example_is_its_points_then_end() -> None:
    state = PointerLessonState(task="hull", hidden_size=8, min_len=5, max_len=8)
    assert state.model is not None and state.model.input_size == 3
    view = state.pointing(0)
    assert view is not None and view.points is not None and view.values is None
    n = len(view.points)
    assert 5 <= n <= 8 and view.inputs == [*map(str, range(n)), "END"]
    assert view.target == [*convex_hull(view.points), n]
    assert view.weights.shape == (len(view.predicted), n + 1)
    assert len(set(view.predicted)) == len(view.predicted)


def test_the_score_counts_whole_outputs_and_steps() -> None:
    state = PointerLessonState(task="hull", hidden_size=8)
    targets = [state.target(k) for k in range(EXAMPLES)]
    perfect = state.score(targets)
    assert perfect is not None and perfect.exact == 1.0 and perfect.pointer == 1.0
    wrong_first = [[t[1], t[0], *t[2:]] for t in targets]  # two steps wrong in every example
    score = state.score(wrong_first)
    steps = sum(len(t) for t in targets)
    assert score is not None and score.exact == 0.0
    assert score.pointer == pytest.approx((steps - 2 * EXAMPLES) / steps)
    short = state.score([t[:-1] for t in targets])  # stopped one step early
    assert short is not None and short.exact == 0.0
    assert short.pointer == pytest.approx((steps - EXAMPLES) / steps)


def test_settings_that_do_not_fit_are_a_message_and_the_model_stays() -> None:
    state = PointerLessonState(hidden_size=8)
    model = state.model
    state.min_len = 7
    assert state.message_kind == "danger" and state.model is model
    assert "fewest digits or points (7) must not be more than the most (6)" in state.message
    state.max_len = 9
    assert state.model is not model and state.message_kind == "info"
    view = state.pointing(0)
    assert view is not None and 7 <= len(view.inputs) <= 9


def test_a_new_learning_rate_keeps_the_model_and_its_steps() -> None:
    state = PointerLessonState(hidden_size=8)
    state.train(steps=2)
    model = state.model
    state.lr = 0.003
    assert state.model is model and state.trainer is not None
    assert state.trainer.optimizer.lr == 0.003 and state.trainer.step_count == 2


@pytest.mark.slow
def test_the_lesson_learns_to_sort() -> None:
    state = PointerLessonState()
    before = state.score()
    state.train(steps=300)
    after = state.score()
    assert before is not None and after is not None
    print(f"\n[pointer lesson] exact {after.exact:.2f}, pointer accuracy {after.pointer:.3f}")
    assert before.exact < 0.2
    assert after.exact >= 0.8 and after.pointer >= 0.85  # measured 0.87 and 0.922


@pytest.mark.slow
def test_the_view_draws_the_weights_and_the_hull() -> None:
    pytest.importorskip("panel")
    from pyplay.ui.lessons.pointer.view import PointerLesson

    view = PointerLesson(PointerLessonState(hidden_size=8))
    weights = view.map_source.data["weight"]
    n = len(view.state.pointing(0).inputs)
    assert len(weights) == n * n and not view.hull_pane.visible
    assert "exact match" in view.readout.object and "read out" in view.answer.object
    view.state.task = "hull"
    assert view.hull_pane.visible
    points = view.points_source.data
    ring = view.true_source.data["x"]
    assert len(points["x"]) == len(view.state.pointing(0).points)
    assert len(ring) >= 4 and ring[0] == ring[-1]  # a closed polygon
    view.example.value = 3
    assert view.map_fig.title.text.endswith("example 3")
    assert view.hull_fig.title.text.startswith("Example 3: predicted hull")
