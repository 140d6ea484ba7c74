"""The Recursive networks lesson's state, without a browser: both models train step for step on
the same examples, a typed expression or phrase is explained node by node, and what cannot be
read is a message naming it."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.tasks.binary_tree import parse
from pyplay.tasks.trees import SentimentTrees
from pyplay.ui.lessons.recursive.state import EXAMPLES, RecursiveLessonState


def test_both_models_train_on_the_same_examples() -> None:
    state = RecursiveLessonState(hidden_size=8)
    records = state.train(steps=3)
    assert [r.step for r in records] == [1, 2, 3]
    assert state.chain_trainer is not None and state.chain_trainer.step_count == 3
    assert len(state.history["chain"]) == 3 and np.isfinite(state.history["chain"]).all()
    assert "root accuracy" in state.status and "chain LSTM loss" in state.status
    # the same seed draws the same trees for both: the chain task's texts are the trees'
    tree_task, chain_task = state._make_task(), state._make_task("chain")
    ids = {i: t for t, i in chain_task.vocab.items()}
    tree, batch = tree_task.trees(1)[0], chain_task.batch(1)
    n = int(batch.lengths[0])
    assert [ids[int(i)] for i in batch.inputs[0, :n]] == tree.tokens()


def test_a_typed_expression_is_explained_node_by_node() -> None:
    state = RecursiveLessonState(hidden_size=8)
    view = state.explain(EXAMPLES["expressions"])
    assert view is not None
    assert view.bracketed == "(((3 - 4) * 2) + 7)"
    N = len(view.text)
    assert N == 7 and view.vectors.shape == (N, 8) and view.grads.shape == (N, 8)
    assert view.target[-1] == 5  # (3 - 4) * 2 + 7 = 5
    assert view.parent[-1] == -1 and (view.parent[:-1] >= 0).all()
    assert view.y[-1] == view.y.max() and set(view.x[view.y == 0]) == {0.0, 1.0, 2.0, 3.0}
    assert np.abs(view.grads).sum() > 0 and view.chain is not None
    state.compare_chain = False
    assert state.explain("2*3").chain is None  # type: ignore[union-attr]


def test_what_cannot_be_read_is_a_message_naming_it() -> None:
    state = RecursiveLessonState(hidden_size=8)
    assert state.explain("2+") is None
    assert "Cannot read '2+'" in state.message and "a digit or '('" in state.message
    state.task = "sentiment"
    assert state.explain("((not fantastic) movie)") is None
    assert "['fantastic'] are not in the lesson's vocabulary" in state.message
    view = state.explain(EXAMPLES["sentiment"])
    assert view is not None and view.target[-1] == 0  # not very good: negative


def test_typed_phrases_are_labelled_by_the_same_rules_as_the_generated_ones() -> None:
    label = SentimentTrees.label
    assert label(parse("((not good) movie)")).label == 0
    assert label(parse("((very bad) plot)")).label == 0
    assert label(parse("((good movie) (but (dull plot)))")).label == 0
    assert label(parse("((good movie) (and (dull plot)))")).label == 1
    assert label(parse("((good movie) (and (nice cast)))")).label == 2


def test_a_new_learning_rate_reaches_both_models_without_losing_progress() -> None:
    state = RecursiveLessonState(hidden_size=8)
    state.train(steps=2)
    state.lr = 0.003
    assert state.trainer is not None and state.chain_trainer is not None
    assert state.trainer.optimizer.lr == 0.003 == state.chain_trainer.optimizer.lr
    assert state.chain_trainer.step_count == 2


@pytest.mark.slow
def test_another_task_shows_its_example_read_by_both_new_models() -> None:
    # the page's view explains the new task's example as soon as the new models exist: the
    # chain LSTM beside it must be the new task's too (it read 'not' with the digits' vocabulary)
    pytest.importorskip("panel")
    from pyplay.ui.lessons.recursive.view import RecursiveLesson

    view = RecursiveLesson()
    view.panel()
    view.state.task = "sentiment"
    assert view.source_box.value == EXAMPLES["sentiment"]
    assert view.source_box.name == "Your phrase"
    answer = view.answer.object
    assert answer.startswith("read as     : ((not (very good)) movie)")
    assert "true class  : 0" in answer and "chain LSTM  :" in answer
