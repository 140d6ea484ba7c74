"""Toy tasks: shapes, determinism, the semantics of every target, baselines, bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.tasks import TASKS, CharLM, NumberSeries, make_task
from pyplay.tasks.parentheses import is_balanced
from pyplay.tasks.series import parse_numbers

BUILTIN = [name for name in TASKS if name != "series"]


@pytest.mark.parametrize("name", BUILTIN)
def test_batches_have_the_declared_shapes(name):
    task = make_task(name, rng=0)
    b = task.batch(5)
    B, T = b.mask.shape
    assert B == 5 and b.mask.dtype == bool and b.mask.any()
    if task.input_kind == "tokens":
        assert b.inputs.shape == (B, T) and b.inputs.dtype == np.int64
        assert b.inputs.min() >= 0 and b.inputs.max() < task.input_size
    else:
        assert b.inputs.shape == (B, T, task.input_size)
    if task.output_kind == "classes":
        assert b.targets.shape == (B, T) and b.targets[b.mask].max() < task.output_size
    else:
        assert b.targets.shape == (B, T, task.output_size)
    assert task.baseline_loss() > 0 and task.describe()


@pytest.mark.parametrize("name", BUILTIN)
def test_seeded_and_deterministic(name):
    a, b, c = make_task(name, rng=7), make_task(name, rng=7), make_task(name, rng=8)
    x, y, z = a.batch(4), b.batch(4), c.batch(4)
    np.testing.assert_array_equal(x.inputs, y.inputs)
    np.testing.assert_array_equal(x.targets, y.targets)
    assert not np.array_equal(x.inputs, z.inputs)


def test_adding_targets_are_the_marked_sum_and_baseline_is_one_sixth():
    task = make_task("adding", seq_len=30, rng=0)
    b = task.batch(4000)
    marks = b.inputs[..., 1]
    assert (marks.sum(axis=1) == 2).all()
    assert (marks[:, :15].sum(axis=1) == 1).all()
    expected = (b.inputs[..., 0] * marks).sum(axis=1)
    np.testing.assert_allclose(b.targets[:, -1, 0], expected)
    assert b.mask[:, -1].all() and not b.mask[:, :-1].any()
    monte_carlo = np.mean((b.targets[:, -1, 0] - 1.0) ** 2)
    assert monte_carlo == pytest.approx(task.baseline_loss(), rel=0.05)


def test_copy_targets_are_the_symbols_after_the_marker():
    task = make_task("copy", n_symbols=5, seq_len=4, delay=3, rng=0)
    b = task.batch(6)
    assert b.inputs.shape[1] == 2 * 4 + 3
    np.testing.assert_array_equal(b.targets[:, 7:], b.inputs[:, :4])
    assert (b.inputs[:, 6] == 6).all() and b.mask[:, 7:].all() and not b.mask[:, :7].any()


def test_parentheses_labels_agree_with_an_independent_checker():
    task = make_task("parentheses", max_len=12, rng=0)
    b = task.batch(400)
    assert b.lengths is not None
    labels = []
    for k in range(400):
        n = int(b.lengths[k])
        seq = b.inputs[k, :n]
        assert (b.inputs[k, n:] == 0).all() and (seq != 0).all() and n % 2 == 0
        assert (seq == 1).sum() == (seq == 2).sum()  # counting alone cannot decide
        assert b.mask[k, n - 1] and b.mask[k].sum() == 1
        labels.append(b.targets[k, n - 1])
        assert labels[-1] == int(is_balanced(seq))
    assert 0.4 < np.mean(labels) < 0.6


def test_parity_and_sine_targets():
    b = make_task("parity", seq_len=9, rng=0).batch(5)
    np.testing.assert_array_equal(b.targets, np.cumsum(b.inputs, axis=1) % 2)
    s = make_task("sine", seq_len=12, rng=0).batch(3)
    np.testing.assert_array_equal(s.inputs[:, 1:, 0], s.targets[:, :-1, 0])
    last = make_task("parity", seq_len=9, running=False, rng=0).batch(2)
    assert last.mask[:, -1].all() and not last.mask[:, :-1].any()


def test_system_targets_follow_the_plant():
    task = make_task("system", seq_len=10, rng=0)
    b = task.batch(3)
    u, y = b.inputs[..., 0], b.inputs[..., 1]
    np.testing.assert_allclose(b.targets[..., 0], y / (1 + y**2) + u**3)


def test_charlm_round_trip_and_stream_continuity():
    task = make_task("charlm", seq_len=8, rng=0)
    assert "Alice" in task.text and task.decode(task.encode("Alice")) == "Alice"
    b = task.batch(3)
    np.testing.assert_array_equal(b.inputs[:, 1:], b.targets[:, :-1])
    stream = task.stream(2)
    one, two = next(stream), next(stream)
    np.testing.assert_array_equal(one.targets[:, -1], two.inputs[:, 0])
    probs = np.bincount(task.ids.astype(np.intp)) / task.ids.size
    assert task.baseline_loss() == pytest.approx(
        -(probs[probs > 0] * np.log(probs[probs > 0])).sum()
    )
    with pytest.raises(ValueError, match="'€'"):
        task.encode("€")


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"text": "ab"}, ValueError, "at least"),
        ({"text": 42}, TypeError, "text"),
        ({"text": "a" * 100}, ValueError, "2 distinct"),
        ({"text": "".join(chr(0x4E00 + k) for k in range(300))}, ValueError, "256"),
    ],
)
def test_charlm_validates_user_text(kwargs, exc, words):
    with pytest.raises(exc, match=words):
        CharLM(seq_len=8, **kwargs)


def test_number_series_from_text():
    values = parse_numbers("value\n1.5\n2.5, 3\n\n4 5 6\n7\n8\n9\n10\n")
    np.testing.assert_allclose(values, [1.5, 2.5, 3, 4, 5, 6, 7, 8, 9, 10])
    task = NumberSeries(values, seq_len=4, rng=0)
    b = task.batch(2)
    assert b.inputs.shape == (2, 4, 1)
    np.testing.assert_allclose(task.series.mean(), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="line 3"):
        parse_numbers("1\n2\nthree\n")
    with pytest.raises(ValueError, match="between"):
        NumberSeries([1.0, 2.0], seq_len=4)
    with pytest.raises(ValueError, match="equal"):
        NumberSeries(np.ones(10), seq_len=4)


@pytest.mark.parametrize(
    ("name", "kwargs", "exc", "words"),
    [
        ("sorting", {}, ValueError, "task must be one of"),
        ("adding", {"seq_len": 1}, ValueError, "seq_len"),
        ("adding", {"seq_len": 2.5}, TypeError, "seq_len"),
        ("copy", {"delay": 0}, ValueError, "delay"),
        ("adding", {"colour": 1}, TypeError, "accepts"),
        ("parity", {"rng": "x"}, TypeError, "rng"),
    ],
)
def test_bad_task_arguments(name, kwargs, exc, words):
    with pytest.raises(exc, match=words):
        make_task(name, **kwargs)
