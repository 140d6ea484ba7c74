"""The textbook seq2seq sub-lesson without a browser: settings, training, the step list, its
model files (export bar), its sub-tab in the dynamic lesson and its embed widget."""

from __future__ import annotations

import io

import numpy as np
import pytest

from paths import DATA

pytest.importorskip("panel")

import panel as pn

from pyplay.io import load_model, save_model
from pyplay.models.seq2seq import EncoderDecoder
from pyplay.models.textbook import TextbookSeq2Seq, textbook_seq2seq, textbook_trace
from pyplay.ui.embed import widget_view
from pyplay.ui.lessons.dynamic.state import LDDNLessonState
from pyplay.ui.lessons.dynamic.view import DynamicLesson
from pyplay.ui.lessons.textbook.state import TextbookSeq2SeqState, format_value
from pyplay.ui.lessons.textbook.view import TextbookSeq2SeqView, steps_text
from pyplay.ui.training import message_alert


def test_settings_rebuild_and_bad_values_are_messages() -> None:
    state = TextbookSeq2SeqState()
    assert state.model is not None and state.model.form == "general"
    version = state.version
    state.form = "concat"
    assert state.version == version + 1 and state.model.form == "concat"
    state.form = "context"
    assert state.model.form == "context" and state.model.context_key == "LW2,1"
    state.train(steps=2)
    state.lr = 0.0
    assert state.message_kind == "danger" and "lr must be > 0" in state.message
    assert state.trainer is not None and state.trainer.step_count == 2
    state.hidden_size = 0
    assert "Not rebuilt" in state.message and state.version == version + 2
    state.lr, state.hidden_size = 0.01, 8
    state.D = 3  # the delay line's length is a setting
    assert state.model.D == 3 and state.version == version + 4


def test_a_train_step_advances() -> None:
    view = TextbookSeq2SeqView()
    assert view.state.trainer is not None and view.state.trainer.step_count == 0
    view.session.step()
    assert view.state.trainer.step_count == 1
    assert view.loss_source.data["step"] == [1] and view.state.status.startswith("Step 1: loss")
    view.session.reset()
    assert view.state.trainer.step_count == 0 and view.loss_source.data["step"] == []


@pytest.mark.slow
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
    assert "a¹(4)" in text and "code : pyplay.models.textbook.seq2seq.TextbookSeq2Seq" in text
    assert "a²(5) =" in text and "a²(6) =" not in text  # only decoder step 1, book time T+1
    if e.trace.logits.shape[0] >= 2:
        view.step_slider.value = 2
        assert "a²(6) =" in view.steps.object and "a²(5) =" not in view.steps.object
    if form == "context":
        assert weights is None and e.weights is None and view.attn_source.data["x"] == []
        assert "LW²˒¹ a¹(4)" in text and "Context only" in view.state.message
    else:
        assert "A¹(4) = [a¹(4) a¹(3) a¹(2) … 0]   (6.8, TDL_hstack, D = 8" in text
        softmax = "a⁵(5) = softmax([N⁵(5)]ᵀ)" if form == "concat" else "a⁴(5) = softmax(n⁴(5))"
        assert softmax in text
        U = e.trace.logits.shape[0]
        assert len(view.attn_source.data["weight"]) == U * 4
        np.testing.assert_allclose(view.attn_source.data["weight"], weights[0].reshape(-1))
    assert view.panel().get_root() is not None  # the Bokeh models build


@pytest.mark.slow  # builds a lesson's view: 1-2 s
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
    assert text.startswith("source a b c") and "n⁴(4) = [A¹(3)]ᵀ a²(3)   (6.9)" in text
    assert "textbook.attention.attend" in text and "largest difference" in text
    assert "choices the book leaves open" in text and "W_a = L_a L_aᵀ + εI" in text


@pytest.mark.slow
def test_the_sub_tab_downloads_and_loads_its_model() -> None:
    source = TextbookSeq2SeqView(TextbookSeq2SeqState(form="concat", hidden_size=8, seed=3))
    panel = source.panel()
    labels = {w.label for w in panel.select(pn.widgets.FileDownload)}
    assert {"Download model (.npz)", "Download metrics (.csv)"} <= labels
    assert panel.select(pn.widgets.FileInput) and source.export.show_code is not None
    source.export.show_code.value = True
    assert "textbook_seq2seq(" in source.export.code.object and source.export.code.visible
    source.state.train(steps=3)
    csv_rows = source.export.metrics_file().getvalue().splitlines()
    assert csv_rows[0] == "step,loss" and [r.split(",")[0] for r in csv_rows[1:]] == ["1", "2", "3"]
    data = source.export.model_file().getvalue()
    native = load_model(data)  # one call, natively
    assert type(native) is TextbookSeq2Seq and native.form == "concat"

    view = TextbookSeq2SeqView()  # the default settings: general, 32
    view.export.upload.value = data  # as the file input does
    s = view.state
    assert s.message_kind == "success" and "trained for 3 steps" in s.message
    assert (s.form, s.hidden_size, s.seed) == ("concat", 8, 3)
    assert s.trainer is not None and s.trainer.step_count == 3 and s.status.startswith("Step 3")
    assert view.loss_source.data["step"] == [1, 2, 3]  # the file's curve
    first, second = source.state.explain("abcd"), s.explain("abcd")
    assert first is not None and second is not None and first.output == second.output
    np.testing.assert_array_equal(first.trace.logits, second.trace.logits)
    view.session.step()  # and it trains on
    assert s.trainer.step_count == 4 and view.loss_source.data["step"][-1] == 4


def test_bad_and_foreign_files_are_messages_and_nothing_changes() -> None:
    view = TextbookSeq2SeqView(TextbookSeq2SeqState(form="dot", hidden_size=8))
    s = view.state
    s.train(steps=2)
    model, version = s.model, s.version
    params = {k: v.copy() for k, v in model.params.items()}
    lddn = LDDNLessonState()
    lddn.train(steps=1)
    library = io.BytesIO()  # the library's own EncoderDecoder, not the textbook class
    save_model(library, EncoderDecoder(9, 9, 16, 8, cell="rnn", wiring="attention", score="dot"))
    earlier = (DATA / "luong" / "textbook_general_rnn.npz").read_bytes()
    for data, words in (
        (b"junk", "not a zip archive"),
        (lddn.save_bytes().getvalue(), "a model of the Dynamic networks lesson, not of the "
                                       "Textbook seq2seq lesson"),
        (library.getvalue(), "its model is a EncoderDecoder; with these settings the lesson "
                             "trains a TextbookSeq2Seq"),
        (earlier, "its model is a EncoderDecoder; with these settings the lesson "
                             "trains a TextbookSeq2Seq"),
    ):  # fmt: skip
        assert view.export.load(data) is False
        assert s.message_kind == "danger" and s.message.startswith("Not loaded: ")
        assert words in s.message, s.message
        assert s.model is model and s.version == version and s.trainer.step_count == 2
        for k, v in params.items():
            np.testing.assert_array_equal(model.params[k], v)
    native = io.BytesIO()  # a textbook model made natively that fits the settings loads
    save_model(native, textbook_seq2seq(9, 9, "dot", hidden_size=8, rng=5))
    assert view.export.load(native.getvalue()) and s.trainer.step_count == 0


@pytest.mark.slow
def test_the_dynamic_lesson_shows_the_sub_tab_on_request() -> None:
    lesson = DynamicLesson()
    tabs = lesson.panel()
    assert lesson.panel() is tabs and lesson.shown_part() is None
    seen: list[int] = []
    lesson.watch_parts(lambda: seen.append(int(tabs.active)))
    assert lesson.show_part("textbook") is lesson.seq2seq and lesson.shown_part() == "textbook"
    assert tabs._names[tabs.active] == "Textbook seq2seq" and seen == [2]
    assert lesson.show_part("rnn") is None and tabs.active == 2
    assert lesson.show_part("dynamic") is lesson and tabs.active == 0 and seen == [2, 0]
    tabs.active = 1  # the vanishing gradient is the dynamic lesson's own
    assert lesson.show_part("dynamic") is lesson and tabs.active == 1


def test_the_textbook_embed_widget_takes_its_settings() -> None:
    view, panel = widget_view("textbook", {"form": "context", "hidden_size": "12", "seed": "x"})
    assert isinstance(view, TextbookSeq2SeqView)
    assert (view.state.form, view.state.hidden_size) == ("context", 12)
    assert view.state.message_kind == "warning" and "seed must be an integer" in view.state.message
    assert {"Train", "Pause", "Reset", "Explain"} <= {
        b.name for b in panel.select(pn.widgets.Button)
    }
