"""Sampling text from a character model."""

from __future__ import annotations

import numpy as np
import pytest

from pyplay.models import SequenceModel
from pyplay.sampling import sample
from pyplay.tasks import make_task


@pytest.fixture(scope="module")
def char_model():
    task = make_task("charlm", seq_len=8, rng=0)
    model = SequenceModel.for_task(task, "lstm", hidden_size=12, rng=0)
    return model, task


def test_seeded_and_of_the_requested_length(char_model):
    model, task = char_model
    a = sample(model, task, "Alice", 40, 1.0, rng=3)
    b = sample(model, task, "Alice", 40, 1.0, rng=3)
    c = sample(model, task, "Alice", 40, 1.0, rng=4)
    assert a == b and a != c and len(a) == 40
    assert set(a) <= set(task.vocab)


def test_low_temperature_tends_to_greedy(char_model):
    model, task = char_model
    greedy = sample(model, task, "The ", 25, 0.0)
    cold = sample(model, task, "The ", 25, 1e-4, rng=11)
    assert cold == greedy
    # greedy decoding by hand: always the argmax of the next-character distribution
    ids = list(task.encode("The "))
    for _ in range(25):
        logits, _, _ = model.forward(np.array([ids]), training=False)
        ids.append(int(np.argmax(logits[0, -1])))
    assert task.decode(np.array(ids[4:])) == greedy


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"prompt": "Al€"}, ValueError, "'€'"),
        ({"prompt": ""}, ValueError, "prompt"),
        ({"temperature": -1.0}, ValueError, "temperature"),
        ({"length": 0}, ValueError, "length"),
    ],
)
def test_bad_arguments(char_model, kwargs, exc, words):
    model, task = char_model
    args = {"prompt": "Alice", "length": 5, "temperature": 1.0, **kwargs}
    with pytest.raises(exc, match=words):
        sample(model, task, **args)
