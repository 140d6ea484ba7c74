"""The textbook seq2seq sub-lesson without a browser: settings, training, the step list."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from pyplay.dynamic import book_form, textbook_trace
from pyplay.ui.textbook_seq2seq_state import TextbookSeq2SeqState, format_value
from pyplay.ui.textbook_seq2seq_view import TextbookSeq2SeqView, steps_text
from pyplay.ui.training import message_alert


def test_settings_rebuild_and_bad_values_are_messages() -> None:
    state = TextbookSeq2SeqState()
    assert state.model is not None and book_form(state.model) == "general"
    version = state.version
    state.form = "concat"
    assert state.version == version + 1 and book_form(state.model) == "concat"
    state.form = "context"
    assert book_form(state.model) == "context" and state.model.wiring == "context"
    state.train(steps=2)
    state.lr = 0.0
    assert state.message_kind == "danger" and "lr must be > 0" in state.message
    assert state.trainer is not None and state.trainer.step_count == 2
    state.hidden_size = 0
    assert "Not rebuilt" in state.message and state.version == version + 2


def test_a_train_step_advances() -> None:
    view = TextbookSeq2SeqView()
    assert view.state.trainer is not None and view.state.trainer.step_count == 0
    view.step()
    assert view.state.trainer.step_count == 1
    assert view.loss_source.data["step"] == [1] and view.state.status.startswith("Step 1: loss")
    view.reset()
    assert view.state.trainer.step_count == 0 and view.loss_source.data["step"] == []


@pytest.mark.parametrize("form", ["context", "dot", "general", "concat"])
def test_step_list_matches_the_model(form: str) -> None:
    view = TextbookSeq2SeqView(TextbookSeq2SeqState(form=form, hidden_size=8))
    view.state.train(steps=3)
    view.source_box.value = "abcd"
    view.explain()
    e = view.explanation
    assert e is not None and e.source == list("abcd")
    model = view.state.model
    ids = [3, 4, 5, 6]
    out = model.greedy(np.array([ids]), np.array([4]), max_length=8)[0]
    trace = textbook_trace(model, ids, out)
    assert [s.text for s in e.trace.steps] == [s.text for s in trace.steps]
    np.testing.assert_array_equal(e.trace.logits, trace.logits)
    assert e.max_difference < 1e-12  # the library's own forward pass, float64
    logits, weights, _ = model.forward(np.array([ids]), [4], [[1, *out]])
    np.testing.assert_allclose(e.trace.logits, logits[0], atol=1e-12)
    text = view.steps.object
    assert "a¹(4)" in text and "code : pyplay.seq2seq.EncoderDecoder" in text
    assert "a²(1)" in text and "a²(2) =" not in text  # only decoder step t = 1
    if e.trace.logits.shape[0] >= 2:
        view.step_slider.value = 2
        assert "a²(2) =" in view.steps.object and "a²(1) =" not in view.steps.object
    if form == "context":
        assert weights is None and e.weights is None and view.attn_source.data["x"] == []
        assert "c = a¹(4)" in text and "Context only" in view.state.message
    else:
        assert "A = [a¹(4) a¹(3) … a¹(1)]" in text and "α(1) = softmax(n(1))" in text
        U = e.trace.logits.shape[0]
        assert len(view.attn_source.data["weight"]) == U * 4
        np.testing.assert_allclose(view.attn_source.data["weight"], weights[0].reshape(-1))
    assert view.panel().get_root() is not None  # the Bokeh models build


def test_bad_typed_input_becomes_a_message_shown_escaped() -> None:
    view = TextbookSeq2SeqView()
    for typed, expected in (
        ("", "type a source sequence first"),
        ("abz", "'z', which is not in the vocabulary"),
        ("a" * 13, "at most 12 symbols, got 13"),
        ("<b>", "the source contains '<'"),
    ):
        view.source_box.value = typed
        view.explain()
        assert view.explanation is None
        assert view.state.message_kind == "warning" and expected in view.state.message
    shown = message_alert(view.state).object  # the alert escapes the message: never HTML
    assert "&lt;" in shown and "<" not in shown


def test_format_value_and_steps_text() -> None:
    assert format_value(np.array([0.5, -0.25])) == "[+0.500 −0.250]"
    assert format_value(np.arange(10.0)).endswith("…]  (10 values)")
    assert format_value(np.ones((3, 2))) == "3 × 2 matrix, row 1: [+1.000 +1.000]"
    state = TextbookSeq2SeqState(form="dot", hidden_size=6)
    e = state.explain("abc")
    assert e is not None
    text = steps_text(e, 1)
    assert text.startswith("source a b c") and "n(1) = Aᵀ a²(1)" in text
    assert "DotAttention._score" in text and "largest difference" in text
