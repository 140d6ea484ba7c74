"""The prose and header every lesson page shares (:mod:`pyplay.ui.lesson_page`): each view's
heading and help read from the Markdown beside it and shown on its page, the status line's
CSS class the browser tests select by, the state built from the view's ``state_class``."""

from __future__ import annotations

import panel as pn
import pytest

from lesson_cases import gather
from pyplay.ui.lectures import lecture
from pyplay.ui.lesson_page import page_text
from pyplay.ui.lesson_view import LessonView
from pyplay.ui.lessons import LESSONS
from pyplay.ui.lessons.dynamic.subtab import SubTabView
from pyplay.ui.text import Text
from pyplay.ui.training import int_sliders

# the status lines' classes as the page had them when they were written in each view, where
# they are not pyplay-<key>-status: each lesson's in its folder (tests/lessons/<key>/cases.py)
STATUS = gather("STATUS")


def _objects(layout: pn.layout.ListLike) -> list[object]:
    """Every pane's object (a string for text, Markdown and headings) in ``layout``, deep."""
    found = []
    for part in layout.select(lambda p: isinstance(p, (pn.pane.Markdown, pn.pane.Str))):
        found.append(part.object)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("spec", LESSONS, ids=[s.key for s in LESSONS])
def test_every_lesson_shows_its_heading_and_help_from_its_folder(spec) -> None:
    view = spec.view_class()()
    text = page_text(type(view).__module__).filled(view.prose_values)
    assert view.text == text and "$" not in f"{text}"  # every $NAME has its value
    assert text.heading.startswith("## ") and len(text.heading) > 4
    assert len(text.help) > 200 and "\n" not in text.help.replace("\n\n", "")
    assert (view.heading, view.help_text) == (text.heading, text.help)
    assert isinstance(view.state, spec.state_class())  # made from the view's state_class
    assert view.status_css == STATUS.get(spec.key, f"pyplay-{spec.key}-status")
    page = view.panel()
    shown = _objects(page)
    assert text.heading in shown and text.help in shown
    status = [t for t in page.select(Text) if view.status_css in t.css_classes]
    assert len(status) == 1
    if isinstance(view, SubTabView):  # the note of where it departs from its lecture
        assert text.departs.startswith(f"*Where the page departs from {lecture(view.lecture_key)}*")
        assert text.departs in shown
    else:
        assert isinstance(view, LessonView) and text.departs == ""
        # the line under the workbench says what the lesson shows (a sub-lesson's too)
        about = f"**{spec.title}**: {spec.about}. Open the sections below for more."
        assert spec.about and about in shown


@pytest.mark.slow
def test_a_view_keeps_the_state_it_is_given() -> None:
    spec = next(s for s in LESSONS if s.key == "ctc")
    state = spec.state_class()()
    assert spec.view_class()(state).state is state


def _package(tmp_path, monkeypatch, name: str, text: str) -> str:
    """A package ``name`` with a ``view`` module and ``help.md`` holding ``text``."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "view.py").write_text("")
    (folder / "help.md").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    page_text.cache_clear()
    return f"{name}.view"


def test_page_text_unwraps_paragraphs_and_splits_off_the_departures(tmp_path, monkeypatch):
    module = _package(
        tmp_path,
        monkeypatch,
        "prosepkg",
        "## A heading\n\nOne paragraph\nwrapped   over\nthree lines.\n\n`x = 1`,  kept\n\n"
        "---\n\n*Where the page departs*: a\nnote.\n",
    )
    text = page_text(module)
    assert text.heading == "## A heading"
    assert text.help == "One paragraph wrapped   over three lines.\n\n`x = 1`,  kept"
    assert text.departs == "*Where the page departs*: a note."
    page_text.cache_clear()


def test_prose_shows_the_values_the_code_declares() -> None:
    from pyplay.ui.lesson_page import PageText
    from pyplay.ui.lessons.dynamic.adaptive_state import MAX_TAPS, SAMPLES
    from pyplay.ui.lessons.dynamic.adaptive_view import AdaptiveFilterView

    departs = AdaptiveFilterView().text.departs
    assert f"({SAMPLES} samples), and at most {MAX_TAPS} taps" in departs
    text = PageText("## $n steps", "Costs $$$cost.", "")
    assert text.filled({"n": 3, "cost": 5}) == PageText("## 3 steps", "Costs $5.", "")
    with pytest.raises(KeyError, match="cost"):
        text.filled({"n": 3})


def test_page_text_names_the_file_without_a_heading(tmp_path, monkeypatch):
    module = _package(tmp_path, monkeypatch, "lessonpkg", "No heading here.\n\nHelp.\n")
    with pytest.raises(ValueError, match=r"lessonpkg/help\.md: expected a heading line"):
        page_text(module)
    page_text.cache_clear()


def test_int_sliders_take_their_labels_and_the_settings_ranges() -> None:
    spec = next(s for s in LESSONS if s.key == "timeseries")
    state = spec.state_class()()
    sliders = int_sliders(state, hidden_size="Hidden neurons", input_delays="Input delays d_u")
    assert [w.name for w in sliders] == ["Hidden neurons", "Input delays d_u"]
    for widget, name in zip(sliders, ("hidden_size", "input_delays"), strict=True):
        assert isinstance(widget, pn.widgets.IntSlider)
        low, high = state.param[name].bounds
        assert (widget.start, widget.end, widget.value) == (low, high, getattr(state, name))
        widget.value = low
        assert getattr(state, name) == low  # the slider is the setting


def _headings(layout: pn.layout.ListLike) -> list[str]:
    """The first line of every Markdown heading in ``layout`` (deep), in page order."""
    found = (str(text).lstrip() for text in _objects(layout))
    return [text.splitlines()[0] for text in found if text.startswith("#")]


@pytest.mark.slow
@pytest.mark.parametrize(
    "spec",
    [s for s in LESSONS if s.parent is None and s.key != "dynamic"],
    ids=[s.key for s in LESSONS if s.parent is None and s.key != "dynamic"],
)
def test_a_heading_in_the_workbench_is_an_h2(spec) -> None:
    """The workbench opens the page (under the site's h1, before Try this's h2): a heading
    there is an h2, so the headings go in order (axe's heading-order; the Time series
    lesson's "Your data" was an h3). The dynamic networks lesson lays out its own page."""
    view = spec.view_class()()
    assert type(view).panel is LessonView.panel
    bench = view.panel().objects[0]
    assert all(h.startswith("## ") for h in _headings(bench)), _headings(bench)
    if spec.key == "timeseries":
        assert _headings(bench) == ["## Your data"]
