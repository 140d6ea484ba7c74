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
  next. A section is a :class:`Section`: a header button that opens and closes it above its
  body; a layout the lesson shows and hides (a part only one mode of the lesson has) hides its
  section with it.

A section's body joins the page when the section is first opened: until then what it holds
lives in Python only (its widgets hold their values, its views are updated as the model
trains), not in the page's document, so the first render, the page's drawing and every
training step's patches carry none of it (the recurrent lesson: 817 of its Bokeh models wait in
closed sections). Opened, the body is drawn from the state it holds then, and stays in the page,
hidden while closed (``visible=False``): a closed :class:`panel.layout.Card` would keep its
models in the document but undrawn, and a widget that Python updates before BokehJS has drawn
it throws in the page (a slider's ``_update_title`` on its missing title element).

A part can wait longer still: a :class:`Later` part (``Later(make)``) is made by ``make()``
when its section is first opened, so a view that only a closed section shows costs neither
Python nor the page anything before (the recurrent lesson's five closed views took about a
third of its build, the first render's longest stage: ``web/measure.py first``). The section
then tells its :meth:`Section.when_built` callbacks (the lesson page fits the new figures to a
phone's width and describes them for screen readers, as it did the others when it was made).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import panel as pn
import param
from panel.viewable import Viewer

__all__ = [
    "MORE_SETTINGS",
    "Later",
    "Section",
    "SectionLayout",
    "controls_column",
    "fit_width",
    "heading_of",
    "section",
    "sections",
    "until_drawn",
    "workbench",
]

MORE_SETTINGS = "More settings"
PHONE_PX = 360  # a figure or widget wider than this shrinks to fit a phone (fit_width)
# (narrower figures keep their size: those in a grid of maps, 250-300 px, wrap as cells)
WIDGET_PX = 280  # a widget wider than this stretches to its container, up to its width
SECTION_CSS = ["pyplay-section"]
INSET = 12  # px: a section's body's inset, and room for a widget's own margin
CHAR_PX = 6  # px per character of a button's label (14 px sans-serif, rounded up)
BUTTON_PAD_PX = 24  # px of a button's padding and border around its label
SLIDERS = (pn.widgets.IntSlider, pn.widgets.FloatSlider, pn.widgets.DiscreteSlider)
BUTTON_ROWS = (pn.widgets.RadioButtonGroup, pn.widgets.CheckButtonGroup)


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
        first = part.objects[0]  # a heading itself, not a layout that starts with one
        return None if isinstance(first, pn.layout.ListLike) else heading_of(first)
    return None


class Later:
    """A part of a section made when the section is first opened: ``make()`` returns it (a
    Panel object, or anything a column takes). With a ``title``, the part is a section of its
    own with that title (as a layout that starts with a heading is, :func:`sections`): the
    heading that the made layout starts with leaves it."""

    def __init__(self, make: Callable[[], Any], title: str | None = None) -> None:
        self.make, self.title = make, title

    def made(self) -> Any:
        """The part, made now (a titled part's own heading replaced by an empty spacer)."""
        part = self.make()
        if self.title is not None and isinstance(part, pn.layout.ListLike):
            if heading_of(part) is not None:
                part[0] = pn.Spacer(width=0, height=0, margin=0)
        return part


class SectionLayout(pn.Column):
    """A section's layout: its header, then its body once the section has been opened; a
    column whose :meth:`select` also finds what the body holds before it joins the page
    (:class:`Section`; not its :class:`Later` parts, which do not exist yet)."""

    def __init__(self, *objects: Any, **params: Any) -> None:
        super().__init__(*objects, **params)
        self.held: pn.Column | None = None  # the body, until the section is first opened
        self.section: Section | None = None  # the section it lays out

    def select(self, selector: Any = None) -> list[Any]:
        found = super().select(selector)
        return found + (self.held.select(selector) if self.held is not None else [])


class Section(Viewer):
    """A section of a lesson page: a header button titled ``title`` over a body of ``parts``,
    closed (the body hidden) unless ``opened``; the button opens and closes it.

    Parameters
    ----------
    title : str
        The section's title, on its header button.
    *parts
        What the section holds.
    opened : bool
        Whether it starts open.
    """

    opened = param.Boolean(default=False, doc="Whether the section's body is shown.")

    def __init__(self, title: str, *parts: Any, opened: bool = False) -> None:
        super().__init__(opened=opened)
        self.title = title
        self.header = pn.widgets.Toggle(
            name=self._label(),
            value=opened,
            button_type="light",
            sizing_mode="stretch_width",
            css_classes=["pyplay-section-header"],
            margin=(0, 0),
        )
        self.body = pn.Column(
            *[part for part in parts if not isinstance(part, Later)],
            visible=opened,
            sizing_mode="stretch_width",
            margin=(0, INSET // 2),
            css_classes=["pyplay-section-body"],  # a group of plots (pyplay.ui.plot_text)
        )
        self.layout = SectionLayout(
            self.header,
            *([self.body] if opened else []),  # a closed body joins when first opened
            sizing_mode="stretch_width",
            css_classes=SECTION_CSS,
            margin=(4, 0),
        )
        if not opened:
            self.layout.held = self.body
        self.layout.section = self
        self._later: list[tuple[int, Later]] = []  # parts made at the first opening, where
        self._built: list[Callable[[pn.Column], None]] = []  # and who is told then
        for index, part in enumerate(parts):
            if isinstance(part, Later):
                if opened:
                    self.body.insert(index, part.made())
                else:
                    self._later.append((index, part))
        self.header.param.watch(self._on_header, "value")
        self.param.watch(self._on_opened, "opened")

    def _label(self) -> str:
        return ("\u25be " if self.opened else "\u25b8 ") + self.title

    def _on_header(self, event: Any) -> None:
        self.opened = bool(event.new)

    def _on_opened(self, event: Any) -> None:
        if event.new and self._later:  # first opened: its Later parts are made, in place
            later, self._later = self._later, []
            objects = list(self.body.objects)
            for index, part in later:  # each index is the part's place among all
                objects.insert(index, part.made())
            self.body.objects = objects
            for callback in self._built:
                callback(self.body)
        self.header.param.update(value=bool(event.new), name=self._label())
        self.body.visible = bool(event.new)
        if event.new and self.layout.held is not None:  # first opened: the body joins the page
            self.layout.held = None
            self.layout.append(self.body)

    def when_built(self, callback: Callable[[pn.Column], None]) -> None:
        """Call ``callback(body)`` when the section's :class:`Later` parts have been made (at
        its first opening; never if it has none)."""
        if self._later:
            self._built.append(callback)

    @property
    def objects(self) -> list[Any]:
        """The parts the section holds."""
        return list(self.body.objects)

    @property
    def visible(self) -> bool:
        """Whether the section (its header and body) is on the page at all."""
        return bool(self.layout.visible)

    @visible.setter
    def visible(self, shown: bool) -> None:
        self.layout.visible = shown

    def append(self, part: Any) -> None:
        """Add ``part`` at the end of the section's body (a :class:`Later` part: made there
        when the section is first opened, or at once if it has been)."""
        if isinstance(part, Later):
            if self.layout.held is None:  # open already
                self.body.append(part.made())
            else:
                self._later.append((len(self.body.objects) + len(self._later), part))
            return
        self.body.append(part)

    def __panel__(self) -> pn.Column:
        return self.layout


def section(title: str, *parts: Any, opened: bool = False) -> Section:
    """A section titled ``title`` holding ``parts``, closed unless ``opened``."""
    return Section(title, *parts, opened=opened)


def _follow_visibility(card: Section, layout: Any) -> None:
    """``card`` is shown exactly while ``layout`` is (a part the lesson shows and hides)."""
    card.visible = bool(layout.visible)

    def follow(event: Any) -> None:
        card.visible = bool(event.new)

    layout.param.watch(follow, "visible")


def sections(parts: Iterable[Any]) -> list[Any]:
    """The lesson's ``parts`` grouped into closed sections, one per heading.

    A string heading opens a section holding the parts after it (the heading becomes the
    section's title); a layout that starts with a heading is a section of its own (its heading
    shown as the title instead, its visibility followed), and so is a :class:`Later` part with a
    title. Parts before the first heading stay as they are; parts without a heading join the
    section before them."""
    out: list[Any] = []
    current: Section | None = None
    for part in parts:
        if isinstance(part, Later) and part.title is not None:  # a section of its own
            current = section(part.title, part)
            out.append(current)
            continue
        title = heading_of(part)
        if title is None:
            if current is None:  # before any section: in the page at once
                out.append(part.made() if isinstance(part, Later) else part)
            else:
                current.append(part)
            continue
        if isinstance(part, pn.layout.ListLike):
            # the section's title says it: the heading leaves the page (not only hidden, so
            # the title is the one text of it), an empty part in its place (a lesson may
            # index its layout's parts)
            part[0] = pn.Spacer(width=0, height=0, margin=0)
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
    column = pn.Column(*parts, width=width, css_classes=[css])
    fit_controls(column, width - 2 * INSET)
    return column


def fit_controls(column: pn.Column, room: int) -> None:
    """Every widget in ``column`` (a closed section's too) at most ``room`` px wide, so that
    with its margins it stays inside the column: one wider would lie under the plots beside
    it. A widget told a wider width gets ``room``; a slider told none (BokehJS draws it 300
    px wide, 4-16 px past a 300 px column with its margins and a section's inset) gets
    ``room``; a row of buttons whose labels need more than ``room``
    (:func:`button_row_px`) stands as a column of buttons instead."""
    for widget in column.select(pn.widgets.Widget):
        if widget.width is not None:
            if widget.width > room:
                widget.width = room
        elif widget.sizing_mode not in (None, "fixed"):
            continue  # it takes the width it is given
        elif isinstance(widget, SLIDERS):
            widget.width = room
        elif (
            isinstance(widget, BUTTON_ROWS)
            and widget.orientation == "horizontal"
            and button_row_px(widget.labels) > room
        ):
            widget.orientation = "vertical"


def button_row_px(labels: Sequence[str]) -> int:
    """The width a row of buttons labelled ``labels`` needs, generously: :data:`CHAR_PX` per
    character and :data:`BUTTON_PAD_PX` per button (measured: "Soft | Hard reads | Hard
    writes | Both hard" drew 294 px wide, this says 300)."""
    return sum(CHAR_PX * len(label) + BUTTON_PAD_PX for label in labels)


def fit_width(part: Any) -> None:
    """Every fixed-width figure in ``part`` wider than :data:`PHONE_PX` keeps its shape and
    shrinks to fit a narrower place (a phone, a 320 px column): it scales with the width it is
    given, up to its own width. A widget wider than :data:`WIDGET_PX` (a text box, a select)
    stretches to the width it is given, up to its own."""
    found = part.select(pn.pane.Bokeh) if hasattr(part, "select") else []
    for pane in found:
        fig = pane.object
        width = getattr(fig, "width", None)
        fixed = getattr(fig, "sizing_mode", None) in (None, "fixed")
        framed = getattr(fig, "frame_width", None) is not None  # its plot area fixed: wider
        if width is None or (width <= PHONE_PX and not framed) or not fixed:
            continue
        if framed:  # the plot area scales with the figure instead
            fig.update(frame_width=None, frame_height=None)
        fig.update(sizing_mode="scale_width", max_width=width)
        pane.param.update(sizing_mode="scale_width", max_width=width)
    for widget in part.select(pn.widgets.Widget) if hasattr(part, "select") else []:
        width = widget.width
        if width is not None and width > WIDGET_PX and widget.sizing_mode in (None, "fixed"):
            widget.param.update(width=None, sizing_mode="stretch_width", max_width=width)


def until_drawn(view: Any, sources: Sequence[Any], line: str) -> pn.Column:
    """``view`` (plots a button fills) shown once one of ``sources`` (Bokeh column data
    sources) holds data; until then, in its place, the one line ``line`` that says what the
    button will draw. No empty axes, and no legend for lines that are not drawn."""
    note = pn.pane.Markdown(line, css_classes=["pyplay-waiting"], sizing_mode="stretch_width")

    def check() -> None:
        drawn = any(len(next(iter(s.data.values()), [])) for s in sources)
        view.visible = drawn
        note.visible = not drawn

    def changed(attr: str, old: Any, new: Any) -> None:
        check()

    for source in sources:
        source.on_change("data", changed)
    check()
    return pn.Column(note, view, sizing_mode="stretch_width")


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
