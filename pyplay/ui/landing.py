"""The "Start here" tab, the playground's first (the page opens on the course's first lesson):
the lessons in the order of a course on recurrent networks and attention, the tabs' order
(:data:`pyplay.ui.lessons.COURSE`), each with its line (its spec's ``about``) and a button that
opens it; on a phone the line goes under its button.

Each lesson carries the path too, as a compact strip under its workbench
(:func:`course_strip`): where it sits in the course and a button to the lesson before and
after it.

It is built from the lesson specs alone, as Markdown panes and buttons: showing it imports
no lesson's code, so the page's first render stays cheap (a lesson is built when its tab is
first opened, :class:`pyplay.ui.app.Playground`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn

from pyplay.ui.lessons import COURSE, SPECS
from pyplay.ui.style import LINE_MIN_PX

__all__ = ["TITLE", "course_strip", "course_titles", "landing"]

TITLE = "Start here"
INTRO = """
## Watch sequence models learn

Every lesson trains a small model right here, in your browser, and shows what goes on
inside while it learns. The tabs follow this course, from a plain RNN to transformers: take
them in this order, or jump to any one. Each lesson opens with its workbench (Train, the loss
and a view inside the model on one screen) and **Try this**: experiments one click sets up,
each saying what you should see.
"""


def _opener(open_tab: Callable[[str], object], title: str) -> Callable[[Any], None]:
    def click(_: Any) -> None:
        open_tab(title)

    return click


def landing(open_tab: Callable[[str], object]) -> pn.Column:
    """The "Start here" tab; ``open_tab(title)`` shows the playground tab ``title``."""
    rows: list[object] = [pn.pane.Markdown(INTRO, sizing_mode="stretch_width")]
    for number, key in enumerate(COURSE, start=1):
        spec = SPECS[key]
        title = spec.title if spec.parent is None else SPECS[spec.parent].title
        button = pn.widgets.Button(name=f"Open {spec.title}", width=230, button_type="primary")
        button.on_click(_opener(open_tab, title))
        line = f"**{number}. {spec.title}**: {spec.about}."
        text = pn.pane.Markdown(line, sizing_mode="stretch_width", min_width=LINE_MIN_PX)
        rows.append(pn.Row(button, text, css_classes=["pyplay-start-row"]))
    return pn.Column(*rows, sizing_mode="stretch_width", css_classes=["pyplay-start"])


def course_titles() -> list[str]:
    """The lessons' tab titles along the course path (the tabs' order)."""
    return [SPECS[key].title for key in COURSE]


def course_strip(title: str, open_tab: Callable[[str], object]) -> pn.Row:
    """The course path in one line under lesson ``title``'s workbench: "Lesson 2 of 10 on the
    course path", then a button to the lesson before it and one to the lesson after it (none
    before the first, none after the last); ``open_tab(title)`` shows a tab.

    Raises
    ------
    ValueError
        ``title`` is not a lesson of the course.
    """
    titles = course_titles()
    if title not in titles:
        raise ValueError(f"title: expected one of the course's lessons {titles}, got {title!r}")
    at = titles.index(title)
    parts: list[object] = [
        pn.pane.Markdown(
            f"Lesson {at + 1} of {len(titles)} on the course path",
            align="center",
            margin=(0, 10),
            stylesheets=[":host p {margin: 0}"],
        )
    ]
    for label, other in (("‹ Before: ", at - 1), ("Next: ", at + 1)):
        if 0 <= other < len(titles):
            name = f"{label}{titles[other]}" + (" ›" if other > at else "")
            button = pn.widgets.Button(name=name, button_style="outline", align="center",
                                       margin=(4, 6))  # fmt: skip
            button.on_click(_opener(open_tab, titles[other]))
            parts.append(button)
    return pn.Row(*parts, sizing_mode="stretch_width", styles={"flex-wrap": "wrap"},
                  css_classes=["pyplay-course-strip"])  # fmt: skip
