"""Feed-forward layers before the recurrent stack in the "Recurrent networks" lesson (issue 19,
the IDSIA lecture's input -> feed-forward -> recurrent -> output setup), without a browser:
the setting builds them, survives the page address, a saved file and "show as code" (whose
PyTorch twin, an ``nn.Sequential`` before the recurrent layer, matches), and bad values are
refused by name with the model kept."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from addresses import apply_query
from pyplay.ui.export import as_code
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson
from pyplay.ui.urlstate import to_query


def _state(**settings: object) -> LessonState:
    return LessonState(**{"hidden_size": 6, "seq_len": 5, "batch_size": 4, **settings})


@pytest.mark.slow
def test_the_setting_puts_tanh_layers_before_the_recurrent_ones() -> None:
    state = _state(feedforward_layers=2, cell="gru")
    model = state.model
    assert model.feedforward_layers == 2
    assert model.params["feedforward.2.weight"].shape == (6, 6)
    assert model.params["rnn.weight_ih_l0"].shape == (18, 6)  # the GRU reads the last layer
    assert "through 2 feed-forward tanh layer(s) first" in state.message
    assert state.train(steps=3) and np.isfinite(state.history["loss"]).all()
    assert SPECS["rnn"].params.count("feedforward_layers") == 1
    assert state.param.feedforward_layers.softbounds == (0, 3)
    view = RecurrentLesson(state)
    names = [getattr(w, "name", "") for w in view.controls()]
    assert "Feed-forward layers before" in names


def test_the_setting_round_trips_through_the_address_a_file_and_the_code() -> None:
    source = _state(feedforward_layers=2)
    query = to_query("rnn", source)
    assert "feedforward_layers=2" in query.split("&")
    target = _state()
    assert apply_query(query, {"rnn": target}) == ("rnn", [])
    assert target.feedforward_layers == 2 and target.model.config == source.model.config
    lesson, messages = apply_query("lesson=rnn&feedforward_layers=many", {"rnn": target})
    assert lesson == "rnn" and len(messages) == 1 and "feedforward_layers" in messages[0]
    assert target.feedforward_layers == 2  # a bad value changes nothing
    source.train(steps=2)
    loaded = _state()
    assert loaded.load_bytes(source.save_bytes().getvalue()), loaded.message
    assert loaded.feedforward_layers == 2
    for name, value in source.model.params.items():
        np.testing.assert_array_equal(loaded.model.params[name], value)
    code = as_code("rnn", source, steps=3, log_every=1)
    assert "feedforward_layers=2" in code
    assert "torch.nn.Sequential(torch.nn.Linear(" in code and "self.feedforward(" in code
    assert "feedforward" not in as_code("rnn", _state(), steps=3, log_every=1)
