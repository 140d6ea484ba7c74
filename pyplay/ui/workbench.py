"""The parts a lesson page is composed of: the workbench at its top and the sections below.

A lesson is an instrument, not a document: on one screen (1280x800) the **workbench** holds the
Train / Pause / Step / Reset buttons, the status line, the settings that matter for the
experiment, the loss curve and the lesson's main look-inside view, all live while the model
trains. Everything deeper (the other views, the comparisons, the explanations) follows as
**sections**, each closed until the learner opens it (progressive disclosure, as Transformer
Explainer's blocks expand in place).

- :func:`workbench` lays out the controls column beside the views column; below
  :data:`~pyplay.ui.style.STACK_BELOW_PX` (a tablet, a phone) the page's CSS stacks them, the
  controls first, the plots the full width.
- :func:`controls_column` shows a lesson's first settings and closes the rest into a
  "More settings" section.
- :func:`sections` turns a lesson's flat list of parts into closed sections: a section starts
  at a heading (a string ``"## Title"``, or a layout whose first part is one) and runs to the
  next. A section is a :class:`panel.layout.Card`; a layout the lesson shows and hides (a
  part only one mode of the lesson has) hides its section with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import panel as pn

__all__ = [
    "MORE_SETTINGS",
    "controls_column",
    "fit_width",
    "heading_of",
    "section",
    "sections",
    "workbench",
]

MORE_SETTINGS = "More settings"
PHONE_PX = 360  # a figure wider than this shrinks to fit a phone (fit_width)
SECTION_CSS = ["pyplay-section"]


def heading_of(part: Any) -> str | None:
    """The title of ``part`` if it opens a section: a string ``"## Title"`` (any level), a
    Markdown pane holding only such a line, or a layout whose first part is one."""
    if isinstance(part, pn.pane.Markdown):
        part = part.object
    if isinstance(part, str):
        text = part.strip()
        if text.startswith("#") and "\n" not in text:
            return text.lstrip("#").strip()
        return None
    if isinstance(part, pn.layout.ListLike) and len(part.objects):
        return heading_of(part.objects[0])
    return None


def section(title: str, *parts: Any, opened: bool = False) -> pn.Card:
    """A section titled ``title`` holding ``parts``, closed unless ``opened``."""
    return pn.Card(
        *parts,
        title=title,
        collapsed=not opened,
        sizing_mode="stretch_width",
        css_classes=SECTION_CSS,
        margin=(4, 0),
    )


def _follow_visibility(card: pn.Card, layout: Any) -> None:
    """``card`` is shown exactly while ``layout`` is (a part the lesson shows and hides)."""
    card.visible = bool(layout.visible)

    def follow(event: Any) -> None:
        card.visible = bool(event.new)

    layout.param.watch(follow, "visible")


def sections(parts: Iterable[Any]) -> list[Any]:
    """The lesson's ``parts`` grouped into closed sections, one per heading.

    A string heading opens a section holding the parts after it (the heading becomes the
    section's title); a layout that starts with a heading is a section of its own (its heading
    shown as the title instead, its visibility followed). Parts before the first heading stay as
    they are; parts without a heading join the section before them."""
    out: list[Any] = []
    current: pn.Card | None = None
    for part in parts:
        title = heading_of(part)
        if title is None:
            if current is None:
                out.append(part)
            else:
                current.append(part)
            continue
        if isinstance(part, pn.layout.ListLike):
            part.objects[0].visible = False  # the section's title says it (kept in place:
            # a lesson may index its layout's parts)
            current = section(title, part)
            _follow_visibility(current, part)
            out.append(current)
            continue
        current = section(title)
        out.append(current)
    return out


def controls_column(
    shown: Sequence[Any], more: Sequence[Any], width: int, css: str = "pyplay-bench-controls"
) -> pn.Column:
    """The workbench's controls: ``shown`` always in sight (the buttons, the status line, the
    settings that matter for the experiment), ``more`` in a closed "More settings" section
    under them."""
    parts = list(shown)
    if more:
        parts.append(section(MORE_SETTINGS, *more))
    return pn.Column(*parts, width=width, css_classes=[css])


def fit_width(part: Any) -> None:
    """Every fixed-width figure in ``part`` wider than :data:`PHONE_PX` keeps its shape and
    shrinks to fit a narrower place (a phone): it scales with the width it is given, up to
    its own width."""
    found = part.select(pn.pane.Bokeh) if hasattr(part, "select") else []
    for pane in found:
        fig = pane.object
        width = getattr(fig, "width", None)
        fixed = getattr(fig, "sizing_mode", None) in (None, "fixed")
        if width is None or width <= PHONE_PX or not fixed:
            continue
        fig.update(sizing_mode="scale_width", max_width=width)
        pane.param.update(sizing_mode="scale_width", max_width=width)


def workbench(controls: pn.Column, views: Sequence[Any]) -> pn.Row:
    """The workbench: ``controls`` beside ``views`` (the loss curve and the main look-inside
    view, its fixed-width figures made to fit a phone, :func:`fit_width`); stacked on a
    narrow window (class ``pyplay-page``, :mod:`pyplay.ui.style`)."""
    right = pn.Column(*views, sizing_mode="stretch_width", css_classes=["pyplay-bench-views"])
    fit_width(right)
    return pn.Row(
        controls,
        right,
        sizing_mode="stretch_width",
        css_classes=["pyplay-page", "pyplay-workbench"],
    )
