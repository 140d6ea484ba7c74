"""The playground's page (:mod:`pyplay.ui.app`), without a browser: its tabs are the course's
lessons in order between "Start here" and About and Saved work, each built when first opened."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

import panel as pn

from pyplay.ui.app import LESSONS, Playground, create_app
from pyplay.ui.lessons import COURSE, SPECS


@pytest.mark.slow
def test_app_assembles_and_builds_each_lesson_when_first_opened():
    app = create_app()
    tabs = next(obj for obj in app if isinstance(obj, pn.Tabs))
    course = [SPECS[key].title for key in COURSE]  # the lessons in the order of the course
    assert tabs._names == ["Start here", *course, "About", "Saved work"]
    playground = Playground()
    first = course[0]  # the page opens on the course's first lesson, built
    assert list(playground.lessons) == [first] and playground.tabs.active == 1
    waiting = [o.css_classes == ["pyplay-loading"] for s in playground.slots.values() for o in s]
    assert waiting == [t != first for t in LESSONS]  # the others "Loading ..." until built
    for index, title in enumerate(LESSONS, start=1):
        playground.tabs.active = index
        lesson = playground.lessons[title]
        assert len(playground.slots[title].objects) == 1
        playground.tabs.active = 0
        playground.tabs.active = index
        assert playground.lessons[title] is lesson  # built once, kept with its state
    playground.tabs.active = len(LESSONS) + 1  # About: nothing to build
    assert playground.open(len(LESSONS) + 1) is None
    assert playground.open(0) is None  # "Start here" neither
