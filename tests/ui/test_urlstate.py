"""The playground's settings in the page address: round trips, checks, and the Location hook."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("panel")

import panel as pn
from panel.io.location import Location
from panel.util import edit_readonly

from addresses import apply_query
from lesson_cases import gather
from pyplay.ui.lessons import SPECS
from pyplay.ui.location import bind_location
from pyplay.ui.urlstate import (
    LESSON_SPECS,
    MAX_QUERY_CHARS,
    MAX_SOURCE_CHARS,
    MAX_TEXT_CHARS,
    Field,
    parse_query,
    state_class,
    to_query,
    url_fields,
)


# ---------------------------------------------------------------------------- strategies
def _value(f: Field) -> st.SearchStrategy[Any]:
    if f.choices:
        return st.sampled_from(f.choices)
    if f.kind == "bool":
        return st.booleans()
    if f.kind == "text":
        return st.text(
            st.characters(blacklist_categories=("C", "Z")) | st.just(" "), max_size=MAX_TEXT_CHARS
        )
    assert f.low is not None and f.high is not None
    if f.kind == "int":
        return st.integers(int(f.low), int(f.high))
    return st.floats(f.low, f.high, allow_nan=False, allow_infinity=False)


SOURCE = st.text(
    st.characters(blacklist_categories=("C", "Z")) | st.just(" "), max_size=MAX_SOURCE_CHARS
)


@st.composite
def lesson_settings(draw: Any) -> tuple[str, dict[str, Any], str | None]:
    lesson = draw(st.sampled_from(sorted(LESSON_SPECS)))
    values = {name: draw(_value(f)) for name, f in url_fields(lesson).items()}
    source = draw(SOURCE) if LESSON_SPECS[lesson].source else None
    return lesson, values, source


# ---------------------------------------------------------------------------- the registry
def test_every_field_is_a_parameter_of_its_state_with_allowed_values():
    for lesson, spec in LESSON_SPECS.items():
        cls = state_class(lesson)
        fields = url_fields(lesson)
        assert list(fields) == list(spec.params)
        for name, f in fields.items():
            p = cls.param[name]
            if f.kind == "choice":
                assert set(f.choices) <= set(p.objects)
                assert not set(f.choices) & set(spec.exclude.get(name, ()))
            default = p.default
            if f.kind != "choice" or default not in spec.exclude.get(name, ()):
                assert f.parse(f.format(default)) == default, (lesson, name)


def test_unknown_lesson_in_url_fields_is_a_clear_error():
    with pytest.raises(ValueError, match="lesson must be one of rnn, seq2seq"):
        url_fields("nope")


# ---------------------------------------------------------------------------- round trips
@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(lesson_settings())
def test_settings_round_trip_through_the_query(case: tuple[str, dict[str, Any], str | None]):
    lesson, values, source = case
    query = to_query(lesson, SimpleNamespace(**values), source)
    parsed = parse_query("?" + query)
    assert parsed.messages == []
    assert parsed.lesson == lesson
    assert parsed.settings == values
    assert parsed.source == source
    for name, value in parsed.settings.items():
        assert type(value) is type(values[name])  # 1.0 stays a float, True a bool


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_read_without_raising(text: str):
    parsed = parse_query(text)
    assert all(isinstance(m, str) and m.startswith("Address:") for m in parsed.messages)
    if parsed.lesson is not None:
        fields = url_fields(parsed.lesson)
        for name, value in parsed.settings.items():
            assert fields[name].parse(fields[name].format(value)) == value


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(LESSON_SPECS)),
    st.dictionaries(st.sampled_from(["hidden_size", "lr", "cell", "seed", "causal", "src", "x"]),
                    st.text(max_size=30), max_size=6),
)  # fmt: skip
def test_every_given_value_is_applied_or_reported(lesson: str, given_values: dict[str, str]):
    from urllib.parse import urlencode

    parsed = parse_query(urlencode({"lesson": lesson, **given_values}))
    assert parsed.lesson == lesson
    for key in given_values:
        applied = key in parsed.settings or (key == "src" and parsed.source is not None)
        own = (f"Address: {key} must be", f"Address: {key!r} is not a setting")
        reported = any(m.startswith(own) for m in parsed.messages)  # about this key, not a value
        assert applied != reported, (key, parsed)


def test_real_states_round_trip_every_lesson():
    changes = gather("ADDRESS")  # each lesson's in its folder: tests/lessons/<key>/cases.py
    for lesson, update in changes.items():
        cls = state_class(lesson)
        a = cls(**update)
        assert a.message_kind != "danger", a.message
        query = to_query(lesson, a)
        b = cls()
        version = b.version
        assert apply_query(query, {lesson: b}) == (lesson, [])
        for name in url_fields(lesson):
            assert getattr(b, name) == getattr(a, name), (lesson, name)
        assert b.version > version  # rebuilt
        assert b.message_kind != "danger", b.message


def test_applied_settings_build_the_model_they_describe():
    state = state_class("rnn")()
    lesson, messages = apply_query(
        "?lesson=rnn&cell=gru&hidden_size=16&num_layers=2", {"rnn": state}
    )
    assert (lesson, messages) == ("rnn", [])
    assert state.model.cell == "gru" and state.model.hidden_size == 16
    assert state.model.num_layers == 2


# ---------------------------------------------------------------------------- bad addresses
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("lesson=rnn&hidden_size=9999", "hidden_size must be an integer from 2 to 128, got '9999'"),
        ("hidden_size=1.5", "hidden_size must be an integer from 2 to 128, got '1.5'"),
        ("cell=transformer", "cell must be one of lstm, gru, rnn, got 'transformer'"),
        ("lr=nan", "lr must be a number from 1e-06 to 10, got 'nan'"),
        ("lr=1e400", "lr must be a number from 1e-06 to 10, got '1e400'"),
        ("lr=__import__('os').system('x')", "lr must be a number"),
        ("seed=-1", "seed must be an integer from 0 to 4294967295, got '-1'"),
        ("task=series", "task must be one of adding, copy, parentheses, parity, sine, charlm"),
        ("lesson=ctc&causal=true", "'causal' is not a setting of the ctc lesson"),
        ("lesson=rnn&src=abc", "'src' is not a setting of the rnn lesson"),
        ("lesson=transformer&nhead=3", "nhead must be one of 1, 2, 4, got '3'"),
        ("lesson=transformer&causal=maybe", "causal must be true or false, got 'maybe'"),
        ("lesson=seq2seq&src=a%00b", "src must be printable text (no control characters)"),
        ("lesson=ctc&lexicon=a%0Ab", "lexicon must be printable text of at most 400 characters"),
        ("lesson=ctc&lexicon=" + "a" * 401, "lexicon must be printable text of at most 400"),
        ("lesson=ctc&beam_width=0", "beam_width must be an integer from 1 to 32, got '0'"),
        ("lesson=seq2seq&src=" + "a" * 201, "src must be a text of at most 200 characters"),
        (
            "lesson=<script>",
            f"lesson must be one of {', '.join(SPECS)}, got '<script>'",
        ),
        ("cell=gru&cell=rnn", "'cell' is given more than once; the last is used"),
        ("x=" + "a" * MAX_QUERY_CHARS, "the settings are too long"),
        ("&".join(f"k{i}=1" for i in range(100)), "more than 64 settings"),
    ],
)
def test_bad_values_are_explained_and_skipped(query: str, expected: str):
    parsed = parse_query(query)
    assert any(expected in m for m in parsed.messages), parsed.messages
    state = SimpleNamespace(param=SimpleNamespace(update=lambda **kw: applied.update(kw)))
    applied: dict[str, Any] = {}
    lesson, messages = apply_query(query, {k: state for k in LESSON_SPECS})
    assert messages == parsed.messages
    assert applied == parsed.settings
    for name, value in applied.items():
        f = url_fields(lesson or "rnn")[name]
        assert f.parse(f.format(value)) == value


def test_bad_values_leave_the_state_as_it_was_and_good_ones_apply():
    state = state_class("rnn")()
    lesson, messages = apply_query("?cell=nope&hidden_size=20&lr=-1", {"rnn": state})
    assert lesson == "rnn" and len(messages) == 2
    assert state.cell == "lstm" and state.hidden_size == 20 and state.lr == 0.02


def test_to_query_leaves_out_what_the_address_cannot_carry():
    values = {name: state_class("rnn").param[name].default for name in url_fields("rnn")}
    query = to_query("rnn", SimpleNamespace(**{**values, "task": "series", "lr": math.inf}))
    parsed = parse_query(query)
    assert parsed.messages == [] and "task" not in parsed.settings and "lr" not in parsed.settings
    assert "src" not in to_query("seq2seq", state_class("seq2seq")(), "bad\x00")
    assert apply_query("", {}) == (None, [])
    assert apply_query("?lesson=ctc", {}) == (
        "ctc",
        ["Address: the ctc lesson is not available here."],
    )


# ---------------------------------------------------------------------------- Location hook
class _Page:
    """Tabs built lazily as in pyplay.ui.app.Playground: recurrent, seq2seq and About."""

    def __init__(self) -> None:
        from pyplay.ui.lessons.rnn.view import RecurrentLesson
        from pyplay.ui.lessons.seq2seq.view import Seq2SeqLesson

        self.kinds = [RecurrentLesson, Seq2SeqLesson]
        self.lessons: dict[int, Any] = {}
        self.tabs = pn.Tabs(("Recurrent networks", pn.Column()), ("Sequence to sequence",
                            pn.Column()), ("About", pn.Column()))  # fmt: skip
        self.open(0)

    def open(self, index: int) -> Any:
        if index >= len(self.kinds):
            return None
        if index not in self.lessons:
            self.lessons[index] = self.kinds[index]()
        return self.lessons[index]


def _arrive(location: Location, search: str) -> None:
    """What the page does after its first render: send window.location to Python."""
    with edit_readonly(location):
        location.param.update(href="http://localhost/index.html" + search, search=search)


@pytest.mark.slow
def test_location_applies_the_address_once_the_page_sends_it():
    page = _Page()
    location = Location()
    sync = bind_location(page.tabs, page.open, location)
    assert sync is not None and not sync.ready and location.search == ""
    page.lessons[0].state.hidden_size = 20  # before the address is known: nothing written
    assert location.search == ""
    _arrive(location, "?lesson=seq2seq&hidden_size=16&wiring=init&src=abc&bogus=1")
    assert page.tabs.active == 1
    lesson = page.lessons[1]
    assert lesson.state.hidden_size == 16 and lesson.state.wiring == "init"
    assert lesson.source_box.value == "abc" and lesson.source_box.value_input == "abc"
    assert "'bogus' is not a setting" in lesson.state.message
    assert lesson.state.message_kind == "warning"
    # the address is rewritten without what was refused
    assert parse_query(location.search).settings["hidden_size"] == 16
    assert "bogus" not in location.search and "src=abc" in location.search


@pytest.mark.slow
def test_location_follows_the_open_lesson_and_its_settings():
    page = _Page()
    location = Location()
    _arrive(location, "")
    bind_location(page.tabs, page.open, location)  # the address is known: applied at once
    assert parse_query(location.search).lesson == "rnn"
    page.lessons[0].state.cell = "gru"
    assert parse_query(location.search).settings["cell"] == "gru"
    page.tabs.active = 1
    assert parse_query(location.search).lesson == "seq2seq"
    page.lessons[1].source_box.value = "hello"
    assert parse_query(location.search).source == "hello"
    page.lessons[0].state.cell = "rnn"  # not the open lesson: the address stays
    assert parse_query(location.search).lesson == "seq2seq"
    page.tabs.active = 2  # About: the address stays
    assert parse_query(location.search).lesson == "seq2seq"
    page.tabs.active = 0
    assert parse_query(location.search).settings["cell"] == "rnn"


@pytest.mark.slow
def test_without_a_document_there_is_no_address():
    pn.state.curdoc = None
    page = _Page()
    assert bind_location(page.tabs, page.open) is None


@pytest.mark.slow
def test_the_playground_address_opens_every_lesson():
    from pyplay.ui.app import Playground

    playground = Playground()
    location = Location()
    bind_location(playground.tabs, playground.open, location)
    _arrive(location, "?lesson=memory&model=lstm&memory_size=32&seed=4")
    memory = playground.lessons["Memory"].state
    assert (memory.model, memory.memory_size, memory.seed) == ("lstm", 32, 4)
    assert parse_query(location.search).lesson == "memory"
    memory.n_pairs = 5  # the address follows
    assert parse_query(location.search).settings["n_pairs"] == 5
    playground.tabs.active = playground.titles.index("Time series")
    assert parse_query(location.search).lesson == "timeseries"


@pytest.mark.slow
def test_a_sub_tab_lesson_opens_its_tab_and_sub_tab_and_the_address_follows_it():
    from pyplay.ui.app import Playground

    playground = Playground()
    location = Location()
    bind_location(playground.tabs, playground.open, location)
    _arrive(location, "?lesson=textbook&form=dot&hidden_size=16&seed=2")
    assert playground.tabs.active == playground.titles.index("Dynamic networks")
    lesson = playground.lessons["Dynamic networks"]
    assert lesson.subtabs._names[lesson.subtabs.active] == "Textbook seq2seq"
    textbook, lddn = lesson.seq2seq.state, lesson.state
    assert (textbook.form, textbook.hidden_size, textbook.seed) == ("dot", 16, 2)
    assert textbook.model is not None and textbook.model.hidden_size == 16  # rebuilt
    assert parse_query(location.search).lesson == "textbook"
    textbook.form = "general"  # the address follows the sub-tab's settings
    assert parse_query(location.search).settings["form"] == "general"
    lddn.seed = 9  # not the lesson shown: the address stays
    assert parse_query(location.search).lesson == "textbook"
    lesson.subtabs.active = 0  # "Build and run": the LDDN's settings
    query = parse_query(location.search)
    assert query.lesson == "dynamic" and query.settings["seed"] == 9
    lesson.subtabs.active = 1  # "Vanishing gradient" belongs to the dynamic lesson
    assert parse_query(location.search).lesson == "dynamic"
    lesson.subtabs.active = 2
    assert parse_query(location.search).settings == {
        "form": "general", "hidden_size": 16, "D": 8, "lr": 0.01, "seed": 2
    }  # fmt: skip
    _arrive(location, "?lesson=dynamic&steps=30")  # back to the LDDN: its sub-tab
    assert lesson.subtabs.active == 0 and lddn.steps == 30
    assert parse_query(location.search).lesson == "dynamic"
    _arrive(location, "?lesson=textbook&form=bahdanau&hidden_size=999")
    assert lesson.subtabs.active == 2 and textbook.message_kind == "warning"
    assert "form must be one of context, dot, general, concat, got 'bahdanau'" in textbook.message
    assert "hidden_size must be an integer from 4 to 64" in textbook.message
    assert (textbook.form, textbook.hidden_size) == ("general", 16)  # as they were


def test_sub_tab_helpers_for_views_without_parts():
    from pyplay.ui.location import lesson_states, part_view, shown_lesson, tab_title, top_lesson

    assert tab_title("textbook") == "Dynamic networks" and tab_title("rnn") == "Recurrent networks"
    assert top_lesson("Dynamic networks") == "dynamic" and top_lesson("Textbook seq2seq") is None
    plain = SimpleNamespace(state="s")
    assert part_view(plain, "rnn") is plain and part_view(plain, "textbook") is None
    assert shown_lesson("rnn", plain) == "rnn"
    assert lesson_states("Recurrent networks", plain) == [("rnn", "Recurrent networks", "s")]
    assert lesson_states("About", SimpleNamespace()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ("?lesson=__proto__", "lesson must be one of"),
        ("?lesson=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E", "got '<img src=x onerror"),
        ("?" + "&".join(f"a{i}=1" for i in range(70)), "more than 64 settings"),
        ("?lesson=rnn&src=" + "x" * 5000, "the settings are too long"),
    ],
)
def test_an_address_that_opens_nothing_is_still_explained(search: str, expected: str):
    # issue 21: these were dropped without a message; now the open lesson says why
    page = _Page()
    location = Location()
    bind_location(page.tabs, page.open, location)
    _arrive(location, search)
    state = page.lessons[0].state
    assert expected in state.message and state.message_kind == "warning"
    assert page.tabs.active == 0


@pytest.mark.slow
def test_a_shared_link_says_what_it_opened():
    from pyplay.ui.app import Playground

    playground = Playground()
    location = Location()
    bind_location(playground.tabs, playground.open, location)
    _arrive(location, "?lesson=rnn&cell=gru&lr=0.05&seed=3")
    state = playground.lessons["Recurrent networks"].state
    assert (state.cell, state.lr, state.seed) == ("gru", 0.05, 3)
    opened = "Opened from the link: Recurrent networks with cell gru, lr 0.05, seed 3. "
    assert state.message.startswith(opened + "New GRU with ")
    assert "Training settings applied" not in state.message
