"""The LSTM's variants in the "Recurrent networks" lesson, without a browser: the forget gate,
peephole and forget-bias settings reach the model, survive the page address and a saved file,
and the CEC-only gradient is drawn beside the true one for an LSTM only."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

import panel as pn

from addresses import apply_query
from pyplay.ui.export import as_code
from pyplay.ui.lessons import SPECS
from pyplay.ui.lessons.rnn.state import LessonState
from pyplay.ui.lessons.rnn.view import RecurrentLesson
from pyplay.ui.urlstate import to_query

H = 8
VARIANT = {"forget_gate": False, "peephole": True, "forget_bias": 2.5}


def _state(**settings: object) -> LessonState:
    return LessonState(**{"hidden_size": H, "seq_len": 6, "batch_size": 4, **settings})


def test_the_settings_reach_the_model() -> None:
    state = _state()
    rnn = state.model.rnn
    assert rnn.forget_gate and not rnn.peephole and rnn.forget_bias == 0.0  # torch's LSTM
    state.peephole = True
    assert state.model.rnn.peephole and "rnn.weight_cf_l0" in state.model.params
    state.forget_bias = 1.5
    plain = _state(peephole=True).model.params["rnn.bias_ih_l0"]
    shifted = state.model.params["rnn.bias_ih_l0"]
    np.testing.assert_allclose(shifted[H : 2 * H], plain[H : 2 * H] + 1.5, rtol=1e-6)
    np.testing.assert_array_equal(shifted[2 * H :], plain[2 * H :])
    state.forget_gate = False  # the 1997 LSTM: no f rows, the bias has no gate to go to
    model = state.model
    assert not model.rnn.forget_gate and model.rnn.forget_bias == 0.0
    assert model.params["rnn.weight_hh_l0"].shape == (3 * H, H)
    assert "rnn.weight_cf_l0" not in model.params
    assert state.train(steps=3) and np.isfinite(state.history["loss"]).all()
    assert set(state.inspect().internals["l0"]) == {"i", "g", "o", "c", "h"}
    state.cell = "gru"  # the LSTM settings stay, the GRU ignores them
    assert state.model.cell == "gru" and state.forget_gate is False
    assert "error" not in state.message.lower()


def test_the_settings_round_trip_through_the_page_address() -> None:
    source = _state(**VARIANT)
    query = to_query("rnn", source)
    for part in ("forget_gate=false", "peephole=true", "forget_bias=2.5"):
        assert part in query.split("&")
    target = _state()
    assert apply_query(query, {"rnn": target}) == ("rnn", [])
    assert {k: getattr(target, k) for k in VARIANT} == VARIANT
    assert target.model.config["forget_gate"] is False and target.model.config["peephole"]
    assert SPECS["rnn"].params.count("forget_bias") == 1  # declared once, on the parameter
    lesson, messages = apply_query("lesson=rnn&forget_bias=lots", {"rnn": target})
    assert lesson == "rnn" and len(messages) == 1 and "forget_bias" in messages[0]
    assert target.forget_bias == 2.5  # a bad value changes nothing


def test_the_settings_round_trip_through_a_saved_model_file() -> None:
    source = _state(**{**VARIANT, "forget_gate": True})
    source.train(steps=2)
    data = source.save_bytes().getvalue()
    target = _state()
    assert target.load_bytes(data), target.message
    assert {k: getattr(target, k) for k in VARIANT} == {**VARIANT, "forget_gate": True}
    assert target.model.config == source.model.config
    for name, value in source.model.params.items():
        np.testing.assert_array_equal(target.model.params[name], value)
    no_gate = _state(forget_gate=False)
    assert target.load_bytes(no_gate.save_bytes().getvalue()), target.message
    assert target.forget_gate is False and target.model.config["forget_gate"] is False


def test_show_as_code_builds_the_same_variant() -> None:
    state = _state(forget_gate=False, peephole=True)
    code = as_code("rnn", state, steps=5, log_every=5)
    assert "forget_gate=False" in code and "peephole=True" in code
    assert "no PyTorch twin" in code  # torch's nn.LSTM has neither
    assert "forget_bias" not in code  # the default is not written


@pytest.mark.slow
def test_the_cec_gradient_is_drawn_beside_the_true_one_for_an_lstm_only() -> None:
    state = _state(seq_len=12)
    pair = state.gradient_pair()
    assert pair is not None and pair.full.shape == pair.cec.shape == (12,)
    assert -1.0 <= pair.cosine <= 1.0 and pair.ratio > 0
    assert not np.allclose(pair.full, pair.cec)  # the cut paths carried gradient
    view = RecurrentLesson(state)
    view.panel()
    assert view.cec.panel.visible
    np.testing.assert_allclose(view.cec.source.data["cec"], pair.cec)
    assert "cosine" in view.cec.line.object
    state.cell = "rnn"
    assert state.gradient_pair() is None and not view.cec.panel.visible


@pytest.mark.slow
def test_the_lstm_controls_follow_the_cell_and_the_forget_gate() -> None:
    state = _state()
    view = RecurrentLesson(state)
    column = next(w for w in view.controls() if getattr(w, "name", "") == "LSTM variant")
    forget, peephole, typed = column.objects
    (bias,) = typed.select(pn.widgets.TextInput)  # the bias's number box (a note under it)
    assert column.visible and not bias.disabled
    forget.value = False
    assert state.forget_gate is False and bias.disabled
    bias_before = state.forget_bias
    bias.value = "3"
    assert state.forget_bias == 3.0 != bias_before
    peephole.value = True
    assert state.model.rnn.peephole
    state.cell = "gru"
    assert not column.visible
