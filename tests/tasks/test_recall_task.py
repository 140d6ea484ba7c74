"""The associative recall task: shapes, the answer is the queried key's value, labels."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.tasks import AssociativeRecall, make_task


def test_the_target_is_the_value_of_the_queried_key() -> None:
    task = make_task("recall", n_pairs=5, n_keys=7, n_values=4, rng=0)
    assert isinstance(task, AssociativeRecall)
    batch, keys, values, which = task.draw(50)
    assert batch.inputs.shape == (50, 6, 7 + 4 + 1) and task.input_size == 12
    assert task.output_size == 4 and task.input_kind == "real"
    assert batch.mask[:, 5].all() and not batch.mask[:, :5].any()
    for b in range(50):
        assert len(set(keys[b])) == 5  # distinct keys
        query = int(batch.inputs[b, 5, :7].argmax())
        pair = list(keys[b]).index(query)
        assert pair == which[b] and batch.targets[b, 5] == values[b, pair]
        assert batch.inputs[b, 5, -1] == 1 and batch.inputs[b, :5, -1].sum() == 0
        np.testing.assert_array_equal(batch.inputs[b, :5, 7:11].argmax(axis=1), values[b])
    assert task.baseline_loss() == pytest.approx(np.log(4))


def test_labels_and_bad_arguments() -> None:
    task = AssociativeRecall(n_pairs=2, n_keys=3, n_values=5, rng=1)
    batch, keys, values, _ = task.draw(1)
    labels = task.labels(batch.inputs[0])
    assert labels[0] == f"{'ABC'[keys[0, 0]]}:{values[0, 0]}" and labels[-1].endswith("?")
    with pytest.raises(ValueError, match="n_pairs must be <= n_keys=3"):
        AssociativeRecall(n_pairs=4, n_keys=3)
    with pytest.raises(ValueError, match="n_values must be >= 2"):
        AssociativeRecall(n_values=1)
    with pytest.raises(TypeError, match="n_keys must be an integer"):
        AssociativeRecall(n_keys=2.5)
