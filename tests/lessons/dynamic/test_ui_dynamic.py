"""The "Dynamic networks" lesson without a browser: the book's examples as presets, the
palette, running, training, the vanishing-gradient demonstration; errors become messages and
keep what was there (the "Time series" lesson's NARX: tests/lessons/timeseries/)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pyplay.ui.lessons.dynamic.lddn_gradient import VanishingGradientState
from pyplay.ui.lessons.dynamic.state import LDDNLessonState
from pyplay.ui.lessons.dynamic.view import DynamicLesson


def test_presets_reproduce_the_books_examples() -> None:
    s = LDDNLessonState(signal="impulse", steps=6)
    run = s.run()
    assert run is not None
    np.testing.assert_allclose(run.out[:, 0], [1 / 3, 1 / 3, 1 / 3, 0, 0, 0], rtol=0, atol=1e-15)
    s.preset = "first order"
    s.signal = "step"
    run = s.run()
    assert run is not None  # a(t) = a(t-1)/2 + p(t)/2 on a step: 1 - 2^-t
    np.testing.assert_allclose(run.out[:, 0], 1 - 0.5 ** np.arange(1, 7), rtol=0, atol=1e-15)
    s.preset = "impulse response"
    s.signal = "impulse"
    run = s.run()
    assert run is not None  # a(t) = 0.5^(t-1)
    np.testing.assert_allclose(run.out[:, 0], 0.5 ** np.arange(6), rtol=0, atol=1e-15)
    assert s.equations() == ["n¹(t) = 1 p¹(t) + 0.5 a¹(t−1)", "a¹(t) = purelin(n¹(t))"]


def test_typed_input_and_a_bad_one_keeps_the_text() -> None:
    s = LDDNLessonState(signal="typed", typed="3, 0, 0, 0")
    run = s.run()
    assert run is not None
    np.testing.assert_allclose(run.out[:, 0], [1, 1, 1, 0])
    s.typed = "3, zero"
    assert s.run() is None
    assert s.message_kind == "danger" and "'zero' is not a number" in s.message
    assert s.typed == "3, zero"


def test_palette_builds_a_recurrent_network_and_keeps_weights() -> None:
    s = LDDNLessonState(preset="tdnn")
    iw = s.net.params["IW1,1"].copy()
    assert s.add_layer(2, "tansig")
    assert len(s.net.spec.layers) == 3 and s.net.spec.outputs == (3,)
    np.testing.assert_array_equal(s.net.params["IW1,1"], iw)  # kept across the rebuild
    assert s.connect("LW", 3, 2, "0") and s.connect("LW", 1, 3, "1, 2")
    assert "LW¹˒³(2) a³(t−2)" in s.equations()[0]
    assert any(e.feedback for e in s.diagram().edges)
    version = s.version
    assert not s.connect("LW", 3, 3, "0")  # a zero-delay loop
    assert "zero-delay cycle" in s.message and s.version == version
    assert not s.connect("XW", 1, 1, "0") and "kind must be" in s.message
    assert not s.connect("LW", 1, 1, "one") and "whole numbers" in s.message
    assert not s.add_layer(1, "relu") and "transfer must be one of" in s.message
    assert s.connect("LW", 1, 3, "")  # removes it
    assert "a³" not in s.equations()[0]
    assert s.remove_last_layer() and len(s.net.spec.layers) == 2
    s.preset = "moving average"
    assert not s.remove_last_layer() and "at least one layer" in s.message


def test_description_is_json_data_and_errors_keep_the_network() -> None:
    s = LDDNLessonState()
    before = s.description
    assert not s.apply_description("{'inputs': [1]}")  # not JSON (Python literal)
    assert "not valid JSON" in s.message and s.description == before
    assert not s.apply_description(json.dumps({"inputs": [1], "layers": [{"size": 0}]}))
    assert "layers[0].size" in s.message
    data = json.loads(before)
    data["layers"][0]["transfer"] = "tansig"
    assert s.apply_description(json.dumps(data))
    assert s.net.spec.layers[0].transfer == "tansig"
    np.testing.assert_allclose(s.net.params["IW1,1"][:, 0, 0], [1 / 3] * 3)  # weights kept


@pytest.mark.slow
def test_training_learns_the_moving_average() -> None:
    s = LDDNLessonState(preset="tdnn", system="moving average", lr=0.01, seed=0)
    records = s.train(steps=400)
    assert len(records) == 400 and s.history["step"][-1] == 400
    assert records[-1].loss < 0.02 * records[0].loss
    run = s.run()
    assert run is not None and run.target is not None
    assert np.max(np.abs(run.out[:, 0] - run.target)) < 0.1
    assert "Step 400: mean squared error" in s.status


def test_divergence_is_undone_and_untrainable_nets_say_why() -> None:
    s = LDDNLessonState(preset="first order", system="moving average", lr=1e6)  # a(40) overflows
    s.running = True
    records = s.train(steps=50)
    assert 0 < len(records) < 50 and not s.running
    assert s.message_kind == "danger" and "diverged" in s.message
    assert all(np.all(np.isfinite(v)) for v in s.net.params.values())
    before = {k: v.copy() for k, v in s.net.params.items()}
    s.lr = -1.0
    s.train(steps=1)
    assert s.message_kind == "danger" and "lr" in s.message
    s.lr = 0.01
    s.preset = "moving average"
    s.apply_description(json.dumps({**json.loads(s.description), "inputs": [2]}))
    assert s.train(steps=1) == [] and "one-input, one-output" in s.message
    assert set(before) == {"IW1,1", "LW1,1"}


def test_vanishing_gradient_is_lw_to_the_power() -> None:
    g = VanishingGradientState(lw=0.5, iw=1.0, steps=10)
    v = g.view()
    np.testing.assert_allclose(v.grad, 0.5 ** (10 - np.arange(1, 11)), rtol=1e-15)
    np.testing.assert_allclose(v.grad, v.theory, rtol=1e-15)
    np.testing.assert_allclose(v.a, 0.5 ** np.arange(10), rtol=1e-15)
    assert v.ratio == pytest.approx(0.5)
    g.lw = 1.2
    assert g.view().ratio == pytest.approx(1.2)  # exploding
    g.param.update(lw=0.9, transfer="tansig", signal="step")
    v = g.view()
    assert v.ratio < 0.9 * 0.5  # saturated tansig forgets faster than lw alone
    assert g.equation() == "a(t) = tansig(0.9 a(t−1) + 1 p(t))"


@pytest.mark.slow
def test_dynamic_lesson_view_refreshes() -> None:
    lesson = DynamicLesson()
    lesson.panel()
    assert "0.3333 p¹(t−2)" in lesson.equations.object
    assert len(lesson.run_source.data["t"]) == lesson.state.steps
    lesson.session.step()
    assert len(lesson.loss_source.data["step"]) == 1
    lesson.state.preset = "elman"
    assert lesson.loss_source.data["step"] == []
    assert len(lesson.diagram_sources.arcs.data["x0"]) == 1  # the Elman feedback
    lesson.gradient.lw = 0.8
    assert "0.800" in lesson.grad_text.object


@pytest.mark.slow  # builds a lesson's view: 1-2 s
def test_palette_numbers_refuse_bad_text_with_a_note_and_keep_the_last_good_value() -> None:
    import panel as pn

    from pyplay.ui.text import Text

    lesson = DynamicLesson()
    page = lesson.panel()
    boxes = {b.name: b for b in page.select(pn.widgets.TextInput)}
    size, to = boxes["Size S"], boxes["to layer m"]
    buttons = {b.name: b for b in page.select(pn.widgets.Button)}

    def note() -> str:  # the notes shown under the palette's boxes
        return " ".join(t.object for t in page.select(Text) if "pyplay-number-note" in
                        t.css_classes and t.object)  # fmt: skip

    layers = len(lesson.state.net.spec.layers)
    size.value = "three"  # a Bokeh number input dropped this without a word
    assert note() == "Size S: expected an integer from 1 to 64; got 'three'. Kept 1."
    assert size.value == "1"  # the box shows the value kept
    size.value = "65"
    assert "got 65. Kept 1." in note() and lesson.palette_numbers.size == 1
    size.value = "3"
    assert note() == "" and lesson.palette_numbers.size == 3
    buttons["Add layer"].clicks += 1
    assert len(lesson.state.net.spec.layers) == layers + 1
    assert lesson.state.net.spec.layers[-1].size == 3  # what was typed, not a default
    to.value = "0"
    assert "to layer m: expected an integer from 1 to 64; got 0. Kept 1." == note()
    assert lesson.palette_numbers.to == 1
