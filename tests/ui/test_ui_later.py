"""The course's first lesson first: ``create_app(defer=True)`` builds it for the first render,
and saved work and the other lessons after it.

In the page the worker runs :func:`pyplay.ui.later.run_next` once per turn of its event loop
after the render (``web/site/boot.py``); here the queue is run by hand.
"""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

import panel as pn

from pyplay.ui import later
from pyplay.ui.app import LESSONS, create_app
from pyplay.ui.saved_work import TAB_TITLE
from scripts import modules_imported


def _tabs(app: pn.Column) -> pn.Tabs:
    return next(obj for obj in app if isinstance(obj, pn.Tabs))


def _loading(column: pn.Column) -> bool:
    return [o.css_classes for o in column] == [["pyplay-loading"]]


@pytest.fixture
def queue():
    while later.pending():  # nothing left over from another test
        later.run_next()
    yield later
    while later.pending():
        later.run_next()


@pytest.mark.slow
def test_the_page_opens_on_the_first_lesson_and_builds_the_others_after(queue):
    app = create_app(defer=True)
    tabs = _tabs(app)
    titles = list(LESSONS)
    assert tabs._names == ["Start here", *titles, "About", TAB_TITLE]
    assert tabs.active == 1  # the course's first lesson, built for the first render
    slots = [tabs[i] for i in range(1, len(titles) + 1)]
    assert not _loading(slots[0])
    assert all(_loading(slot) for slot in slots[1:])  # every other lesson says it is loading
    saved_tab = tabs[len(titles) + 2]
    assert _loading(saved_tab)
    top = app[1]
    assert list(top) == []  # the saved-work banner's place
    assert _loading(tabs[0]), "Start here, hidden: made after the first render"
    assert queue.pending() == len(titles) + 2  # saved work, the course path, every lesson
    assert queue.run_next() == "saved work"
    assert list(top) == []  # no saved work to offer: no banner on the page
    assert _loading(saved_tab)  # its hidden tab's list joins the page when drawn ahead
    assert queue.run_next() == "the course path"
    assert tabs[0][0].css_classes == ["pyplay-start"] and tabs.active == 1
    labels = []
    while queue.pending():
        labels.append(queue.run_next())
    assert labels == [f"the {t} lesson" for t in titles]  # the first's found it built
    assert all(_loading(slot) for slot in slots[1:])  # built, not shown: drawn ahead only
    assert tabs.active == 1  # when the page is idle (draw_next); building opened none of them
    assert queue.run_next() is None
    tabs.active = 3  # opening a tab shows the lesson built for it
    assert not _loading(slots[2])
    opened = slots[2][0]
    tabs.active = 1
    ahead = [t for t in titles[1:] if t != titles[2]]  # in tab order, the opened ones left out
    for k, title in enumerate(ahead):  # then the page draws the others into their tabs
        assert queue.draw_next() == title
        assert not _loading(slots[titles.index(title)])
        assert all(_loading(slots[titles.index(t)]) for t in ahead[k + 1 :])  # one a call
        assert tabs.active == 1  # drawn in its hidden tab, not opened
    assert _loading(saved_tab)
    assert queue.draw_next() == TAB_TITLE  # after the lessons: the saved-work tab's list
    assert "Models saved in this browser" in str(saved_tab[0][0].object)
    assert tabs.active == 1
    assert queue.draw_next() is None
    assert slots[2][0] is opened
    layouts = [slot[0] for slot in slots]
    for index in range(1, len(titles) + 1):  # opening a tab drawn ahead only shows it
        tabs.active = index
        assert slots[index - 1][0] is layouts[index - 1]


@pytest.mark.slow
def test_start_here_opened_before_its_turn_shows_the_course_path_then_and_once(queue):
    app = create_app(defer=True)
    tabs = _tabs(app)
    assert _loading(tabs[0])
    tabs.active = 0
    course = tabs[0][0]
    assert course.css_classes == ["pyplay-start"]
    while queue.pending():
        queue.run_next()
    assert tabs[0][0] is course and len(tabs[0]) == 1


@pytest.mark.slow
def test_a_tab_opened_before_its_turn_is_built_then_and_once(queue):
    app = create_app(defer=True)
    tabs = _tabs(app)
    last = len(LESSONS)  # the last lesson's tab, before the queue reached it
    tabs.active = last
    built = tabs[last][0]
    assert not _loading(tabs[last])
    while queue.pending():
        queue.run_next()
    assert tabs[last][0] is built  # the queued job found it built
    tabs.active = 0
    tabs.active = last
    assert tabs[last][0] is built  # and opening it again changes nothing


@pytest.mark.slow
def test_without_ahead_a_lesson_is_built_only_when_its_tab_opens(queue):
    """``ahead=False`` (the page's ``window.pyplayAhead = false``): the first lesson for the
    first render, saved work after it, and no other lesson until its tab is opened."""
    app = create_app(defer=True, ahead=False)
    tabs = _tabs(app)
    slots = [tabs[i] for i in range(1, len(LESSONS) + 1)]
    assert tabs.active == 1 and not _loading(slots[0])
    assert queue.pending() == 2 and queue.run_next() == "saved work"
    assert queue.run_next() == "the course path"
    assert queue.run_next() is None  # nothing built ahead (the page draws nothing ahead)
    assert all(_loading(slot) for slot in slots[1:])
    tabs.active = 3  # opening a tab builds its lesson then
    assert not _loading(slots[2])
    assert all(_loading(slot) for k, slot in enumerate(slots[1:], 1) if k != 2)
    saved_tab = tabs[len(LESSONS) + 2]
    assert _loading(saved_tab)
    tabs.active = len(LESSONS) + 2  # opening the saved-work tab puts its list there
    assert "Models saved in this browser" in str(saved_tab[0][0].object)
    tabs.active = 1
    tabs.active = len(LESSONS) + 2
    assert len(saved_tab) == 1  # once


def test_a_drawer_that_fails_is_reported_and_dropped(queue, capsys):
    def broken() -> str:
        raise RuntimeError("deliberately broken")

    queue.draw_ahead_with(broken)
    assert queue.draw_next() is None
    assert "drawing ahead failed" in capsys.readouterr().err
    assert queue.draw_next() is None  # dropped: not called again
    assert capsys.readouterr().err == ""


def test_a_failing_job_is_reported_and_the_queue_goes_on(queue, capsys):
    done = []

    def broken() -> None:
        raise RuntimeError("deliberately broken")

    queue.defer("a broken job", broken)
    queue.defer("a good job", lambda: done.append(True))
    assert queue.run_next() == "a broken job"
    assert "a broken job failed" in capsys.readouterr().err
    assert queue.run_next() == "a good job" and done == [True]


@pytest.mark.slow  # builds the whole app and its first lesson: 2 s
def test_natively_nothing_is_deferred(queue):
    app = create_app()
    tabs = _tabs(app)
    assert queue.pending() == 0
    assert not _loading(tabs[len(LESSONS) + 2])  # saved work at once
    assert tabs[0][0].css_classes == ["pyplay-start"]  # and the course path
    assert list(app[1]) == []  # the banner's place: nothing to offer


def test_the_first_render_imports_one_model_class_and_no_reader_of_files():
    """In a fresh interpreter, as the page's worker starts: building the first render imports
    the first lesson's model (an LSTM stack) and not the other models, the file registry or
    the dynamic networks (imported when a file is read or their lesson is built)."""
    loaded = modules_imported(
        """
        from pyplay.ui.app import create_app
        create_app(defer=True)
        """
    )
    assert {"pyplay.models.sequence", "pyplay.ui.lessons.rnn.view"} <= loaded
    later_ones = {
        "pyplay.models.registry",
        "pyplay.dynamic",
        "pyplay.models.glimpse",
        "pyplay.models.transformer",
        "pyplay.models.memory",
        "pyplay.nn.multihead",
    }
    assert not later_ones & loaded, sorted(later_ones & loaded)
