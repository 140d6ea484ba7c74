"""Embeddable widgets (pyplay.ui.embed), without a browser: every widget builds, settings are
checked as the address's are, and every bad request becomes a message in its place."""

from __future__ import annotations

import html

import panel as pn
import pytest

from pyplay.ui.embed import MAX_WIDGETS, WIDGETS, create_embed, widget_view
from pyplay.ui.training import message_alert


def _buttons(obj: pn.viewable.Viewable) -> set[str]:
    return {b.name for b in obj.select(pn.widgets.Button)}


def _bokeh_titles(obj: pn.viewable.Viewable) -> list[str]:
    return [p.object.title.text for p in obj.select(pn.pane.Bokeh) if p.object.title]


@pytest.mark.slow
def test_every_widget_builds_with_its_own_controls():
    assert len(WIDGETS) <= MAX_WIDGETS  # one page can show every kind
    made = create_embed([{"widget": name} for name in WIDGETS])
    assert len(made) == len(WIDGETS)
    for name, obj in zip(WIDGETS, made, strict=True):
        assert isinstance(obj, pn.Column), name
        assert "pyplay-widget" in obj.css_classes, name
        assert {"Train", "Pause", "Reset"} <= _buttons(obj) or name == "dynamic", name
    by_name = dict(zip(WIDGETS, made, strict=True))
    assert "Translate" in _buttons(by_name["attention"])
    assert {"Beam: Start", "Beam: Step", "Beam: Back"} <= _buttons(by_name["beam"])
    assert "Compare RNN vs LSTM" in _buttons(by_name["gradient"])
    # the look-inside widgets show their view and not the rest of the lesson
    assert "Generate" not in _buttons(by_name["gates"])
    assert "Beam: Start" not in _buttons(by_name["attention"])
    assert by_name["gates"].select(pn.GridBox)  # the heatmap grid
    assert len(by_name["gates"].select(pn.GridBox)[0].objects) >= 5  # i, f, g, o, c, h


@pytest.mark.slow
def test_settings_are_applied_and_the_widget_trains():
    view, panel = widget_view(
        "gates", {"task": "adding", "cell": "gru", "hidden_size": "12", "seq_len": "10"}
    )
    s = view.state
    assert (s.task, s.cell, s.hidden_size, s.seq_len) == ("adding", "gru", 12, 10)
    assert s.message_kind != "warning"
    view.session.step()
    assert s.status.startswith("Step 1:")
    maps = panel.select(pn.GridBox)[0].objects
    assert len(maps) == 4  # GRU: r, z, n, h


@pytest.mark.slow
def test_the_issue_snippet_and_a_decode_input():
    view, _ = widget_view("attention", {"task": "reverse", "src": "abcd"})
    assert view.state.task == "reversal"  # "reverse" is accepted for the reversal task
    assert view.source_box.value == "abcd"
    decoding = view.state.translate(view.source_box.value)
    assert decoding is not None and decoding.weights is not None  # a heatmap to show


@pytest.mark.slow
def test_bad_settings_become_a_warning_naming_the_key_and_the_rest_apply():
    view, _ = widget_view("gates", {"cell": "gru", "hidden_size": "lots", "colour": "red"})
    s = view.state
    assert s.cell == "gru" and s.hidden_size != "lots"
    assert s.message_kind == "warning"
    assert "hidden_size must be an integer from 2 to 128, got 'lots'" in s.message
    assert "'colour' is not a setting of the rnn lesson" in s.message
    assert "Address:" not in s.message
    view, _ = widget_view("memory", {"slots": "8", "model": "lstm", "memory_size": "32"})
    assert (view.state.model, view.state.memory_size) == ("lstm", 32)
    assert "'slots' is not a setting of the memory lesson" in view.state.message


@pytest.mark.slow
@pytest.mark.parametrize(
    "request_, expected",
    [
        ({"widget": "nope"}, "widget must be one of rnn, seq2seq"),
        ({"widget": "gates", "height": "tall"}, "height must be a number of pixels, got 'tall'"),
        ({"widget": "gates", "height": 50}, "height must be from 120 to 4000 pixels, got 50"),
        ({"widget": "gates", "settings": ["task"]}, "settings must be a mapping, got list"),
        ("gates", "a widget request must be a mapping, got str"),
    ],
)
def test_a_bad_request_is_a_message_in_its_place(request_, expected):
    ok, bad = create_embed([{"widget": "gradient"}, request_])
    assert isinstance(ok, pn.Column)
    assert isinstance(bad, pn.pane.Alert) and bad.alert_type == "danger"
    assert html.unescape(bad.object).startswith("pyplay widget 2: ")
    assert expected in html.unescape(bad.object)


@pytest.mark.slow
def test_limits_and_text_only_messages():
    made = create_embed([{"widget": "gradient"}] * (MAX_WIDGETS + 1))
    assert isinstance(made[-1], pn.pane.Alert) and str(MAX_WIDGETS) in made[-1].object
    assert isinstance(create_embed("gates")[0], pn.pane.Alert)
    (bad,) = create_embed([{"widget": "<img src=x onerror=alert(1)>"}])
    assert "<img" not in bad.object and "&lt;img" in bad.object
    _, fixed = widget_view("gradient", height=400)
    assert fixed.height == 400 and fixed.scroll


@pytest.mark.slow
def test_messages_quoting_user_text_are_escaped_before_markdown():
    view, _ = widget_view("gates", {"hidden_size": "<img src=x onerror=alert(1)>"})
    alert = message_alert(view.state)
    shown = alert.object
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
